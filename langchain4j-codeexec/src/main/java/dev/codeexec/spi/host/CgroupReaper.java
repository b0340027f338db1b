package dev.codeexec.spi.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Empties and removes control groups: kills what is left in one, and removes it, retried in the background while a
 * killed process is still a zombie. The clean-up half of {@link Cgroups}.
 */
final class CgroupReaper {

    private static final Logger LOG = LoggerFactory.getLogger(Cgroups.class);
    private static final ScheduledExecutorService REAPER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "codeexec-cgroup-reaper");
        t.setDaemon(true);
        return t;
    });

    private static final long SELF = ProcessHandle.current().pid();

    private CgroupReaper() {
    }

    static void killAll(Path dir) {
        try {
            for (String line : Files.readAllLines(dir.resolve("cgroup.procs"), StandardCharsets.US_ASCII)) {
                // Never this JVM: one of its threads may be in the group for a moment, while it starts a run there.
                if (!line.isBlank() && Long.parseLong(line.trim()) != SELF) {
                    ProcessHandle.of(Long.parseLong(line.trim())).ifPresent(ProcessHandle::destroyForcibly);
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // Gone already.
        }
    }

    /** rmdir, retried for a few seconds: a killed process may still be a zombie for a moment. */
    static void removeLater(Path dir, int attempt) {
        try {
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            if (attempt < 50) {
                killAll(dir);
                REAPER.schedule(() -> removeLater(dir, attempt + 1), 100, TimeUnit.MILLISECONDS);
            } else {
                LOG.warn("could not remove cgroup {} after {} attempts: {}", dir, attempt, e.toString());
            }
        }
    }
}
