package io.dlock.bench.internal;

import io.dlock.bench.internal.peers.AwsLockClientContender;
import io.dlock.bench.internal.peers.CuratorContender;
import io.dlock.bench.internal.peers.JetcdLockContender;
import io.dlock.bench.internal.peers.OnFirstNode;
import io.dlock.bench.internal.peers.RawDynamoDbContender;
import io.dlock.bench.internal.peers.RawEtcdContender;
import io.dlock.bench.internal.peers.RawPostgresContender;
import io.dlock.bench.internal.peers.RawRedisContender;
import io.dlock.bench.internal.peers.RawRedlockContender;
import io.dlock.bench.internal.peers.RawZooKeeperContender;
import io.dlock.bench.internal.peers.RedisTopology;
import io.dlock.bench.internal.peers.RedissonContender;
import io.dlock.bench.internal.peers.RedissonRedLockContender;
import io.dlock.bench.internal.peers.ShedLockContender;
import io.dlock.bench.internal.peers.SpringJdbcContender;
import io.dlock.bench.internal.peers.SpringRedisContender;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * The backends of the side-by-side comparison: for each, the contenders in report order (dlock
 * first, the raw floor last) and the targets dlock is held to. The first five run on one server;
 * the three Redis modes on a deployment of several nodes ({@link #multiNode()}).
 */
public enum Backend {
    /** Redis: Redisson and Spring Integration. */
    REDIS("Redis", "Redisson RLock", 0.8) {
        @Override
        public List<Contender> contenders(Duration lease) {
            return List.of(new DlockContender("dlock", a -> "redis://" + Deployment.hostPort(a.server())),
                    new RedissonContender(), new SpringRedisContender(), new RawRedisContender());
        }
    },
    /** ZooKeeper: Curator. */
    ZOOKEEPER("ZooKeeper", "Curator InterProcessMutex", 0.9) {
        @Override
        public List<Contender> contenders(Duration lease) {
            // the session is the lease: its timeout is the lease time
            return List.of(new DlockContender("dlock", a -> "zookeeper://" + Deployment.hostPort(a.server()) + "?sessionTimeout=" + lease),
                    new CuratorContender(), new RawZooKeeperContender(true), new RawZooKeeperContender(false));
        }
    },
    /** etcd: jetcd's lock service client. */
    ETCD("etcd", "jetcd Lock", 1.0) {
        @Override
        public List<Contender> contenders(Duration lease) {
            return List.of(new DlockContender("dlock", a -> "etcd://" + Deployment.hostPort(a.server())),
                    new JetcdLockContender(), new RawEtcdContender());
        }
    },
    /** DynamoDB (Local): the AWS lock client. */
    DYNAMODB("DynamoDB", "AWS DynamoDB Lock Client", 0.7) {
        @Override
        public List<Contender> contenders(Duration lease) {
            return List.of(new DlockContender("dlock", a -> "dynamodb://bench-dlock?region=us-east-1&endpoint=http://"
                    + Deployment.hostPort(a.server()) + "&createTable=true&accessKeyId=dlockbench&secretAccessKey=dlockbench"),
                    new AwsLockClientContender(), new RawDynamoDbContender());
        }
    },
    /** PostgreSQL: Spring Integration's JdbcLockRegistry and ShedLock's JDBC provider. */
    POSTGRES("PostgreSQL", "Spring JdbcLockRegistry", 0.7) {
        @Override
        public List<Contender> contenders(Duration lease) {
            // the peers get a pool of 16 connections (PostgresPeers); dlock the same, for the 16-thread workload
            return List.of(new DlockContender("dlock", a -> "postgresql://" + io.dlock.postgres.PostgresServer.SUPERUSER
                    + ":" + io.dlock.postgres.PostgresServer.SUPERUSER_PASSWORD + "@" + Deployment.hostPort(a.server()) + "/postgres?poolSize=16"),
                    new SpringJdbcContender(), new ShedLockContender(), new RawPostgresContender());
        }
    },
    /** Redis Sentinel (a primary, two replicas, three sentinels): Redisson's lock and fenced lock on Sentinel. */
    REDIS_SENTINEL("Redis Sentinel", "Redisson RLock", 0.8) {
        @Override
        public List<Contender> contenders(Duration lease) {
            return List.of(new DlockContender("dlock", d -> "redis-sentinel://" + d.hostPorts() + "/" + d.masterName()),
                    new RedissonContender(RedisTopology.SENTINEL, false), new RedissonContender(RedisTopology.SENTINEL, true),
                    new RawRedisContender(RedisTopology.SENTINEL));
        }
    },
    /** Redis Cluster (three primaries, three replicas): Redisson's lock and fenced lock on Cluster. */
    REDIS_CLUSTER("Redis Cluster", "Redisson RLock", 0.8) {
        @Override
        public List<Contender> contenders(Duration lease) {
            return List.of(new DlockContender("dlock", d -> "redis-cluster://" + d.hostPorts()),
                    new RedissonContender(RedisTopology.CLUSTER, false), new RedissonContender(RedisTopology.CLUSTER, true),
                    new RawRedisContender(RedisTopology.CLUSTER));
        }
    },
    /**
     * Redlock on three independent primaries: Redisson's RedissonRedLock (deprecated) and
     * RedissonMultiLock over three clients, its RFencedLock on the first node.
     */
    REDLOCK("Redlock", "Redisson RedLock", 1.0) {
        @Override
        public List<Contender> contenders(Duration lease) {
            return List.of(new DlockContender("dlock", d -> "redlock://" + d.hostPorts()),
                    new RedissonRedLockContender(true), new RedissonRedLockContender(false),
                    new OnFirstNode(new RedissonContender(RedisTopology.SINGLE, true)), new RawRedlockContender());
        }
    };

    private final String title;
    private final String peer;
    private final double target;

    Backend(String title, String peer, double target) {
        this.title = title;
        this.peer = peer;
        this.target = target;
    }

    /**
     * @param lease the lease time every contender holds locks with
     * @return every contender, dlock first and the floor last
     */
    public abstract List<Contender> contenders(Duration lease);

    /**
     * The lease time this backend's contenders hold locks with: the run's, except on DynamoDB,
     * where leases are 30 s. With 4 s leases, 10,000 held locks need 7,500 lease writes a second,
     * more than DynamoDB Local on one CPU can do (every contender then loses locks), and no
     * DynamoDB user runs leases that short (the AWS lock client's default is 20 s).
     *
     * @param standard the run's lease time
     * @return the lease time on this backend
     */
    public Duration leaseTime(Duration standard) {
        return this == DYNAMODB ? Duration.ofSeconds(30) : standard;
    }

    /** @return the name in reports */
    public String title() {
        return title;
    }

    /** @return the peer the uncontended target names */
    public String peer() {
        return peer;
    }

    /** @return the largest ratio of dlock's uncontended p50 to the peer's that meets the target */
    public double target() {
        return target;
    }

    /**
     * @return whether the hand-off target (at most twice dlock's own uncontended cycle) applies:
     *     not on DynamoDB (no notifications) nor on the Redis modes (their hand-off is reported,
     *     not targeted)
     */
    public boolean handoffTarget() {
        return this != DYNAMODB && !multiNode();
    }

    /**
     * @return whether the target "uncontended cycle ≤ 1.15× the raw floor" applies: on the
     *     single-server backends; the Redis modes are held to their peer only
     */
    public boolean floorTarget() {
        return !multiNode();
    }

    /** @return whether the contenders are given several nodes (no counting proxy then) */
    public boolean multiNode() {
        return this == REDIS_SENTINEL || this == REDIS_CLUSTER || this == REDLOCK;
    }

    /**
     * @return why round trips and renewal requests are not measured on this backend, for the
     *     report, or null when they are (a counting proxy in front of the one server)
     */
    public String notCountedBecause() {
        if (!multiNode()) {
            return null;
        }
        return this == REDLOCK
                ? "the counting proxy stands in front of one server, and Redlock's clients talk to three at once"
                : "the counting proxy stands in front of one server, and a " + title
                        + " client goes on to the nodes the servers name (" + (this == REDIS_SENTINEL
                                ? "the primary the sentinels report" : "the nodes of CLUSTER SLOTS")
                        + "), past any proxy in front of the addresses it was given";
    }

    /**
     * @param name a backend name, any case, {@code -} for {@code _}
     * @return the backend
     * @throws IllegalArgumentException if there is none of that name
     */
    public static Backend of(String name) {
        try {
            return valueOf(name.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("backend must be one of redis, zookeeper, etcd, dynamodb, postgres, "
                    + "redis_sentinel, redis_cluster, redlock; was '" + name + "'");
        }
    }
}
