package io.dlock.bench.internal.peers;

import com.zaxxer.hikari.HikariDataSource;
import io.dlock.bench.internal.Contender;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbc.JdbcLockProvider;

/**
 * ShedLock's plain-JDBC provider used as a lock, without its scheduler: {@code lock()} with
 * {@code lockAtMostFor} = the benchmark's lease and {@code lockAtLeastFor} = 0, retried after
 * 1 ms while taken (ShedLock does not wait: a task that finds the lock taken is skipped), and
 * {@code unlock()}. Table {@code shedlock} as its documentation gives it. Its lock times are the
 * client's clock; nothing renews a held lock; no fencing token. HikariCP pool of 16.
 */
public final class ShedLockContender implements Contender.OnOneServer {

    @Override
    public String name() {
        return "ShedLock JDBC";
    }

    /** @return false: a blocked acquire polls, as the benchmark's loop does it */
    @Override
    public boolean waits() {
        return false;
    }

    /** @return false: nothing renews a held lock */
    @Override
    public boolean renews() {
        return false;
    }

    @Override
    public Session connect(InetSocketAddress server, Duration lease) {
        HikariDataSource pool = PostgresPeers.pool(server, "shedlock");
        JdbcLockProvider provider = new JdbcLockProvider(pool);
        return new Session() {
            @Override
            public Held acquire(String key) throws InterruptedException {
                while (true) {
                    Optional<SimpleLock> lock = provider.lock(new LockConfiguration(Instant.now(), key, lease, Duration.ZERO));
                    if (lock.isPresent()) {
                        return lock.get()::unlock;
                    }
                    Thread.sleep(1);
                }
            }

            @Override
            public void close() {
                pool.close();
            }
        };
    }
}
