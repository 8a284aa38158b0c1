/**
 * The etcd backend of dlock: {@code etcd://} and {@code etcds://} URIs, on jetcd. Exports only its
 * provider; the backend itself is internal.
 *
 * <p>jetcd's jars carry no module names, so on the module path they are automatic modules named
 * after their files ({@code jetcd.core}, {@code jetcd.common}), as Maven Central names them.
 */
module io.dlock.etcd {
    requires transitive io.dlock;
    requires io.grpc;
    requires io.grpc.netty;
    requires io.netty.handler;
    requires jetcd.common;
    requires jetcd.core;
    requires org.slf4j;

    exports io.dlock.etcd;

    provides io.dlock.spi.LockProvider with io.dlock.etcd.EtcdLockProvider;
}
