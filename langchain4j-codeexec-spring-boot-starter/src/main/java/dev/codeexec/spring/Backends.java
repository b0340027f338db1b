package dev.codeexec.spring;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.policy.CommandPolicy;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.core.env.PropertyResolver;
import org.springframework.util.ClassUtils;

/**
 * Builds the engine {@code codeexec.backend} names. Each backend's builder is called from a class of its own
 * ({@link SandboxBackend}, ...), loaded only for that backend, so that an application without a backend's module never
 * links against it.
 */
final class Backends {

    private Backends() {
    }

    /** The environment variables the E2B engine reads when its properties leave them unset. */
    static final List<String> E2B_VARIABLES = List.of("E2B_API_KEY", "E2B_DOMAIN", "E2B_API_URL", "E2B_SANDBOX_URL");

    /**
     * The {@link #E2B_VARIABLES} the application's environment sets (its OS environment, system properties,
     * application properties: Spring's order), so that a property source can also set or blank them.
     */
    static Map<String, String> e2bVariables(PropertyResolver environment) {
        Map<String, String> out = new HashMap<>();
        for (String name : E2B_VARIABLES) {
            String v = environment.getProperty(name);
            if (v != null) {
                out.put(name, v);
            }
        }
        return out;
    }

    /**
     * @param policy    the command policy, or null; the sandbox also hides the executables it denies
     * @param variables the {@link #E2B_VARIABLES} as the application's environment has them
     * @param network   the egress policy of {@code codeexec.network.*} and its proxy, or {@link NetworkSettings#NONE}
     * @param beans     where a backend looks up the application's beans it uses (the kubernetes backend's client)
     * @throws InvalidConfigurationPropertyValueException when a property is missing or invalid
     * @throws MissingBackendModuleException              when the backend's module is absent
     * @throws IllegalStateException                      when the backend cannot enforce the egress policy, or the
     *                                                    engine cannot start
     */
    static Engine create(CodeExecProperties p, ArtifactService artifacts, CommandPolicy policy, ClassLoader loader,
                         Map<String, String> variables, NetworkSettings network, BeanFactory beans) {
        CodeExecBackend backend = CodeExecBackend.parse(p.getBackend());
        if (network.hasPolicy() && (backend == CodeExecBackend.LOCAL || backend == CodeExecBackend.JUPYTER)) {
            // Fail closed: a policy the engine cannot enforce must not look enforced.
            throw new IllegalStateException("codeexec.backend=" + backend.id() + " cannot enforce the egress policy "
                    + "of codeexec.network.* (" + network.policy() + "): its programs run on this host with the "
                    + "host's network. Use the sandbox or container backend (an egress proxy of the engine's own) or "
                    + "e2b (E2B's firewall), or remove the codeexec.network rules");
        }
        if (p.getPythonKernel().isEnabled() && backend != CodeExecBackend.SANDBOX
                && backend != CodeExecBackend.CONTAINER && backend != CodeExecBackend.JUPYTER) {
            throw new IllegalStateException("codeexec.python-kernel.enabled needs codeexec.backend=sandbox or "
                    + "container (a kernel inside their boundary) or jupyter (a kernel on this host); codeexec.backend="
                    + backend.id() + " runs each python block as a program" + (backend == CodeExecBackend.E2B
                    ? " unless its code interpreter keeps the state (codeexec.e2b.*)" : ""));
        }
        if (!ClassUtils.isPresent(backend.engineClass(), loader)) {
            throw new MissingBackendModuleException(backend.id(), backend.module());
        }
        try {
            return switch (backend) {
                case LOCAL -> LocalEngine.builder().baseDir(p.getLocal().getBaseDir()).artifactService(artifacts)
                        .build();
                case SANDBOX -> SandboxBackend.create(p.getSandbox(), artifacts, policy, network,
                        p.getPythonKernel());
                case CONTAINER -> ContainerBackend.create(p.getContainer(), artifacts, network, p.getPythonKernel());
                case JUPYTER -> JupyterBackend.create(p.getJupyter(), artifacts, p.getPythonKernel());
                case E2B -> E2bBackend.create(p.getE2b(), artifacts, variables, network, p.getNetwork());
                case KUBERNETES -> KubernetesBackend.create(p.getKubernetes(), artifacts, beans, network);
            };
        } catch (InvalidConfigurationPropertyValueException | IllegalStateException e) {
            throw e;
        } catch (CodeExecException | IllegalArgumentException e) {
            throw new IllegalStateException("codeexec.backend=" + backend.id() + ": the engine could not start: "
                    + e.getMessage(), e);
        }
    }
}
