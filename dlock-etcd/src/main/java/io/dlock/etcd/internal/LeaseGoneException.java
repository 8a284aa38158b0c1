package io.dlock.etcd.internal;

import io.dlock.LockBackendException;

/** etcd answered that a lease does not exist (any more): it expired or was revoked. */
final class LeaseGoneException extends LockBackendException {

    private static final long serialVersionUID = 1L;

    LeaseGoneException(String message, String lockName, Throwable cause) {
        super(message, lockName, cause);
    }
}
