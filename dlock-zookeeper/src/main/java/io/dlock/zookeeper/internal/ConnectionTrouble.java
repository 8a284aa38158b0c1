package io.dlock.zookeeper.internal;

import io.dlock.LockBackendException;

/**
 * A {@link LockBackendException} that says the connection, not the request, failed: no answer in
 * time, or the connection was lost. A queued acquire attempt may ride it out (see
 * {@link ZkAttempt}); everyone else sees a plain {@link LockBackendException}.
 */
final class ConnectionTrouble extends LockBackendException {

    private static final long serialVersionUID = 1L;

    ConnectionTrouble(String message, String lockName) {
        super(message, lockName, null);
    }
}
