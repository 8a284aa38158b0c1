/**
 * Internals of the ZooKeeper backend; not for use outside dlock.
 */
package io.dlock.zookeeper.internal;
