/**
 * The PostgreSQL backend's implementation. Not an API: nothing here is meant to be used outside
 * dlock-postgres, and it may change in any release.
 */
package io.dlock.postgres.internal;
