package dev.codeexec.tck;

import dev.codeexec.langchain4j.CodeExecution;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The workspace tools end to end: real AiServices and the OpenAI client against a scripted WireMock endpoint, on the
 * engine a subclass supplies through {@link #createEngine()}. Every scenario here must hold on every backend;
 * scenarios that only one backend can pass live in that backend's subclass. Requirements of the backend (python,
 * bubblewrap...) are checked by the subclass, in a {@code @BeforeAll} through
 * {@link dev.codeexec.testing.Requirements}.
 *
 * <p>Backends extend this class, the last of the chain {@link WorkspaceToolsFixture} (endpoint, engine, memory,
 * helpers) &larr; {@link WorkspaceToolsConversationContract} (conversations, command policy) &larr;
 * {@link WorkspaceToolsInputContract} (bad input, attachments, refusals, argument errors) &larr; this class (background
 * sessions, change reports and listings at scale).
 */
public abstract class AbstractWorkspaceToolsIT extends WorkspaceToolsInputContract {

    @Test
    void should_run_background_sessions_and_keep_them_per_conversation() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            var tools = codeExec.tools();
            var mineCtx = dev.langchain4j.invocation.InvocationContext.builder().chatMemoryId("s-mine").build();
            var otherCtx = dev.langchain4j.invocation.InvocationContext.builder().chatMemoryId("s-other").build();

            String started = tools.workspaceExec("cat", null, null, null, null, true, mineCtx);
            String id = match(started, "s_[0-9a-f]{8}");
            String echoed = tools.workspaceWriteStdin(id, "hello", true, null, 2000, mineCtx);
            String foreign = tools.workspaceWriteStdin(id, "x", true, null, 0, otherCtx);
            String killed = tools.workspaceKillSession(id, mineCtx);
            String again = tools.workspaceKillSession(id, mineCtx);

            assertThat(started).startsWith("session_id: " + id + " | status: running");
            assertThat(echoed).contains("--- output ---\nhello");
            assertThat(foreign).startsWith("error: there is no background session");
            assertThat(killed).contains("status: killed");
            assertThat(again).startsWith("error: there is no background session");
        }
    }

    @Test
    void should_let_a_killed_background_session_shut_down_within_the_grace_period() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            var tools = codeExec.tools();
            var ctx = dev.langchain4j.invocation.InvocationContext.builder().chatMemoryId("grace").build();
            codeExec.workspace("grace").putFile("work/graceful.py", """
                    import signal, sys, time
                    def stop(*_):
                        time.sleep(0.3)
                        print('flushed and stopped', flush=True)
                        sys.exit(0)
                    signal.signal(signal.SIGTERM, stop)
                    print('ready', flush=True)
                    time.sleep(120)
                    """);

            String output = tools.workspaceExec("python3 work/graceful.py", null, null, null, null, true, ctx);
            String id = match(output, "s_[0-9a-f]{8}");
            // Polls until the program says it is ready, however long a loaded machine takes to start Python.
            for (String last = output; !output.contains("ready") && last.contains("status: running"); ) {
                last = tools.workspaceWriteStdin(id, "", false, null, 200, ctx);
                output += last;
            }
            String killed = tools.workspaceKillSession(id, ctx);

            assertThat(output).as("the handler is installed").contains("ready");
            assertThat(killed).as("SIGTERM first, and time to act on it").contains("status: killed")
                    .contains("exit_code: 0 |").contains("flushed and stopped");
        }
    }

    @Test
    void should_let_other_calls_and_the_kill_through_when_a_session_does_not_read_its_input() throws Exception {
        ExecutorService pool = Executors.newCachedThreadPool();
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            var tools = codeExec.tools();
            var ctx = dev.langchain4j.invocation.InvocationContext.builder().chatMemoryId("stuck").build();
            String id = match(tools.workspaceExec("sleep 600", null, null, null, 600, true, ctx), "s_[0-9a-f]{8}");

            // The attack: a megabyte to a program that never reads; the pipe takes 64 KiB, the rest would block.
            Future<String> write = pool.submit(() -> tools.workspaceWriteStdin(id, "x".repeat(1_000_000), false,
                    null, 0, ctx));
            // Give the write time to fill the pipe (not a timing assertion: were it later, the kill below would
            // still have to get through, and the write would find no session).
            Thread.sleep(1000);
            Future<String> list = pool.submit(() -> tools.workspaceListFiles("out", ctx));
            Future<String> kill = pool.submit(() -> tools.workspaceKillSession(id, ctx));

            // Bounds far below the session's 600 s: before the fix, both waited for the write, which waited for it.
            // The listing answers at once: with the files, or, on a backend that lets no file operation overlap a
            // running program of the workspace (the sandbox), with the busy answer that names the session.
            assertThat(list.get(60, TimeUnit.SECONDS)).matches("(?s)(no files match|error: the workspace is busy "
                    + "with background session " + id + ", which is still running).*");
            assertThat(kill.get(60, TimeUnit.SECONDS)).startsWith("session_id: " + id + " | status: killed");
            String written = write.get(60, TimeUnit.SECONDS);
            assertThat(written)
                    .matches(noticesUnreadInputAtOnce()
                            ? "(?s)error: (session " + id + ": the program |there is no background session).*"
                            : "(?s)(error: (session " + id + ": the program |there is no background session)"
                            + "|session_id: " + id + " \\| status: (running|killed)).*")
                    .doesNotContainPattern("[0-9a-f]{8}-[0-9a-f]{4}-");

            // A conversation whose program never reads gets a clear answer, and its other calls go on.
            String id2 = match(tools.workspaceExec("sleep 600", null, null, null, 600, true, ctx), "s_[0-9a-f]{8}");
            String refused = tools.workspaceWriteStdin(id2, "x".repeat(1_000_000), false, null, 0, ctx);
            assertThat(refused)
                    .matches(noticesUnreadInputAtOnce()
                            ? "(?s)error: session " + id2 + ": the program is not reading its standard input.*"
                            : "(?s)(error: session " + id2 + ": the program is not reading its standard input"
                            + "|session_id: " + id2 + " \\| status: running).*")
                    .doesNotContainPattern("[0-9a-f]{8}-[0-9a-f]{4}-");
            assertThat(tools.workspaceWriteStdin(id2, "y".repeat(1024 * 1024 + 1), false, null, 0, ctx))
                    .startsWith("error: 'chars' is 1048577 characters; the limit is 1048576");
            assertThat(tools.workspaceKillSession(id2, ctx)).contains("status: killed");

            // positive control: a program that reads gets all of it
            String id3 = match(tools.workspaceExec("wc -c", null, null, null, 60, true, ctx), "s_[0-9a-f]{8}");
            String fed = tools.workspaceWriteStdin(id3, "z".repeat(1_000_000), false, true, 5000, ctx);
            // the yield only bounds one answer: a loaded machine may need more of them before wc's exit shows
            for (String last = fed; last.contains("status: running"); ) {
                last = tools.workspaceWriteStdin(id3, "", false, null, 1000, ctx);
                fed += last;
            }
            assertThat(fed).contains("1000000").contains("exit_code: 0");
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Whether a megabyte written to a session whose program never reads is refused at once ("the program is not
     * reading its standard input"): true where the way to the program holds less than that (a pipe, a Unix socket,
     * a request per chunk). False where the transport buffers more on its way (a Kubernetes exec passes through the
     * API server's and the kubelet's connections): there the write may be taken, and only the calls and the kill
     * that must get through are checked.
     */
    protected boolean noticesUnreadInputAtOnce() {
        return true;
    }

    // ---- change reports and listings at scale

    /**
     * Whether the engine's change reports see a file rewritten with the same size and time (as within the same second
     * on a clock of one-second steps): the host-directory backends on Linux do (the kernel tells them); backends whose
     * reports compare listings do not.
     */
    protected boolean seesRewritesThatKeepSizeAndTime() {
        return true;
    }

    @Test
    void should_report_the_files_a_program_really_changed_deep_in_a_tree() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            String setup = exec(codeExec, "mkdir -p work/t/a/b/c && for i in $(seq 1 300); do echo x > work/t/a/f$i;"
                    + " done && echo aaaa > work/t/a/b/c/deep.txt && echo gone > out/del.txt && echo r > work/ren.txt"
                    + " && mkdir work/d && echo 1 > work/d/one && echo 22 > work/d/two");
            assertThat(setup).startsWith("exit_code: 0").contains("+ work/t/a/b/c/deep.txt (5 bytes)")
                    .contains("... and 285 more");

            assertThat(exec(codeExec, "cat work/t/a/b/c/deep.txt > /dev/null")).doesNotContain("files changed");

            String changed = exec(codeExec, "echo bbbbbb > work/t/a/b/c/deep.txt; rm out/del.txt;"
                    + " mv work/ren.txt work/renamed.txt; mv work/d out/d; echo n > work/t/a/b/new.txt");

            assertThat(changed).endsWith("--- files changed ---\n+ out/d/one (2 bytes)\n+ out/d/two (3 bytes)\n"
                    + "+ work/renamed.txt (2 bytes)\n+ work/t/a/b/new.txt (2 bytes)\n~ work/t/a/b/c/deep.txt (7 bytes)\n"
                    + "- out/del.txt\n- work/d/one\n- work/d/two\n- work/ren.txt");
        }
    }

    @Test
    void should_report_a_rewrite_that_keeps_size_and_time_where_the_engine_can_see_it() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            exec(codeExec, "echo aaaa > work/same.txt");

            String text = exec(codeExec, "cp -p work/same.txt work/ref; echo bbbb > work/same.txt;"
                    + " touch -r work/ref work/same.txt; rm work/ref; echo new > out/control.txt");

            assertThat(text).contains("+ out/control.txt (4 bytes)");
            if (seesRewritesThatKeepSizeAndTime()) {
                assertThat(text).contains("~ work/same.txt (5 bytes)");
            } else {
                assertThat(text).doesNotContain("work/same.txt");
            }
        }
    }

    @Test
    void should_list_the_run_history_only_when_asked_for_it() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            exec(codeExec, "echo log > \"$RUN_DIR/log.txt\"; echo r > out/r.txt");
            exec(codeExec, "echo log > \"$RUN_DIR/log.txt\"");

            String root = codeExec.tools().workspaceListFiles(null, context("scale"));
            String runs = codeExec.tools().workspaceListFiles("runs", context("scale"));

            assertThat(root).contains("\nruns/ (the run history, one folder per run: list runs to see it)")
                    .contains("out/r.txt (2 bytes)").doesNotContain("runs/run_");
            assertThat(runs).containsPattern("runs/run_[^/\\s]+/log.txt \\(4 bytes\\)")
                    .doesNotContain("the run history");
        }
    }

    private static String exec(CodeExecution codeExec, String command) {
        return codeExec.tools().workspaceExec(command, null, null, null, 60, null, context("scale"));
    }

    private static dev.langchain4j.invocation.InvocationContext context(String conversation) {
        return dev.langchain4j.invocation.InvocationContext.builder().invocationId(java.util.UUID.randomUUID())
                .chatMemoryId(conversation).invocationParameters(new dev.langchain4j.invocation.InvocationParameters())
                .timestampNow().build();
    }
}
