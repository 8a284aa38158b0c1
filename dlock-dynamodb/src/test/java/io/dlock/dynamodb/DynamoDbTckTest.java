package io.dlock.dynamodb;

import io.dlock.tck.LockProviderTck;
import io.dlock.tck.TckFixture;

/** The compatibility kit against DynamoDB Local, run as its own process. */
class DynamoDbTckTest extends LockProviderTck {

    @Override
    protected TckFixture createFixture() {
        return new DynamoDbFixture();
    }
}
