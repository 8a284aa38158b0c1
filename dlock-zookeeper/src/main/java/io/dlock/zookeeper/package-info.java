/**
 * The ZooKeeper backend of dlock: put this jar on the classpath and open a client with a
 * {@code zookeeper://} or {@code zk://} URI. See {@link io.dlock.zookeeper.ZooKeeperLockProvider}.
 */
package io.dlock.zookeeper;
