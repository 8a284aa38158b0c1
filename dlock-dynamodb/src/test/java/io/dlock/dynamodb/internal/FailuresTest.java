package io.dlock.dynamodb.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import java.io.EOFException;
import javax.net.ssl.SSLException;
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

/**
 * What each kind of SDK failure becomes: a message that says what failed and what to do, never a
 * credential, and a {@link LockConfigurationException} of its kind where retrying cannot help.
 */
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
    void configurationFailuresHaveTheirKindAndTheRestIsRetryable() {
        assertKind(Kind.PERMISSION, service("AccessDeniedException", "not authorized", 400));
        assertKind(Kind.CREDENTIALS, service("UnrecognizedClientException", "The security token is invalid.", 400));
        assertKind(Kind.INCOMPATIBLE_SERVER, service("ValidationException", "The provided key element does not match", 400));
        assertKind(Kind.MISSING_RESOURCE, ResourceNotFoundException.builder().message("Requested resource not found").build());
        assertKind(Kind.CREDENTIALS, SdkClientException.builder().message("Unable to load credentials")
                .cause(new Failures.NoCredentials(SdkClientException.create("no profile"))).build());
        assertKind(Kind.TLS, SdkClientException.builder().message("Unable to execute HTTP request")
                .cause(new SSLException("Unsupported or unrecognized SSL message")).build());
        for (Exception passing : new Exception[] {service("InternalServerError", "oops", 500),
                ProvisionedThroughputExceededException.builder().statusCode(400).awsErrorDetails(AwsErrorDetails.builder()
                        .errorCode("ProvisionedThroughputExceededException").build()).build(),
                ApiCallTimeoutException.create(2000), SdkClientException.create("Connection refused"),
                // a TLS handshake the server cut short may be a restart
                SdkClientException.builder().message("Remote host terminated the handshake")
                        .cause(new SSLException("Remote host terminated the handshake", new EOFException())).build()}) {
            LockBackendException e = map(passing);
            assertFalse(e instanceof LockConfigurationException, e.toString());
            assertTrue(e.retryable(), e.toString());
        }
    }

    private void assertKind(Kind kind, Exception e) {
        LockBackendException mapped = map(e);
        assertTrue(mapped instanceof LockConfigurationException, mapped.toString());
        assertEquals(kind, ((LockConfigurationException) mapped).kind(), mapped.getMessage());
        assertFalse(mapped.retryable());
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
        assertTrue(map(SdkClientException.builder().message("Unable to load credentials from any of the providers in the"
                + " chain").cause(new Failures.NoCredentials(SdkClientException.create("none"))).build())
                .getMessage().contains("no usable AWS credentials were found"));
    }
}
