package io.dlock.bench.internal;

import io.dlock.dynamodb.DynamoDbLocal;
import io.dlock.etcd.EtcdCluster;
import io.dlock.postgres.PostgresServer;
import io.dlock.redis.RedisServer;
import io.dlock.zookeeper.ZkProcess;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The real servers of one backend on free loopback ports (one server, or the nodes of a Redis
 * mode's deployment), started with the launchers the backends' own tests use, and what they are
 * (version and durability settings) for the report.
 */
public final class LocalServer implements AutoCloseable {

    private final Deployment deployment;
    private final String description;
    private final AutoCloseable process;

    private LocalServer(InetSocketAddress address, String description, AutoCloseable process) {
        this(Deployment.single(address), description, process);
    }

    private LocalServer(Deployment deployment, String description, AutoCloseable process) {
        this.deployment = deployment;
        this.description = description;
        this.process = process;
    }

    /**
     * Starts the server (or the servers) of a backend.
     *
     * @param backend the backend
     * @return the running server or servers
     * @throws IllegalStateException if a server does not start
     */
    public static LocalServer start(Backend backend) {
        switch (backend) {
            case REDIS: {
                RedisServer s = RedisServer.start();
                return new LocalServer(s.address(), "redis-server " + version("redis-server", "--version")
                        + "; no persistence (--save '', --appendonly no), so nothing is fsynced", s);
            }
            case ZOOKEEPER: {
                ZkProcess s = ZkProcess.start();
                return new LocalServer(new InetSocketAddress("127.0.0.1", s.port()), "ZooKeeper "
                        + org.apache.zookeeper.Version.getFullVersion().replaceAll(",.*", "")
                        + " standalone in its own JVM, tickTime 200 ms; forceSync on (the default), its data directory in "
                        + System.getProperty("java.io.tmpdir") + " (" + fsType(System.getProperty("java.io.tmpdir")) + ")", s);
            }
            case ETCD: {
                EtcdCluster s = EtcdCluster.single();
                return new LocalServer(s.addresses().get(0), "etcd " + version("etcd", "--version")
                        + " single member; fsync on (the default), its data directory in /dev/shm (tmpfs)", s);
            }
            case DYNAMODB: {
                DynamoDbLocal s = DynamoDbLocal.start();
                return new LocalServer(s.address(), "DynamoDB Local " + dynamoDbLocalVersion()
                        + " in its own JVM (C1 only, -Xmx256m), -sharedDb, its sqlite file in /dev/shm (tmpfs)", s);
            }
            case POSTGRES: {
                PostgresServer s = PostgresServer.start();
                try {
                    // the peers' tables: Spring Integration's (its schema-postgresql.sql), ShedLock's (its
                    // documentation's), the floor's; dlock makes its own on first use
                    s.sql("postgres",
                            "CREATE TABLE INT_LOCK (LOCK_KEY CHAR(36) NOT NULL, REGION VARCHAR(100) NOT NULL,"
                                    + " CLIENT_ID CHAR(36), CREATED_DATE TIMESTAMP NOT NULL,"
                                    + " constraint INT_LOCK_PK primary key (LOCK_KEY, REGION))",
                            "CREATE TABLE shedlock (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL,"
                                    + " locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))",
                            "CREATE TABLE raw_locks (name text COLLATE \"C\" PRIMARY KEY, owner text NOT NULL,"
                                    + " expires_at timestamptz NOT NULL)");
                } catch (RuntimeException e) {
                    s.close();
                    throw e;
                }
                return new LocalServer(s.address(), "PostgreSQL " + version(PostgresServer.binary("postgres"), "--version")
                        + " (initdb defaults, fsync off, synchronous_commit on), its data directory in "
                        + System.getProperty("java.io.tmpdir") + " (" + fsType(System.getProperty("java.io.tmpdir")) + ")", s);
            }
            case REDLOCK: {
                List<RedisServer> nodes = new ArrayList<>();
                try {
                    for (int i = 0; i < 3; i++) {
                        nodes.add(RedisServer.start());
                    }
                } catch (RuntimeException e) {
                    nodes.forEach(RedisServer::close);
                    throw e;
                }
                List<InetSocketAddress> addresses = new ArrayList<>();
                nodes.forEach(n -> addresses.add(n.address()));
                return new LocalServer(Deployment.of(addresses), "three redis-server " + version("redis-server", "--version")
                        + ", independent primaries; no persistence (--save '', --appendonly no), so nothing is fsynced",
                        () -> nodes.forEach(RedisServer::close));
            }
            case REDIS_SENTINEL: {
                // the group's primary is marked past dlock's lock-delay for the default prefix, as RedisServer.start() does
                io.dlock.redis.RedisSentinelGroup g = io.dlock.redis.RedisSentinelGroup.start();
                return new LocalServer(new Deployment(g.sentinelAddresses(), io.dlock.redis.RedisSentinelGroup.MASTER),
                        "redis-server " + version("redis-server", "--version") + ": a primary, two replicas and three"
                        + " sentinels (quorum 2); no persistence (--save '', --appendonly no), so nothing is fsynced", g);
            }
            case REDIS_CLUSTER: {
                io.dlock.redis.RedisClusterNodes c = io.dlock.redis.RedisClusterNodes.start();
                try {
                    c.markLockDelayPassed("dlock:"); // every slot's marker, as on a cluster that served locks long ago
                } catch (RuntimeException e) {
                    c.close();
                    throw e;
                }
                return new LocalServer(Deployment.of(c.nodeAddresses()), "redis-server " + version("redis-server",
                        "--version") + " Redis Cluster: three primaries with a replica each; no persistence (--save '',"
                        + " --appendonly no), so nothing is fsynced", c);
            }
            default:
                throw new IllegalArgumentException("backend " + backend);
        }
    }

    /** @return what the contenders connect to: one server or the nodes of a deployment */
    public Deployment deployment() {
        return deployment;
    }

    /** @return the server, its version and its durability settings, for the report */
    public String description() {
        return description;
    }

    @Override
    public void close() {
        try {
            process.close();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("could not stop " + description, e);
        }
    }

    private static String version(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(10, TimeUnit.SECONDS);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("v?=?(\\d+\\.\\d+(?:\\.\\d+)?)").matcher(out);
            return m.find() ? m.group(1) : "(version unknown)";
        } catch (IOException e) {
            return "(version unknown)";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "(version unknown)";
        }
    }

    private static String dynamoDbLocalVersion() {
        Path lib = Path.of(System.getProperty("dlock.dynamodb-local.dir", "target/dynamodb-local"), "lib");
        try (var files = Files.list(lib)) {
            return files.map(f -> f.getFileName().toString())
                    .filter(n -> n.matches("DynamoDBLocal-\\d.*\\.jar"))
                    .map(n -> n.substring("DynamoDBLocal-".length(), n.length() - ".jar".length()))
                    .findFirst().orElse("(version unknown)");
        } catch (IOException e) {
            return "(version unknown)";
        }
    }

    private static String fsType(String dir) {
        try {
            return Files.getFileStore(Path.of(dir)).type();
        } catch (IOException e) {
            return "file system unknown";
        }
    }
}
