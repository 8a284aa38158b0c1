package io.dlock.gate;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.dlock.ElectionListener;
import io.dlock.ElectionOptions;
import io.dlock.LockBackendException;
import io.dlock.LockClient;
import io.dlock.LockClientConfig;
import io.dlock.LockListener;
import io.dlock.LockOptions;
import io.dlock.Ticker;
import io.dlock.spi.AcquireRequest;
import io.dlock.spi.AttemptResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.BackendUri;
import io.dlock.spi.Grant;
import io.dlock.spi.LockProvider;
import io.dlock.spi.support.UriReader;
import io.dlock.tck.mem.MemLockProvider;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.lang.reflect.Array;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The null rule, checked on every exported public constructor and method of every gated module:
 * a {@code null} argument is rejected with an {@link IllegalArgumentException} whose message
 * names the parameter, unless that parameter's {@code @param} javadoc says {@code null} is allowed
 * (and then the call must not fail with a {@link NullPointerException} either).
 *
 * <p>Each parameter of reference type is tried in turn with {@code null}, the other arguments
 * being valid samples, on a fresh instance. Methods that dlock calls rather than the user
 * (listener callbacks, a provider's backend, JUnit's extension callbacks) are not swept: dlock
 * never passes them {@code null}. A member that cannot be swept because the test cannot make its
 * instance or an argument fails the test unless its type is listed in {@link #NOT_SWEPT} with the
 * reason, so a new public member is never silently left out.
 */
class NullArgumentsTest {

    /**
     * Types whose members are called by dlock or a framework, never by a user with arguments of
     * their own, or that the test cannot make, with the reason.
     */
    private static final Map<String, String> NOT_SWEPT = Map.ofEntries(
            Map.entry("io.dlock.LockListener", "a callback interface: dlock calls it, never with null"),
            Map.entry("io.dlock.ElectionListener", "a callback interface: dlock calls it, never with null"),
            Map.entry("io.dlock.micrometer.MicrometerLockListener", "its instance methods are LockListener callbacks"),
            Map.entry("io.dlock.spi.LockProvider", "implemented by providers; dlock calls it (the four providers' open is swept)"),
            Map.entry("io.dlock.spi.LockBackend", "implemented by providers; the core calls it, never with null"),
            Map.entry("io.dlock.spi.AcquireAttempt", "implemented by providers; the core calls it, never with null"),
            Map.entry("io.dlock.spi.support.ListeningAttempt", "abstract: a provider's attempt extends it and the core calls it"
                    + " (ListeningAttemptTest checks that turn rejects a null maxWait)"),
            Map.entry("io.dlock.spi.support.BoundedCalls$Failures", "implemented by a backend; BoundedCalls calls it, never with null"),
            Map.entry("io.dlock.spi.BackendEvents", "implemented by the core; its instance exists only inside a client"),
            Map.entry("io.dlock.tck.TckReporter", "a JUnit extension: JUnit calls it"),
            Map.entry("io.dlock.tck.TckSettings", "a JUnit extension: JUnit calls it"),
            Map.entry("io.dlock.tck.TckFixture", "implemented by a provider's test; the TCK calls it"),
            Map.entry("io.dlock.tck.ServerControl", "implemented by a provider's test fixture; the TCK calls it"),
            Map.entry("io.dlock.tck.ClusterControl", "implemented by a provider's test fixture; the TCK calls it"),
            Map.entry("io.dlock.tck.FreezableClient", "implemented by fixtures; the TCK calls it"),
            Map.entry("io.dlock.tck.LockProviderTck", "a JUnit test class: JUnit runs it"),
            Map.entry("io.dlock.tck.FaultToleranceTck", "a JUnit test class: JUnit runs it"),
            Map.entry("io.dlock.tck.TckSupport", "a JUnit test class: JUnit runs it"),
            Map.entry("io.dlock.tck.BackendRules", "a JUnit test class: JUnit runs it"),
            Map.entry("io.dlock.tck.ElectionRules", "a JUnit test class: JUnit runs it"),
            Map.entry("io.dlock.tck.ProxiedFixture", "abstract: a provider's fixture extends it (MemFixture's openFreezable is swept)"),
            Map.entry("io.dlock.tck.PeerNetwork", "an instance runs cluster members in Linux network namespaces, which needs root"));

    /** Method names never swept: {@code equals} takes null by contract; {@code main} takes the command line. */
    private static final Set<String> METHODS_NOT_SWEPT = Set.of("equals", "main");

    private static LockClient client;
    private static final AtomicInteger NAMES = new AtomicInteger();
    private static final List<AutoCloseable> OPENED = new ArrayList<>();

    @BeforeAll
    static void open() {
        client = LockClient.open(LockClientConfig.builder("mem://null-gate").build(), new MemLockProvider());
    }

    @AfterAll
    static void close() throws Exception {
        for (AutoCloseable c : OPENED) {
            c.close();
        }
        client.close();
    }

    @TestFactory
    Stream<DynamicTest> nullIsRejectedNamingTheParameterUnlessDocumentedAsAllowed() {
        return ApiGateTest.MODULES.stream().map(m -> DynamicTest.dynamicTest(m.artifact(), () -> {
            List<String> problems = new ArrayList<>();
            int[] tried = {0};
            for (Class<?> top : ExportedTypes.topLevel(m.anchor(), m.packagesWithoutModuleInfo())) {
                sweep(m.artifact(), top, problems, tried);
            }
            System.out.println("[null-rule] " + m.artifact() + ": " + tried[0] + " null arguments tried");
            if (!problems.isEmpty()) {
                fail(m.artifact() + ": " + problems.size() + " parameter(s) break the null rule (IllegalArgumentException"
                        + " naming the parameter, or '@param ... null' in the javadoc):\n  " + String.join("\n  ", problems));
            }
            assertTrue(tried[0] > 0 || m.artifact().equals("dlock-zookeeper") || m.artifact().equals("dlock-dynamodb"),
                    m.artifact() + ": nothing was tried");
        }));
    }

    private static void sweep(String artifact, Class<?> type, List<String> problems, int[] tried) {
        if (!Modifier.isPublic(type.getModifiers())) {
            return;
        }
        for (Class<?> nested : type.getDeclaredClasses()) {
            sweep(artifact, nested, problems, tried);
        }
        if (NOT_SWEPT.containsKey(type.getName())) {
            return;
        }
        List<Executable> members = new ArrayList<>();
        if (!Modifier.isAbstract(type.getModifiers()) && !type.isEnum()) {
            members.addAll(List.of(type.getConstructors()));
        }
        for (Method method : type.getDeclaredMethods()) {
            if (Modifier.isPublic(method.getModifiers()) && !method.isSynthetic() && !method.isBridge()
                    && !METHODS_NOT_SWEPT.contains(method.getName())
                    && !(type.isEnum() && method.getName().equals("valueOf"))) {
                members.add(method);
            }
        }
        for (Executable member : members) {
            Parameter[] params = member.getParameters();
            for (int i = 0; i < params.length; i++) {
                if (params[i].getType().isPrimitive()) {
                    continue;
                }
                if (!params[i].isNamePresent()) {
                    problems.add(describe(member) + ": compiled without parameter names (-parameters)");
                    continue;
                }
                tried[0]++;
                String problem = tryNull(artifact, type, member, i);
                if (problem != null) {
                    problems.add(describe(member) + " parameter '" + params[i].getName() + "': " + problem);
                }
            }
        }
    }

    /** @return what is wrong, or null if the member follows the rule for this parameter */
    private static String tryNull(String artifact, Class<?> type, Executable member, int index) {
        Parameter[] params = member.getParameters();
        Object[] args = new Object[params.length];
        for (int i = 0; i < params.length; i++) {
            if (i == index) {
                continue;
            }
            Optional<Object> sample = sample(params[i]);
            if (sample.isEmpty()) {
                return "not swept: no sample of " + params[i].getParameterizedType().getTypeName()
                        + " (add one to NullArgumentsTest, or list the type in NOT_SWEPT with the reason)";
            }
            args[i] = sample.get();
        }
        Object target = null;
        if (member instanceof Method method && !Modifier.isStatic(method.getModifiers())) {
            Optional<Object> instance = instance(type);
            if (instance.isEmpty()) {
                return "not swept: no instance of " + type.getName()
                        + " (add one to NullArgumentsTest, or list the type in NOT_SWEPT with the reason)";
            }
            target = instance.get();
        }
        Throwable thrown;
        try {
            if (member instanceof Method method) {
                method.invoke(target, args);
            } else {
                ((Constructor<?>) member).newInstance(args);
            }
            thrown = null;
        } catch (InvocationTargetException e) {
            thrown = e.getCause();
        } catch (ReflectiveOperationException e) {
            return "could not be called: " + e;
        }
        String name = params[index].getName();
        boolean documented = documentedNullable(artifact, type, member, name);
        if (thrown instanceof IllegalArgumentException && thrown.getMessage() != null
                && Pattern.compile("\\b" + Pattern.quote(name) + "\\b").matcher(thrown.getMessage()).find()) {
            return null;
        }
        if (documented) {
            return thrown instanceof NullPointerException ? "documented as nullable, yet threw " + thrown : null;
        }
        return thrown == null ? "accepted null (neither rejected nor documented as allowed)" : "threw " + thrown;
    }

    /** Whether the javadoc of a declaration with this name says of the parameter that it may be null. */
    private static boolean documentedNullable(String artifact, Class<?> type, Executable member, String param) {
        Class<?> top = type;
        while (top.getEnclosingClass() != null) {
            top = top.getEnclosingClass();
        }
        Path source = Path.of("..", artifact, "src", "main", "java", top.getName().replace('.', '/') + ".java");
        String text;
        try {
            text = Files.readString(source, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AssertionError("cannot read the source of " + top.getName() + " at " + source.toAbsolutePath(), e);
        }
        String declared = member instanceof Constructor<?> ? type.getSimpleName() : member.getName();
        // a javadoc block, then annotations, modifiers and a type, then the name and '(' (a record
        // header documents its components in the type's javadoc the same way)
        Matcher m = Pattern.compile("/\\*\\*((?:(?!\\*/).)*)\\*/\\s*(?:@[\\w.]+(?:\\([^)]*\\))?\\s*)*[\\w<>?,.\\[\\]\\s]*?\\b"
                + Pattern.quote(declared) + "\\s*(?:<[^>]*>)?\\(", Pattern.DOTALL).matcher(text);
        Pattern paramDoc = Pattern.compile("@param\\s+" + Pattern.quote(param) + "\\s((?:(?!\\s@\\w).)*)", Pattern.DOTALL);
        while (m.find()) {
            Matcher p = paramDoc.matcher(m.group(1));
            if (p.find() && p.group(1).contains("null")) {
                return true;
            }
        }
        return false;
    }

    private static Optional<Object> sample(Parameter p) {
        Class<?> t = p.getType();
        String name = p.getName();
        if (t == long.class || t == int.class) {
            // 2: a positive count, size, token or port that no check refuses
            return Optional.of(t == long.class ? (Object) 2L : (Object) 2);
        }
        if (t == boolean.class) {
            return Optional.of(true);
        }
        if (t == Enum.class) {
            return Optional.of(java.util.concurrent.TimeUnit.SECONDS);
        }
        if (t == String.class) {
            return Optional.of(switch (name) {
                case "uri" -> "mem://null-gate";
                case "scheme", "schemeName" -> "mem";
                default -> "gate-" + NAMES.incrementAndGet();
            });
        }
        if (t.isArray()) {
            return Optional.of(Array.newInstance(t.getComponentType(), 0));
        }
        if (t.isEnum()) {
            return Optional.of(t.getEnumConstants()[0]);
        }
        Map<Class<?>, Supplier<Object>> samples = new HashMap<>();
        samples.put(Duration.class, () -> Duration.ofSeconds(1));
        samples.put(Object.class, () -> "state");
        samples.put(LockClientConfig.class, () -> LockClientConfig.builder("mem://null-gate").build());
        samples.put(LockClientConfig.Builder.class, () -> LockClientConfig.builder("mem://null-gate"));
        samples.put(LockOptions.class, LockOptions::defaults);
        samples.put(ElectionOptions.class, ElectionOptions::defaults);
        samples.put(ElectionListener.class, () -> ElectionListener.NONE);
        samples.put(LockListener.class, () -> LockListener.NONE);
        samples.put(LockClient.class, () -> client);
        samples.put(LockProvider.class, MemLockProvider::new);
        samples.put(Throwable.class, () -> new IllegalStateException("sample"));
        samples.put(LockBackendException.class, () -> new LockBackendException("sample", null, null));
        samples.put(AcquireRequest.class, () -> new AcquireRequest("gate", "owner", Duration.ofSeconds(1)));
        samples.put(AttemptResult.class, () -> AttemptResult.granted(1, "state"));
        samples.put(AttemptResult.Granted.class, () -> AttemptResult.granted(1, "state"));
        samples.put(Grant.class, () -> new Grant<>("gate", "owner", 1, Duration.ofSeconds(1), "state"));
        samples.put(BackendUri.class, () -> BackendUri.parse("redis://localhost:6379"));
        samples.put(BackendUri.HostPort.class, () -> new BackendUri.HostPort("localhost", 6379));
        samples.put(BackendContext.class, NullArgumentsTest::context);
        samples.put(BackendEvents.class, () -> events());
        samples.put(Ticker.class, Ticker::system);
        samples.put(Clock.class, Clock::systemUTC);
        samples.put(ThreadFactory.class, () -> (ThreadFactory) Thread::new);
        samples.put(Executor.class, () -> (Executor) Runnable::run);
        samples.put(List.class, List::of);
        samples.put(Set.class, Set::of);
        samples.put(Map.class, Map::of);
        samples.put(Iterable.class, List::of);
        samples.put(Optional.class, Optional::empty);
        samples.put(OptionalLong.class, OptionalLong::empty);
        samples.put(Path.class, () -> Path.of("target", "null-gate-does-not-exist"));
        samples.put(SSLSocketFactory.class, SSLSocketFactory::getDefault);
        samples.put(TrustManagerFactory.class, NullArgumentsTest::trustManagers);
        samples.put(io.micrometer.core.instrument.MeterRegistry.class, SimpleMeterRegistry::new);
        samples.put(io.dlock.Lease.class, NullArgumentsTest::lease);
        samples.put(io.dlock.spi.support.Deadline.class, () -> io.dlock.spi.support.Deadline.after(Duration.ofSeconds(1)));
        samples.put(io.dlock.spi.support.BoundedCalls.Call.class,
                () -> new io.dlock.spi.support.BoundedCalls.Call("gate", "acquire", "gate-lock"));
        samples.put(java.util.concurrent.CompletableFuture.class, () -> java.util.concurrent.CompletableFuture.completedFuture("done"));
        samples.put(java.util.concurrent.Future.class, () -> java.util.concurrent.CompletableFuture.completedFuture("done"));
        samples.put(InterruptedException.class, () -> new InterruptedException("sample"));
        samples.put(io.dlock.spi.support.RetryingCleaner.Settings.class, io.dlock.spi.support.RetryingCleaner.Settings::defaults);
        samples.put(Process.class, NullArgumentsTest::process);
        samples.put(ProcessBuilder.class, () -> new ProcessBuilder("true"));
        samples.put(java.net.InetSocketAddress.class, () -> new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 9));
        samples.put(java.util.SplittableRandom.class, () -> new java.util.SplittableRandom(1));
        samples.put(Class.class, () -> RuntimeException.class);
        samples.put(io.dlock.tck.Rule.class, () -> io.dlock.tck.Rule.values()[0]);
        Supplier<Object> s = samples.get(t);
        if (s != null) {
            return Optional.of(s.get());
        }
        if (t.isInterface() && !t.isSealed()) {
            // a callback, a fixture or a client the call should not need: it gets null back
            return Optional.of(doNothing(t));
        }
        return Optional.empty();
    }

    /** An implementation of a functional interface that does nothing and returns a default. */
    private static Object doNothing(Class<?> t) {
        return Proxy.newProxyInstance(NullArgumentsTest.class.getClassLoader(), new Class<?>[] {t}, (proxy, method, args) -> {
            Class<?> r = method.getReturnType();
            if (method.getName().equals("toString")) {
                return "doNothing";
            }
            if (r == boolean.class) {
                return false;
            }
            if (r == long.class || r == int.class || r == double.class) {
                return r == long.class ? 0L : r == int.class ? 0 : 0.0;
            }
            return null;
        });
    }

    private static Optional<Object> instance(Class<?> type) {
        if (type == LockClientConfig.Builder.class) {
            return Optional.of(LockClientConfig.builder("mem://null-gate"));
        }
        if (type == LockOptions.Builder.class) {
            return Optional.of(LockOptions.builder());
        }
        if (type == ElectionOptions.Builder.class) {
            return Optional.of(ElectionOptions.builder());
        }
        if (type == LockClient.class) {
            return Optional.of(client);
        }
        if (type == io.dlock.DistributedLock.class) {
            return Optional.of(client.lock("gate-" + NAMES.incrementAndGet()));
        }
        if (type == io.dlock.Lease.class) {
            return Optional.of(lease());
        }
        if (type == BackendUri.class) {
            return Optional.of(BackendUri.parse("redis://localhost:6379"));
        }
        if (type == BackendUri.HostPort.class) {
            return Optional.of(new BackendUri.HostPort("localhost", 6379));
        }
        if (type == UriReader.class) {
            return Optional.of(UriReader.of(BackendUri.parse("redis://localhost:6379"), "redis", Set.of("database")));
        }
        if (type == io.dlock.spring.integration.DlockLockRegistry.class) {
            return Optional.of(io.dlock.spring.integration.DlockLockRegistry.of(client));
        }
        if (type == io.dlock.spring.integration.DlockLockRegistry.Builder.class) {
            return Optional.of(io.dlock.spring.integration.DlockLockRegistry.builder(client));
        }
        if (type == io.dlock.micrometer.MicrometerLockListener.Builder.class) {
            return Optional.of(io.dlock.micrometer.MicrometerLockListener.builder(new SimpleMeterRegistry()));
        }
        if (type == io.dlock.spi.support.AddressProbe.Finding.class) {
            return Optional.of(new io.dlock.spi.support.AddressProbe.Finding(new BackendUri.HostPort("localhost", 1),
                    io.dlock.spi.support.AddressProbe.Kind.REFUSED, "refused", Duration.ofMillis(1)));
        }
        if (type == io.dlock.spi.support.BoundedCalls.class) {
            io.dlock.spi.support.BoundedCalls calls = io.dlock.spi.support.BoundedCalls.forFutures("gate", Duration.ofSeconds(1),
                    io.dlock.spi.support.BoundedCalls.Failures.DEFAULT);
            OPENED.add(calls);
            return Optional.of(calls);
        }
        if (type == io.dlock.spi.support.RetryingCleaner.class) {
            io.dlock.spi.support.RetryingCleaner cleaner = io.dlock.spi.support.RetryingCleaner.start("gate", Thread::new,
                    io.dlock.spi.support.RetryingCleaner.Settings.defaults());
            OPENED.add(cleaner);
            return Optional.of(cleaner);
        }
        if (type == io.dlock.spi.support.RetryingCleaner.Settings.class) {
            return Optional.of(io.dlock.spi.support.RetryingCleaner.Settings.defaults());
        }
        if (type == io.dlock.spi.support.Deadline.class) {
            return Optional.of(io.dlock.spi.support.Deadline.after(Duration.ofSeconds(1)));
        }
        if (type == io.dlock.postgres.PostgresTransactionLocks.class) {
            // the null checks come before any use of the connection (a do-nothing proxy here)
            return Optional.of(new io.dlock.postgres.PostgresTransactionLocks());
        }
        if (type == io.dlock.tck.HoldLog.class) {
            return Optional.of(new io.dlock.tck.HoldLog());
        }
        if (type.isEnum()) {
            return Optional.of(type.getEnumConstants()[0]);
        }
        if (type == io.dlock.tck.Contention.class) {
            io.dlock.tck.Contention contention = io.dlock.tck.Contention.start(List.of(client), "gate-contention",
                    Duration.ofMillis(10), 1);
            OPENED.add(contention::stop);
            return Optional.of(contention);
        }
        if (type == io.dlock.tck.TcpProxy.class) {
            io.dlock.tck.TcpProxy proxy = io.dlock.tck.TcpProxy.start(
                    new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 9));
            OPENED.add(proxy);
            return Optional.of(proxy);
        }
        if (type == io.dlock.tck.mem.MemLink.class) {
            return Optional.of(io.dlock.tck.mem.MemLink.create(Duration.ofSeconds(1)));
        }
        if (type == io.dlock.tck.mem.MemServer.class) {
            return Optional.of(io.dlock.tck.mem.MemServer.named("null-gate"));
        }
        if (type == io.dlock.tck.mem.MemFixture.class) {
            return Optional.of(new io.dlock.tck.mem.MemFixture());
        }
        if (type == io.dlock.spi.support.AbstractLockProvider.class) {
            return Optional.of(new io.dlock.redis.RedisLockProvider());
        }
        if (LockProvider.class.isAssignableFrom(type)) {
            try {
                return Optional.of(type.getConstructor().newInstance());
            } catch (ReflectiveOperationException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    private static io.dlock.Lease lease() {
        io.dlock.Lease lease = client.lock("gate-" + NAMES.incrementAndGet()).tryAcquire().orElseThrow();
        OPENED.add(lease);
        return lease;
    }

    /** A process that waits for its input to end, ended at the end of the test. */
    private static Process process() {
        try {
            Process p = new ProcessBuilder("cat").start();
            OPENED.add(p::destroyForcibly);
            return p;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static BackendContext context() {
        return new BackendContext(LockClientConfig.builder("mem://null-gate").build(), BackendUri.parse("mem://null-gate"),
                Thread::new, events());
    }

    private static BackendEvents events() {
        return new BackendEvents() {
            @Override
            public void leaseLost(String ownerId, io.dlock.LostReason reason) { }

            @Override
            public void allLeasesLost(io.dlock.LostReason reason) { }
        };
    }

    private static TrustManagerFactory trustManagers() {
        try {
            return TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    private static String describe(Executable member) {
        return member.getDeclaringClass().getName() + "." + (member instanceof Constructor<?> ? "<init>" : member.getName())
                + Stream.of(member.getParameterTypes()).map(Class::getSimpleName).toList().toString()
                        .replace('[', '(').replace(']', ')');
    }
}
