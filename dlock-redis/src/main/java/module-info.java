/**
 * The Redis backend of dlock: {@code redis://}, {@code redis-sentinel://}, {@code redis-cluster://} and
 * {@code redlock://} URIs and their TLS forms, on jedis. Exports
 * only its provider; the backend itself is internal.
 */
module io.dlock.redis {
    requires transitive io.dlock;
    requires org.apache.commons.pool2;
    requires org.slf4j;
    requires redis.clients.jedis;

    exports io.dlock.redis;

    provides io.dlock.spi.LockProvider with io.dlock.redis.RedisLockProvider;
}
