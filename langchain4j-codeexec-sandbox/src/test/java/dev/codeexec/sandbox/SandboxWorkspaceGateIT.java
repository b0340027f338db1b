package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceBusyException;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.WorkspaceTools;
import dev.langchain4j.invocation.InvocationContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A background session cannot redirect the engine's host-side file operations or a run's mount planning by swapping
 * a workspace directory for a link to a host directory while they happen: nothing else runs in, and nothing touches
 * the files of, a workspace whose session is alive.
 */
class SandboxWorkspaceGateIT {

    @TempDir
    Path tmp;

    @BeforeAll
    static void requireSandbox() {
        SandboxTesting.requireSandbox();
    }

    @Test
    void should_refuse_file_operations_and_runs_when_a_session_could_swap_directories() throws Exception {
        Path hostTarget = Files.createDirectories(tmp.resolve("host-target"));
        Files.writeString(hostTarget.resolve("config.json"), "HOST-SECRET");
        try (SandboxEngine engine = SandboxEngine.builder().rootDir(tmp.resolve("root")).build()) {
            Workspace ws = engine.manager().createWorkspace("gate", WorkspacePolicy.DEFAULT);
            engine.fs().putFiles(ws, List.of(PutFile.of("work/sub/config.json", "WORKSPACE")));
            // The attack: swap work/sub for a link to a host directory, over and over, while the host works on it.
            String swapper = "import os, time\n"
                    + "while True:\n"
                    + "    os.rename('sub', 'sub_real'); os.symlink('" + hostTarget + "', 'sub')\n"
                    + "    time.sleep(0.001)\n"
                    + "    os.remove('sub'); os.rename('sub_real', 'sub')\n";
            try (ProgramSession session = engine.interactive().orElseThrow().startProgram(ws,
                    RunProgramSpec.builder("python3").args("-c", swapper).cwd("work")
                            .timeout(Duration.ofSeconds(120)).build())) {
                for (int i = 0; i < 50; i++) {
                    assertThatThrownBy(() -> engine.fs().putFiles(ws, List.of(PutFile.of("work/sub/planted.txt",
                            "x")))).isInstanceOf(WorkspaceBusyException.class)
                            .hasMessageContaining("background session of this workspace is still running")
                            .extracting(e -> ((WorkspaceBusyException) e).sessionIds(),
                                    InstanceOfAssertFactories.list(String.class))
                            .containsExactly(session.id());
                    assertThatThrownBy(() -> engine.fs().readFile(ws, "work/sub/config.json", 0, 100))
                            .isInstanceOf(WorkspaceBusyException.class);
                    assertThatThrownBy(() -> engine.fs().list(ws, "work"))
                            .isInstanceOf(WorkspaceBusyException.class);
                    assertThatThrownBy(() -> engine.runner().runProgram(ws, RunProgramSpec.builder("true").build()))
                            .isInstanceOf(WorkspaceBusyException.class);
                    assertThatThrownBy(() -> engine.interactive().orElseThrow().startProgram(ws,
                            RunProgramSpec.builder("true").build())).isInstanceOf(WorkspaceBusyException.class);
                }
                assertThat(session.exitCode()).as("the swapper still runs").isEmpty();
                session.kill(Duration.ZERO);
            }
            // The kill may land in the middle of a swap: put work/sub back as the swapper found it.
            Path work = Path.of(ws.path(), "work");
            if (Files.isSymbolicLink(work.resolve("sub"))) {
                Files.delete(work.resolve("sub"));
            }
            if (Files.exists(work.resolve("sub_real"))) {
                Files.move(work.resolve("sub_real"), work.resolve("sub"));
            }
            try (Stream<Path> planted = Files.list(hostTarget)) {
                assertThat(planted.map(p -> p.getFileName().toString())).containsExactly("config.json");
            }

            // The kill can land anywhere in the swap loop: put the directory back the way an application would.
            Path sub = Path.of(ws.path(), "work/sub");
            Path moved = Path.of(ws.path(), "work/sub_real");
            if (Files.isSymbolicLink(sub)) {
                Files.delete(sub);
            }
            if (Files.isDirectory(moved, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                    && !Files.exists(sub, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                Files.move(moved, sub);
            }
            // Positive control: once the session is gone, the same operations work, inside the workspace.
            engine.fs().putFiles(ws, List.of(PutFile.of("work/sub/planted.txt", "x")));
            assertThat(engine.fs().readFile(ws, "work/sub/config.json", 0, 100).contentAsString())
                    .isEqualTo("WORKSPACE");
            assertThat(engine.runner().runProgram(ws, RunProgramSpec.builder("cat").args("sub/planted.txt")
                    .cwd("work").build()).stdout()).isEqualTo("x");
            assertThat(Files.exists(hostTarget.resolve("planted.txt"))).isFalse();
        }
    }

    @Test
    void should_tell_the_model_the_workspace_is_busy_and_with_which_session_when_a_session_holds_it() {
        try (SandboxEngine engine = SandboxEngine.builder().rootDir(tmp.resolve("root3")).build();
             CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            WorkspaceTools tools = codeExec.tools();
            InvocationContext ctx = InvocationContext.builder().chatMemoryId("busy").build();
            String started = tools.workspaceExec("sleep 600", null, null, null, 600, true, ctx);
            Matcher id = Pattern.compile("s_[0-9a-f]{8}").matcher(started);
            assertThat(id.find()).as(started).isTrue();

            List<String> refused = List.of(
                    tools.workspaceListFiles("work", ctx),
                    tools.workspaceReadFile("work/x.txt", null, null, ctx),
                    tools.workspaceWriteFile("work/x.txt", "x", null, ctx),
                    tools.workspaceExec("true", null, null, null, null, null, ctx));

            for (String r : refused) {
                assertThat(r).startsWith("error: the workspace is busy with background session " + id.group()
                                + ", which is still running")
                        .contains("workspace_write_stdin").contains("stop it with workspace_kill_session")
                        .endsWith(" again. Nothing was run or changed.")
                        .doesNotContain("policy").doesNotContain("do not retry")
                        .doesNotContainPattern("[0-9a-f]{8}-[0-9a-f]{4}-");
            }
            // Positive control: once the session is killed, the same calls work.
            assertThat(tools.workspaceKillSession(id.group(), ctx)).contains("status: killed");
            assertThat(tools.workspaceWriteFile("work/x.txt", "x", null, ctx)).startsWith("created work/x.txt");
            assertThat(tools.workspaceExec("cat work/x.txt", null, null, null, null, null, ctx))
                    .startsWith("exit_code: 0").endsWith("--- stdout ---\nx");
        }
    }

    @Test
    void should_let_other_workspaces_work_when_one_has_a_session() {
        try (SandboxEngine engine = SandboxEngine.builder().rootDir(tmp.resolve("root2")).build()) {
            Workspace busy = engine.manager().createWorkspace("busy", WorkspacePolicy.DEFAULT);
            Workspace free = engine.manager().createWorkspace("free", WorkspacePolicy.DEFAULT);
            try (ProgramSession session = engine.interactive().orElseThrow().startProgram(busy,
                    RunProgramSpec.builder("sleep").args("60").timeout(Duration.ofSeconds(60)).build())) {
                assertThat(engine.runner().runProgram(free, RunProgramSpec.builder("echo").args("ok").build())
                        .stdout()).isEqualTo("ok\n");
                assertThat(session.exitCode()).isEmpty();
            }
            // Cleanup kills a live session before it deletes anything.
            try (ProgramSession ignored = engine.interactive().orElseThrow().startProgram(busy,
                    RunProgramSpec.builder("sleep").args("60").timeout(Duration.ofSeconds(60)).build())) {
                engine.manager().cleanup(busy);
                assertThat(Files.exists(Path.of(busy.path()))).isFalse();
            }
        }
    }
}
