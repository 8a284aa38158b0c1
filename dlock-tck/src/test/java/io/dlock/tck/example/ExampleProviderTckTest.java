package io.dlock.tck.example;

import io.dlock.LockClientConfig;
import io.dlock.tck.FreezableClient;
import io.dlock.tck.LinkedClients;
import io.dlock.tck.LockProviderTck;
import io.dlock.tck.TckFixture;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * docs/TCK.md's example provider through the whole contract suite: a fresh store per fixture, and
 * freezable clients through {@link LinkedClients}, since no proxy can stand in front of a map.
 */
class ExampleProviderTckTest extends LockProviderTck {

    private static final AtomicInteger STORES = new AtomicInteger();

    @Override
    protected TckFixture createFixture() {
        String uri = "example://tck-" + STORES.incrementAndGet();
        return new TckFixture() {
            @Override
            public String name() {
                return "example";
            }

            @Override
            public LockClientConfig.Builder clientConfig() {
                return LockClientConfig.builder(uri);
            }

            @Override
            public Optional<FreezableClient> openFreezable(LockClientConfig.Builder config) {
                return Optional.of(LinkedClients.open(config.build(), new ExampleProvider()));
            }

            @Override
            public boolean reportable() {
                return false; // an example, not a column of the compatibility report
            }

            @Override
            public void close() {
                // the store lives in the JVM; each fixture uses a new one
            }
        };
    }
}
