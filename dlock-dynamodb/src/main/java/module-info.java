/**
 * The DynamoDB backend of dlock: {@code dynamodb://TABLE} URIs, on the AWS SDK v2. Exports only
 * its provider; the backend itself is internal.
 */
module io.dlock.dynamodb {
    requires transitive io.dlock;
    requires org.slf4j;
    requires software.amazon.awssdk.auth;
    requires software.amazon.awssdk.awscore;
    requires software.amazon.awssdk.core;
    requires software.amazon.awssdk.http;
    requires software.amazon.awssdk.http.urlconnection;
    requires software.amazon.awssdk.regions;
    requires software.amazon.awssdk.services.dynamodb;

    exports io.dlock.dynamodb;

    provides io.dlock.spi.LockProvider with io.dlock.dynamodb.DynamoDbLockProvider;
}
