package dev.codeexec.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.ProgramRunner;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.engine.WorkspacePolicy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkspaceRegistryTest {

    private static final Duration TTL = Duration.ofMinutes(10);

    @TempDir
    Path tmp;

    CountingEngine engine;
    AtomicLong clock = new AtomicLong(1_000);
    WorkspaceRegistry registry;
    ExecutorService pool = Executors.newCachedThreadPool();

    @BeforeEach
    void setUp() {
        engine = new CountingEngine(new HostWorkspaceManager(tmp.resolve("base")));
        registry = WorkspaceRegistry.builder(engine).idleTtl(TTL).clock(clock::get).backgroundReaper(false).build();
    }

    @AfterEach
    void tearDown() {
        pool.shutdownNow();
        registry.close();
        engine.close();
    }

    @Test
    void should_create_exactly_one_workspace_when_first_calls_race() throws Exception {
        int n = 16;
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Workspace>> results = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            results.add(pool.submit(() -> {
                start.await();
                return registry.acquire("conv");
            }));
        }

        start.countDown();

        Set<Workspace> seen = ConcurrentHashMap.newKeySet();
        for (Future<Workspace> f : results) {
            seen.add(f.get(30, TimeUnit.SECONDS));
        }
        assertThat(seen).hasSize(1);
        assertThat(engine.creates).hasValue(1);
        assertThat(registry.keys()).containsExactly("conv");
    }

    @Test
    void should_serialise_calls_when_they_share_a_key() throws Exception {
        AtomicInteger active = new AtomicInteger();
        AtomicInteger maxActive = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> calls = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            calls.add(pool.submit(() -> {
                start.await();
                return registry.withWorkspace("k", ws -> {
                    maxActive.accumulateAndGet(active.incrementAndGet(), Math::max);
                    Thread.yield();
                    try {
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    active.decrementAndGet();
                    return null;
                });
            }));
        }

        start.countDown();

        for (Future<?> f : calls) {
            f.get(30, TimeUnit.SECONDS);
        }
        assertThat(maxActive).hasValue(1);
        assertThat(engine.creates).hasValue(1);
    }

    @Test
    void should_run_in_parallel_when_keys_differ() throws Exception {
        CyclicBarrier both = new CyclicBarrier(2);
        Future<Workspace> a = pool.submit(() -> registry.withWorkspace("a", ws -> await(both, ws)));
        Future<Workspace> b = pool.submit(() -> registry.withWorkspace("b", ws -> await(both, ws)));

        // Each call waits inside its lock for the other: only parallel calls get past the barrier.
        assertThat(a.get(30, TimeUnit.SECONDS)).isNotEqualTo(b.get(30, TimeUnit.SECONDS));
        assertThat(registry.keys()).containsExactly("a", "b");
    }

    @Test
    void should_overlap_calls_on_one_key_when_calls_are_not_serial() throws Exception {
        WorkspaceRegistry concurrent = WorkspaceRegistry.builder(engine).idleTtl(TTL).clock(clock::get)
                .backgroundReaper(false).serialCalls(false).build();
        try {
            CyclicBarrier both = new CyclicBarrier(2);
            Future<Workspace> a = pool.submit(() -> concurrent.withWorkspace("k", ws -> await(both, ws)));
            Future<Workspace> b = pool.submit(() -> concurrent.withWorkspace("k", ws -> await(both, ws)));
            // Both calls are inside the same workspace at once: only overlapping calls pass the barrier.
            assertThat(a.get(30, TimeUnit.SECONDS)).isEqualTo(b.get(30, TimeUnit.SECONDS));

            CountDownLatch inside = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Future<Workspace> running = pool.submit(() -> concurrent.withWorkspace("k", ws -> {
                inside.countDown();
                awaitLatch(release);
                return ws;
            }));
            assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();
            clock.addAndGet(TTL.toNanos() * 2);
            assertThat(concurrent.reapIdle()).as("a workspace in use is not reaped").isZero();
            release.countDown();
            running.get(30, TimeUnit.SECONDS);
        } finally {
            concurrent.close();
        }
    }

    @Test
    void should_reap_idle_workspace_when_ttl_passes_on_fake_clock() {
        Workspace a = registry.acquire("a");
        registry.acquire("b");

        clock.addAndGet(TTL.toNanos() / 2);
        registry.acquire("b");
        assertThat(registry.reapIdle()).isZero();

        clock.addAndGet(TTL.toNanos() / 2 + 1);
        assertThat(registry.reapIdle()).isEqualTo(1);

        assertThat(registry.keys()).containsExactly("b");
        assertThat(Path.of(a.path())).doesNotExist();
        assertThat(engine.cleanups).hasValue(1);
        assertThat(registry.acquire("a")).isNotEqualTo(a);
        assertThat(engine.creates).hasValue(3);
    }

    @Test
    void should_not_reap_when_no_ttl_is_set() {
        WorkspaceRegistry noTtl = WorkspaceRegistry.builder(engine).clock(clock::get).build();
        try {
            noTtl.acquire("a");
            clock.addAndGet(Duration.ofDays(365).toNanos());
            assertThat(noTtl.reapIdle()).isZero();
            assertThat(noTtl.keys()).containsExactly("a");
        } finally {
            noTtl.close();
        }
    }

    @Test
    void should_not_reap_workspace_when_a_call_holds_it() throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<Workspace> busy = pool.submit(() -> registry.withWorkspace("busy", ws -> {
            inside.countDown();
            awaitLatch(release);
            return ws;
        }));
        assertThat(inside.await(30, TimeUnit.SECONDS)).isTrue();

        clock.addAndGet(TTL.toNanos() * 5);
        assertThat(registry.reapIdle()).isZero();

        release.countDown();
        Workspace ws = busy.get(30, TimeUnit.SECONDS);
        // The call's end counts as use: not idle yet.
        assertThat(registry.reapIdle()).isZero();
        assertThat(Path.of(ws.path())).isDirectory();
        clock.addAndGet(TTL.toNanos() + 1);
        assertThat(registry.reapIdle()).isEqualTo(1);
    }

    @Test
    void should_recreate_workspace_on_next_call_when_it_was_gone() {
        Workspace first = registry.acquire("k");

        assertThatThrownBy(() -> registry.withWorkspace("k", ws -> {
            throw new WorkspaceGoneException("the workspace no longer exists");
        })).isInstanceOf(WorkspaceGoneException.class);
        Workspace second = registry.acquire("k");

        assertThat(second).isNotEqualTo(first);
        assertThat(engine.creates).hasValue(2);
    }

    @Test
    void should_tell_the_listener_of_every_workspace_closed_reaped_or_found_gone() {
        java.util.List<Workspace> removed = new java.util.concurrent.CopyOnWriteArrayList<>();
        WorkspaceRegistry r = WorkspaceRegistry.builder(engine).idleTtl(TTL).clock(clock::get)
                .backgroundReaper(false).removalListener((key, ws, why) -> {
                    removed.add(ws);
                    throw new IllegalStateException("a failing listener must not fail the removal");
                }).build();
        try {
            Workspace closed = r.acquire("closed");
            Workspace gone = r.acquire("gone");
            Workspace idle = r.acquire("idle");
            Workspace open = r.acquire("open");

            r.close("closed");
            assertThatThrownBy(() -> r.withWorkspace("gone", ws -> {
                throw new WorkspaceGoneException("the workspace no longer exists");
            })).isInstanceOf(WorkspaceGoneException.class);
            clock.addAndGet(TTL.toNanos() + 1);
            r.acquire("open"); // used: not idle
            assertThat(r.reapIdle()).isEqualTo(1);

            assertThat(removed).containsExactly(closed, gone, idle);
            assertThat(Path.of(closed.path())).doesNotExist();
            r.close();
            assertThat(removed).containsExactly(closed, gone, idle, open);
        } finally {
            r.close();
        }
    }

    @Test
    void should_keep_workspace_when_call_fails_otherwise() {
        Workspace first = registry.acquire("k");

        assertThatThrownBy(() -> registry.withWorkspace("k", ws -> {
            throw new IllegalStateException("boom");
        })).isInstanceOf(IllegalStateException.class);

        assertThat(registry.acquire("k")).isEqualTo(first);
    }

    @Test
    void should_remove_workspace_when_key_is_closed() {
        Workspace a = registry.acquire("a");
        Workspace b = registry.acquire("b");

        registry.close("a");
        registry.close("unknown");

        assertThat(Path.of(a.path())).doesNotExist();
        assertThat(Path.of(b.path())).isDirectory();
        assertThat(registry.keys()).containsExactly("b");
        assertThat(registry.acquire("a")).isNotEqualTo(a);
    }

    @Test
    void should_serve_queued_call_in_fresh_workspace_when_key_is_closed_meanwhile() throws Exception {
        Workspace[] queuedResult = new Workspace[1];
        Thread[] queued = new Thread[1];
        Workspace old = registry.withWorkspace("k", ws -> {
            // A second call queues on the key's lock; then the key is closed before that call gets the lock.
            queued[0] = new Thread(() -> queuedResult[0] = registry.acquire("k"), "queued-call");
            queued[0].start();
            waitUntilParked(queued[0]);
            registry.close("k");
            return ws;
        });

        queued[0].join(30_000);

        assertThat(queued[0].isAlive()).isFalse();
        assertThat(queuedResult[0]).isNotNull().isNotEqualTo(old);
        assertThat(Path.of(old.path())).doesNotExist();
        assertThat(Path.of(queuedResult[0].path())).isDirectory();
        assertThat(registry.keys()).containsExactly("k");
    }

    @Test
    void should_remove_all_when_close_all_and_refuse_after_close() {
        Workspace a = registry.acquire("a");
        Workspace b = registry.acquire("b");

        registry.closeAll();

        assertThat(Path.of(a.path())).doesNotExist();
        assertThat(Path.of(b.path())).doesNotExist();
        assertThat(registry.keys()).isEmpty();
        Workspace again = registry.acquire("a");
        assertThat(Path.of(again.path())).isDirectory();

        registry.close();
        registry.close();

        assertThat(Path.of(again.path())).doesNotExist();
        assertThatThrownBy(() -> registry.acquire("new")).isInstanceOf(WorkspaceGoneException.class);
        assertThat(engine.creates).hasValue(3);
        assertThat(registry.keys()).isEmpty();
    }

    @Test
    void should_close_other_keys_when_one_cleanup_fails() {
        Workspace a = registry.acquire("a");
        Workspace b = registry.acquire("b");
        engine.failCleanupOf = a.id();

        assertThatThrownBy(registry::closeAll).isInstanceOf(CodeExecException.class);

        assertThat(Path.of(b.path())).doesNotExist();
        assertThat(registry.keys()).isEmpty();
    }

    @Test
    void should_refuse_when_key_is_blank_or_ttl_is_not_positive() {
        assertThatThrownBy(() -> registry.acquire(" ")).isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> registry.acquire(null)).isInstanceOf(InvalidSpecException.class);
        assertThatThrownBy(() -> WorkspaceRegistry.builder(engine).idleTtl(Duration.ZERO))
                .isInstanceOf(InvalidSpecException.class);
    }

    @Test
    void should_stop_background_reaper_when_closed() {
        WorkspaceRegistry withReaper = WorkspaceRegistry.builder(engine).idleTtl(Duration.ofHours(1)).build();
        withReaper.acquire("x");

        assertThat(reaperThreads()).isNotEmpty();

        withReaper.close();

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!reaperThreads().isEmpty() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(reaperThreads()).isEmpty();
        assertThatCode(withReaper::close).doesNotThrowAnyException();
    }

    private static List<Thread> reaperThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("codeexec-workspace-reaper") && t.isAlive()).toList();
    }

    private static Workspace await(CyclicBarrier barrier, Workspace ws) {
        try {
            barrier.await(30, TimeUnit.SECONDS);
            return ws;
        } catch (Exception e) {
            throw new IllegalStateException("the other key's call did not run in parallel", e);
        }
    }

    private static void awaitLatch(CountDownLatch latch) {
        try {
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("latch not released");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Waits until {@code t} is parked, which here means: waiting for the key's lock. */
    private static void waitUntilParked(Thread t) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (t.getState() != Thread.State.WAITING && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        if (t.getState() != Thread.State.WAITING) {
            throw new IllegalStateException("the queued call never waited for the lock: " + t.getState());
        }
    }

    /** An engine that only manages workspaces, counting creations and cleanups. */
    static final class CountingEngine implements Engine {
        final HostWorkspaceManager delegate;
        final AtomicInteger creates = new AtomicInteger();
        final AtomicInteger cleanups = new AtomicInteger();
        volatile String failCleanupOf;
        private final WorkspaceManager manager = new WorkspaceManager() {
            @Override
            public Workspace createWorkspace(String execId, WorkspacePolicy policy) {
                creates.incrementAndGet();
                return delegate.createWorkspace(execId, policy);
            }

            @Override
            public void cleanup(Workspace workspace) {
                cleanups.incrementAndGet();
                if (workspace.id().equals(failCleanupOf)) {
                    throw new CodeExecException("cleanup failed for the test");
                }
                delegate.cleanup(workspace);
            }
        };

        CountingEngine(HostWorkspaceManager delegate) {
            this.delegate = delegate;
        }

        @Override
        public String name() {
            return "counting";
        }

        @Override
        public WorkspaceManager manager() {
            return manager;
        }

        @Override
        public WorkspaceFS fs() {
            throw new UnsupportedOperationException();
        }

        @Override
        public ProgramRunner runner() {
            throw new UnsupportedOperationException();
        }

        @Override
        public Capabilities describe() {
            return Capabilities.builder().build();
        }

        @Override
        public void close() {
            failCleanupOf = null;
            delegate.close();
        }
    }
}
