package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.StageOptions;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code warmPython(true)} on the sandbox: the sandbox cannot yet tell whether a spare's plan (read-only stages,
 * protected names, hidden host paths) is still the one a fresh run would get, so it keeps every python block fresh:
 * no spare interpreter is ever started, results are those of the fresh path, and the boundary holds.
 */
class SandboxWarmPythonIT {

    @TempDir
    Path tmp;

    @BeforeAll
    static void requireSandbox() {
        SandboxTesting.requireSandbox();
    }

    private static CodeExecutionResult exec(SandboxEngine engine, Workspace ws, String code) {
        return engine.executeCode(ws, new CodeExecutionInput(List.of(CodeBlock.of("python", code)), null,
                Duration.ofSeconds(30)));
    }

    @Test
    void should_keep_python_blocks_fresh_and_start_no_spare_when_warm_python_is_on() throws IOException {
        try (SandboxEngine warm = SandboxEngine.builder().rootDir(tmp.resolve("w")).warmPython(true).build();
             SandboxEngine fresh = SandboxEngine.builder().rootDir(tmp.resolve("f")).build()) {
            Workspace ww = warm.manager().createWorkspace("w", WorkspacePolicy.DEFAULT);
            Workspace fw = fresh.manager().createWorkspace("f", WorkspacePolicy.DEFAULT);
            for (String code : List.of("print('hello')", "import sys\nsys.exit(3)", "print(__name__)",
                    "import sys\nprint(repr(sys.stdin.read()))")) {
                CodeExecutionResult w = exec(warm, ww, code);
                CodeExecutionResult f = exec(fresh, fw, code);
                assertThat(w.output()).as(code).isEqualTo(f.output());
                assertThat(w.exitCode()).as(code).isEqualTo(f.exitCode());
                assertThat(stubProcesses(ww)).isEmpty();
            }
            assertThat(warm.warmPythonBlocks()).isZero();
        }
    }

    @Test
    void should_hide_a_host_secret_from_a_python_block_when_warm_python_is_on() throws IOException {
        assumeTrue(SandboxTesting.isRoot(), "planting a file in /root needs root");
        String secret = "s3cr3t-" + UUID.randomUUID();
        Path planted = Path.of("/root", ".codeexec-it-" + UUID.randomUUID());
        Files.writeString(planted, secret);
        try (SandboxEngine engine = SandboxEngine.builder().rootDir(tmp.resolve("s")).warmPython(true).build()) {
            Workspace ws = engine.manager().createWorkspace("s", WorkspacePolicy.DEFAULT);
            engine.fs().putFiles(ws, List.of(PutFile.of("work/allowed.txt",
                    "allowed-content".getBytes(StandardCharsets.UTF_8), 0644)));
            String code = "for p in ['" + planted + "', 'allowed.txt']:\n"
                    + "    try:\n        print(p, open(p).read())\n"
                    + "    except OSError as e:\n        print(p, type(e).__name__)\n";
            for (int i = 0; i < 3; i++) {
                CodeExecutionResult r = exec(engine, ws, code);
                assertThat(r.output()).doesNotContain(secret);
                // Positive control: the block reads the workspace's file.
                assertThat(r.output()).contains("allowed.txt allowed-content");
            }
        } finally {
            Files.deleteIfExists(planted);
        }
    }

    @Test
    void should_keep_a_stage_made_read_only_after_a_python_block_read_only_for_the_next_block() throws IOException {
        Path skill = Files.createDirectories(tmp.resolve("inputs/skill"));
        Files.writeString(skill.resolve("SKILL.md"), "instructions");
        try (SandboxEngine engine = SandboxEngine.builder().rootDir(tmp.resolve("ro"))
                .inputRoots(List.of(tmp.resolve("inputs"))).warmPython(true).build()) {
            Workspace ws = engine.manager().createWorkspace("ro", WorkspacePolicy.DEFAULT);
            exec(engine, ws, "pass"); // a spare for the next block would be planned now, before the stage
            engine.fs().stageDirectory(ws, skill, "skills/demo", new StageOptions(true, false));
            CodeExecutionResult r = exec(engine, ws, "import os\n"
                    + "p = os.environ['SKILLS_DIR'] + '/demo/SKILL.md'\n"
                    + "try:\n    os.chmod(p, 0o666)\n    open(p, 'w').write('changed')\n    print('stage written')\n"
                    + "except OSError as e:\n    print('stage refused', e.errno)\n"
                    + "open('mine.txt', 'w').write('x')\nprint('work written')\n");
            assertThat(r.output()).contains("stage refused").doesNotContain("stage written");
            // Positive control: the same block writes its own files.
            assertThat(r.output()).contains("work written");
            assertThat(Files.readString(Path.of(ws.path(), "skills/demo/SKILL.md"))).isEqualTo("instructions");
        }
    }

    /** Processes running the warm path's stub in the workspace (a sandboxed one shows its host directory). */
    private static List<Long> stubProcesses(Workspace ws) {
        return ProcessHandle.allProcesses()
                .filter(h -> h.info().commandLine().orElse("").contains("del sys.path[0]"))
                .filter(h -> inWorkspace(h.pid(), ws))
                .map(ProcessHandle::pid)
                .toList();
    }

    private static boolean inWorkspace(long pid, Workspace ws) {
        try {
            return Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "cwd")).toString()
                    .startsWith(ws.path());
        } catch (IOException | RuntimeException e) {
            return false; // gone meanwhile
        }
    }
}
