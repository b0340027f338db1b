package dev.codeexec.spring;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.policy.CommandPolicy;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.util.ClassUtils;

/**
 * Builds the engine {@code codeexec.backend} names. Each backend's builder is called from a class of its own
 * ({@link SandboxBackend}, ...), loaded only for that backend, so that an application without a backend's module never
 * links against it.
 */
final class Backends {

    private Backends() {
    }

    /**
     * @param policy the command policy, or null; the sandbox also hides the executables it denies
     * @throws InvalidConfigurationPropertyValueException when a property is missing or invalid
     * @throws IllegalStateException                      when the backend's module is absent or the engine cannot start
     */
    static Engine create(CodeExecProperties p, ArtifactService artifacts, CommandPolicy policy, ClassLoader loader) {
        CodeExecBackend backend = CodeExecBackend.parse(p.getBackend());
        if (!ClassUtils.isPresent(backend.engineClass(), loader)) {
            throw new IllegalStateException("codeexec.backend=" + backend.id() + " needs the module " + backend.module()
                    + " on the class path, and it is not there: add it as a dependency (the starter declares the "
                    + "backends as optional dependencies)");
        }
        try {
            return switch (backend) {
                case LOCAL -> LocalEngine.builder().baseDir(p.getLocal().getBaseDir()).artifactService(artifacts)
                        .build();
                case SANDBOX -> SandboxBackend.create(p.getSandbox(), artifacts, policy);
                case CONTAINER -> ContainerBackend.create(p.getContainer(), artifacts);
                case JUPYTER -> JupyterBackend.create(p.getJupyter(), artifacts);
                case E2B -> throw new IllegalStateException("codeexec.backend=e2b: this version of the starter cannot "
                        + "configure the E2B engine from properties yet; declare an Engine bean built with "
                        + "E2bEngine's builder instead, and the starter uses it");
            };
        } catch (InvalidConfigurationPropertyValueException | IllegalStateException e) {
            throw e;
        } catch (CodeExecException | IllegalArgumentException e) {
            throw new IllegalStateException("codeexec.backend=" + backend.id() + ": the engine could not start: "
                    + e.getMessage(), e);
        }
    }
}
