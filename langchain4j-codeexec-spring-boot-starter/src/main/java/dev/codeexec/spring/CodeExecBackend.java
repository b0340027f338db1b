package dev.codeexec.spring;

import java.util.Locale;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/** The backends {@code codeexec.backend} can name; each needs its module on the class path (local is in the core). */
enum CodeExecBackend {

    /** {@code LocalEngine}: the host, no isolation. For trusted code and development only. */
    LOCAL("dev.codeexec.local.LocalEngine", "dev.codeexec:langchain4j-codeexec"),
    /** {@code SandboxEngine}: bubblewrap (Linux) or Seatbelt (macOS). */
    SANDBOX("dev.codeexec.sandbox.SandboxEngine", "dev.codeexec:langchain4j-codeexec-sandbox"),
    /** {@code ContainerEngine}: a hardened Docker or Podman container per workspace. */
    CONTAINER("dev.codeexec.container.ContainerEngine", "dev.codeexec:langchain4j-codeexec-container"),
    /** {@code JupyterEngine}: an ipykernel per workspace; no isolation. */
    JUPYTER("dev.codeexec.jupyter.JupyterEngine", "dev.codeexec:langchain4j-codeexec-jupyter"),
    /** {@code E2bEngine}: an E2B cloud sandbox per workspace. */
    E2B("dev.codeexec.e2b.E2bEngine", "dev.codeexec:langchain4j-codeexec-e2b"),
    /** {@code KubernetesEngine}: a hardened pod per workspace (or an agent-sandbox claim) on a cluster. */
    KUBERNETES("dev.codeexec.kubernetes.KubernetesEngine", "dev.codeexec:langchain4j-codeexec-kubernetes");

    private final String engineClass;
    private final String module;

    CodeExecBackend(String engineClass, String module) {
        this.engineClass = engineClass;
        this.module = module;
    }

    /**
     * The backend named {@code value} (case and surrounding blanks ignored).
     *
     * @throws InvalidConfigurationPropertyValueException naming {@code codeexec.backend} when it is none of them
     */
    static CodeExecBackend parse(String value) {
        if (value == null || value.isBlank()) {
            throw new InvalidConfigurationPropertyValueException("codeexec.backend", value, "no backend is "
                    + "configured: set codeexec.backend to " + names() + " (or declare an Engine bean, or set "
                    + "codeexec.enabled=false). There is no default, so that model-written code never runs on the host "
                    + "by accident");
        }
        for (CodeExecBackend b : values()) {
            if (b.id().equals(value.strip().toLowerCase(Locale.ROOT))) {
                return b;
            }
        }
        throw new InvalidConfigurationPropertyValueException("codeexec.backend", value, "'" + value
                + "' is not a backend; use " + names());
    }

    private static String names() {
        return "local, sandbox, container, jupyter, e2b or kubernetes";
    }

    /** The name {@code codeexec.backend} takes, for example {@code sandbox}. */
    String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The engine's class, present when the backend's module is on the class path. */
    public String engineClass() {
        return engineClass;
    }

    /** The Maven coordinates of the backend's module. */
    public String module() {
        return module;
    }
}
