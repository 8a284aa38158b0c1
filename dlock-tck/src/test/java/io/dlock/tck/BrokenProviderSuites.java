package io.dlock.tck;

import io.dlock.tck.mem.MemFixture;

/**
 * The TCK run against each deliberately broken provider. Not run by Surefire directly (the
 * names do not end in Test): {@link TckSelfTest} launches them and checks which rules fail.
 */
final class BrokenProviderSuites {

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

    static class ReleaseSuite extends LockProviderTck {
        @Override
        protected TckFixture createFixture() {
            return new BrokenFixture("broken-release");
        }
    }

    static class TokenSuite extends LockProviderTck {
        @Override
        protected TckFixture createFixture() {
            return new BrokenFixture("broken-token");
        }
    }

    static class ValiditySuite extends LockProviderTck {
        @Override
        protected TckFixture createFixture() {
            return new BrokenFixture("broken-validity");
        }
    }

    static class WaitSuite extends LockProviderTck {
        @Override
        protected TckFixture createFixture() {
            return new BrokenFixture("broken-wait");
        }
    }
}
