package dev.codeexec.spring;

import java.nio.file.Path;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.boot.convert.DurationUnit;

/**
 * The {@code codeexec.*} properties. Only {@code codeexec.backend} is required; everything else has the library's
 * defaults, which the descriptions give. Invalid values fail the start-up with the property's name, and so do keys
 * under {@code codeexec} that none of these properties binds (unless {@code codeexec.ignore-unknown-properties}).
 *
 * <p>A duration takes a unit ({@code 500ms}, {@code 30s}, {@code 5m}, {@code 2h}, {@code 1d}) or the ISO-8601 form
 * ({@code PT30S}); a bare number is seconds, so {@code codeexec.default-timeout=5} is five seconds.
 */
@ConfigurationProperties(prefix = "codeexec")
public class CodeExecProperties {

    /** Whether to configure code execution at all. */
    private boolean enabled = true;

    /**
     * The backend that runs the model's code: local (no isolation), sandbox, container, jupyter, e2b or kubernetes.
     * Required: there is no default, so that no application runs model-written code on the host by accident. An
     * Engine bean of the application's own replaces it.
     */
    private String backend;

    /** Time limit of a command when the model gives none (default 60s). */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration defaultTimeout;

    /** Longest time limit a model may ask for, and the life of a background session (default 600s). */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration maxTimeout;

    /** Bytes of program output shown to the model per call (default 16384). */
    private Integer maxOutputBytes;

    /** Largest file workspace_write_file writes (default 8388608). */
    private Long maxWriteBytes;

    /** How long a call waits for the approver's answer before it is denied (default 300s). */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration approvalTimeout;

    /** Whether an answer that is exactly one runnable fenced code block is executed (the response processor). */
    private boolean autoExecuteCodeBlocks = true;

    /** Whether tool calls from an AI service without a @MemoryId are refused instead of sharing one workspace. */
    private boolean requireMemoryId;

    /** A conversation's workspace unused this long is removed (default 60m); 0 keeps workspaces until closed. */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration workspaceIdleTtl;

    /** Whether every execution event is written to the SLF4J logger dev.codeexec.audit, one line each. */
    private boolean auditLog = true;

    /**
     * Whether keys under codeexec that no property binds (a misspelt key, a key of another version) only log a
     * warning naming the nearest property. Default false: they stop the start-up, since an ignored key is a setting
     * silently not applied.
     */
    private boolean ignoreUnknownProperties;

    private final Artifacts artifacts = new Artifacts();
    private final Policy policy = new Policy();
    private final Local local = new Local();
    private final Sandbox sandbox = new Sandbox();
    private final Container container = new Container();
    private final Jupyter jupyter = new Jupyter();
    @NestedConfigurationProperty
    private final E2bProperties e2b = new E2bProperties();
    @NestedConfigurationProperty
    private final KubernetesProperties kubernetes = new KubernetesProperties();
    @NestedConfigurationProperty
    private final NetworkProperties network = new NetworkProperties();
    @NestedConfigurationProperty
    private final PythonKernelProperties pythonKernel = new PythonKernelProperties();

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
        @DurationUnit(ChronoUnit.SECONDS)
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

    public boolean isIgnoreUnknownProperties() {
        return ignoreUnknownProperties;
    }

    public void setIgnoreUnknownProperties(boolean ignoreUnknownProperties) {
        this.ignoreUnknownProperties = ignoreUnknownProperties;
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

    public E2bProperties getE2b() {
        return e2b;
    }

    public KubernetesProperties getKubernetes() {
        return kubernetes;
    }

    public PythonKernelProperties getPythonKernel() {
        return pythonKernel;
    }

    public NetworkProperties getNetwork() {
        return network;
    }
}
