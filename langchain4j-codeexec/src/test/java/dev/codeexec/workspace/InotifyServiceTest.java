package dev.codeexec.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.codeexec.engine.FileChange;
import dev.codeexec.engine.FileChangeTracker;
import dev.codeexec.engine.FileChanges;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shared inotify service under many conversations looking at once: one caller drains the watch service for the
 * others (so callers share the wait), and yet every look still sees every change its caller made before it (counted,
 * not timed).
 */
class InotifyServiceTest {

    static final int THREADS = 8;
    static final int LOOKS = 25;

    @TempDir
    Path tmp;

    HostWorkspaceManager manager;
    HostWorkspaceFS fs;
    ExecutorService pool;
    InotifyService service;

    @BeforeEach
    void setUp() {
        service = InotifyService.acquire();
        assumeTrue(service != null, "no inotify on this host");
        manager = new HostWorkspaceManager(tmp.resolve("base"));
        fs = HostWorkspaceFS.builder().hostPaths(manager::hostPath).build();
        pool = Executors.newFixedThreadPool(THREADS);
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        if (service == null) {
            return;
        }
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
        manager.close();
        service.release();
    }

    @Test
    void should_report_every_file_a_caller_wrote_before_its_look_when_conversations_look_at_once() throws Exception {
        CyclicBarrier start = new CyclicBarrier(THREADS);
        List<Future<List<String>>> results = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            Workspace ws = manager.createWorkspace("c" + i, WorkspacePolicy.DEFAULT);
            Path root = Path.of(ws.path());
            results.add(pool.submit(() -> {
                List<String> wrong = new ArrayList<>();
                try (FileChangeTracker t = fs.trackChanges(ws, List.of("work", "out"))) {
                    start.await();
                    for (int k = 0; k < LOOKS; k++) {
                        Files.writeString(root.resolve("work/f" + k + ".txt"), "x".repeat(k));
                        List<String> seen = lines(t.changes());
                        if (!seen.equals(List.of("+ work/f" + k + ".txt " + k))) {
                            wrong.add(ws.id() + " look " + k + ": " + seen);
                        }
                    }
                }
                return wrong;
            }));
        }
        for (Future<List<String>> f : results) {
            assertThat(f.get(60, TimeUnit.SECONDS)).as("looks that missed or misplaced a change").isEmpty();
        }
    }

    @Test
    void should_let_one_caller_drain_for_others_when_callers_sync_at_once() throws Exception {
        boolean shared = false;
        for (int attempt = 0; attempt < 10 && !shared; attempt++) {
            long drainsBefore = service.drains();
            long syncsBefore = service.syncs();
            CyclicBarrier start = new CyclicBarrier(THREADS);
            List<Future<Boolean>> callers = new ArrayList<>();
            for (int i = 0; i < THREADS; i++) {
                callers.add(pool.submit(() -> {
                    start.await();
                    boolean all = true;
                    for (int k = 0; k < LOOKS; k++) {
                        all &= service.sync();
                    }
                    return all;
                }));
            }
            for (Future<Boolean> f : callers) {
                assertThat(f.get(60, TimeUnit.SECONDS)).as("every sync completed").isTrue();
            }
            long syncs = service.syncs() - syncsBefore;
            long drains = service.drains() - drainsBefore;
            assertThat(syncs).isGreaterThanOrEqualTo((long) THREADS * LOOKS);
            assertThat(drains).isPositive().isLessThanOrEqualTo(syncs);
            shared = drains < syncs;
        }
        assertThat(shared).as("in at least one of the attempts, a caller's sentinel was handed over by another's drain")
                .isTrue();
    }

    static List<String> lines(FileChanges c) {
        assertThat(c.complete()).as("compared").isTrue();
        List<String> out = new ArrayList<>();
        for (FileChange f : c.changes()) {
            out.add((f.kind() == FileChange.Kind.CREATED ? "+ " : f.kind() == FileChange.Kind.MODIFIED ? "~ " : "- ")
                    + f.path() + (f.kind() == FileChange.Kind.DELETED ? "" : " " + f.sizeBytes()));
        }
        return out;
    }
}
