package io.dlock.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/**
 * The TCK tests itself: each deliberately broken provider must fail exactly the rule its bug
 * breaks, and pass (or skip) every other rule. A TCK that let a broken provider through, or that
 * failed a correct one for the wrong reason, would be caught here.
 */
@Execution(ExecutionMode.SAME_THREAD)
class TckSelfTest {

    /** Runs one suite through the JUnit Platform and returns rule -> outcome. */
    private static Map<Rule, TestExecutionResult.Status> run(Class<?> suite) {
        Map<Rule, TestExecutionResult.Status> outcomes = new ConcurrentHashMap<>();
        Map<Rule, String> failures = new ConcurrentHashMap<>();
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request().selectors(selectClass(suite)).build();
        Launcher launcher = LauncherFactory.create();
        launcher.execute(request, new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                id.getSource().filter(s -> s instanceof MethodSource).map(s -> (MethodSource) s)
                        .flatMap(m -> Rule.ofMethod(m.getMethodName())).ifPresent(rule -> {
                            outcomes.put(rule, result.getStatus());
                            result.getThrowable().ifPresent(t -> failures.put(rule, String.valueOf(t.getMessage())));
                        });
            }

            @Override
            public void executionSkipped(TestIdentifier id, String reason) {
                id.getSource().filter(s -> s instanceof MethodSource).map(s -> (MethodSource) s)
                        .flatMap(m -> Rule.ofMethod(m.getMethodName()))
                        .ifPresent(rule -> outcomes.put(rule, TestExecutionResult.Status.ABORTED));
            }
        });
        System.out.println("[dlock-tck self-test] " + suite.getSimpleName() + ": " + new TreeMap<>(outcomes));
        failures.forEach((rule, message) -> System.out.println("[dlock-tck self-test]   " + rule + ": "
                + message.split("\n", 2)[0]));
        return outcomes;
    }

    private static void assertFailsExactly(Class<?> suite, Rule... broken) {
        Map<Rule, TestExecutionResult.Status> outcomes = run(suite);
        Set<Rule> failed = new TreeSet<>();
        outcomes.forEach((rule, status) -> {
            if (status == TestExecutionResult.Status.FAILED) {
                failed.add(rule);
            }
        });
        assertEquals(Set.of(broken), failed, suite.getSimpleName() + " must fail exactly " + Set.of(broken)
                + "; outcomes: " + new TreeMap<>(outcomes));
        assertTrue(outcomes.size() >= 18, "every rule ran: " + outcomes.keySet());
    }

    @Test
    void releaseWithoutOwnerCheckFailsS3AndTheCrashedLeadersReturnE2() {
        // E2: the crashed leader's release, held back by its stalled network, frees the new leader's lock
        assertFailsExactly(BrokenProviderSuites.ReleaseSuite.class, Rule.S3, Rule.E2);
    }

    @Test
    void tokenCountedByTheClientFailsS2TheFenceS8AndEveryElectionRule() {
        // a term is a token: leaders on different clients repeat terms (E1-E3), and holder() shows the
        // server's token, not the one the leader was given (E4)
        assertFailsExactly(BrokenProviderSuites.TokenSuite.class, Rule.S2, Rule.S8, Rule.E1, Rule.E2, Rule.E3, Rule.E4);
    }

    @Test
    void validityThatNeverEndsFailsS7AndTheCrashedLeaderE2() {
        // E2: the crashed leader is never told, so a successor is elected while it still believes it leads
        assertFailsExactly(BrokenProviderSuites.ValiditySuite.class, Rule.S7, Rule.E2);
    }

    @Test
    void waitThatIgnoresItsTimeoutFailsL4() {
        assertFailsExactly(BrokenProviderSuites.WaitSuite.class, Rule.L4);
    }
}
