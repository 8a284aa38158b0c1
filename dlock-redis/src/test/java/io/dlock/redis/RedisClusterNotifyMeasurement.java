package io.dlock.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockOptions;
import io.dlock.tck.TestTiming;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPubSub;
import redis.clients.jedis.JedisShardedPubSub;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * Measures the two ways a release notice can travel in a Redis Cluster, for the choice recorded in
 * docs/ARCHITECTURE.md ("### Redis Cluster"), on a 3+3 {@link RedisClusterNodes}:
 * <ul>
 * <li>classic {@code PUBLISH} from a script on the slot's primary, heard by a {@code SUBSCRIBE}
 * on another node (the bus carries it to every node);
 * <li>sharded {@code SPUBLISH} from a script, heard by an {@code SSUBSCRIBE} on the slot's primary
 * (the bus carries it only to the shard's replicas).
 * </ul>
 * For each: the notice latency (publish call to delivery, p50/p99), and the cluster-bus messages it
 * cost, summed over every node from {@code CLUSTER INFO}. Then dlock's own hand-off (release to the
 * waiter's grant) with classic notices. A measurement, not a check of speed: it asserts only that
 * every notice arrived. Runs only with {@code -Ddlock.redis.cluster.notify=true}; rounds with
 * {@code -Ddlock.redis.cluster.notify.rounds=N} (default 300).
 */
class RedisClusterNotifyMeasurement {

    private static final int ROUNDS = Integer.getInteger("dlock.redis.cluster.notify.rounds", 300);
    private static final String PUBLISH = "return redis.call('PUBLISH', ARGV[1], 'released')";
    private static final String SPUBLISH = "return redis.call('SPUBLISH', ARGV[1], 'released')";

    @Test
    void classicAgainstShardedNotices() throws Exception {
        assumeTrue(Boolean.getBoolean("dlock.redis.cluster.notify"), "a measurement: -Ddlock.redis.cluster.notify=true");
        try (RedisClusterNodes cluster = RedisClusterNodes.start()) {
            cluster.markLockDelayPassed(RedisServer.DEFAULT_PREFIX);
            String tag = RedisClusterNodes.TestTags.tag(JedisClusterCRC16.getCRC16("measured") & 16383);
            String channel = "dlock:{" + tag + "}released:measured";
            String key = "dlock:{" + tag + "}lock:measured";
            int owner = cluster.ownerOf(JedisClusterCRC16.getSlot(key));
            int other = (owner + 1) % RedisClusterNodes.PRIMARIES;

            long before = busMessages(cluster, "cluster_stats_messages_publish_sent");
            long[] classic = measure(cluster, owner, PUBLISH, key, channel, (q) -> subscribe(cluster, other, channel, q));
            long classicBus = busMessages(cluster, "cluster_stats_messages_publish_sent") - before;
            before = busMessages(cluster, "cluster_stats_messages_publishshard_sent");
            long[] sharded = measure(cluster, owner, SPUBLISH, key, channel, (q) -> ssubscribe(cluster, owner, channel, q));
            long shardedBus = busMessages(cluster, "cluster_stats_messages_publishshard_sent") - before;
            System.out.printf("[notify] %d notices each; classic PUBLISH: p50 %d us, p99 %d us, %.2f bus messages per"
                    + " notice; sharded SPUBLISH: p50 %d us, p99 %d us, %.2f bus messages per notice%n", ROUNDS,
                    classic[0], classic[1], classicBus / (double) ROUNDS, sharded[0], sharded[1],
                    shardedBus / (double) ROUNDS);

            try (LockClient holder = client(cluster); LockClient waiter = client(cluster)) {
                List<Long> handOff = new ArrayList<>();
                for (int i = 0; i < Math.min(ROUNDS, 100); i++) {
                    Lease l = holder.lock("measured").tryAcquire().orElseThrow();
                    CompletableFuture<Optional<Lease>> w = waiter.lock("measured").acquireAsync(Duration.ofSeconds(10));
                    TestTiming.sleep(20); // the waiter is subscribed and waiting
                    long t0 = System.nanoTime();
                    l.release();
                    Lease got = w.get(10, TimeUnit.SECONDS).orElseThrow();
                    handOff.add(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - t0));
                    got.release();
                }
                Collections.sort(handOff);
                System.out.printf("[notify] dlock hand-off with classic notices, %d rounds: p50 %d us, p99 %d us%n",
                        handOff.size(), handOff.get(handOff.size() / 2), handOff.get(handOff.size() * 99 / 100));
            }
        }
    }

    private static LockClient client(RedisClusterNodes cluster) {
        return LockClient.open(LockClientConfig.builder("redis-cluster://" + cluster.seeds() + "?lockDelay=PT2S")
                .defaultLockOptions(LockOptions.builder().leaseTime(Duration.ofSeconds(1)).build()).build());
    }

    /** @return {p50, p99} in microseconds of publish-to-delivery */
    private static long[] measure(RedisClusterNodes cluster, int owner, String script, String key, String channel,
                                  Consumer<LinkedBlockingQueue<Long>> subscriber) throws Exception {
        LinkedBlockingQueue<Long> arrivals = new LinkedBlockingQueue<>();
        Thread t = new Thread(() -> subscriber.accept(arrivals), "notify-subscriber");
        t.setDaemon(true);
        t.start();
        TestTiming.sleep(300); // subscribed
        List<Long> latencies = new ArrayList<>();
        try (Jedis pub = cluster.jedis(owner)) {
            for (int i = 0; i < ROUNDS; i++) {
                long t0 = System.nanoTime();
                pub.eval(script, List.of(key), List.of(channel));
                Long at = arrivals.poll(5, TimeUnit.SECONDS);
                assertTrue(at != null, "notice " + i + " arrived");
                latencies.add(TimeUnit.NANOSECONDS.toMicros(at - t0));
            }
        }
        assertEquals(0, arrivals.size());
        Collections.sort(latencies);
        return new long[] {latencies.get(latencies.size() / 2), latencies.get(latencies.size() * 99 / 100)};
    }

    private static void subscribe(RedisClusterNodes cluster, int node, String channel, LinkedBlockingQueue<Long> q) {
        try (Jedis j = cluster.jedis(node)) {
            j.subscribe(new JedisPubSub() {
                @Override
                public void onMessage(String ch, String message) {
                    q.add(System.nanoTime());
                }
            }, channel);
        } catch (RuntimeException e) {
            // the cluster closed under it
        }
    }

    private static void ssubscribe(RedisClusterNodes cluster, int node, String channel, LinkedBlockingQueue<Long> q) {
        try (Jedis j = cluster.jedis(node)) {
            new JedisShardedPubSub() {
                @Override
                public void onSMessage(String ch, String message) {
                    q.add(System.nanoTime());
                }
            }.proceed(j.getConnection(), channel);
        } catch (RuntimeException e) {
            // the cluster closed under it
        }
    }

    /** Sums a CLUSTER INFO counter over every node. */
    private static long busMessages(RedisClusterNodes cluster, String field) {
        long sum = 0;
        for (int i = 0; i < cluster.size(); i++) {
            try (Jedis j = cluster.jedis(i)) {
                for (String line : j.clusterInfo().split("\r?\n")) {
                    if (line.startsWith(field + ":")) {
                        sum += Long.parseLong(line.substring(field.length() + 1).trim());
                    }
                }
            }
        }
        return sum;
    }
}
