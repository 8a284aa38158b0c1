package io.dlock.dynamodb.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockBackendException;
import io.dlock.spi.BackendUri;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.exception.AbortedException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;

/** What each kind of SDK failure becomes: a message that says what failed and what to do, and never a credential. */
class FailuresTest {

    private static final String SECRET = "Fail-S3cret";

    private final DynamoDbSettings settings = DynamoDbSettings.from(BackendUri.parse("dynamodb://locks?region=eu-west-1"
            + "&accessKeyId=AKIAFAILURES&secretAccessKey=" + SECRET + "&renewal=transaction&createTable=true"));
    private final Failures failures = new Failures(settings, Duration.ofSeconds(2));

    private static DynamoDbException service(String code, String message, int status) {
        return (DynamoDbException) DynamoDbException.builder().statusCode(status)
                .awsErrorDetails(AwsErrorDetails.builder().errorCode(code).errorMessage(message).build()).build();
    }

    private LockBackendException map(Exception e) {
        LockBackendException mapped = failures.of("acquire", "UpdateItem", "orders/42",
                (software.amazon.awssdk.core.exception.SdkException) e);
        assertEquals(Optional.of("orders/42"), mapped.lockName());
        assertTrue(mapped.getMessage().startsWith("the acquire of lock 'orders/42' on DynamoDB table 'locks' in eu-west-1"),
                mapped.getMessage());
        assertFalse(mapped.getMessage().contains(SECRET), mapped.getMessage());
        assertFalse(mapped.getMessage().contains("AKIAFAILURES"), mapped.getMessage());
        return mapped;
    }

    @Test
    void accessDeniedNamesTheActionAndEveryPermissionNeeded() {
        String m = map(service("AccessDeniedException", "User: arn:aws:iam::1:user/a is not authorized", 400)).getMessage();
        assertTrue(m.contains("not allowed dynamodb:UpdateItem on table 'locks'"), m);
        assertTrue(m.contains("dynamodb:UpdateItem and dynamodb:GetItem, dynamodb:TransactWriteItems (renewal=transaction), "
                + "dynamodb:DescribeTable and dynamodb:CreateTable (createTable=true)"), m);
    }

    @Test
    void rejectedCredentialsSayWhereTheyCameFrom() {
        for (String code : new String[] {"UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException"}) {
            String m = map(service(code, "The security token included in the request is invalid.", 400)).getMessage();
            assertTrue(m.contains("rejected the credentials (" + code + ")"), m);
            assertTrue(m.contains("accessKeyId, secretAccessKey and sessionToken"), m);
        }
    }

    @Test
    void otherKindsOfFailure() {
        assertTrue(map(ResourceNotFoundException.builder().message("Requested resource not found").build()).getMessage()
                .contains("the table 'locks' does not exist"));
        assertTrue(map(ProvisionedThroughputExceededException.builder().statusCode(400).awsErrorDetails(AwsErrorDetails
                .builder().errorCode("ProvisionedThroughputExceededException").errorMessage("slow down").build()).build())
                .getMessage().contains("was throttled by DynamoDB"));
        assertTrue(map(service("ValidationException", "The provided key element does not match the schema", 400))
                .getMessage().contains("partition key named 'name' of type String and no sort key"));
        assertTrue(map(service("InternalServerError", "oops", 500)).getMessage().contains("InternalServerError: oops (HTTP 500)"));
        assertTrue(map(ApiCallTimeoutException.create(2000)).getMessage()
                .contains("got no answer from the DynamoDB endpoint of eu-west-1 within PT2S"));
        assertTrue(map(AbortedException.create("Thread was interrupted")).getMessage().contains("was cut short"));
        assertTrue(map(SdkClientException.create("Unable to execute HTTP request: Connection refused")).getMessage()
                .contains("could not reach the DynamoDB endpoint of eu-west-1: Unable to execute HTTP request"));
        assertTrue(map(SdkClientException.create("Unable to load credentials from any of the providers in the chain"))
                .getMessage().contains("no usable AWS credentials were found"));
    }
}
