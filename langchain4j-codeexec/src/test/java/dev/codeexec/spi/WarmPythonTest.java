package dev.codeexec.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.CodeLanguage;
import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.Isolation;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.StdStream;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The warm path's pool over a scripted engine with no process behind it: when a block is handed to a spare, when it
 * runs fresh instead, and that spares are bounded, replaced and killed.
 */
class WarmPythonTest {

    private static final Workspace WS = new Workspace("ws1", "/nowhere/ws1");
    private static final RunProgramSpec BLOCK = RunProgramSpec.builder("python3").args("../runs/code_0.py")
            .cwd("work").cleanEnv(true).timeout(Duration.ofSeconds(30)).build();

    /** A program the test scripts: spares wait; fresh runs end at once with "fresh". */
    static final class Proc implements ChannelProcess {
        final ProgramLaunch launch;
        final OutputSink sink;
        final CompletableFuture<Integer> exit = new CompletableFuture<>();
        final CompletableFuture<Void> outputEnd = new CompletableFuture<>();
        final ByteArrayOutputStream stdin = new ByteArrayOutputStream();
        final AtomicBoolean stdinClosed = new AtomicBoolean();
        final AtomicInteger kills = new AtomicInteger();
        volatile boolean stdinFails;

        Proc(ProgramLaunch launch, OutputSink sink) {
            this.launch = launch;
            this.sink = sink;
        }

        boolean spare() {
            return launch.argv().contains("-c");
        }

        void end(String out, String err, int status) {
            sink.write(StdStream.STDOUT, out.getBytes(StandardCharsets.UTF_8), 0, out.length());
            sink.write(StdStream.STDERR, err.getBytes(StandardCharsets.UTF_8), 0, err.length());
            outputEnd.complete(null);
            exit.complete(status);
        }

        @Override
        public OutputStream stdin() {
            return new OutputStream() {
                @Override
                public void write(int b) throws IOException {
                    if (stdinFails || exit.isDone()) {
                        throw new IOException("gone");
                    }
                    stdin.write(b);
                }

                @Override
                public void close() {
                    stdinClosed.set(true);
                }
            };
        }

        // One line each: the futures are the whole of this fake's state.
        @Override public CompletableFuture<Integer> exit() { return exit; }
        @Override public CompletableFuture<Void> outputEnd() { return outputEnd; }
        @Override public void signal(ProgramSignal signal) { }

        @Override
        public void killTree() {
            kills.incrementAndGet();
            end("", "", 137);
        }
    }

    static final class Builder extends EngineBuilder<Builder> {
    }

    /** An engine whose programs are {@link Proc}s; a handed-off spare prints what it was given. */
    static final class FakeEngine extends AbstractEngine {
        final List<Proc> started = Collections.synchronizedList(new ArrayList<>());
        final AtomicInteger released = new AtomicInteger();
        volatile Object key = Boolean.TRUE;

        FakeEngine() {
            super("FakeEngine", new Builder(), ShellEnvironmentPolicy.inheritAll(), null);
        }

        @Override
        protected PreparedRun prepare(Workspace ws, RunProgramSpec spec) {
            List<String> argv = new ArrayList<>();
            argv.add(spec.cmd());
            argv.addAll(spec.args());
            ProcessChannel ch = (launch, sink) -> {
                Proc p = new Proc(launch, sink);
                started.add(p);
                if (!p.spare()) {
                    p.end("fresh\n", "", 0);
                }
                return p;
            };
            return new PreparedRun(ch, new ProgramLaunch(argv, Map.of(), "/w", spec.stdin(), spec.timeout(), 1024,
                    null)) {
                @Override
                public void release() {
                    released.incrementAndGet();
                }
            };
        }

        @Override
        protected Object warmSpareKey(Workspace ws) {
            return key;
        }

        @Override
        protected void closeBackend() {
        }

        @Override
        public String name() {
            return "fake";
        }

        @Override
        public WorkspaceManager manager() {
            return null;
        }

        @Override
        public WorkspaceFS fs() {
            return null;
        }

        @Override
        public Capabilities describe() {
            return Capabilities.builder().isolation(Isolation.NONE).supportsCleanEnv(true).build();
        }

        List<Proc> spares() {
            return started.stream().filter(Proc::spare).toList();
        }
    }

    private final AtomicLong clock = new AtomicLong();
    private final FakeEngine engine = new FakeEngine();
    private final WarmPython warm = new WarmPython(engine, clock::get);

    @AfterEach
    void closePool() {
        warm.close();
    }

    /** Runs a first block (fresh), which starts the workspace's spare, and returns the spare. */
    private Proc primed() {
        warm.run(CodeLanguage.PYTHON, WS, BLOCK);
        return engine.spares().get(0);
    }

    @Test
    void should_run_the_first_block_fresh_and_start_a_spare_for_the_next() {

        RunResult r = warm.run(CodeLanguage.PYTHON, WS, BLOCK);

        assertThat(r.stdout()).isEqualTo("fresh\n");
        assertThat(engine.spares()).hasSize(1);
        Proc spare = engine.spares().get(0);
        assertThat(spare.launch.argv()).containsExactly("python3", "-c", WarmPython.STUB);
        assertThat(spare.launch.directory()).isEqualTo("/w");
        assertThat(spare.stdinClosed.get()).isFalse();
        assertThat(warm.warmBlocks()).isZero();
    }

    @Test
    void should_hand_the_block_to_the_spare_when_one_is_waiting() throws Exception {
        Proc spare = primed();

        CompletableFuture<RunResult> f = CompletableFuture.supplyAsync(() -> warm.run(CodeLanguage.PYTHON, WS, BLOCK));
        while (!spare.stdinClosed.get()) {
            Thread.onSpinWait();
        }
        spare.end("warm:" + spare.stdin.toString(StandardCharsets.UTF_8), "err", 3);
        RunResult r = f.get();

        assertThat(r.stdout()).isEqualTo("warm:../runs/code_0.py\n");
        assertThat(r.stderr()).isEqualTo("err");
        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.timedOut()).isFalse();
        assertThat(warm.warmBlocks()).isEqualTo(1);
        assertThat(engine.spares()).hasSize(2); // the next block's spare
        assertThat(warm.spareCount()).isEqualTo(1);
        warm.close();
        assertThat(warm.spareCount()).isZero();
    }

    @Test
    void should_run_fresh_when_the_spare_died_before_the_hand_off() {
        primed().exit.complete(1);

        RunResult r = warm.run(CodeLanguage.PYTHON, WS, BLOCK);

        assertThat(r.stdout()).isEqualTo("fresh\n");
        assertThat(r.exitCode()).isZero();
        assertThat(warm.warmBlocks()).isZero();
    }

    @Test
    void should_run_fresh_when_the_hand_off_cannot_be_written() {
        Proc spare = primed();
        spare.stdinFails = true;

        RunResult r = warm.run(CodeLanguage.PYTHON, WS, BLOCK);

        assertThat(r.stdout()).isEqualTo("fresh\n");
        assertThat(spare.kills.get()).isPositive();
        assertThat(warm.warmBlocks()).isZero();
    }

    @Test
    void should_run_fresh_and_kill_the_spare_when_the_workspace_key_changed() {
        Proc spare = primed();
        engine.key = "changed";

        RunResult r = warm.run(CodeLanguage.PYTHON, WS, BLOCK);

        assertThat(r.stdout()).isEqualTo("fresh\n");
        assertThat(spare.kills.get()).isPositive();
        assertThat(spare.stdin.size()).isZero();
    }

    @Test
    void should_start_no_spare_when_the_engine_allows_none() {
        engine.key = null;

        warm.run(CodeLanguage.PYTHON, WS, BLOCK);
        warm.run(CodeLanguage.PYTHON, WS, BLOCK);

        assertThat(engine.spares()).isEmpty();
        assertThat(warm.warmBlocks()).isZero();
    }

    @Test
    void should_run_other_languages_fresh_without_a_spare() {

        RunResult r = warm.run(CodeLanguage.BASH, WS, RunProgramSpec.builder("bash").args("../runs/code_0.sh").build());

        assertThat(r.stdout()).isEqualTo("fresh\n");
        assertThat(engine.spares()).isEmpty();
    }

    @Test
    void should_kill_the_block_tree_when_it_outlives_its_timeout_from_the_hand_off() {
        Proc spare = primed();

        RunResult r = warm.run(CodeLanguage.PYTHON, WS, BLOCK.toBuilder().timeout(Duration.ofMillis(1)).build());

        assertThat(r.timedOut()).isTrue();
        assertThat(r.exitCode()).isEqualTo(-1);
        assertThat(spare.kills.get()).isPositive();
        assertThat(warm.warmBlocks()).isEqualTo(1);
    }

    @Test
    void should_keep_one_spare_per_workspace_and_a_bounded_number_per_engine() {
        for (int i = 0; i < WarmPython.MAX_SPARES + 5; i++) {
            warm.run(CodeLanguage.PYTHON, new Workspace("w" + i, "/nowhere/w" + i), BLOCK);
        }
        assertThat(warm.spareCount()).isEqualTo(WarmPython.MAX_SPARES);

        warm.discard("w0");
        assertThat(warm.spareCount()).isEqualTo(WarmPython.MAX_SPARES - 1);
        warm.close();
        assertThat(engine.spares()).allSatisfy(p -> assertThat(p.exit.isDone()).isTrue());
        // Every started run was released once: the fresh ones after their run, the spares when killed.
        assertThat(engine.released.get()).isEqualTo(engine.started.size());
    }

    @Test
    void should_kill_spares_idle_longer_than_their_life() {
        Proc spare = primed();

        clock.addAndGet(WarmPython.IDLE_LIFE.toNanos() - 1);
        warm.killIdle();
        assertThat(warm.spareCount()).isEqualTo(1); // positive control: not idle long enough yet
        clock.addAndGet(2);
        warm.killIdle();

        assertThat(warm.spareCount()).isZero();
        assertThat(spare.kills.get()).isPositive();
    }

    @Test
    void should_kill_the_spare_when_another_program_runs_in_its_workspace() {
        warm.run(CodeLanguage.PYTHON, WS, BLOCK);

        warm.discard(WS.id());
        warm.discard("other"); // no spare there: nothing happens

        assertThat(warm.spareCount()).isZero();
        assertThat(engine.spares().get(0).kills.get()).isPositive();
    }

    @Test
    void should_start_no_spare_once_closed() {
        warm.close();

        warm.run(CodeLanguage.PYTHON, WS, BLOCK);

        assertThat(engine.spares()).isEmpty();
    }
}
