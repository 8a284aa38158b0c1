package io.dlock.internal;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Captures what slf4j-simple writes (to System.err, looked up on every write). */
final class LogCapture implements AutoCloseable {

    /** Every logger of the core (each class logs under the name of the API type it implements). */
    private static final List<String> CORE_LOGGERS = List.of("io.dlock.LockClient", "io.dlock.Lease",
            "io.dlock.LockListener", "io.dlock.LeaderElection", "io.dlock.internal.Renewer");
    private static final int TRACE = 0; // slf4j-simple's LOG_LEVEL_TRACE

    private final PrintStream original = System.err;
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final List<Runnable> restore = new ArrayList<>();

    LogCapture() {
        System.setErr(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    }

    /**
     * Captures every level, TRACE included, of the core's loggers until closed. slf4j-simple fixes
     * a logger's level when it is made, so this sets the level field of the (cached) logger.
     */
    static LogCapture everyLevel() {
        LogCapture capture = new LogCapture();
        try {
            for (String name : CORE_LOGGERS) {
                Logger logger = LoggerFactory.getLogger(name);
                Field level = logger.getClass().getDeclaredField("currentLogLevel");
                level.setAccessible(true);
                int before = level.getInt(logger);
                level.setInt(logger, TRACE);
                capture.restore.add(() -> {
                    try {
                        level.setInt(logger, before);
                    } catch (IllegalAccessException e) {
                        throw new AssertionError(e);
                    }
                });
            }
        } catch (ReflectiveOperationException e) {
            capture.close();
            throw new AssertionError("the tests expect slf4j-simple as the SLF4J binding", e);
        }
        return capture;
    }

    String text() {
        System.err.flush();
        return bytes.toString(StandardCharsets.UTF_8);
    }

    /**
     * @param level e.g. {@code WARN}
     * @return the log lines at that level (not the stack trace lines after them)
     */
    List<String> lines(String level) {
        Pattern p = Pattern.compile("^\\[[^\\]]*\\] " + level + " .*");
        return text().lines().filter(l -> p.matcher(l).matches()).collect(Collectors.toList());
    }

    @Override
    public void close() {
        restore.forEach(Runnable::run);
        System.setErr(original);
        original.print(text());
    }
}
