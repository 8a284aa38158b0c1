/**
 * Spring Integration support: {@link io.dlock.spring.integration.DlockLockRegistry}, a
 * {@code LockRegistry} (renewable and expirable) over a dlock {@link io.dlock.LockClient}.
 */
package io.dlock.spring.integration;
