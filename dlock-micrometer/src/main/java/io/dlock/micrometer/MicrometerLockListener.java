package io.dlock.micrometer;

import io.dlock.AcquireOutcome;
import io.dlock.LockListener;
import io.dlock.LostReason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link LockListener} that records Micrometer meters. Give it to every client:
 *
 * <pre>{@code
 * LockListener metrics = MicrometerLockListener.create(registry);
 * LockClient client = LockClient.open(LockClientConfig.builder(uri).listener(metrics).build());
 * }</pre>
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 *   <tr><td>{@value #ACQUIRE}</td><td>timer</td><td>backend, outcome</td>
 *       <td>one per call to acquire a lock; its time is how long the call waited. Outcomes:
 *       {@code acquired, contended, timed_out, interrupted, cancelled, failed}</td></tr>
 *   <tr><td>{@value #HOLD}</td><td>timer</td><td>backend</td>
 *       <td>how long released leases were held, from the grant to the release</td></tr>
 *   <tr><td>{@value #RENEWALS}</td><td>counter</td><td>backend, result</td>
 *       <td>lease renewals, {@code result} {@code success} or {@code failure} (a backend error,
 *       retried while the lease is valid)</td></tr>
 *   <tr><td>{@value #LOST}</td><td>counter</td><td>backend, reason</td>
 *       <td>leases that ended without their release, {@code reason} {@code expired},
 *       {@code superseded} or {@code session_lost}</td></tr>
 *   <tr><td>{@value #HELD}</td><td>gauge</td><td>backend</td>
 *       <td>leases held now: acquired, minus released and lost</td></tr>
 * </table>
 *
 * <p>{@code backend} is the provider's name ({@code redis}, {@code zookeeper}, {@code etcd},
 * {@code dynamodb}, {@code mem}), learned from each client (see
 * {@link LockListener#forClient(String)}) unless {@link Builder#backend(String)} sets it.
 * {@link Builder#tagLockNames(boolean)} adds a {@code lock} tag with the lock name to every meter;
 * it is off by default because lock names are often unbounded (one per order, per job run), and
 * every distinct name then stays in the registry as its own time series.
 *
 * <p>Thread-safe. One listener may serve any number of clients; listeners on the same registry
 * share the held-locks gauges, so that two listeners never hide each other's counts.
 */
public final class MicrometerLockListener implements LockListener {

    /** Timer: calls to acquire a lock, by outcome, timed by how long they waited. */
    public static final String ACQUIRE = "dlock.acquire";
    /** Timer: how long released leases were held. */
    public static final String HOLD = "dlock.hold";
    /** Counter: lease renewals, by result ({@code success}, {@code failure}). */
    public static final String RENEWALS = "dlock.renewals";
    /** Counter: leases lost, by reason ({@code expired}, {@code superseded}, {@code session_lost}). */
    public static final String LOST = "dlock.leases.lost";
    /** Gauge: leases held now. */
    public static final String HELD = "dlock.locks.held";

    /** Tag: the backend's provider name. */
    public static final String TAG_BACKEND = "backend";
    /** Tag: the lock name, only with {@link Builder#tagLockNames(boolean)}. */
    public static final String TAG_LOCK = "lock";
    /** Tag of {@value #ACQUIRE}: how the call ended, an {@link AcquireOutcome} in lower case. */
    public static final String TAG_OUTCOME = "outcome";
    /** Tag of {@value #RENEWALS}: {@code success} or {@code failure}. */
    public static final String TAG_RESULT = "result";
    /** Tag of {@value #LOST}: a {@link LostReason} in lower case. */
    public static final String TAG_REASON = "reason";
    /** The {@code backend} tag of events that reach the listener without a client naming its backend. */
    public static final String UNKNOWN_BACKEND = "unknown";

    private static final Set<String> OWN_TAGS = Set.of(TAG_BACKEND, TAG_LOCK, TAG_OUTCOME, TAG_RESULT, TAG_REASON);

    /**
     * The held-locks counts of every listener, per registry: a registry keeps the first gauge
     * registered for a name and tags, so listeners that share a registry must share its count.
     */
    private static final Map<MeterRegistry, ConcurrentMap<Tags, AtomicLong>> HELD_COUNTS =
            Collections.synchronizedMap(new WeakHashMap<>());

    private final MeterRegistry registry;
    private final String fixedBackend; // null: learned from each client
    private final String backend;
    private final boolean tagLockNames;
    private final Tags extraTags;
    private final Tags baseTags;
    private final ConcurrentMap<Tags, AtomicLong> heldCounts;
    private final ConcurrentMap<String, MicrometerLockListener> perProvider = new ConcurrentHashMap<>();
    // the meters without a lock tag, registered up front (so that they show zero before the first
    // event) once the backend is known; null otherwise
    private final Map<AcquireOutcome, Timer> acquireTimers;
    private final Map<LostReason, Counter> lostCounters;
    private final Timer holdTimer;
    private final Counter renewedCounter;
    private final Counter renewFailedCounter;
    private final AtomicLong heldCount;

    private MicrometerLockListener(MeterRegistry registry, String fixedBackend, String backend, boolean tagLockNames,
                                   Tags extraTags) {
        this.registry = registry;
        this.fixedBackend = fixedBackend;
        this.backend = backend;
        this.tagLockNames = tagLockNames;
        this.extraTags = extraTags;
        this.baseTags = extraTags.and(TAG_BACKEND, backend);
        this.heldCounts = HELD_COUNTS.computeIfAbsent(registry, r -> new ConcurrentHashMap<>());
        if (tagLockNames || backend.equals(UNKNOWN_BACKEND)) {
            acquireTimers = null;
            lostCounters = null;
            holdTimer = null;
            renewedCounter = null;
            renewFailedCounter = null;
            heldCount = null;
            return;
        }
        acquireTimers = new EnumMap<>(AcquireOutcome.class);
        for (AcquireOutcome o : AcquireOutcome.values()) {
            acquireTimers.put(o, acquireTimer(baseTags, o));
        }
        lostCounters = new EnumMap<>(LostReason.class);
        for (LostReason r : LostReason.values()) {
            lostCounters.put(r, lostCounter(baseTags, r));
        }
        holdTimer = holdTimer(baseTags);
        renewedCounter = renewalCounter(baseTags, "success");
        renewFailedCounter = renewalCounter(baseTags, "failure");
        heldCount = held(baseTags);
    }

    /**
     * Creates a listener with the defaults: the backend tag learned from each client, no lock
     * name tag.
     *
     * @param registry where the meters go
     * @return the listener
     * @throws IllegalArgumentException if {@code registry} is null
     */
    public static MicrometerLockListener create(MeterRegistry registry) {
        return builder(registry).build();
    }

    /**
     * Starts building a listener.
     *
     * @param registry where the meters go
     * @return a builder
     * @throws IllegalArgumentException if {@code registry} is null
     */
    public static Builder builder(MeterRegistry registry) {
        if (registry == null) {
            throw new IllegalArgumentException("registry must not be null");
        }
        return new Builder(registry);
    }

    /**
     * Returns a listener whose meters carry {@code backend=providerName}, unless this listener's
     * backend was set by {@link Builder#backend(String)}.
     *
     * @param providerName the client's provider name
     * @return the listener for that client
     */
    @Override
    public LockListener forClient(String providerName) {
        if (fixedBackend != null || providerName == null || providerName.isBlank() || providerName.equals(backend)) {
            return this;
        }
        return perProvider.computeIfAbsent(providerName,
                p -> new MicrometerLockListener(registry, null, p, tagLockNames, extraTags));
    }

    /** @return the value of this listener's {@code backend} tag */
    String backend() {
        return backend;
    }

    @Override
    public void acquireFinished(String lockName, AcquireOutcome outcome, Duration waited) {
        (acquireTimers != null ? acquireTimers.get(outcome) : acquireTimer(tags(lockName), outcome)).record(waited);
        if (outcome == AcquireOutcome.ACQUIRED) {
            held(lockName).incrementAndGet();
        }
    }

    @Override
    public void released(String lockName, long fencingToken, Duration held) {
        (holdTimer != null ? holdTimer : holdTimer(tags(lockName))).record(held);
        held(lockName).decrementAndGet();
    }

    @Override
    public void renewed(String lockName, long fencingToken) {
        (renewedCounter != null ? renewedCounter : renewalCounter(tags(lockName), "success")).increment();
    }

    @Override
    public void renewalFailed(String lockName, long fencingToken, Throwable cause) {
        (renewFailedCounter != null ? renewFailedCounter : renewalCounter(tags(lockName), "failure")).increment();
    }

    @Override
    public void leaseLost(String lockName, long fencingToken, LostReason reason) {
        (lostCounters != null ? lostCounters.get(reason) : lostCounter(tags(lockName), reason)).increment();
        held(lockName).decrementAndGet();
    }

    /** @return the tags of an event on a lock: with its name if lock names are tagged */
    private Tags tags(String lockName) {
        return tagLockNames ? baseTags.and(TAG_LOCK, lockName) : baseTags;
    }

    private AtomicLong held(String lockName) {
        return heldCount != null ? heldCount : held(tags(lockName));
    }

    private AtomicLong held(Tags tags) {
        AtomicLong count = heldCounts.get(tags);
        if (count != null) {
            return count;
        }
        return heldCounts.computeIfAbsent(tags, t -> {
            AtomicLong c = new AtomicLong();
            Gauge.builder(HELD, c, AtomicLong::get).tags(t).description("dlock leases held now").register(registry);
            return c;
        });
    }

    private Timer acquireTimer(Tags tags, AcquireOutcome outcome) {
        return Timer.builder(ACQUIRE).tags(tags).tag(TAG_OUTCOME, outcome.name().toLowerCase(Locale.ROOT))
                .description("calls to acquire a dlock lock, by outcome, timed by how long they waited")
                .register(registry);
    }

    private Timer holdTimer(Tags tags) {
        return Timer.builder(HOLD).tags(tags).description("how long released dlock leases were held")
                .register(registry);
    }

    private Counter renewalCounter(Tags tags, String result) {
        return Counter.builder(RENEWALS).tags(tags).tag(TAG_RESULT, result)
                .description("dlock lease renewals, by result").register(registry);
    }

    private Counter lostCounter(Tags tags, LostReason reason) {
        return Counter.builder(LOST).tags(tags).tag(TAG_REASON, reason.name().toLowerCase(Locale.ROOT))
                .description("dlock leases lost without their release, by reason").register(registry);
    }

    @Override
    public String toString() {
        return "MicrometerLockListener{backend=" + (fixedBackend != null || !backend.equals(UNKNOWN_BACKEND) ? backend
                : "(each client's)")
                + ", tagLockNames=" + tagLockNames + (extraTags.stream().findAny().isPresent() ? ", tags=" + extraTags : "")
                + "}";
    }

    /** Builds a {@link MicrometerLockListener}. Not thread-safe. */
    public static final class Builder {
        private final MeterRegistry registry;
        private String backend;
        private boolean tagLockNames;
        private Tags tags = Tags.empty();

        private Builder(MeterRegistry registry) {
            this.registry = registry;
        }

        /**
         * Sets the {@code backend} tag for every client, instead of the provider name each client
         * tells the listener.
         *
         * @param backend the tag value, e.g. {@code redis}
         * @return this builder
         * @throws IllegalArgumentException if {@code backend} is null or blank
         */
        public Builder backend(String backend) {
            if (backend == null || backend.isBlank()) {
                throw new IllegalArgumentException("backend must not be null or blank, was "
                        + (backend == null ? "null" : "'" + backend + "'"));
            }
            this.backend = backend;
            return this;
        }

        /**
         * Tags every meter with the lock name ({@code lock}). Off by default: each distinct lock
         * name becomes its own time series in the registry and stays there, so turn it on only
         * for a small, fixed set of names.
         *
         * @param tagLockNames whether to add the {@code lock} tag
         * @return this builder
         */
        public Builder tagLockNames(boolean tagLockNames) {
            this.tagLockNames = tagLockNames;
            return this;
        }

        /**
         * Adds tags to every meter (say, which part of the application the clients serve).
         *
         * @param tags the tags
         * @return this builder
         * @throws IllegalArgumentException if {@code tags} is null or uses a tag key of this listener
         */
        public Builder tags(Iterable<Tag> tags) {
            if (tags == null) {
                throw new IllegalArgumentException("tags must not be null");
            }
            Tags added = Tags.of(tags);
            for (Tag t : added) {
                if (OWN_TAGS.contains(t.getKey())) {
                    throw new IllegalArgumentException("tags must not use the key '" + t.getKey()
                            + "': the listener sets it");
                }
            }
            this.tags = this.tags.and(added);
            return this;
        }

        /**
         * Builds the listener. Its meters without a lock tag are registered now.
         *
         * @return the listener
         */
        public MicrometerLockListener build() {
            return new MicrometerLockListener(registry, backend, backend != null ? backend : UNKNOWN_BACKEND,
                    tagLockNames, tags);
        }
    }
}
