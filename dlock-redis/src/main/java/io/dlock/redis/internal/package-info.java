/**
 * The Redis backend's implementation. Not an API: nothing here is meant to be used outside
 * dlock-redis, and it may change in any release.
 */
package io.dlock.redis.internal;
