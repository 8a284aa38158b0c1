package io.dlock.tck;

import io.dlock.tck.mem.MemFixture;

/**
 * The TCK run against a deliberately broken provider, chosen per run by the configuration
 * parameter {@code dlock.tck.selftest.scheme}. Not run by Surefire directly (the names do not end
 * in Test): {@link TckSelfTest} launches them and checks which rules fail.
 */
final class BrokenProviderSuites {

    /** The configuration parameter naming the broken provider's scheme. */
    static final String SCHEME = "dlock.tck.selftest.scheme";

    private BrokenProviderSuites() { }

    /** A fixture for a broken provider: the reference server, opened through the broken scheme. */
    static final class BrokenFixture extends MemFixture {
        BrokenFixture(String scheme) {
            super(scheme);
        }

        @Override
        public boolean reportable() {
            return false;
        }
    }

    /** The contract suite on the broken provider named by the run's settings. */
    static class Contract extends LockProviderTck {
        @Override
        protected TckFixture createFixture() {
            return new BrokenFixture(setting(SCHEME).orElseThrow());
        }
    }

    /** The fault tier on the broken provider named by the run's settings. */
    static class Faults extends FaultToleranceTck {
        @Override
        protected TckFixture createFixture() {
            return new BrokenFixture(setting(SCHEME).orElseThrow());
        }
    }
}
