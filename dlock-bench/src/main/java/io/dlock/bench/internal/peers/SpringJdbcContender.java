package io.dlock.bench.internal.peers;

import com.zaxxer.hikari.HikariDataSource;
import io.dlock.bench.internal.Contender;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.locks.Lock;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * Spring Integration's {@code JdbcLockRegistry} on its {@code DefaultLockRepository} (table
 * {@code INT_LOCK}, made by the benchmark from Spring's schema-postgresql.sql), with the
 * benchmark's lease as the repository's time-to-live and its default 100 ms between tries of a
 * blocked {@code lock()}: a lock is a row taken in a serializable transaction, the waiter polls,
 * nothing renews a held lock (its row lapses after the time-to-live unless {@code renewLock} is
 * called), no fencing token. HikariCP pool of 16.
 */
public final class SpringJdbcContender implements Contender.OnOneServer {

    @Override
    public String name() {
        return "Spring JdbcLockRegistry";
    }

    /** @return false: held locks lapse after the time-to-live unless the application renews them */
    @Override
    public boolean renews() {
        return false;
    }

    @Override
    public Session connect(InetSocketAddress server, Duration lease) {
        HikariDataSource pool = PostgresPeers.pool(server, "spring-jdbc");
        DefaultLockRepository repository = new DefaultLockRepository(pool);
        repository.setTimeToLive((int) lease.toMillis());
        repository.setTransactionManager(new DataSourceTransactionManager(pool));
        repository.afterPropertiesSet();
        repository.afterSingletonsInstantiated();
        JdbcLockRegistry registry = new JdbcLockRegistry(repository);
        return new Session() {
            @Override
            public Held acquire(String key) {
                Lock lock = registry.obtain(key);
                lock.lock();
                return lock::unlock;
            }

            @Override
            public void close() {
                repository.close();
                pool.close();
            }
        };
    }
}
