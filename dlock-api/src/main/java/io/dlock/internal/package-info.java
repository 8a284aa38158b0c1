/**
 * dlock's shared core. Not an API: classes here may change in any release. Users import
 * {@code io.dlock} and backend authors {@code io.dlock.spi}.
 */
package io.dlock.internal;
