package io.dlock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.tck.TcpProxy;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * docs/FENCING.md's Redis example against a real server: a Lua script that checks the token and
 * stores it with the value in one step, refusing a stalled holder's stale write. The code between
 * the {@code fencing:} markers is quoted in docs/FENCING.md (held to it by dlock-postgres's
 * FencingDocsTest).
 */
class RedisFencingExampleTest {

    private static RedisServer server;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    // fencing:redis-lua
    /**
     * KEYS[1] the hash holding the value and its fence; ARGV[1] the token, ARGV[2] the value.
     * Tokens are compared as decimal strings (shorter is smaller), since Lua's numbers are doubles
     * and a 64-bit token need not fit one exactly.
     */
    static final String FENCED_SET = String.join("\n",
            "local fence = redis.call('HGET', KEYS[1], 'fence') or '0'",
            "local token = ARGV[1]",
            "if #token < #fence or (#token == #fence and token < fence) then return 0 end",
            "redis.call('HSET', KEYS[1], 'fence', token, 'value', ARGV[2])",
            "return 1");

    /** Writes the value unless a later lock holder has written it: true if the write was accepted. */
    static boolean writeFenced(Jedis redis, String key, String value, long token) {
        Object accepted = redis.eval(FENCED_SET, List.of(key), List.of(Long.toString(token), value));
        return Long.valueOf(1).equals(accepted);
    }
    // end fencing:redis-lua

    /**
     * A holds the lock with token t1 and stalls (its link to the lock server is frozen, so it cannot
     * renew); its lease ends; B gets t2 and writes; A's write with t1 is refused by the script.
     */
    @Test
    void theLuaCheckRefusesAStalledHoldersWrite() throws Exception {
        LockOptions oneSecond = LockOptions.builder().leaseTime(Duration.ofSeconds(1)).build();
        try (TcpProxy proxy = TcpProxy.start(server.address());
             LockClient a = LockClient.open("redis://" + RedisServer.HOST + ":" + proxy.address().getPort());
             LockClient b = LockClient.open(server.uri());
             Jedis redis = new Jedis(RedisServer.HOST, server.port())) {
            Lease leaseA = a.lock("cart-7", oneSecond).tryAcquire().orElseThrow();
            long t1 = leaseA.fencingToken();
            proxy.freeze(); // A stalls: no renewal reaches the server
            Lease leaseB = b.lock("cart-7", oneSecond).tryAcquire(Duration.ofSeconds(20)).orElseThrow();
            long t2 = leaseB.fencingToken();
            assertTrue(t2 > t1);
            assertTrue(writeFenced(redis, "cart:7", "from B", t2), "B's write");
            assertTrue(writeFenced(redis, "cart:7", "from B again", t2), "B's second write with the same token");
            assertFalse(writeFenced(redis, "cart:7", "from A", t1), "A's stale write must be refused");
            assertEquals("from B again", redis.hget("cart:7", "value"));
            // the string comparison against numbers of other lengths
            assertFalse(writeFenced(redis, "cart:7", "small", 9), "a shorter token is smaller");
            assertTrue(writeFenced(redis, "cart:7", "large", Long.MAX_VALUE), "a longer token is larger");
            leaseB.release();
            proxy.unfreeze();
        }
    }
}
