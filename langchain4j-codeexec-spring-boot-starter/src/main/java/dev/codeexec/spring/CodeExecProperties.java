package dev.codeexec.spring;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code codeexec.*} properties. Only {@code codeexec.backend} is required; everything else has the library's
 * defaults, which the descriptions give. Invalid values fail the start-up with the property's name.
 */
@ConfigurationProperties(prefix = "codeexec")
public class CodeExecProperties {

    /** Whether to configure code execution at all. */
    private boolean enabled = true;

    /**
     * The backend that runs the model's code: local (no isolation), sandbox, container, jupyter or e2b. Required: there
     * is no default, so that no application runs model-written code on the host by accident. An Engine bean of the
     * application's own replaces it.
     */
    private String backend;

    /** Time limit of a command when the model gives none (default 60s). */
    private Duration defaultTimeout;

    /** Longest time limit a model may ask for, and the life of a background session (default 600s). */
    private Duration maxTimeout;

    /** Bytes of program output shown to the model per call (default 16384). */
    private Integer maxOutputBytes;

    /** Largest file workspace_write_file writes (default 8388608). */
    private Long maxWriteBytes;

    /** How long a call waits for the approver's answer before it is denied (default 300s). */
    private Duration approvalTimeout;

    /** Whether an answer that is exactly one runnable fenced code block is executed (the response processor). */
    private boolean autoExecuteCodeBlocks = true;

    /** Whether tool calls from an AI service without a @MemoryId are refused instead of sharing one workspace. */
    private boolean requireMemoryId;

    /** A conversation's workspace unused this long is removed (default 60m); 0 keeps workspaces until closed. */
    private Duration workspaceIdleTtl;

    /** Whether every execution event is written to the SLF4J logger dev.codeexec.audit, one line each. */
    private boolean auditLog = true;

    private final Artifacts artifacts = new Artifacts();
    private final Policy policy = new Policy();
    private final Local local = new Local();
    private final Sandbox sandbox = new Sandbox();
    private final Container container = new Container();
    private final Jupyter jupyter = new Jupyter();
    private final E2b e2b = new E2b();
    private final Network network = new Network();

    /** Where workspace_save_artifact saves. An ArtifactService bean of the application's own replaces it. */
    public static class Artifacts {

        /** The folder of the file-system artifact store; created when missing. */
        private Path dir = Path.of("codeexec-artifacts");

        public Path getDir() {
            return dir;
        }

        public void setDir(Path dir) {
            this.dir = dir;
        }
    }

    /**
     * The command policy for workspace_exec: set allow or deny to enforce one. A CommandPolicy bean of the
     * application's own replaces it.
     */
    public static class Policy {

        /** The only commands the model may run (exact names, such as ls or python3); empty allows any not denied. */
        private List<String> allow = new ArrayList<>();

        /** Commands the model may not run, on top of the built-in deny list of shells and wrappers. */
        private List<String> deny = new ArrayList<>();

        public List<String> getAllow() {
            return allow;
        }

        public void setAllow(List<String> allow) {
            this.allow = allow;
        }

        public List<String> getDeny() {
            return deny;
        }

        public void setDeny(List<String> deny) {
            this.deny = deny;
        }
    }

    /** Settings of the local backend. */
    public static class Local {

        /** The folder workspaces are created in (default: a new temporary folder, removed with the engine). */
        private Path baseDir;

        public Path getBaseDir() {
            return baseDir;
        }

        public void setBaseDir(Path baseDir) {
            this.baseDir = baseDir;
        }
    }

    /** Settings of the sandbox backend. */
    public static class Sandbox {

        /** The sandbox root (default: a new temporary folder, removed with the engine). */
        private Path rootDir;

        /** What programs may see and change: read-only, workspace-write or danger-full-access. */
        private String profile = "workspace-write";

        /** The network of programs: restricted (none) or enabled (the host's). Default: the profile's, restricted. */
        private String network;

        public Path getRootDir() {
            return rootDir;
        }

        public void setRootDir(Path rootDir) {
            this.rootDir = rootDir;
        }

        public String getProfile() {
            return profile;
        }

        public void setProfile(String profile) {
            this.profile = profile;
        }

        public String getNetwork() {
            return network;
        }

        public void setNetwork(String network) {
            this.network = network;
        }
    }

    /** Settings of the container backend. */
    public static class Container {

        /** The workspace image, present on the engine (never pulled). Required for the container backend. */
        private String image;

        /** The Docker or Podman endpoint (default: DOCKER_HOST, else the local socket). */
        private String dockerHost;

        /** A folder with ca.pem, cert.pem and key.pem for TCP with TLS (default: DOCKER_CERT_PATH). */
        private Path tlsCertPath;

        /** Whether containers get a network (Docker's bridge); default none at all. */
        private boolean network;

        /** The memory limit of each workspace container, in bytes (default 512 MiB). */
        private Long memoryBytes;

        /** The process limit of each workspace container (default 256). */
        private Integer processes;

        /** The CPUs of each workspace container (default 1). */
        private Double cpus;

        /** The OCI runtime, such as runsc for gVisor (default: the engine's). */
        private String runtime;

        public String getImage() {
            return image;
        }

        public void setImage(String image) {
            this.image = image;
        }

        public String getDockerHost() {
            return dockerHost;
        }

        public void setDockerHost(String dockerHost) {
            this.dockerHost = dockerHost;
        }

        public Path getTlsCertPath() {
            return tlsCertPath;
        }

        public void setTlsCertPath(Path tlsCertPath) {
            this.tlsCertPath = tlsCertPath;
        }

        public boolean isNetwork() {
            return network;
        }

        public void setNetwork(boolean network) {
            this.network = network;
        }

        public Long getMemoryBytes() {
            return memoryBytes;
        }

        public void setMemoryBytes(Long memoryBytes) {
            this.memoryBytes = memoryBytes;
        }

        public Integer getProcesses() {
            return processes;
        }

        public void setProcesses(Integer processes) {
            this.processes = processes;
        }

        public Double getCpus() {
            return cpus;
        }

        public void setCpus(Double cpus) {
            this.cpus = cpus;
        }

        public String getRuntime() {
            return runtime;
        }

        public void setRuntime(String runtime) {
            this.runtime = runtime;
        }
    }

    /** Settings of the Jupyter backend. */
    public static class Jupyter {

        /** The folder workspaces are created in (default: a new temporary folder, removed with the engine). */
        private Path baseDir;

        /** The Python that has ipykernel (default: python3 on the PATH). */
        private String python;

        /** How long a kernel may take to start (default 30s). */
        private Duration kernelStartTimeout;

        public Path getBaseDir() {
            return baseDir;
        }

        public void setBaseDir(Path baseDir) {
            this.baseDir = baseDir;
        }

        public String getPython() {
            return python;
        }

        public void setPython(String python) {
            this.python = python;
        }

        public Duration getKernelStartTimeout() {
            return kernelStartTimeout;
        }

        public void setKernelStartTimeout(Duration kernelStartTimeout) {
            this.kernelStartTimeout = kernelStartTimeout;
        }
    }

    /** Settings of the e2b backend (E2B cloud sandboxes, billed while they run). */
    public static class E2b {

        /** The E2B API key (default: the environment variable E2B_API_KEY). Required one way or the other. */
        private String apiKey;

        /** The E2B domain (default: E2B_DOMAIN, else e2b.app). */
        private String domain;

        /** The control plane's URL (default: E2B_API_URL, else https://api.<domain>). */
        private String apiUrl;

        /** One data-plane URL for every sandbox, such as a proxy (default: E2B_SANDBOX_URL, else each sandbox's own). */
        private String sandboxUrl;

        /** The sandbox template (default code-interpreter-v1, E2B's Python code interpreter). */
        private String template;

        /**
         * sandbox-per-workspace (a VM each, the default) or shared-sandbox (one sandbox for all workspaces, which then
         * see each other's files and processes: only for workspaces that trust each other).
         */
        private String workspaceMode;

        /** An existing sandbox to keep all workspaces in (implies shared-sandbox); never killed by the engine. */
        private String sharedSandboxId;

        /** How long a sandbox lives past its last renewal, so that an abandoned one stops (default 300s, at least 10s). */
        private Duration sandboxTimeout;

        /** How long one request to E2B may take to be answered (default 60s). */
        private Duration requestTimeout;

        /** Whether programs in the sandboxes may reach the internet; default false. */
        private boolean internetAccess;

        /** Metadata added to every sandbox the engine creates, to find them in the E2B dashboard. */
        private Map<String, String> metadata = new LinkedHashMap<>();

        /** The Linux user of the sandbox that programs run as (default user, the templates' user). */
        private String user;

        /** The sandbox folder that holds the workspaces (default /home/<user>/workspaces). */
        private String baseDir;

        /**
         * Whether python code blocks run in the template's code interpreter, keeping state across blocks (default:
         * true for templates whose name starts with code-interpreter).
         */
        private Boolean codeInterpreter;

        public String getApiKey() {
            return apiKey;
        }

        public void setApiKey(String apiKey) {
            this.apiKey = apiKey;
        }

        public String getDomain() {
            return domain;
        }

        public void setDomain(String domain) {
            this.domain = domain;
        }

        public String getApiUrl() {
            return apiUrl;
        }

        public void setApiUrl(String apiUrl) {
            this.apiUrl = apiUrl;
        }

        public String getSandboxUrl() {
            return sandboxUrl;
        }

        public void setSandboxUrl(String sandboxUrl) {
            this.sandboxUrl = sandboxUrl;
        }

        public String getTemplate() {
            return template;
        }

        public void setTemplate(String template) {
            this.template = template;
        }

        public String getWorkspaceMode() {
            return workspaceMode;
        }

        public void setWorkspaceMode(String workspaceMode) {
            this.workspaceMode = workspaceMode;
        }

        public String getSharedSandboxId() {
            return sharedSandboxId;
        }

        public void setSharedSandboxId(String sharedSandboxId) {
            this.sharedSandboxId = sharedSandboxId;
        }

        public Duration getSandboxTimeout() {
            return sandboxTimeout;
        }

        public void setSandboxTimeout(Duration sandboxTimeout) {
            this.sandboxTimeout = sandboxTimeout;
        }

        public Duration getRequestTimeout() {
            return requestTimeout;
        }

        public void setRequestTimeout(Duration requestTimeout) {
            this.requestTimeout = requestTimeout;
        }

        public boolean isInternetAccess() {
            return internetAccess;
        }

        public void setInternetAccess(boolean internetAccess) {
            this.internetAccess = internetAccess;
        }

        public Map<String, String> getMetadata() {
            return metadata;
        }

        public void setMetadata(Map<String, String> metadata) {
            this.metadata = metadata;
        }

        public String getUser() {
            return user;
        }

        public void setUser(String user) {
            this.user = user;
        }

        public String getBaseDir() {
            return baseDir;
        }

        public void setBaseDir(String baseDir) {
            this.baseDir = baseDir;
        }

        public Boolean getCodeInterpreter() {
            return codeInterpreter;
        }

        public void setCodeInterpreter(Boolean codeInterpreter) {
            this.codeInterpreter = codeInterpreter;
        }

        /** Never shows the key. */
        @Override
        public String toString() {
            return "E2b{apiKey=" + (apiKey == null ? "unset" : "****") + ", apiUrl=" + apiUrl + ", template="
                    + template + ", workspaceMode=" + workspaceMode + "}";
        }
    }

    /**
     * Egress: which hosts the model's programs may connect to. Setting an allow or deny rule, or allow-others, holds
     * programs to that policy: the sandbox and container backends route them through an egress proxy of the engine's
     * own, the e2b backend hands the rules to E2B's firewall, and the local and jupyter backends refuse to start (they
     * cannot enforce it). An EgressApprover bean decides hosts no rule covers; EgressListener beans hear every
     * connection.
     */
    public static class Network {

        /**
         * Destinations programs may connect to: host, *.suffix, IP or CIDR, optionally with http://, https:// or
         * tcp:// and :port, :from-to or :* (no port: 80 and 443). Non-public addresses (127.0.0.0/8, private
         * networks, cloud metadata) only when a rule names the address or its range.
         */
        private List<String> allow = new ArrayList<>();

        /** Destinations programs may not connect to, whatever allow says (same syntax). */
        private List<String> deny = new ArrayList<>();

        /**
         * Whether destinations no rule covers are allowed (a deny-list policy: every public host but the denied).
         * Default false: they are refused unless an EgressApprover bean allows them.
         */
        private boolean allowOthers;

        /** Most connections a workspace may have open at once through the proxy (default 32). */
        private Integer maxConnections;

        /** Most bytes, both directions, a workspace may move through the proxy over its life (default 0: no limit). */
        private Long maxBytes;

        /** A proxied connection with no bytes either way for this long is ended (default 5m). */
        private Duration idleTimeout;

        /** How long the proxy tries to reach a host (default 10s). */
        private Duration connectTimeout;

        /** How long a connection waits for the EgressApprover bean before it is refused (default 2m). */
        private Duration approvalTimeout;

        /** True when a rule or allow-others is set: an egress policy is configured. */
        boolean hasPolicy() {
            return !allow.isEmpty() || !deny.isEmpty() || allowOthers;
        }

        public List<String> getAllow() {
            return allow;
        }

        public void setAllow(List<String> allow) {
            this.allow = allow;
        }

        public List<String> getDeny() {
            return deny;
        }

        public void setDeny(List<String> deny) {
            this.deny = deny;
        }

        public boolean isAllowOthers() {
            return allowOthers;
        }

        public void setAllowOthers(boolean allowOthers) {
            this.allowOthers = allowOthers;
        }

        public Integer getMaxConnections() {
            return maxConnections;
        }

        public void setMaxConnections(Integer maxConnections) {
            this.maxConnections = maxConnections;
        }

        public Long getMaxBytes() {
            return maxBytes;
        }

        public void setMaxBytes(Long maxBytes) {
            this.maxBytes = maxBytes;
        }

        public Duration getIdleTimeout() {
            return idleTimeout;
        }

        public void setIdleTimeout(Duration idleTimeout) {
            this.idleTimeout = idleTimeout;
        }

        public Duration getConnectTimeout() {
            return connectTimeout;
        }

        public void setConnectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
        }

        public Duration getApprovalTimeout() {
            return approvalTimeout;
        }

        public void setApprovalTimeout(Duration approvalTimeout) {
            this.approvalTimeout = approvalTimeout;
        }
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getBackend() {
        return backend;
    }

    public void setBackend(String backend) {
        this.backend = backend;
    }

    public Duration getDefaultTimeout() {
        return defaultTimeout;
    }

    public void setDefaultTimeout(Duration defaultTimeout) {
        this.defaultTimeout = defaultTimeout;
    }

    public Duration getMaxTimeout() {
        return maxTimeout;
    }

    public void setMaxTimeout(Duration maxTimeout) {
        this.maxTimeout = maxTimeout;
    }

    public Integer getMaxOutputBytes() {
        return maxOutputBytes;
    }

    public void setMaxOutputBytes(Integer maxOutputBytes) {
        this.maxOutputBytes = maxOutputBytes;
    }

    public Long getMaxWriteBytes() {
        return maxWriteBytes;
    }

    public void setMaxWriteBytes(Long maxWriteBytes) {
        this.maxWriteBytes = maxWriteBytes;
    }

    public Duration getApprovalTimeout() {
        return approvalTimeout;
    }

    public void setApprovalTimeout(Duration approvalTimeout) {
        this.approvalTimeout = approvalTimeout;
    }

    public boolean isAutoExecuteCodeBlocks() {
        return autoExecuteCodeBlocks;
    }

    public void setAutoExecuteCodeBlocks(boolean autoExecuteCodeBlocks) {
        this.autoExecuteCodeBlocks = autoExecuteCodeBlocks;
    }

    public boolean isRequireMemoryId() {
        return requireMemoryId;
    }

    public void setRequireMemoryId(boolean requireMemoryId) {
        this.requireMemoryId = requireMemoryId;
    }

    public Duration getWorkspaceIdleTtl() {
        return workspaceIdleTtl;
    }

    public void setWorkspaceIdleTtl(Duration workspaceIdleTtl) {
        this.workspaceIdleTtl = workspaceIdleTtl;
    }

    public boolean isAuditLog() {
        return auditLog;
    }

    public void setAuditLog(boolean auditLog) {
        this.auditLog = auditLog;
    }

    public Artifacts getArtifacts() {
        return artifacts;
    }

    public Policy getPolicy() {
        return policy;
    }

    public Local getLocal() {
        return local;
    }

    public Sandbox getSandbox() {
        return sandbox;
    }

    public Container getContainer() {
        return container;
    }

    public Jupyter getJupyter() {
        return jupyter;
    }

    public E2b getE2b() {
        return e2b;
    }

    public Network getNetwork() {
        return network;
    }
}
