package io.dlock.tck;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Gives each TCK run its settings from the JUnit Platform's configuration parameters (which fall
 * back to system properties), and runs only the rules {@code dlock.tck.rules} selects: a comma-
 * separated list of rule IDs or prefixes, e.g. {@code S1,S7,L} (every L rule), or {@code -N1} to
 * leave one out. Rules not selected are reported as disabled, not as passed.
 */
public final class TckSettings implements BeforeAllCallback, ExecutionCondition {

    /** Creates the extension (JUnit does this). */
    public TckSettings() { }

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getTestInstance().filter(i -> i instanceof TckSupport)
                .ifPresent(i -> ((TckSupport) i).useSettings(context::getConfigurationParameter));
    }

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        Optional<Rule> rule = context.getTestMethod().flatMap(m -> Rule.ofMethod(m.getName()));
        Optional<String> selection = context.getConfigurationParameter("dlock.tck.rules").filter(v -> !v.isBlank());
        if (rule.isEmpty() || selection.isEmpty()) {
            return ConditionEvaluationResult.enabled("no rule selection");
        }
        return selected(rule.get(), selection.get())
                ? ConditionEvaluationResult.enabled(rule.get() + " selected")
                : ConditionEvaluationResult.disabled(rule.get() + " not selected by dlock.tck.rules=" + selection.get());
    }

    /**
     * Tells whether a selection picks a rule.
     *
     * @param rule the rule
     * @param selection IDs or prefixes, comma-separated; an entry starting with '-' leaves rules out
     * @return true if some entry includes the rule (or only exclusions are given) and none excludes it
     */
    static boolean selected(Rule rule, String selection) {
        boolean anyInclude = false;
        boolean included = false;
        for (String raw : Arrays.asList(selection.split(","))) {
            String entry = raw.trim().toUpperCase(Locale.ROOT);
            if (entry.isEmpty()) {
                continue;
            }
            if (entry.startsWith("-")) {
                if (matches(rule, entry.substring(1))) {
                    return false;
                }
            } else {
                anyInclude = true;
                included |= matches(rule, entry);
            }
        }
        return !anyInclude || included;
    }

    private static boolean matches(Rule rule, String entry) {
        return rule.name().equals(entry) || (entry.length() == 1 && rule.name().startsWith(entry));
    }
}
