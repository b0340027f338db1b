package dev.codeexec.samples.analyst;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.container.ContainerEngine;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.jupyter.JupyterEngine;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.sandbox.SandboxEngine;
import java.util.Optional;
import java.util.function.Function;

/**
 * Opens the engine of a backend for the chatbot and says, in words a newcomer can act on, what it isolates, and why
 * one cannot start here and how to fix that. Nothing here prints host details beyond the user name.
 */
public final class Backends {

    /** The image {@code ./scripts/provision docker} builds from Debian packages (never pulled). */
    public static final String DEFAULT_IMAGE = System.getenv().getOrDefault("CODEEXEC_IMAGE",
            "codeexec-python:bookworm");

    private Backends() {
    }

    /**
     * An open engine and what to tell the user about it.
     *
     * @param boundary what separates the model's programs from this host, in one sentence
     * @param warning  printed before anything runs, or null
     */
    public record Opened(Engine engine, Backend backend, String boundary, String warning) {
    }

    /** A backend that cannot start on this host: why, and how to fix it. */
    public static final class Unavailable extends Exception {
        private static final long serialVersionUID = 1L;
        private final Backend backend;
        private final String fix;

        Unavailable(Backend backend, String reason, String fix, Throwable cause) {
            super(reason, cause);
            this.backend = backend;
            this.fix = fix;
        }

        public Backend backend() {
            return backend;
        }

        /** What to do about it. */
        public String fix() {
            return fix;
        }
    }

    /**
     * Opens {@code requested}, or, when it is null, the sandbox where its preflight passes and the local engine
     * (with a warning that says what that means) where it does not.
     *
     * @param artifacts the store {@code workspace_save_artifact} saves into; given to the engine, so that the sandbox
     *                  hides its folder from programs
     * @param image     the container backend's image
     * @throws Unavailable when the requested backend cannot start here
     */
    public static Opened open(Backend requested, ArtifactService artifacts, String image) throws Unavailable {
        return open(requested, artifacts, image, a -> SandboxEngine.builder().artifactService(a).build());
    }

    /** {@link #open(Backend, ArtifactService, String)} with the sandbox built by {@code sandbox} (tests break it). */
    static Opened open(Backend requested, ArtifactService artifacts, String image,
                       Function<ArtifactService, SandboxEngine> sandbox) throws Unavailable {
        if (requested != null) {
            return openExactly(requested, artifacts, image, sandbox);
        }
        try {
            return openExactly(Backend.SANDBOX, artifacts, image, sandbox);
        } catch (Unavailable sandboxUnavailable) {
            Opened local = openExactly(Backend.LOCAL, artifacts, image, sandbox);
            String warning = "WARNING: the sandbox cannot run here, so this runs on the LOCAL backend, which is NOT a "
                    + "sandbox.\n"
                    + "  The model's commands run on this host as " + userDescription() + ": they can read and change "
                    + "your files and use your network.\n"
                    + "  (The offline scripted model only runs the analysis shown below; a real model could run "
                    + "anything.)\n"
                    + "  Why the sandbox cannot run: " + firstLine(sandboxUnavailable.getMessage()) + "\n"
                    + "  Fix: " + sandboxUnavailable.fix() + " Or choose another isolating backend: --backend "
                    + "container.";
            return new Opened(local.engine(), Backend.LOCAL, local.boundary(), warning);
        }
    }

    private static Opened openExactly(Backend backend, ArtifactService artifacts, String image,
                                      Function<ArtifactService, SandboxEngine> sandbox) throws Unavailable {
        try {
            return switch (backend) {
                case SANDBOX -> new Opened(sandbox.apply(artifacts), backend,
                        "a bubblewrap sandbox per run: programs see this host read-only with its secrets hidden, "
                                + "write only their workspace, have no network and a minimal environment", null);
                case LOCAL -> new Opened(LocalEngine.builder().artifactService(artifacts).build(), backend,
                        "none: programs run on this host as " + userDescription() + " (a clean environment, "
                                + "nothing else)", null);
                case CONTAINER -> new Opened(ContainerEngine.builder().image(image).artifactService(artifacts).build(),
                        backend, "a Docker container per workspace (image " + image + "): no network, no "
                                + "capabilities, memory and process limits", null);
                case JUPYTER -> new Opened(JupyterEngine.builder().artifactService(artifacts).build(), backend,
                        "none: a Jupyter kernel per workspace keeps Python state across cells, and runs on this host "
                                + "as " + userDescription(), null);
                case E2B -> throw new Unavailable(backend, e2bReason(), "use another backend for now: --backend "
                        + "sandbox, container, jupyter or local.", null);
            };
        } catch (CodeExecException e) {
            throw new Unavailable(backend, e.getMessage(), fix(backend, e), e);
        }
    }

    /**
     * What to do when {@code backend} failed with {@code e}: while opening it, or while preparing its first workspace
     * (a missing container image, a kernel that does not start).
     */
    public static String fix(Backend backend, CodeExecException e) {
        String m = Optional.ofNullable(e.getMessage()).orElse("");
        return switch (backend) {
            case SANDBOX -> "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; as root here: "
                    + "./scripts/provision sandbox); docs/troubleshooting.md#the-sandbox-does-not-start lists every "
                    + "preflight error.";
            case CONTAINER -> m.contains("image")
                    ? "build the image (as root on Debian: ./scripts/provision docker builds " + DEFAULT_IMAGE
                    + " from Debian packages), or name an image you have with --image NAME (see `docker images`)."
                    : "start a Docker engine (as root on Debian: ./scripts/provision docker installs and starts it, "
                    + "and builds the image), or set DOCKER_HOST; see docs/troubleshooting.md#docker.";
            case JUPYTER -> "install ipykernel for the system Python (Debian/Ubuntu: apt-get install "
                    + "python3-ipykernel; as root here: ./scripts/provision jupyter); see "
                    + "docs/troubleshooting.md#jupyter.";
            case LOCAL -> "see docs/troubleshooting.md.";
            case E2B -> "see docs/troubleshooting.md#e2b.";
        };
    }

    private static String e2bReason() {
        String key = System.getenv("E2B_API_KEY");
        return "the E2B backend is not part of this build yet (the langchain4j-codeexec-e2b module has no engine in "
                + "this version)" + (key == null || key.isBlank()
                ? "; when it has, it also needs E2B_API_KEY (an API key from your E2B dashboard), which is not set"
                : "");
    }

    /** "root (the administrator)" or the user name: never more than the name. */
    static String userDescription() {
        String user = System.getProperty("user.name", "this user");
        return "root".equals(user) ? "root (the administrator: every file of this host)" : "the user '" + user + "'";
    }

    static String firstLine(String s) {
        return s == null ? "" : s.lines().findFirst().orElse("");
    }
}
