package dev.codeexec.e2b;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunOutcomeUnknownException;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.RunEnvironment;
import dev.codeexec.spi.RunListing;
import dev.codeexec.workspace.PathResolver;
import dev.codeexec.workspace.WorkspaceLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * How {@link E2bEngine} turns a run into an envd process of the workspace's sandbox, and the one place the
 * environment of everything it starts comes from. Thread-safe: it holds no state of its own.
 */
final class E2bRuns {

    private final E2bWorkspaces workspaces;
    private final RunEnvironment environment;
    private final Function<E2bWorkspaces.Slot, EnvdFiles> files;

    E2bRuns(E2bWorkspaces workspaces, RunEnvironment environment, Function<E2bWorkspaces.Slot, EnvdFiles> files) {
        this.workspaces = workspaces;
        this.environment = environment;
        this.files = files;
    }

    /**
     * A run: {@code unshare --pid --fork --kill-child} as root, {@code setpriv} to the workspace user, a PID 1 that
     * enters the run's working directory and forwards signals ({@link SandboxScripts#NS_INIT}), {@code prlimit} for
     * the run's limits, {@code env -i} with exactly the run's environment, then the program. One request per run: the
     * working directory is resolved and checked inside the run by its PID 1, and only when that refuses it does the
     * engine look with Stat, for the typed exception ({@link #requireCwd}).
     *
     * @param limits      the run's limits, checked against the engine's capabilities
     * @param outputCap   bytes kept per stream
     * @param interactive true for sessions: stdin stays open for writes
     * @param listing     the folders the run lists when the program ended ({@link RunListing}), or null
     */
    PreparedRun prepare(Workspace ws, RunProgramSpec spec, ResourceLimits limits, int outputCap, boolean interactive,
                        RunListing listing) {
        E2bWorkspaces.Slot slot = workspaces.slot(ws);
        if (spec.cmd().contains("=")) {
            throw new InvalidSpecException("cmd '" + spec.cmd() + "' must not contain '='");
        }
        String cwdRel = PathResolver.normalize(spec.cwd());
        boolean inRoot = cwdRel.equals(".");
        if (interactive && !inRoot) {
            requireCwd(slot, cwdRel); // a session's start reports a bad cwd at once, as it always did
        }
        String runDir = WorkspaceLayout.newRunDir();
        Map<String, String> env = environmentFor(slot, spec, runDir);
        Sandbox sb = slot.sandbox;
        List<String> argv = new ArrayList<>(List.of("unshare", "--pid", "--fork", "--kill-child", "--",
                "setpriv", "--reuid=" + sb.uid(), "--regid=" + sb.gid(), "--init-groups", "--",
                "/bin/sh", "-c", SandboxScripts.NS_INIT, "sh", slot.root + "/" + runDir, slot.root,
                inRoot ? "" : cwdRel));
        argv.addAll(listing == null ? List.of("-", "-", "-", "-") : listing.arguments());
        argv.addAll(prlimit(limits));
        argv.addAll(List.of("env", "-i", "--"));
        env.forEach((k, v) -> argv.add(k + "=" + v));
        argv.add(spec.cmd());
        argv.addAll(spec.args());
        EnvdChannel channel = new EnvdChannel(sb, interactive, spec.cmd(), listing);
        ProgramLaunch launch = new ProgramLaunch(argv, env, slot.root, spec.stdin(), spec.timeout(), outputCap,
                spec.outputListener());
        slot.channels.add(channel);
        sb.runStarted();
        return new PreparedRun(channel, launch) {
            @Override
            public RunResult check(RunResult result) {
                RuntimeException failure = channel.failure();
                if (failure == null) {
                    if (!inRoot && cwdRefused(result)) {
                        requireCwd(slot, cwdRel); // throws what a bad cwd always threw; else the result stands
                    }
                    return result;
                }
                if (failure instanceof WorkspaceGoneException) {
                    throw failure; // the sandbox died under the run: its files are gone too
                }
                // The start event came, so the program ran, for all anyone knows: never "try again later".
                throw new RunOutcomeUnknownException("'" + spec.cmd() + "' started in sandbox " + sb.id()
                        + ", then its stream from E2B failed (" + failure.getMessage() + "); it was killed if it "
                        + "still ran, and whether it finished or what it changed is unknown", result, failure);
            }

            @Override
            public void release() {
                slot.channels.remove(channel);
                sb.runEnded();
            }
        };
    }

    /**
     * Checks the working directory of a run the way the workspace's file rules resolve paths: a link that leaves the
     * workspace is a {@link dev.codeexec.engine.PathEscapeException}, anything but a directory an
     * {@link InvalidSpecException}. Two requests (Stat); runs pay them only when the namespace's PID 1 could not enter
     * the directory ({@link SandboxScripts#NS_INIT}), sessions before they start.
     */
    private void requireCwd(E2bWorkspaces.Slot slot, String cwdRel) {
        this.files.apply(slot).resolveDirectory(cwdRel);
    }

    /** True when the run ended before its program started, the namespace's PID 1 refusing its working directory. */
    private static boolean cwdRefused(RunResult r) {
        return r.exitCode() == SandboxScripts.CWD_REFUSED_STATUS && r.stdout().isEmpty()
                && r.stderr().equals(SandboxScripts.CWD_REFUSED + "\n");
    }

    /**
     * The one place the environment of everything this engine starts comes from — runs, sessions and python cells:
     * the engine's environment policy over its host environment, the run's own variables, then the workspace's
     * runtime variables. Runs and sessions get exactly it ({@code env -i}); cells get it on top of the interpreter's
     * own environment (the template's and the sandbox's {@code envVars}, which the engine does not control).
     */
    Map<String, String> environmentFor(E2bWorkspaces.Slot slot, RunProgramSpec spec, String runDir) {
        return environment.forRun(spec, RunEnvironment.runtimeVariables(slot.root, runDir, true));
    }

    /** {@code prlimit} for CPU seconds, open files and file size (bytes), soft and hard; empty without limits. */
    private static List<String> prlimit(ResourceLimits l) {
        List<String> p = new ArrayList<>();
        if (l.cpuTime() != null) {
            long s = Math.max(1, (l.cpuTime().toMillis() + 999) / 1000);
            p.add("--cpu=" + s + ":" + s);
        }
        if (l.maxOpenFiles() != null) {
            p.add("--nofile=" + l.maxOpenFiles() + ":" + l.maxOpenFiles());
        }
        if (l.maxFileBytes() != null) {
            p.add("--fsize=" + l.maxFileBytes() + ":" + l.maxFileBytes());
        }
        if (p.isEmpty()) {
            return p;
        }
        p.add(0, "prlimit");
        p.add("--");
        return p;
    }
}
