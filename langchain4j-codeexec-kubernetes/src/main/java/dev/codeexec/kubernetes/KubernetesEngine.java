package dev.codeexec.kubernetes;

import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.spi.AbstractEngine;
import dev.codeexec.spi.EngineBuilder;
import dev.codeexec.spi.PreparedRun;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;

/**
 * Runs programs in Kubernetes: one hardened pod per workspace in a configured namespace, or, where the
 * agent-sandbox CRDs are installed and {@link Builder#agentSandbox} asks for it, the pod of a {@code SandboxClaim}.
 * Runs and sessions are execs over the {@code pods/exec} subresource; files move as tar streams over exec.
 */
public final class KubernetesEngine extends AbstractEngine {

    /** The default memory limit of a workspace pod: {@value} bytes (512 MiB). */
    public static final long DEFAULT_MEMORY_BYTES = 512L << 20;
    /** The default CPU limit of a workspace pod: {@value} CPUs. */
    public static final double DEFAULT_CPUS = 1.0;
    /** The default size limit of a workspace's {@code emptyDir}: {@value} bytes (1 GiB). */
    public static final long DEFAULT_WORKSPACE_BYTES = 1L << 30;
    /** How long a new pod may take to become ready by default: 2 minutes (an image pull may take that long). */
    public static final Duration DEFAULT_READY_TIMEOUT = Duration.ofMinutes(2);

    private KubernetesEngine(Builder b) {
        super("KubernetesEngine", b, ShellEnvironmentPolicy.sandboxDefault(), null);
        throw new UnsupportedOperationException("not yet");
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String name() {
        return "kubernetes";
    }

    @Override
    public WorkspaceManager manager() {
        throw new UnsupportedOperationException();
    }

    @Override
    public WorkspaceFS fs() {
        throw new UnsupportedOperationException();
    }

    @Override
    public Capabilities describe() {
        throw new UnsupportedOperationException();
    }

    @Override
    protected PreparedRun prepare(dev.codeexec.engine.Workspace ws, dev.codeexec.engine.RunProgramSpec spec) {
        throw new UnsupportedOperationException();
    }

    @Override
    protected void closeBackend() {
    }

    /**
     * Builder for {@link KubernetesEngine}. The image is required (the operator's choice, never the model's); the
     * cluster comes from an explicit client, or else from fabric8's usual search: {@code KUBECONFIG} or
     * {@code ~/.kube/config} (its current context, or {@link #context}), else the in-cluster service account.
     */
    public static final class Builder extends EngineBuilder<Builder> {
        KubernetesClient client;
        String context;
        String namespace;
        String image;
        Long uid;
        Long gid;
        Long memoryBytes;
        Double cpus;
        Long workspaceBytes;
        String runtimeClassName;
        Duration readyTimeout;
        Duration ttl;
        int poolSize;
        String sandboxWarmPool;
        boolean acceptUnhardenedSandbox;
        boolean sweepLeftovers = true;

        private Builder() {
        }

        /** The client to use (the engine does not close it); default a client from the kubeconfig or in-cluster. */
        public Builder client(KubernetesClient client) {
            this.client = client;
            return this;
        }

        /** The kubeconfig context to use when the engine makes its own client; default the current context. */
        public Builder context(String context) {
            this.context = context;
            return this;
        }

        /** The namespace of the workspace pods; default the client's (the context's, or the pod's own in-cluster). */
        public Builder namespace(String namespace) {
            this.namespace = namespace;
            return this;
        }

        /** The workspace image, pulled by the cluster as it is configured to (never by the engine); required. */
        public Builder image(String image) {
            this.image = image;
            return this;
        }

        /** The numeric user and group every process of a workspace pod runs as; never 0. Default 10001:10001. */
        public Builder user(long uid, long gid) {
            if (uid <= 0 || gid <= 0) {
                throw new InvalidSpecException("user (" + uid + ":" + gid + ") must be positive ids: pods never run "
                        + "as root");
            }
            this.uid = uid;
            this.gid = gid;
            return this;
        }

        /** The memory limit of each workspace pod; default {@value #DEFAULT_MEMORY_BYTES}. */
        public Builder memoryBytes(long memoryBytes) {
            this.memoryBytes = memoryBytes;
            return this;
        }

        /** The CPU limit of each workspace pod; default {@value #DEFAULT_CPUS}. */
        public Builder cpus(double cpus) {
            this.cpus = cpus;
            return this;
        }

        /** The size limit of each workspace's {@code emptyDir}; default {@value #DEFAULT_WORKSPACE_BYTES}. */
        public Builder workspaceBytes(long bytes) {
            this.workspaceBytes = bytes;
            return this;
        }

        /** A RuntimeClass for the pods ({@code gvisor}, {@code kata}), set up by the cluster's admin; default none. */
        public Builder runtimeClassName(String runtimeClassName) {
            this.runtimeClassName = runtimeClassName;
            return this;
        }

        /** How long a new pod may take to become ready; default 2 minutes. */
        public Builder readyTimeout(Duration timeout) {
            this.readyTimeout = timeout;
            return this;
        }

        /** The longest a workspace pod may live ({@code activeDeadlineSeconds}); default none. */
        public Builder ttl(Duration ttl) {
            this.ttl = ttl;
            return this;
        }

        /** Keeps {@code size} ready pods so that a workspace starts without waiting; default 0. */
        public Builder warmPool(int size) {
            this.poolSize = size;
            return this;
        }

        /**
         * Takes workspace pods from agent-sandbox: a {@code SandboxClaim} against the {@code SandboxWarmPool}
         * named {@code warmPool} in the engine's namespace, instead of pods of the engine's own.
         */
        public Builder agentSandbox(String warmPool) {
            this.sandboxWarmPool = warmPool;
            return this;
        }

        /**
         * Accepts claimed agent-sandbox pods that lack some of the engine's hardening (listed in
         * {@link KubernetesEngine#describe()}); default false: such a pod is refused.
         */
        public Builder acceptUnhardenedSandbox(boolean accept) {
            this.acceptUnhardenedSandbox = accept;
            return this;
        }

        /** Deletes pods of engines that are gone (their lease expired) when the engine starts; default true. */
        public Builder sweepLeftovers(boolean sweep) {
            this.sweepLeftovers = sweep;
            return this;
        }

        public KubernetesEngine build() {
            return new KubernetesEngine(this);
        }
    }
}
