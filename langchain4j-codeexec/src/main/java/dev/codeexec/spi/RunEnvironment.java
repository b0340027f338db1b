package dev.codeexec.spi;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.workspace.WorkspaceLayout;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A run's environment, built in one place for every backend: the engine's {@link ShellEnvironmentPolicy} applied
 * to the host environment (or nothing, for a clean run), the run's own variables, then the runtime variables of the
 * workspace, which nothing overrides.
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
}
