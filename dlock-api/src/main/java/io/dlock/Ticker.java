package io.dlock;

/**
 * A source of monotonic time, in nanoseconds, used for every validity and timeout computation.
 *
 * <p>dlock never compares wall clocks across machines: lease validity is computed on the
 * holder's own monotonic clock. The default is {@link System#nanoTime()}; tests inject a
 * controllable ticker through {@link LockClientConfig.Builder#ticker(Ticker)}.
 *
 * <p>Implementations must be thread-safe and must never go backwards.
 */
@FunctionalInterface
public interface Ticker {

    /**
     * Returns the current reading of this ticker.
     *
     * @return nanoseconds since an arbitrary, fixed origin; only differences are meaningful
     */
    long nanoTime();

    /**
     * Returns the ticker backed by {@link System#nanoTime()}.
     *
     * @return the system ticker; never {@code null}
     */
    static Ticker system() {
        return System::nanoTime;
    }
}
