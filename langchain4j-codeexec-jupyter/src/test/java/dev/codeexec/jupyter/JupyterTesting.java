package dev.codeexec.jupyter;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/** What the Jupyter tests share: the requirement of a Python with ipykernel, cells, and a look at host processes. */
final class JupyterTesting {

    private JupyterTesting() {
    }

    /** Skips (fails in strict mode) unless a python3 that imports ipykernel is found the way the engine finds one. */
    static void requireKernel() {
        Requirements.require(kernelPython() != null,
                "a python3 with ipykernel (Debian: apt-get install python3-ipykernel)");
    }

    /** Also needs matplotlib for the chart tests. */
    static void requireMatplotlib() {
        requireKernel();
        Requirements.require(imports(kernelPython(), "matplotlib"),
                "matplotlib for the kernel's python (Debian: apt-get install python3-matplotlib)");
    }

    /** The python the engine would use by default, or null. */
    static String kernelPython() {
        Map<String, String> env = ShellEnvironmentPolicy.sandboxDefault().resolve(System.getenv(), Map.of(), false,
                Map.of());
        try {
            return PythonLocator.locate(null, env).python();
        } catch (RuntimeException e) {
            return null;
        }
    }

    static boolean imports(String python, String module) {
        try {
            Process p = new ProcessBuilder(python, "-c", "import " + module).redirectErrorStream(true).start();
            p.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
            return p.waitFor() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    static CodeExecutionResult cell(JupyterEngine engine, Workspace ws, String code) {
        return cell(engine, ws, code, Duration.ofSeconds(60));
    }

    static CodeExecutionResult cell(JupyterEngine engine, Workspace ws, String code, Duration timeout) {
        return engine.executeCode(ws, new CodeExecutionInput(List.of(CodeBlock.of("python", code)), null, timeout));
    }

    /** Command lines of live (not zombie) host processes whose command line contains {@code marker}. */
    static List<String> processesWith(String marker) {
        List<String> found = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).forEach(p -> {
                try {
                    String cmd = new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8)
                            .replace('\0', ' ');
                    String stat = Files.readString(p.resolve("stat"));
                    boolean zombie = stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z");
                    if (cmd.contains(marker) && !zombie) {
                        found.add(p.getFileName() + ": " + cmd);
                    }
                } catch (IOException | RuntimeException ignored) {
                    // The process ended while we looked.
                }
            });
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return found;
    }

    /** Waits (generously bounded) until no process names {@code marker}; returns those left. */
    static List<String> awaitNoProcessWith(String marker, Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        List<String> left = processesWith(marker);
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(50);
            left = processesWith(marker);
        }
        return left;
    }
}
