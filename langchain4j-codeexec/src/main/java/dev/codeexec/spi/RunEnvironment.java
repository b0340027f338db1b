package dev.codeexec.spi;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.workspace.WorkspaceLayout;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one place where the environment of code is decided, for every backend and every path that starts code: runs
 * and sessions ({@link #forRun}), and interpreters that serve many requests, such as a Jupyter kernel and its cells
 * ({@link #forInterpreter}). Each is the engine's {@link ShellEnvironmentPolicy} applied to the host environment the
 * engine was given (or nothing, for a clean run), the run's own variables, then the runtime variables of the
 * workspace, which nothing overrides. No path inherits the JVM's environment: what the policy removes is absent on
 * every path, and what it allows is present on every path that does not ask for a clean environment.
 */
public final class RunEnvironment {

    private final ShellEnvironmentPolicy policy;
    /** The policy applied to the host environment once: it does not change during an engine's life. */
    private final Map<String, String> base;

    private RunEnvironment(ShellEnvironmentPolicy policy, Map<String, String> host) {
        this.policy = policy;
        this.base = Map.copyOf(policy.base(host));
    }

    /**
     * @param policy the engine's environment policy
     * @param host   the host environment the policy filters (usually {@code System.getenv()})
     */
    public static RunEnvironment of(ShellEnvironmentPolicy policy, Map<String, String> host) {
        return new RunEnvironment(policy, host);
    }

    /** The policy. */
    public ShellEnvironmentPolicy policy() {
        return policy;
    }

    /**
     * The runtime variables of a run: {@code WORKSPACE_DIR}, {@code WORK_DIR}, {@code OUTPUT_DIR}, {@code RUN_DIR},
     * {@code SKILLS_DIR}, plus {@code HOME} and {@code TMPDIR} (with {@code TMP} and {@code TEMP}) inside the
     * workspace when {@code ownHome}.
     *
     * @param root    the workspace root as the program sees it
     * @param runDir  the run's directory, workspace-relative
     * @param ownHome true when the backend gives the program the workspace's {@code home/} and {@code tmp/}
     */
    public static Map<String, String> runtimeVariables(String root, String runDir, boolean ownHome) {
        Map<String, String> runtime = new LinkedHashMap<>(WorkspaceLayout.variables(root, runDir));
        if (ownHome) {
            String tmp = root + "/" + WorkspaceLayout.TMP;
            runtime.put("HOME", root + "/" + WorkspaceLayout.HOME);
            runtime.put("TMPDIR", tmp);
            runtime.put("TMP", tmp);
            runtime.put("TEMP", tmp);
        }
        return runtime;
    }

    /**
     * The environment of a run.
     *
     * @param spec    the run (its variables and whether it wants a clean environment)
     * @param runtime the runtime variables, from {@link #runtimeVariables}
     * @return a new map, sorted by name
     */
    public Map<String, String> forRun(RunProgramSpec spec, Map<String, String> runtime) {
        return policy.finish(spec.cleanEnv() ? Map.of() : base, spec.env(), spec.cleanEnv(), runtime);
    }

    /**
     * The environment of an interpreter that runs many requests (a Jupyter kernel: every cell, completion or
     * inspection it serves sees it), and of the probes that find it: what a run without variables of its own and
     * without a clean environment gets, so a cell sees what a run sees.
     *
     * @param runtime the runtime variables, from {@link #runtimeVariables}; empty for a probe
     * @return a new map, sorted by name
     */
    public Map<String, String> forInterpreter(Map<String, String> runtime) {
        return policy.finish(base, Map.of(), false, runtime);
    }
}
