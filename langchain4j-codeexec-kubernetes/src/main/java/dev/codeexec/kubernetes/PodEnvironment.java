package dev.codeexec.kubernetes;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import java.util.Map;
import java.util.TreeMap;

/**
 * The environment of a run in a workspace pod, decided in this one place. A run's wrapper starts the program with
 * {@code env -i} and exactly this map, so nothing of the container's own environment reaches it unless it is here.
 *
 * <p>The pod is the run's host: its base is the pod's environment ({@link PodSpecs#environment}: the template's
 * {@code env} with its {@code PATH} for the image, and the operator's egress proxy variables), never the JVM's. On top
 * come the engine's {@link ShellEnvironmentPolicy}: its {@code set} values over the host environment the builder was
 * given explicitly ({@code hostEnvironment(...)}; none by default, so no variable of the JVM's host reaches a pod),
 * then the run's own variables, the policy's {@code includeOnly} filter and the workspace's runtime variables, as
 * {@link ShellEnvironmentPolicy#finish} applies them on every backend. A clean run ({@code cleanEnv}) inherits
 * nothing, the pod's variables included, as on every backend: it gets {@link ShellEnvironmentPolicy#CLEAN_PATH}, the
 * {@code PATH} a command policy looks commands up along.
 *
 * <p>The template's variables are the operator's choice, like the policy's {@code set}: the policy's inherit and
 * exclude steps, which filter a host's environment, do not apply to them.
 *
 * <p>Immutable and thread-safe.
 */
final class PodEnvironment {

    private final ShellEnvironmentPolicy policy;
    /** The pod's variables under the policy's own: the base of a run that does not ask for a clean environment. */
    private final Map<String, String> base;

    /**
     * @param template the pods' template (their environment)
     * @param policy   the engine's environment policy
     * @param host     the host environment the builder was given for the policy to filter; empty for none
     */
    PodEnvironment(PodTemplate template, ShellEnvironmentPolicy policy, Map<String, String> host) {
        this.policy = policy;
        Map<String, String> b = new TreeMap<>(PodSpecs.environment(template));
        b.putAll(policy.base(host));
        this.base = Map.copyOf(b);
    }

    /**
     * The whole environment of a run.
     *
     * @param spec    the run (its variables and whether it wants a clean environment)
     * @param runtime the workspace's runtime variables ({@code dev.codeexec.spi.RunEnvironment#runtimeVariables})
     * @return a new map, sorted by name
     */
    Map<String, String> forRun(RunProgramSpec spec, Map<String, String> runtime) {
        return policy.finish(spec.cleanEnv() ? Map.of() : base, spec.env(), spec.cleanEnv(), runtime);
    }
}
