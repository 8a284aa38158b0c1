package io.dlock.bench.internal.peers;

import java.net.InetSocketAddress;
import java.net.URI;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** The SDK client every DynamoDB contender uses: the same light HTTP client as dlock-dynamodb. */
final class LocalDynamoDb {

    /** DynamoDB Local takes any credentials. */
    static final String ACCESS_KEY = "dlockbench";
    static final String SECRET_KEY = "dlockbench";
    static final String REGION = "us-east-1";

    private LocalDynamoDb() { }

    static DynamoDbClient client(InetSocketAddress server) {
        return DynamoDbClient.builder()
                .endpointOverride(URI.create("http://" + server.getHostString() + ":" + server.getPort()))
                .region(Region.of(REGION))
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY, SECRET_KEY)))
                .httpClient(UrlConnectionHttpClient.create())
                .build();
    }
}
