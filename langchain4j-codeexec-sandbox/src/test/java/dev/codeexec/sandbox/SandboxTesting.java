package dev.codeexec.sandbox;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.testing.Requirements;
import java.time.Duration;

/** Shared helpers of the sandbox tests that need a real bubblewrap. */
final class SandboxTesting {

    static final String PYTHON = "/usr/bin/python3";

    private SandboxTesting() {
    }

    /** Skips (or fails in strict mode) unless bubblewrap and the system python are installed. */
    static void requireSandbox() {
        Requirements.requireCommand("bwrap");
        Requirements.require(java.nio.file.Files.isExecutable(java.nio.file.Path.of(PYTHON)),
                "the system python at " + PYTHON);
    }

    /** Mount points at or below {@code dir} (a real path), from this process's mount table. */
    static java.util.List<String> mountsUnder(java.nio.file.Path dir) throws java.io.IOException {
        return java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/self/mountinfo")).stream()
                .map(l -> l.split(" ")[4])
                .filter(m -> m.equals(dir.toString()) || m.startsWith(dir + "/"))
                .toList();
    }

    /** Skips (or fails in strict mode) unless the allow list's helper can run: Landlock and its Python. */
    static void requireLandlock() {
        String missing = null;
        try {
            ExecAllowList.probe("");
        } catch (dev.codeexec.engine.UnsupportedCapabilityException e) {
            missing = e.getMessage();
        }
        Requirements.require(missing == null, "Landlock and " + ExecAllowList.PYTHON + " (" + missing + ")");
    }

    /** True when this JVM runs as root (some attacks plant files where only root can write). */
    static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /**
     * Gives a host directory a test grants writable to the user sandboxed programs run as (the default sandbox user
     * when the JVM is root; nothing to do otherwise): programs never run as root, so a write grant must be writable
     * by that user.
     */
    static void claimForSandbox(java.nio.file.Path dir) {
        if (isRoot()) {
            SandboxUser.of(SandboxUser.Mode.DROP, SandboxUser.DEFAULT_UID, SandboxUser.DEFAULT_GID, null)
                    .claimTree(dir);
        }
    }

    static RunResult python(SandboxEngine engine, Workspace ws, String code) {
        return engine.runner().runProgram(ws, RunProgramSpec.builder(PYTHON).args("-c", code).cwd("work")
                .timeout(Duration.ofSeconds(30)).build());
    }

    static RunResult python(SandboxEngine engine, Workspace ws, String code, AdditionalPermissions extra) {
        return engine.runProgram(ws, RunProgramSpec.builder(PYTHON).args("-c", code).cwd("work")
                .timeout(Duration.ofSeconds(30)).build(), extra);
    }

    static RunResult sh(SandboxEngine engine, Workspace ws, String line) {
        return engine.runner().runProgram(ws, RunProgramSpec.builder("/bin/sh").args("-c", line).cwd("work")
                .timeout(Duration.ofSeconds(30)).build());
    }

    /** Python source of a helper that tries {@code fn} and prints "ok" or the errno name. */
    static final String TRY = "import errno, os, socket, ctypes\n"
            + "def attempt(fn):\n"
            + "    try:\n"
            + "        fn()\n"
            + "        return 'ok'\n"
            + "    except OSError as e:\n"
            + "        return errno.errorcode.get(e.errno, str(e.errno))\n"
            + "libc = ctypes.CDLL(None, use_errno=True)\n"
            + "def c(name, *args):\n"
            + "    r = getattr(libc, name)(*args)\n"
            + "    return 'ok' if r >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))\n";
}
