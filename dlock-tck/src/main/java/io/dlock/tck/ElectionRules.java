package io.dlock.tck;

/**
 * The leader-election rules (E1-E4). They arrive with leader election; until then this class adds
 * no test. Part of the {@link LockProviderTck} chain: provider authors never subclass it directly.
 */
public abstract class ElectionRules extends TckSupport {

    /** For subclasses. */
    protected ElectionRules() { }
}
