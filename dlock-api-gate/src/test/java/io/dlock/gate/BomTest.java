package io.dlock.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a user's build resolves: a small project that imports {@code dlock-bom} and depends on
 * {@code dlock-etcd} and {@code dlock-zookeeper}, resolved by Maven itself ({@code dependency:tree}).
 * Without the BOM's netty management it got netty 4.1.118, 4.1.110 and 4.1.105 side by side.
 *
 * <p>It resolves the POMs of this source tree, not whatever an earlier build installed: they are
 * put into a fresh local repository of the test's own, and everything else comes from the build's
 * local repository, read as a {@code file://} mirror of every remote one. So it works offline, in a
 * plain {@code mvn test}, and never writes to the build's local repository.
 */
class BomTest {

    private static final String VERSION = "0.1.0-SNAPSHOT";
    /** The modules whose POMs the user project needs, by artifact id, and where they are in the tree. */
    private static final Map<String, String> POMS = Map.of(
            "dlock-parent", "pom.xml",
            "dlock-bom", "dlock-bom/pom.xml",
            "dlock-api", "dlock-api/pom.xml",
            "dlock-etcd", "dlock-etcd/pom.xml",
            "dlock-zookeeper", "dlock-zookeeper/pom.xml");

    @TempDir
    Path dir;

    @Test
    void aUserOfEtcdAndZooKeeperThatImportsTheBomGetsOneNettyVersion() throws Exception {
        Path tree = dependencyTree();
        Map<String, String> resolved = artifacts(tree);
        String expected = System.getProperty("dlock.version.netty");
        assertTrue(expected != null && !expected.isBlank(), "dlock.version.netty is set by the build");

        Map<String, String> netty = select(resolved, "io.netty:netty-", "io.netty:netty-tcnative");
        assertTrue(netty.size() > 5, "the user gets netty (through jetcd and ZooKeeper): " + resolved.keySet());
        Set<String> versions = new TreeSet<>(netty.values());
        assertEquals(Set.of(expected), versions, "one netty, the version dlock's own tests use: " + netty);

        // the natives of netty's TLS, which ZooKeeper brings at a version of their own: managed too
        Map<String, String> tcnative = select(resolved, "io.netty:netty-tcnative", null);
        assertEquals(1, new TreeSet<>(tcnative.values()).size(), "one tcnative: " + tcnative);

        Map<String, String> grpc = select(resolved, "io.grpc:", null);
        assertFalse(grpc.isEmpty(), "the user gets gRPC (through jetcd)");
        assertEquals(1, new TreeSet<>(grpc.values()).size(), "one gRPC: " + grpc);
        System.out.println("[bom] netty " + versions + " (" + netty.size() + " artifacts), tcnative "
                + new TreeSet<>(tcnative.values()) + ", gRPC " + new TreeSet<>(grpc.values()));
    }

    /** Runs {@code mvn dependency:tree} on the user project; returns its output file. */
    private Path dependencyTree() throws IOException, InterruptedException {
        Path source = Path.of(System.getProperty("user.dir")).getParent();
        Path buildRepo = Path.of(required("dlock.maven.localRepository"));
        Path repo = dir.resolve("repository");
        for (Map.Entry<String, String> pom : POMS.entrySet()) {
            Path to = repo.resolve("io/dlock/" + pom.getKey() + "/" + VERSION + "/" + pom.getKey() + "-" + VERSION + ".pom");
            Files.createDirectories(to.getParent());
            Files.copy(source.resolve(pom.getValue()), to);
        }
        Path settings = dir.resolve("settings.xml");
        Files.writeString(settings, """
                <settings>
                  <mirrors>
                    <mirror>
                      <id>build-repository</id>
                      <mirrorOf>*</mirrorOf>
                      <url>%s</url>
                    </mirror>
                  </mirrors>
                </settings>
                """.formatted(buildRepo.toUri()), StandardCharsets.UTF_8);
        Path project = Files.createDirectories(dir.resolve("user"));
        Files.writeString(project.resolve("pom.xml"), """
                <project xmlns="http://maven.apache.org/POM/4.0.0">
                  <modelVersion>4.0.0</modelVersion>
                  <groupId>example</groupId>
                  <artifactId>dlock-user</artifactId>
                  <version>1</version>
                  <dependencyManagement>
                    <dependencies>
                      <dependency>
                        <groupId>io.dlock</groupId>
                        <artifactId>dlock-bom</artifactId>
                        <version>%1$s</version>
                        <type>pom</type>
                        <scope>import</scope>
                      </dependency>
                    </dependencies>
                  </dependencyManagement>
                  <dependencies>
                    <dependency>
                      <groupId>io.dlock</groupId>
                      <artifactId>dlock-etcd</artifactId>
                    </dependency>
                    <dependency>
                      <groupId>io.dlock</groupId>
                      <artifactId>dlock-zookeeper</artifactId>
                    </dependency>
                  </dependencies>
                  <build>
                    <plugins>
                      <plugin>
                        <groupId>org.apache.maven.plugins</groupId>
                        <artifactId>maven-dependency-plugin</artifactId>
                        <version>%2$s</version>
                      </plugin>
                    </plugins>
                  </build>
                </project>
                """.formatted(VERSION, required("dlock.version.dependencyPlugin")), StandardCharsets.UTF_8);
        Path out = dir.resolve("tree.txt");
        Path log = dir.resolve("maven.log");
        Path mvn = Path.of(required("dlock.maven.home"), "bin", "mvn");
        Process p = new ProcessBuilder(mvn.toString(), "-B", "-ntp", "-s", settings.toString(),
                "-Dmaven.repo.local=" + repo, "-f", project.resolve("pom.xml").toString(),
                "org.apache.maven.plugins:maven-dependency-plugin:" + required("dlock.version.dependencyPlugin")
                        + ":tree", "-DoutputFile=" + out)
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        // generous: a Maven start and a resolution from the local disk take a few seconds
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "mvn dependency:tree finished");
        assertEquals(0, p.exitValue(), "mvn dependency:tree failed:\n" + Files.readString(log));
        return out;
    }

    private static String required(String property) {
        String v = System.getProperty(property);
        assertTrue(v != null && !v.isBlank(), property + " is set by the build (see this module's pom)");
        return v;
    }

    /**
     * The resolved artifacts, {@code group:artifact[:classifier]} to version, from the tree's lines
     * such as {@code |  +- io.netty:netty-handler:jar:4.1.118.Final:compile}.
     */
    private static Map<String, String> artifacts(Path tree) throws IOException {
        List<String> lines = Files.readAllLines(tree, StandardCharsets.UTF_8);
        Map<String, String> out = new TreeMap<>();
        for (String line : lines.subList(1, lines.size())) { // the first is the project itself
            String coordinates = line.replaceFirst("^[|+\\\\\\- ]*", "").trim();
            String[] f = coordinates.split(":");
            if (f.length == 5) {
                out.put(f[0] + ":" + f[1], f[3]);
            } else if (f.length == 6) {
                out.put(f[0] + ":" + f[1] + ":" + f[3], f[4]);
            }
        }
        return out;
    }

    /** The entries whose key starts with {@code prefix} and not with {@code except}. */
    private static Map<String, String> select(Map<String, String> artifacts, String prefix, String except) {
        return artifacts.entrySet().stream()
                .filter(e -> e.getKey().startsWith(prefix) && (except == null || !e.getKey().startsWith(except)))
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (a, b) -> a, TreeMap::new));
    }
}
