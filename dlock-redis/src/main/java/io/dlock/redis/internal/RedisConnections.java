package io.dlock.redis.internal;

import io.dlock.LockBackendException;
import io.dlock.LockConfigurationException;
import io.dlock.LockConfigurationException.Kind;
import io.dlock.spi.support.LeaseTimes;
import java.io.EOFException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import javax.net.ssl.SSLException;
import org.apache.commons.pool2.PooledObject;
import org.apache.commons.pool2.PooledObjectFactory;
import org.apache.commons.pool2.impl.DefaultPooledObject;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisSocketFactory;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The command connections of one client: a bounded pool, and calls that end within a budget
 * (borrowing, the socket read timeout and one quick retry all come out of it), with every failure
 * turned into a {@link LockBackendException} that says what to check and never shows the password.
 * Thread-safe.
 *
 * <p>Calls run on the caller's thread, not on the support kit's {@code BoundedCalls}: jedis's I/O
 * blocks with a socket read timeout set to what is left of the call's budget, so a call ends
 * within its budget with no thread or future of ours to wait on. The interrupt rule holds as it
 * is: blocking socket I/O on a platform thread does not give in to an interrupt (the flag stays
 * set and the call ends by its budget), on a virtual thread the interrupt closes the socket (the
 * call fails, flag set), and the one wait that does give in, for a pooled connection, throws with
 * the flag set again.
 */
final class RedisConnections implements ScriptRunner {

    private static final Logger LOG = LoggerFactory.getLogger(RedisConnections.class);

    /** The shortest read timeout a command gets, even when borrowing used up the budget. */
    private static final long MIN_READ_TIMEOUT_MILLIS = 100;

    private final RedisSettings settings;
    private final ConnectionPool pool;
    private final long timeoutNanos;
    /** The deadline of the call borrowing on this thread, so that a new connection's set-up keeps to it. */
    private final ThreadLocal<long[]> deadline = ThreadLocal.withInitial(() -> new long[1]);

    /**
     * Creates the pool; no I/O.
     *
     * @param settings the URI's settings
     * @param clientConfigs how to connect with a given connect and read timeout in ms
     * @param operationTimeout the budget of a call
     */
    RedisConnections(RedisSettings settings, IntFunction<Setup> clientConfigs, Duration operationTimeout) {
        this.settings = settings;
        this.timeoutNanos = LeaseTimes.saturatedNanos(operationTimeout);
        GenericObjectPoolConfig<Connection> poolConfig = new GenericObjectPoolConfig<>();
        poolConfig.setMaxTotal(settings.poolSize);
        poolConfig.setMaxIdle(settings.poolSize);
        poolConfig.setMinIdle(0);
        poolConfig.setBlockWhenExhausted(true);
        poolConfig.setMaxWait(operationTimeout);
        poolConfig.setTestOnBorrow(false);
        poolConfig.setTestOnReturn(false);
        poolConfig.setTestWhileIdle(false);
        // no evictor: it would be a thread of commons-pool's that outlives the client
        poolConfig.setTimeBetweenEvictionRuns(Duration.ofMillis(-1));
        poolConfig.setJmxEnabled(false);
        this.pool = new ConnectionPool(new Factory(clientConfigs), poolConfig);
    }

    /**
     * How to make one connection: the jedis configuration, the socket factory, and a check of the
     * new connection after its set-up (null for none), which throws to refuse it.
     */
    record Setup(JedisClientConfig config, JedisSocketFactory socketFactory, Consumer<Connection> check) {
        Setup(JedisClientConfig config, JedisSocketFactory socketFactory) {
            this(config, socketFactory, null);
        }
    }

    /**
     * Makes connections whose connect timeout and set-up commands (AUTH, SELECT, CLIENT SETNAME)
     * keep to the deadline of the call that needs the connection: the pool creates on the
     * borrowing thread.
     */
    private final class Factory implements PooledObjectFactory<Connection> {
        private final IntFunction<Setup> configs;

        Factory(IntFunction<Setup> configs) {
            this.configs = configs;
        }

        @Override
        public PooledObject<Connection> makeObject() {
            long until = deadline.get()[0];
            long left = until == 0 ? timeoutNanos : until - System.nanoTime();
            int millis = (int) Math.max(MIN_READ_TIMEOUT_MILLIS,
                    Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(left)));
            Setup setup = configs.apply(millis);
            Connection c = new Connection(setup.socketFactory(), setup.config());
            if (setup.check() != null) {
                try {
                    setup.check().accept(c);
                } catch (RuntimeException e) {
                    c.disconnect();
                    throw e;
                }
            }
            return new DefaultPooledObject<>(c);
        }

        @Override
        public void destroyObject(PooledObject<Connection> p) {
            try {
                p.getObject().disconnect();
            } catch (RuntimeException e) {
                LOG.debug("dlock: closing a connection to {} failed", settings.address(), e);
            }
        }

        @Override
        public boolean validateObject(PooledObject<Connection> p) {
            return p.getObject().isConnected() && !p.getObject().isBroken();
        }

        @Override
        public void activateObject(PooledObject<Connection> p) {
            // nothing: every call sets its own read timeout
        }

        @Override
        public void passivateObject(PooledObject<Connection> p) {
            // nothing: connections hold no per-call state between calls
        }
    }

    /**
     * Runs one script within a budget and, if the reply says it wrote and the uri asks for
     * {@code waitReplicas}, waits (on the same connection, within the budget) until that many
     * replicas have the write.
     *
     * @param wrote tells from the reply whether the script wrote; null for never
     * @throws LockBackendException also if fewer replicas acknowledged the write in time: the
     *     write happened on the primary, so the outcome is unknown to the caller
     */
    @Override
    public Object eval(Script script, List<String> keys, List<String> args, String operation, String lockName,
                       long budgetNanos, Predicate<Object> wrote) {
        return eval(script, keys, args, operation, lockName, budgetNanos, wrote, false);
    }

    /**
     * {@link #eval(Script, List, List, String, String, long, Predicate)}, preceded by {@code ASKING}
     * if asked (Redis Cluster: the slot is being imported by this node).
     */
    Object eval(Script script, List<String> keys, List<String> args, String operation, String lockName,
                long budgetNanos, Predicate<Object> wrote, boolean asking) {
        long deadline = System.nanoTime() + budgetNanos;
        return call(operation, lockName, budgetNanos, c -> {
            Object reply = eval(c, script, keys, args, deadline, asking);
            if (settings.waitReplicas > 0 && wrote != null && wrote.test(reply)) {
                awaitReplicas(c, deadline, operation, lockName);
            }
            return reply;
        });
    }

    private void awaitReplicas(Connection c, long deadline, String operation, String lockName) {
        // Redis checks WAIT timeouts on its cron (10 times a second by default), so it may answer
        // up to about 100 ms late: leave room for that within the budget and in the read timeout
        long waitMillis = Math.max(10, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()) - 200);
        c.setSoTimeout((int) Math.min(Integer.MAX_VALUE, waitMillis + 300));
        Object acked = c.executeCommand(new CommandArguments(Protocol.Command.WAIT).add(settings.waitReplicas)
                .add(waitMillis));
        long n = acked instanceof Long l ? l : -1;
        if (n < settings.waitReplicas) {
            String what = lockName == null ? operation : operation + " of lock '" + lockName + "'";
            throw new LockBackendException("only " + Math.max(0, n) + " of the " + settings.waitReplicas
                    + " replicas required by the uri parameter waitReplicas acknowledged the " + what + " on "
                    + settings.server() + " within " + waitMillis + " ms: check the replicas' links"
                    + " (INFO replication) or lower waitReplicas", lockName, null);
        }
    }

    /**
     * Runs one command (not a script) within a budget, e.g. {@code CLUSTER SLOTS}.
     *
     * @return the raw reply
     * @throws LockBackendException if the call failed or ran out of time
     */
    Object command(CommandArguments command, String operation, long budgetNanos) {
        return call(operation, null, budgetNanos, c -> c.executeCommand(command));
    }

    private static Object eval(Connection c, Script script, List<String> keys, List<String> args, long deadline,
                               boolean asking) {
        try {
            if (asking) {
                c.executeCommand(new CommandArguments(Protocol.Command.ASKING));
            }
            return c.executeCommand(scriptArgs(Protocol.Command.EVALSHA, script.sha(), keys, args));
        } catch (JedisNoScriptException e) {
            // a fresh or restarted server: EVAL runs the script and caches it for the next EVALSHA,
            // within what is left of the call's budget
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            c.setSoTimeout((int) Math.max(MIN_READ_TIMEOUT_MILLIS, Math.min(Integer.MAX_VALUE, left)));
            if (asking) {
                // the flag ASKING set is spent by the next command, the EVALSHA
                c.executeCommand(new CommandArguments(Protocol.Command.ASKING));
            }
            return c.executeCommand(scriptArgs(Protocol.Command.EVAL, script.source(), keys, args));
        }
    }

    private static CommandArguments scriptArgs(Protocol.Command command, String script, List<String> keys,
                                               List<String> args) {
        CommandArguments a = new CommandArguments(command).add(script).add(keys.size());
        for (String k : keys) {
            a.key(k);
        }
        for (String v : args) {
            a.add(v);
        }
        return a;
    }

    private <T> T call(String operation, String lockName, long budgetNanos, Function<Connection, T> body) {
        long start = System.nanoTime();
        long deadline = start + budgetNanos;
        for (int attempt = 0; ; attempt++) {
            Connection c;
            long[] borrowDeadline = this.deadline.get();
            try {
                borrowDeadline[0] = deadline;
                c = pool.borrowObject(Duration.ofNanos(Math.max(1_000_000L, deadline - System.nanoTime())));
            } catch (InterruptedException e) {
                // the one wait of a call that gives in to an interrupt (blocking socket I/O does not):
                // the interrupt rule, flag kept, so that the core reports an interrupt, not a failure
                Thread.currentThread().interrupt();
                String what = lockName == null ? operation : operation + " of lock '" + lockName + "'";
                throw new LockBackendException("the " + what + " on " + settings.server() + " was interrupted while it"
                        + " waited for a pooled connection; nothing was sent", lockName, e);
            } catch (Exception e) {
                if (hasCause(e, RedisSocketFactory.NotRedisException.class)) {
                    throw notRedis(operation, lockName, e);
                }
                if (attempt == 0 && retryable(e, start, budgetNanos)) {
                    continue;
                }
                throw failure(operation, lockName, e, budgetNanos);
            } finally {
                borrowDeadline[0] = 0;
            }
            boolean broken = true;
            try {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                long readTimeout = Math.max(left, Math.min(MIN_READ_TIMEOUT_MILLIS, TimeUnit.NANOSECONDS.toMillis(budgetNanos)));
                c.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, readTimeout)));
                T result = body.apply(c);
                broken = c.isBroken();
                return result;
            } catch (RuntimeException e) {
                broken = c.isBroken() || !(e instanceof JedisDataException || e instanceof LockBackendException);
                if (attempt == 0 && retryable(e, start, budgetNanos)) {
                    // most likely a pooled connection that a server restart left dead: the others
                    // are dead too, so drop the idle ones and try once more on a fresh connection.
                    // Every script is safe to repeat (see Script).
                    pool.clear();
                    continue;
                }
                throw failure(operation, lockName, e, budgetNanos);
            } finally {
                giveBack(c, broken);
            }
        }
    }

    /** A connection failure that came fast (not a timeout), with time left: worth one retry. */
    private static boolean retryable(Exception e, long start, long budgetNanos) {
        return e instanceof JedisConnectionException && !hasCause(e, SocketTimeoutException.class)
                && System.nanoTime() - start < budgetNanos / 2;
    }

    private void giveBack(Connection c, boolean broken) {
        try {
            if (broken) {
                pool.invalidateObject(c);
            } else {
                pool.returnObject(c);
            }
        } catch (Exception e) {
            LOG.debug("dlock: returning a connection to the pool of {} failed", settings.address(), e);
        }
    }

    /**
     * The server at the URI's address answered PING with bytes that are not a Redis reply: another
     * service listens there ({@code INCOMPATIBLE_SERVER}), or a TLS one for a {@code redis://} URI
     * ({@code TLS}, told by the TLS record's first byte). A Redis always answers PING with a reply,
     * so no retry meets anything else.
     */
    private LockBackendException notRedis(String operation, String lockName, Exception e) {
        String what = lockName == null ? operation : operation + " of lock '" + lockName + "'";
        String said = "";
        Kind kind = Kind.INCOMPATIBLE_SERVER;
        for (Throwable t : chain(e)) {
            if (t instanceof RedisSocketFactory.NotRedisException n) {
                said = n.getMessage();
                kind = n.looksLikeTls ? Kind.TLS : Kind.INCOMPATIBLE_SERVER;
            }
        }
        return new LockConfigurationException(kind, "the server at " + settings.address() + " does not speak the Redis"
                + " protocol: " + settings.uri.scrub(said) + " (for the " + what + "); check the host and port in the uri",
                lockName, e);
    }

    /**
     * Turns a failure into a message that says what went wrong and what to check, without secrets.
     * A failure that every retry would meet too (the server refused the credentials, the ACL, TLS,
     * or is a server dlock cannot use) is a {@link LockConfigurationException} of its kind, told by
     * the exception's type (jedis's, or the JDK's for TLS) and the Redis error code (the first word
     * of an error reply, which the protocol reserves for that); everything else is a retryable
     * {@link LockBackendException}.
     */
    LockBackendException failure(String operation, String lockName, Throwable e, long budgetNanos) {
        if (settings.mode == RedisSettings.Mode.CLUSTER) {
            ClusterConnections.Redirect redirect = ClusterConnections.Redirect.of(e, settings.server(), lockName);
            if (redirect != null) {
                return redirect; // the cluster's router follows it
            }
        }
        String what = lockName == null ? operation : operation + " of lock '" + lockName + "'";
        String server = settings.server();
        String detail = detail(e);
        long ms = TimeUnit.NANOSECONDS.toMillis(budgetNanos);
        String code = errorCode(e);
        Kind kind = null;
        String message;
        if (e instanceof NoSuchElementException) {
            message = "no connection to " + server + " became free within " + ms + " ms for the " + what
                    + ": all " + settings.poolSize + " pooled connections are busy; the server may be slow or paused,"
                    + " or raise the uri parameter poolSize";
        } else if (e instanceof IllegalStateException) {
            message = "the " + what + " failed: the connection pool of " + server + " is closed (the client is closing)";
        } else if (e instanceof JedisAccessControlException) {
            if ("NOAUTH".equals(code)) {
                kind = Kind.CREDENTIALS;
                message = server + " requires authentication (" + detail + ") for the " + what
                        + ": put the password in the uri, as redis://user:password@host:port";
            } else if ("NOPERM".equals(code)) {
                kind = Kind.PERMISSION;
                message = server + " refused the " + what + " (" + detail + "): " + neededPermissions();
            } else {
                kind = Kind.CREDENTIALS;
                message = server + " rejected the credentials (" + detail + ") for the " + what
                        + ": check the user and password in the uri";
            }
        } else if ("READONLY".equals(code) && settings.mode != RedisSettings.Mode.SENTINEL) {
            // with Sentinel a primary demoted by a failover says READONLY: the caller finds the new one
            kind = Kind.INCOMPATIBLE_SERVER;
            message = server + " refused the " + what + " (" + detail + "): it is a read-only replica; the uri must"
                    + " name the primary";
        } else if ("CROSSSLOT".equals(code) || "MOVED".equals(code) || "ASK".equals(code)) {
            kind = Kind.INCOMPATIBLE_SERVER;
            message = server + " refused the " + what + " (" + detail + "): it is a Redis Cluster node; name the"
                    + " cluster's nodes with " + (settings.tls ? "rediss-cluster" : "redis-cluster") + "://host1:port1,"
                    + "host2:port2 (each lock's keys then share its hash slot)";
        } else if ("WRONGTYPE".equals(code)) {
            kind = Kind.INCOMPATIBLE_SERVER;
            message = server + " refused the " + what + " (" + detail + "): a key under the prefix '" + settings.prefix
                    + "' holds data dlock did not write; check that no other application uses the prefix";
        } else if ("ERR".equals(code) && scriptAclDenial(e)) {
            // Redis before 7.2 answers an ACL denial inside a script with ERR, not NOPERM
            kind = Kind.PERMISSION;
            message = server + " refused the " + what + " (" + detail + "): " + neededPermissions();
        } else if (e instanceof JedisDataException) {
            message = server + " refused the " + what + " (" + detail + "): check that the uri names a writable"
                    + " primary with Lua scripting, enough memory, and no other data under the prefix '"
                    + settings.prefix + "'";
        } else if (hasCause(e, SocketTimeoutException.class)) {
            // a plain server never answers a TLS handshake, as a paused one would not: nothing tells them apart
            message = server + " did not answer the " + what + " within " + ms + " ms (" + detail + "): check that the"
                    + " server is up, not paused or overloaded, and reachable, or raise the operation timeout"
                    + (settings.tls ? "; with rediss://, also that the server speaks TLS" : "");
        } else if (hasCause(e, ConnectException.class) || hasCause(e, UnknownHostException.class)
                || hasCause(e, NoRouteToHostException.class)) {
            message = "cannot connect to " + server + " for the " + what + " (" + detail + "): check the host and"
                    + " port in the uri and that the server is running and reachable";
        } else if (hasCause(e, SSLException.class)) {
            kind = tlsRefusal(e) ? Kind.TLS : null;
            message = "the TLS connection to " + server + " failed for the " + what + " (" + detail + "): check that"
                    + " the server speaks TLS (rediss://) or not (redis://), that its certificate is trusted and"
                    + " names the host in the uri";
        } else if (e instanceof JedisConnectionException) {
            message = "the connection to " + server + " failed during the " + what + " (" + detail + "): check that"
                    + " the server is running (restarts, maxclients) and the network to it"
                    + (settings.tls ? "" : "; if the server speaks only TLS, use rediss://");
        } else if (e instanceof LockBackendException) {
            return (LockBackendException) e;
        } else {
            message = "the " + what + " on " + server + " failed (" + detail + ")";
        }
        Throwable cause = showsSecrets(e) ? null : e;
        return kind == null ? new LockBackendException(message, lockName, cause)
                : new LockConfigurationException(kind, message, lockName, cause);
    }

    /**
     * Whether a TLS failure is one every retry meets too (an untrusted certificate, a protocol
     * mismatch): a handshake the server cut short (end of stream) may be a restart, so only a
     * refusal is certain.
     */
    static boolean tlsRefusal(Throwable e) {
        return hasCause(e, SSLException.class) && !hasCause(e, EOFException.class)
                && !hasCause(e, SocketException.class);
    }

    private String neededPermissions() {
        return "the Redis user needs the commands EVAL, EVALSHA, PUBLISH, SUBSCRIBE and access to the keys and"
                + " channels starting with '" + settings.prefix + "'";
    }

    /**
     * The Redis error code of a failure: the first word of the server's error reply, which the
     * protocol reserves for the kind of error ({@code ERR}, {@code NOPERM}, {@code READONLY}, ...).
     *
     * @return the code, or null if the failure is not an error reply
     */
    static String errorCode(Throwable e) {
        for (Throwable t : chain(e)) {
            if (t instanceof JedisDataException && t.getMessage() != null) {
                String m = t.getMessage();
                int end = 0;
                while (end < m.length() && m.charAt(end) >= 'A' && m.charAt(end) <= 'Z') {
                    end++;
                }
                if (end > 0 && (end == m.length() || m.charAt(end) == ' ')) {
                    return m.substring(0, end);
                }
                return null;
            }
        }
        return null;
    }

    /**
     * Whether an {@code ERR} reply is Redis's answer to an ACL denial inside a script: before 7.2,
     * Redis reports a script's command on a key or channel the user may not touch with this fixed
     * sentence under the generic code {@code ERR} (7.2 answers {@code NOPERM}). The one place
     * where the text of a reply is read: the code alone cannot tell.
     */
    private static boolean scriptAclDenial(Throwable e) {
        for (Throwable t : chain(e)) {
            if (t instanceof JedisDataException && t.getMessage() != null) {
                return t.getMessage().startsWith("ERR The user executing the script can't");
            }
        }
        return false;
    }

    /** The innermost useful message of a failure, with the URI's secrets scrubbed out. */
    private String detail(Throwable e) {
        String text = null;
        for (Throwable t : chain(e)) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) {
                text = t.getClass().getSimpleName() + ": " + t.getMessage();
            }
        }
        if (text == null) {
            text = e.getClass().getSimpleName();
        }
        // a server's reply may name the user (NOPERM User alice ...) or, someday, echo the password
        return settings.uri.scrub(text);
    }

    /**
     * Whether a failure's messages name the URI's user or password: then it must not become the
     * cause of our exception, whose stack trace would print them (the scrubbed detail is in our
     * message).
     */
    private boolean showsSecrets(Throwable e) {
        for (Throwable t : chain(e)) {
            String m = t.getMessage();
            if (m != null && !m.equals(settings.uri.scrub(m))) {
                return true;
            }
        }
        return false;
    }

    /**
     * A failure, its causes and what they suppressed (jedis reports why each address of a host
     * refused as suppressed exceptions), outermost first.
     */
    static List<Throwable> chain(Throwable e) {
        List<Throwable> out = new ArrayList<>();
        ArrayDeque<Throwable> todo = new ArrayDeque<>();
        todo.add(e);
        while (!todo.isEmpty() && out.size() < 32) {
            Throwable t = todo.poll();
            if (out.contains(t)) {
                continue;
            }
            out.add(t);
            if (t.getCause() != null) {
                todo.add(t.getCause());
            }
            for (Throwable s : t.getSuppressed()) {
                todo.add(s);
            }
        }
        return out;
    }

    static boolean hasCause(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t : chain(e)) {
            if (type.isInstance(t)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() {
        try {
            pool.close();
        } catch (RuntimeException e) {
            LOG.debug("dlock: closing the connection pool of {} failed", settings.address(), e);
        }
    }
}
