package io.dlock.dynamodb;

import io.dlock.tck.FaultToleranceTck;
import io.dlock.tck.TckFixture;

/**
 * The fault tier against DynamoDB Local, run as its own process: pauses, kills and restarts it
 * (its database file survives, as DynamoDB never loses a committed write). S9 is skipped: DynamoDB
 * is one regional service whose replication and failover clients never see, so the backend does
 * not declare {@code SURVIVES_SERVER_FAILOVER} and the fixture runs no cluster.
 */
class DynamoDbFaultTckTest extends FaultToleranceTck {

    @Override
    protected TckFixture createFixture() {
        return new DynamoDbFixture();
    }
}
