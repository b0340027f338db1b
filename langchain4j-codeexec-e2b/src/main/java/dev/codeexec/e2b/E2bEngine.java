package dev.codeexec.e2b;

import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.EgressControl;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.Isolation;
import dev.codeexec.engine.ProgramRunner;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.ResourceLimit;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.spi.EngineBuilder;
import dev.codeexec.spi.InterpreterEngine;
import dev.codeexec.spi.ListingRunner;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.workspace.StandardWorkspaceFS;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs programs and code in <a href="https://e2b.dev">E2B</a> cloud sandboxes: Firecracker microVMs that the engine
 * creates through E2B's REST control plane and drives through each sandbox's envd (Connect over HTTP) and, for python
 * cells, its code interpreter. <strong>Sandboxes cost money while they run</strong>: the engine kills every sandbox
 * it created when a workspace is removed and at {@link #close()}, renews only those in use, and a sandbox it loses
 * track of (a crashed JVM) stops after {@link Builder#sandboxTimeout} by itself.
 *
 * <pre>{@code
 * try (E2bEngine engine = E2bEngine.builder().build()) {        // E2B_API_KEY; template code-interpreter-v1
 *     Workspace ws = engine.manager().createWorkspace("conversation-42", WorkspacePolicy.DEFAULT);
 *     RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("python3").args("-c", "print(6*7)").build());
 * }
 * }</pre>
 *
 * <p>What it enforces:
 * <ul>
 *   <li>the VM is the boundary ({@link Isolation#REMOTE_VM}); internet access is <strong>off</strong> unless
 *       {@link Builder#internetAccess(boolean)} turns it on, or {@link Builder#egress(EgressPolicy) egress(policy)} hands E2B's
 *       firewall the hosts programs may reach;</li>
 *   <li>each run is one envd process in a PID namespace of its own, as the workspace user, with exactly the run's
 *       environment ({@code env -i}); a timeout kills the whole namespace, daemons included (envd's own
 *       {@code SendSignal}); envd's deadline is a backstop if this engine is gone;</li>
 *   <li>per-run CPU time, file size and open-file limits ({@code prlimit}); memory and processes are the sandbox's;</li>
 *   <li>the library's file rules over envd's file API: links out of the workspace are refused, writes are atomic.</li>
 * </ul>
 *
 * <p>Workspaces: one sandbox each ({@link WorkspaceMode#SANDBOX_PER_WORKSPACE}, the default) or directories of one
 * shared sandbox ({@link WorkspaceMode#SHARED_SANDBOX}); see {@link WorkspaceMode} for the trade-off. The template
 * needs a POSIX {@code sh}, util-linux and coreutils, as E2B's Debian-based templates have; python cells need a
 * code-interpreter template.
 *
 * <p>Code blocks ({@link #executeCode(Workspace, dev.codeexec.CodeExecutionInput)}, see {@link InterpreterEngine}):
 * python blocks run as cells of the workspace's code interpreter context, so state persists between cells, and rich
 * outputs are saved as {@code out/display_<n>.<ext>}; other blocks, and python too without a code interpreter
 * ({@link Builder#codeInterpreter(boolean)}), run as scripts. A cell past its timeout is interrupted (the connection
 * is closed, and the interpreter interrupts the kernel); a kernel that does not answer within 20 s afterwards is
 * restarted.
 *
 * <p>Failures are typed: {@link E2bAuthenticationException}, {@link E2bSandboxGoneException} (a
 * {@link dev.codeexec.engine.WorkspaceGoneException}), {@link E2bTemplateNotFoundException},
 * {@link E2bRateLimitException}, {@link E2bProtocolException} and {@link E2bApiException}; 429 and 5xx are retried
 * with a bounded backoff first.
 */
public final class E2bEngine extends InterpreterEngine {

    private static final Logger LOG = LoggerFactory.getLogger(E2bEngine.class);

    /** The default template: {@value}, E2B's code interpreter (Python with a Jupyter server). */
    public static final String DEFAULT_TEMPLATE = "code-interpreter-v1";

    /** The default user programs run as and files belong to: {@value}, E2B templates' user. */
    public static final String DEFAULT_USER = "user";

    private final String engineId = UUID.randomUUID().toString();
    private final E2bHttp http;
    private final E2bControlPlane control;
    private final E2bSettings settings;
    private final E2bWorkspaces workspaces;
    private final E2bWorkspaceFS fs;
    private final Capabilities capabilities;
    private final E2bRuns runs;
    private final E2bCells cells;
    private final ListingRunner listingRunner = new ListingRunner(super.runner(), ChronoUnit.NANOS);

    private E2bEngine(Builder b) {
        super("E2bEngine", b, ShellEnvironmentPolicy.sandboxDefault(), null);
        E2bConfig config = b.config != null ? b.config : b.configBuilder.build();
        String user = b.user == null ? DEFAULT_USER : b.user;
        if (!user.matches("[a-z_][a-z0-9_-]{0,31}")) {
            throw new InvalidSpecException("user ('" + user + "') must be a Linux user name");
        }
        String base = b.baseDir == null ? (user.equals("root") ? "/root" : "/home/" + user) + "/workspaces"
                : b.baseDir;
        if (!base.matches("(/[A-Za-z0-9._-]+)+") || base.contains("/../") || base.endsWith("/..")
                || base.contains("/./")) {
            throw new InvalidSpecException("baseDir ('" + base + "') must be an absolute path of letters, digits, "
                    + "'.', '_' and '-'");
        }
        String template = b.template == null ? DEFAULT_TEMPLATE : b.template;
        Duration ttl = b.sandboxTimeout == null ? SandboxSpec.DEFAULT_TIMEOUT : b.sandboxTimeout;
        if (ttl.compareTo(Duration.ofSeconds(10)) < 0) {
            throw new InvalidSpecException("sandboxTimeout (" + ttl + ") must be at least 10 seconds");
        }
        WorkspaceMode mode = b.sharedSandboxId != null ? WorkspaceMode.SHARED_SANDBOX
                : b.mode == null ? WorkspaceMode.SANDBOX_PER_WORKSPACE : b.mode;
        boolean interpreter = b.codeInterpreter != null ? b.codeInterpreter : template.startsWith("code-interpreter");
        E2bEgress egress = egressPolicy() == null ? null
                : E2bEgress.forEngine(egressPolicy(), b.internetAccess, b.sharedSandboxId);
        this.settings = new E2bSettings(template, ttl, mode, b.internetAccess, b.metadata, b.envVars, user, base,
                interpreter, b.sharedSandboxId, b.secure, egress);
        this.http = new E2bHttp(config);
        this.control = new E2bControlPlane(http);
        this.workspaces = new E2bWorkspaces(settings, control, http, engineId);
        boolean network = egress != null ? egress.allowInternetAccess() : b.internetAccess;
        try {
            workspaces.connectShared();
            if (b.sharedSandboxId != null) {
                // A sandbox of someone else's: its network is what it was created with; never claim less.
                network = !Boolean.FALSE.equals(control.get(b.sharedSandboxId).allowInternetAccess());
            }
        } catch (RuntimeException e) {
            try {
                workspaces.close();
            } catch (RuntimeException c) {
                e.addSuppressed(c);
            }
            http.close();
            throw e;
        }
        this.fs = new E2bWorkspaceFS(StandardWorkspaceFS.builder().files(ws -> files(workspaces.slot(ws)))
                .inputRoots(inputRoots()).artifacts(artifactStore()).build(), ws -> files(workspaces.slot(ws)));
        this.runs = new E2bRuns(workspaces, environment(), this::files);
        this.cells = new E2bCells(workspaces, fs, runs);
        this.capabilities = Capabilities.builder()
                .isolation(Isolation.REMOTE_VM)
                .networkAllowed(network)
                .readOnlyMount(false)
                .streaming(true)
                .supportsCleanEnv(true)
                .interactive(true)
                .enforcedLimits(EnumSet.of(ResourceLimit.CPU_TIME, ResourceLimit.FILE_SIZE, ResourceLimit.OPEN_FILES))
                .maxDiskBytes(false)
                .egressControl(egress == null ? EgressControl.NONE : EgressControl.PROVIDER)
                .statefulCells(settings.codeInterpreter())
                .build();
        if (egress != null) {
            LOG.info("E2bEngine: egress policy ({}) handed to E2B's firewall as {}", egressPolicy(), egress);
        } else if (network) {
            LOG.warn("E2bEngine: programs in its sandboxes can reach the internet");
        }
        LOG.info("E2bEngine {} on {} (template {}, {}, internet {})", engineId.substring(0, 8), config.apiUrl(),
                template, mode, settings.network());
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String name() {
        return "e2b";
    }

    @Override
    public WorkspaceManager manager() {
        return workspaces;
    }

    @Override
    public WorkspaceFS fs() {
        return fs;
    }

    @Override
    public Capabilities describe() {
        return capabilities;
    }

    /** This engine instance's id, the value of the {@code dev.codeexec.engine} metadata of its sandboxes. */
    public String instanceId() {
        return engineId;
    }

    /** The control plane this engine uses (renew, pause or inspect sandboxes yourself). */
    public E2bControlPlane controlPlane() {
        return control;
    }

    /** The id of the sandbox a workspace lives in. */
    public String sandboxId(Workspace ws) {
        return workspaces.slot(ws).sandbox.id();
    }

    EnvdFiles files(E2bWorkspaces.Slot slot) {
        return new EnvdFiles(slot.sandbox, slot.root, settings.stagingDir(), settings.user());
    }

    E2bWorkspaces workspaces() {
        return workspaces;
    }

    // ------------------------------------------------------------------ runs

    /**
     * Lists a change report's folders in the run itself when asked ({@link ListingRunner}; modification times keep
     * nanoseconds, as envd reports them).
     */
    @Override
    public ProgramRunner runner() {
        return listingRunner;
    }

    @Override
    protected RunResult runProgram(Workspace ws, RunProgramSpec spec) {
        requireOpen();
        return run(prepare(ws, spec, false));
    }

    @Override
    protected ProgramSession startProgram(Workspace ws, RunProgramSpec spec) {
        requireOpen();
        return start(prepare(ws, spec, true));
    }

    @Override
    protected PreparedRun prepare(Workspace ws, RunProgramSpec spec) {
        return prepare(ws, spec, true);
    }

    /** A run of {@link E2bRuns}; {@code interactive} for sessions, whose stdin stays open for writes. */
    PreparedRun prepare(Workspace ws, RunProgramSpec spec, boolean interactive) {
        ResourceLimits limits = limitsFor(spec);
        return runs.prepare(ws, spec, limits, outputCap(spec), interactive,
                interactive ? null : listingRunner.claim());
    }

    // ------------------------------------------------------------------ code

    /**
     * Python blocks run as cells of the workspace's code interpreter context (state persists between cells, rich
     * outputs are saved as {@code out/display_<n>.<ext>}); see {@link E2bCells} for timeouts and lost contexts.
     */
    @Override
    protected CellRunner cells(Workspace ws) {
        return cells.of(ws);
    }

    @Override
    protected String interpreterName() {
        return "the code interpreter";
    }

    /** Without a code interpreter ({@link Builder#codeInterpreter(boolean)}), python blocks run as scripts too. */
    @Override
    protected boolean hasInterpreter() {
        return settings.codeInterpreter();
    }

    /** Restarts the workspace's code interpreter context: variables and imports are gone; files stay. */
    public void restartInterpreter(Workspace ws) {
        requireOpen();
        cells.restart(ws);
    }

    @Override
    protected void closeBackend() {
        RuntimeException failure = attempt(null, workspaces::close);
        failure = attempt(failure, http::close);
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Builder for {@link E2bEngine}. Only the API key is required (here or as {@code E2B_API_KEY}); the environment
     * policy defaults to {@link ShellEnvironmentPolicy#sandboxDefault()} over an empty host environment: nothing of
     * this JVM's environment reaches a sandbox unless given ({@link #hostEnvironment}).
     */
    public static final class Builder extends EngineBuilder<Builder> {
        private final E2bConfig.Builder configBuilder = E2bConfig.builder();
        private E2bConfig config;
        private String template;
        private Duration sandboxTimeout;
        private WorkspaceMode mode;
        private boolean internetAccess;
        private final Map<String, String> metadata = new LinkedHashMap<>();
        private final Map<String, String> envVars = new LinkedHashMap<>();
        private String user;
        private String baseDir;
        private Boolean codeInterpreter;
        private String sharedSandboxId;
        private boolean secure = true;

        private Builder() {
            hostEnvironment(Map.of());
        }

        /** The API key; default {@code E2B_API_KEY}. */
        public Builder apiKey(String apiKey) {
            configBuilder.apiKey(apiKey);
            return this;
        }

        /** The domain; default {@code E2B_DOMAIN}, else {@value E2bConfig#DEFAULT_DOMAIN}. */
        public Builder domain(String domain) {
            configBuilder.domain(domain);
            return this;
        }

        /** The control plane's URL; default {@code E2B_API_URL}, else {@code https://api.<domain>}. */
        public Builder apiUrl(String apiUrl) {
            configBuilder.apiUrl(apiUrl);
            return this;
        }

        /** One data-plane URL for every sandbox; default {@code E2B_SANDBOX_URL}, else each sandbox's own. */
        public Builder sandboxUrl(String sandboxUrl) {
            configBuilder.sandboxUrl(sandboxUrl);
            return this;
        }

        /** How long one request may take to be answered; default 60 seconds. */
        public Builder requestTimeout(Duration timeout) {
            configBuilder.requestTimeout(timeout);
            return this;
        }

        /** Attempts and first backoff for answers 429 and 5xx; default 4 attempts from 250 ms. */
        public Builder retries(int maxAttempts, Duration firstBackoff) {
            configBuilder.retries(maxAttempts, firstBackoff);
            return this;
        }

        /** Where the {@code E2B_*} variables are read from; default {@code System.getenv()}. */
        public Builder e2bVariables(Map<String, String> variables) {
            configBuilder.environment(variables);
            return this;
        }

        /** A complete connection configuration, replacing the connection setters above. */
        public Builder config(E2bConfig config) {
            this.config = Objects.requireNonNull(config, "config");
            return this;
        }

        /** The sandbox template; default {@value E2bEngine#DEFAULT_TEMPLATE}. */
        public Builder template(String template) {
            this.template = template;
            return this;
        }

        /**
         * How long a sandbox lives past its last renewal; the engine renews sandboxes in use every third of it.
         * Default 300 seconds; at least 10 seconds.
         */
        public Builder sandboxTimeout(Duration timeout) {
            this.sandboxTimeout = timeout;
            return this;
        }

        /** One sandbox per workspace (default) or one shared by all; see {@link WorkspaceMode}. */
        public Builder workspaceMode(WorkspaceMode mode) {
            this.mode = mode;
            return this;
        }

        /**
         * Uses an existing sandbox for all workspaces ({@link WorkspaceMode#SHARED_SANDBOX}): the engine connects to
         * it (resuming it when paused), never kills it, and removes its own workspaces from it at close.
         */
        public Builder sharedSandbox(String sandboxId) {
            this.sharedSandboxId = sandboxId;
            return this;
        }

        /** Lets programs reach the internet (E2B's {@code allow_internet_access}); default false. */
        public Builder internetAccess(boolean allow) {
            this.internetAccess = allow;
            return this;
        }

        /**
         * E2B enforces an egress policy ({@link #egress}) with its own firewall: the policy is turned into E2B's
         * {@code allow_internet_access} and {@code network.allowOut} / {@code denyOut} when each sandbox is created.
         * E2B's rules are coarser than the policy's; what it cannot express is refused at {@link #build()} with
         * {@link dev.codeexec.engine.UnsupportedCapabilityException} naming the rule, never widened: deny rules on
         * names, allow rules on names restricted to ports or a scheme (E2B matches names on ports 80 and 443 only),
         * allow rules on addresses not written for every port ({@code 1.2.3.0/24:*}), IPv6 rules, deny rules that
         * allowed addresses or names would override, narrowed policies. Approval of unknown hosts and per-connection
         * events and limits need a proxy of ours and are not available. Not together with
         * {@link #internetAccess(boolean) internetAccess(true)} nor {@link #sharedSandbox(String)}. See
         * {@code docs/e2b.md}, "Egress policy".
         */
        @Override
        protected EgressControl egressControl() {
            return EgressControl.PROVIDER;
        }

        /** Metadata added to every sandbox the engine creates (besides its own {@code dev.codeexec.*} keys). */
        public Builder metadata(Map<String, String> metadata) {
            this.metadata.putAll(metadata);
            return this;
        }

        /**
         * Environment variables of the sandboxes (E2B's {@code envVars}): they reach the template's own services
         * and the code interpreter, not programs run by this engine, whose environment is exactly the run's.
         */
        public Builder sandboxEnvVars(Map<String, String> envVars) {
            this.envVars.putAll(envVars);
            return this;
        }

        /** The Linux user of the sandbox that programs run as and files belong to; default {@value #DEFAULT_USER}. */
        public Builder user(String user) {
            this.user = user;
            return this;
        }

        private static final String DEFAULT_USER = E2bEngine.DEFAULT_USER;

        /**
         * The directory of the sandbox that holds the workspaces (and the engine's root-only staging directory);
         * default {@code /home/<user>/workspaces}.
         */
        public Builder baseDir(String baseDir) {
            this.baseDir = baseDir;
            return this;
        }

        /**
         * Whether python blocks run in the template's code interpreter (port 49999) or as scripts; default true
         * for templates whose name starts with {@code code-interpreter}.
         */
        public Builder codeInterpreter(boolean use) {
            this.codeInterpreter = use;
            return this;
        }

        /** Whether envd requires the sandbox's access token (E2B's {@code secure}); default true. */
        public Builder secure(boolean secure) {
            this.secure = secure;
            return this;
        }

        /**
         * @throws E2bAuthenticationException when no API key is set
         * @throws InvalidSpecException       for settings out of range or at odds with each other
         * @throws dev.codeexec.engine.UnsupportedCapabilityException for an egress policy E2B cannot enforce
         */
        public E2bEngine build() {
            return new E2bEngine(this);
        }
    }
}
