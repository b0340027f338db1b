package dev.codeexec.samples.analyst;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.container.ContainerEngine;
import dev.codeexec.e2b.E2bAuthenticationException;
import dev.codeexec.e2b.E2bEngine;
import dev.codeexec.e2b.E2bRateLimitException;
import dev.codeexec.e2b.E2bSandboxGoneException;
import dev.codeexec.e2b.E2bTemplateNotFoundException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.jupyter.JupyterEngine;
import dev.codeexec.kubernetes.KubernetesEngine;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import dev.codeexec.sandbox.SandboxEngine;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * Opens the engine of a backend for the chatbot and says, in words a newcomer can act on, what it isolates, and why
 * one cannot start here and how to fix that. Nothing here prints host details beyond the user name.
 */
public final class Backends {

    /** The image {@code ./scripts/provision docker} builds from Debian packages (never pulled). */
    static final String PROVISIONED_IMAGE = "codeexec-python:bookworm";

    /**
     * The default image of the container backend, and of the kubernetes backend, whose cluster must be able to pull
     * it: {@code CODEEXEC_IMAGE}, else {@link #PROVISIONED_IMAGE}.
     */
    public static final String DEFAULT_IMAGE = System.getenv().getOrDefault("CODEEXEC_IMAGE", PROVISIONED_IMAGE);

    private Backends() {
    }

    /**
     * An open engine and what to tell the user about it.
     *
     * @param boundary   what separates the model's programs from this host, in one sentence
     * @param warning    printed before anything runs, or null
     * @param egressNote why the backend, which can hold programs to an egress policy elsewhere, does not here; or null
     */
    public record Opened(Engine engine, Backend backend, String boundary, String warning, String egressNote) {

        public Opened(Engine engine, Backend backend, String boundary, String warning) {
            this(engine, backend, boundary, warning, null);
        }
    }

    /**
     * An egress policy for the backends that hold programs to one through a proxy of the engine's own (sandbox,
     * container); the others are opened without it.
     *
     * @param policy what programs may reach, or null for none (the backend's own network)
     * @param proxy  the proxy's settings (its resolver, ...)
     * @param allows what the policy allows, in words
     */
    public record Egress(EgressPolicy policy, Supplier<EgressProxy.Builder> proxy, String allows) {

        /** No egress policy. */
        public static final Egress NONE = new Egress(null, null, null);
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
     * @param image     the container and kubernetes backends' image
     * @param template  the E2B backend's template, or null for {@value E2bEngine#DEFAULT_TEMPLATE}
     * @param env       where the E2B backend reads {@code E2B_API_KEY}, {@code E2B_DOMAIN}, {@code E2B_API_URL} and
     *                  {@code E2B_SANDBOX_URL} from, and the kubernetes backend {@code KUBECONFIG} and the in-cluster
     *                  variables
     * @throws Unavailable when the requested backend cannot start here
     */
    public static Opened open(Backend requested, ArtifactService artifacts, String image, String template,
                              Map<String, String> env) throws Unavailable {
        return open(requested, artifacts, image, template, env, Egress.NONE);
    }

    /**
     * {@link #open(Backend, ArtifactService, String, String, Map)}, with the sandbox and container held to
     * {@code egress} where they can enforce it here (elsewhere they open without it, and {@link Opened#egressNote()}
     * says why).
     */
    public static Opened open(Backend requested, ArtifactService artifacts, String image, String template,
                              Map<String, String> env, Egress egress) throws Unavailable {
        return open(requested, artifacts, image, template, env, UnaryOperator.identity(), UnaryOperator.identity(),
                egress);
    }

    /**
     * {@link #open(Backend, ArtifactService, String, String, Map)} with the sandbox builder adjusted by
     * {@code sandbox} (tests break it) and the E2B builder by {@code e2b} (tests point it at a fake E2B).
     */
    static Opened open(Backend requested, ArtifactService artifacts, String image, String template,
                       Map<String, String> env, UnaryOperator<SandboxEngine.Builder> sandbox,
                       UnaryOperator<E2bEngine.Builder> e2b) throws Unavailable {
        return open(requested, artifacts, image, template, env, sandbox, e2b, Egress.NONE);
    }

    static Opened open(Backend requested, ArtifactService artifacts, String image, String template,
                       Map<String, String> env, UnaryOperator<SandboxEngine.Builder> sandbox,
                       UnaryOperator<E2bEngine.Builder> e2b, Egress egress) throws Unavailable {
        Opener opener = backend -> openExactly(backend, artifacts, image, template, env, sandbox, e2b, egress);
        if (requested != null) {
            return opener.open(requested);
        }
        try {
            return opener.open(Backend.SANDBOX);
        } catch (Unavailable sandboxUnavailable) {
            Opened local = opener.open(Backend.LOCAL);
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

    private interface Opener {
        Opened open(Backend backend) throws Unavailable;
    }

    private static Opened openExactly(Backend backend, ArtifactService artifacts, String image, String template,
                                      Map<String, String> env, UnaryOperator<SandboxEngine.Builder> sandbox,
                                      UnaryOperator<E2bEngine.Builder> e2b, Egress egress) throws Unavailable {
        try {
            return switch (backend) {
                case SANDBOX -> withEgress(backend, egress, eg -> {
                    SandboxEngine.Builder b = SandboxEngine.builder().artifactService(artifacts);
                    if (eg.policy() != null) {
                        b.egress(eg.policy()).egressProxy(eg.proxy().get());
                    }
                    return sandbox.apply(b).build();
                }, "a bubblewrap sandbox per run: programs see this host read-only with its secrets hidden, "
                        + "write only their workspace, have no network of their own and a minimal environment");
                case LOCAL -> new Opened(LocalEngine.builder().artifactService(artifacts).build(), backend,
                        "none: programs run on this host as " + userDescription() + " (a clean environment, "
                                + "nothing else)", null);
                case CONTAINER -> withEgress(backend, egress, eg -> {
                    ContainerEngine.Builder b = ContainerEngine.builder().image(image).artifactService(artifacts);
                    if (eg.policy() != null) {
                        b.egress(eg.policy()).egressProxy(eg.proxy().get());
                    }
                    return b.build();
                }, "a Docker container per workspace (image " + image + "): no network of its own, no capabilities, "
                        + "memory and process limits");
                case JUPYTER -> new Opened(JupyterEngine.builder().artifactService(artifacts).build(), backend,
                        "none: a Jupyter kernel per workspace keeps Python state across cells, and runs on this host "
                                + "as " + userDescription(), null);
                case E2B -> openE2b(artifacts, template, env, e2b);
                case KUBERNETES -> openKubernetes(artifacts, image, env, Path.of(System.getProperty("user.home")));
            };
        } catch (CodeExecException e) {
            throw new Unavailable(backend, e.getMessage(), fix(backend, e), e);
        }
    }

    /**
     * The engine built with {@code egress}; where it cannot enforce an egress policy here, built without one, with the
     * reason as the {@link Opened#egressNote()}.
     */
    private static Opened withEgress(Backend backend, Egress egress, Function<Egress, Engine> build,
                                     String boundary) {
        if (egress.policy() == null) {
            return new Opened(build.apply(Egress.NONE), backend, boundary, null);
        }
        try {
            return new Opened(build.apply(egress), backend, boundary + "; their one way out is the engine's egress "
                    + "proxy, which lets them reach " + egress.allows() + " and nothing else", null);
        } catch (UnsupportedCapabilityException e) {
            return new Opened(build.apply(Egress.NONE), backend, boundary, null, firstLine(e.getMessage()));
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
            case E2B -> e2bFix(e);
            case KUBERNETES -> m.contains("image") || m.contains("pull")
                    ? "make the image available to the cluster (push it to a registry the cluster pulls from) and "
                    + "name it with --image NAME; see docs/kubernetes.md."
                    : "check that `kubectl get pods` works with the same kubeconfig and context (the sample uses the "
                    + "current one), and that you may create pods in its namespace; see docs/kubernetes.md.";
        };
    }

    /**
     * The E2B engine, or, without an API key, an {@link Unavailable} that says which variable to set (checked here
     * first, so that the sample's words name its own flags; the engine would refuse too).
     */
    private static Opened openE2b(ArtifactService artifacts, String template, Map<String, String> env,
                                  UnaryOperator<E2bEngine.Builder> e2b) throws Unavailable {
        String key = env.get("E2B_API_KEY");
        if (key == null || key.isBlank()) {
            throw new Unavailable(Backend.E2B, "E2B_API_KEY is not set: the E2B backend runs the model's programs in "
                    + "E2B's cloud, and needs an API key of your E2B account", E2B_KEY_FIX, null);
        }
        E2bEngine.Builder b = E2bEngine.builder().e2bVariables(env).artifactService(artifacts);
        String chosen = template == null || template.isBlank() ? E2bEngine.DEFAULT_TEMPLATE : template.strip();
        E2bEngine engine = e2b.apply(b.template(chosen)).build();
        return new Opened(engine, Backend.E2B, "an E2B cloud sandbox per workspace (template " + chosen + "): a "
                + "Firecracker microVM on E2B's machines, not this host, with internet access off; it is billed while "
                + "it runs and killed when the chatbot ends", null);
    }

    private static final String E2B_KEY_FIX = "create an API key in your E2B dashboard (https://e2b.dev/dashboard), "
            + "then export E2B_API_KEY=<your key> and run again (E2B_DOMAIN or E2B_API_URL for a self-hosted E2B, "
            + "--template NAME for another template); see docs/e2b.md.";

    private static String e2bFix(CodeExecException e) {
        if (e instanceof E2bAuthenticationException) {
            return e.getMessage() != null && e.getMessage().contains("no E2B API key") ? E2B_KEY_FIX
                    : "check E2B_API_KEY: E2B refused it (a key of another team, revoked, or mistyped); the dashboard "
                    + "https://e2b.dev/dashboard lists your keys. See docs/troubleshooting.md#e2b.";
        }
        if (e instanceof E2bTemplateNotFoundException) {
            return "name a template your team has with --template NAME (the default is " + E2bEngine.DEFAULT_TEMPLATE
                    + "; `e2b template list` shows yours). See docs/troubleshooting.md#e2b.";
        }
        if (e instanceof E2bRateLimitException) {
            return "E2B limits how many sandboxes a team runs at once and how fast they are created: wait a minute, "
                    + "or kill sandboxes you no longer need in the dashboard. See docs/troubleshooting.md#e2b.";
        }
        if (e instanceof E2bSandboxGoneException) {
            return "the sandbox ended (its timeout passed, or it was killed in the dashboard): run again. See "
                    + "docs/troubleshooting.md#e2b.";
        }
        return "see docs/troubleshooting.md#e2b.";
    }

    /**
     * The kubernetes engine on the cluster of the kubeconfig (or in-cluster), or, when none is configured, an
     * {@link Unavailable} that says what to configure: checked here first, because fabric8's client would otherwise
     * try {@code https://kubernetes.default.svc} and fail later with a connection error.
     *
     * @param home the user's home folder, where {@code .kube/config} is looked for
     */
    static Opened openKubernetes(ArtifactService artifacts, String image, Map<String, String> env, Path home)
            throws Unavailable {
        String cluster = KubernetesCluster.find(env, home).orElse(null);
        if (cluster == null) {
            throw new Unavailable(Backend.KUBERNETES, KubernetesCluster.missing(env), KUBECONFIG_FIX, null);
        }
        try {
            KubernetesEngine engine = KubernetesEngine.builder().image(image).artifactService(artifacts).build();
            return new Opened(engine, Backend.KUBERNETES, "a hardened pod per workspace (image " + image + ") on the "
                    + "cluster of " + cluster + ": a fixed non-root user, a read-only root file system, no "
                    + "capabilities, no service-account token, memory and CPU limits; what it may reach on the "
                    + "network is up to the cluster (docs/kubernetes.md)", null);
        } catch (KubernetesClientException e) {
            throw new Unavailable(Backend.KUBERNETES, "the cluster of " + cluster + " did not answer as expected: "
                    + firstLine(e.getMessage()), fix(Backend.KUBERNETES, new CodeExecException(e.getMessage())), e);
        }
    }

    private static final String KUBECONFIG_FIX = "point the sample at a cluster you may create pods in: export "
            + "KUBECONFIG=<your kubeconfig> or put it at ~/.kube/config (your provider's get-credentials command "
            + "writes one; `kind create cluster` makes a local cluster), check that `kubectl get pods` works, and "
            + "name an image the cluster can pull with --image NAME; see docs/kubernetes.md.";

    /** "root (the administrator)" or the user name: never more than the name. */
    static String userDescription() {
        String user = System.getProperty("user.name", "this user");
        return "root".equals(user) ? "root (the administrator: every file of this host)" : "the user '" + user + "'";
    }

    static String firstLine(String s) {
        return s == null ? "" : s.lines().findFirst().orElse("");
    }
}
