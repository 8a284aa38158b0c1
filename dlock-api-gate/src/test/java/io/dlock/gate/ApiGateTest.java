package io.dlock.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The API gate: the public and protected signatures of every exported package, one file per
 * module under {@code api/}, compared with what the build compiled. A change to the API or SPI —
 * a method added, removed or changed, a type made public — fails here until the file is
 * regenerated on purpose with {@code -Ddlock.api.write=true} and committed, so it shows in review.
 *
 * <p>A module's exported packages come from its {@code module-info}; dlock-zookeeper, which has
 * none (see docs/ARCHITECTURE.md), exports its provider package by convention.
 */
class ApiGateTest {

    /** A class of each module, to find its jar or classes directory; the packages without a module-info. */
    record Gated(String artifact, Class<?> anchor, Set<String> packagesWithoutModuleInfo) { }

    /** The modules whose exported API is gated. */
    static final List<Gated> MODULES = List.of(
            new Gated("dlock-api", io.dlock.LockClient.class, Set.of()),
            new Gated("dlock-tck", io.dlock.tck.LockProviderTck.class, Set.of()),
            new Gated("dlock-redis", io.dlock.redis.RedisLockProvider.class, Set.of()),
            new Gated("dlock-zookeeper", io.dlock.zookeeper.ZooKeeperLockProvider.class, Set.of("io.dlock.zookeeper")),
            new Gated("dlock-etcd", io.dlock.etcd.EtcdLockProvider.class, Set.of()),
            new Gated("dlock-dynamodb", io.dlock.dynamodb.DynamoDbLockProvider.class, Set.of()),
            new Gated("dlock-postgres", io.dlock.postgres.PostgresLockProvider.class, Set.of()),
            new Gated("dlock-micrometer", io.dlock.micrometer.MicrometerLockListener.class, Set.of()),
            new Gated("dlock-spring-integration", io.dlock.spring.integration.DlockLockRegistry.class,
                    Set.of("io.dlock.spring.integration")));

    @TestFactory
    Stream<DynamicTest> exportedSignaturesMatchTheCheckedInFiles() {
        return MODULES.stream().map(m -> DynamicTest.dynamicTest(m.artifact(), () -> {
            String actual = signatures(m);
            assertFalse(actual.isBlank(), m.artifact() + " exports nothing");
            Path file = Path.of("api", m.artifact() + ".txt");
            if (Boolean.getBoolean("dlock.api.write")) {
                Files.createDirectories(file.getParent());
                Files.writeString(file, actual, StandardCharsets.UTF_8);
                return;
            }
            assertTrue(Files.exists(file), file + " is missing: run with -Ddlock.api.write=true and commit it");
            assertEquals(Files.readString(file, StandardCharsets.UTF_8), actual, m.artifact()
                    + "'s exported API changed; if on purpose, regenerate dlock-api-gate/api/ with -Ddlock.api.write=true "
                    + "and commit the difference");
        }));
    }

    private static String signatures(Gated m) throws IOException, URISyntaxException, ClassNotFoundException {
        Set<String> packages = ExportedTypes.packages(m.anchor(), m.packagesWithoutModuleInfo());
        StringBuilder out = new StringBuilder("# exported packages: " + String.join(", ", packages) + "\n");
        for (Class<?> type : ExportedTypes.topLevel(m.anchor(), m.packagesWithoutModuleInfo())) {
            describe(type, out);
        }
        return out.toString();
    }

    private static boolean visible(int modifiers) {
        return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
    }

    private static void describe(Class<?> type, StringBuilder out) {
        if (!visible(type.getModifiers())) {
            return;
        }
        String kind = type.isAnnotation() ? "@interface" : type.isInterface() ? "interface" : type.isEnum() ? "enum"
                : type.isRecord() ? "record" : "class";
        int mods = type.getModifiers() & ~(Modifier.INTERFACE | Modifier.ABSTRACT * (type.isInterface() ? 1 : 0));
        StringBuilder head = new StringBuilder(Modifier.toString(mods)).append(' ').append(kind).append(' ')
                .append(type.getTypeName());
        if (type.getGenericSuperclass() != null && type.getSuperclass() != Object.class && !type.isEnum()
                && !type.isRecord()) {
            head.append(" extends ").append(type.getGenericSuperclass().getTypeName());
        }
        if (type.getGenericInterfaces().length > 0) {
            head.append(type.isInterface() ? " extends " : " implements ").append(Stream.of(type.getGenericInterfaces())
                    .map(java.lang.reflect.Type::getTypeName).collect(Collectors.joining(", ")));
        }
        if (type.isSealed()) {
            head.append(" permits ").append(Stream.of(type.getPermittedSubclasses()).map(Class::getTypeName)
                    .sorted().collect(Collectors.joining(", ")));
        }
        out.append(head).append('\n');
        Set<String> members = new TreeSet<>();
        for (Field f : type.getDeclaredFields()) {
            if (visible(f.getModifiers()) && !f.isSynthetic()) {
                members.add(f.toGenericString().replace(type.getTypeName() + ".", ""));
            }
        }
        for (Constructor<?> c : type.getDeclaredConstructors()) {
            if (visible(c.getModifiers()) && !c.isSynthetic()) {
                members.add(c.toGenericString());
            }
        }
        for (Method m : type.getDeclaredMethods()) {
            if (visible(m.getModifiers()) && !m.isSynthetic() && !m.isBridge()) {
                members.add(m.toGenericString().replace(type.getTypeName() + ".", ""));
            }
        }
        members.forEach(s -> out.append("    ").append(s).append('\n'));
        for (Class<?> nested : Stream.of(type.getDeclaredClasses()).sorted((a, b) -> a.getName().compareTo(b.getName()))
                .toList()) {
            describe(nested, out);
        }
    }
}
