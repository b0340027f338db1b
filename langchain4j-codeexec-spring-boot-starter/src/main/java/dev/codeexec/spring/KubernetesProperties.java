package dev.codeexec.spring;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import org.springframework.boot.convert.DurationUnit;

/**
 * Settings of the kubernetes backend: a hardened pod per workspace in a namespace of a cluster the application can
 * reach (a KubernetesClient bean of the application's, else the kubeconfig or the in-cluster service account). Kept
 * apart from {@link CodeExecProperties} so that each backend's settings read as one group.
 */
public class KubernetesProperties {

    /** The workspace image, pulled by the cluster as it is configured to (never by the engine). Required. */
    private String image;

    /** The namespace of the workspace pods (default: the client's, that is the context's or the pod's own). */
    private String namespace;

    /**
     * The kubeconfig context when the engine makes its own client (default: the current context). Not with a
     * KubernetesClient bean, whose configuration already names its cluster.
     */
    private String context;

    /** The memory limit of each workspace pod (default 536870912, 512 MiB). */
    private Long memoryBytes;

    /** The CPU limit of each workspace pod (default 1.0). */
    private Double cpus;

    /** The size limit of each workspace's emptyDir volume (default 1073741824, 1 GiB). */
    private Long workspaceBytes;

    /** A RuntimeClass for the pods, such as gvisor or kata, set up by the cluster's admin (default none). */
    private String runtimeClassName;

    /** How long a new pod may take to become ready, an image pull included (default 2m). */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration readyTimeout;

    /** The longest a workspace pod may live, its activeDeadlineSeconds (default none). */
    @DurationUnit(ChronoUnit.SECONDS)
    private Duration ttl;

    /** How many ready pods are kept so that a workspace starts without waiting (default 0). */
    private Integer warmPool;

    /**
     * The agent-sandbox SandboxWarmPool to claim workspace pods from (a SandboxClaim each, in the engine's namespace)
     * instead of pods of the engine's own; needs the agent-sandbox CRDs on the cluster. Default none.
     */
    private String agentSandbox;

    /** Whether claimed agent-sandbox pods that lack some of the engine's hardening are accepted (default: refused). */
    private boolean acceptUnhardenedSandbox;

    /** Whether pods of engines that are gone (their lease expired) are deleted when the engine starts. */
    private boolean sweepLeftovers = true;

    /**
     * Whether other NetworkPolicies of the namespace that select the workspace pods and allow egress are accepted,
     * with a warning and networkAllowed reported (default: the engine refuses to start, since policies add up).
     */
    private boolean acceptOtherNetworkPolicies;

    public String getImage() {
        return image;
    }

    public void setImage(String image) {
        this.image = image;
    }

    public String getNamespace() {
        return namespace;
    }

    public void setNamespace(String namespace) {
        this.namespace = namespace;
    }

    public String getContext() {
        return context;
    }

    public void setContext(String context) {
        this.context = context;
    }

    public Long getMemoryBytes() {
        return memoryBytes;
    }

    public void setMemoryBytes(Long memoryBytes) {
        this.memoryBytes = memoryBytes;
    }

    public Double getCpus() {
        return cpus;
    }

    public void setCpus(Double cpus) {
        this.cpus = cpus;
    }

    public Long getWorkspaceBytes() {
        return workspaceBytes;
    }

    public void setWorkspaceBytes(Long workspaceBytes) {
        this.workspaceBytes = workspaceBytes;
    }

    public String getRuntimeClassName() {
        return runtimeClassName;
    }

    public void setRuntimeClassName(String runtimeClassName) {
        this.runtimeClassName = runtimeClassName;
    }

    public Duration getReadyTimeout() {
        return readyTimeout;
    }

    public void setReadyTimeout(Duration readyTimeout) {
        this.readyTimeout = readyTimeout;
    }

    public Duration getTtl() {
        return ttl;
    }

    public void setTtl(Duration ttl) {
        this.ttl = ttl;
    }

    public Integer getWarmPool() {
        return warmPool;
    }

    public void setWarmPool(Integer warmPool) {
        this.warmPool = warmPool;
    }

    public String getAgentSandbox() {
        return agentSandbox;
    }

    public void setAgentSandbox(String agentSandbox) {
        this.agentSandbox = agentSandbox;
    }

    public boolean isAcceptUnhardenedSandbox() {
        return acceptUnhardenedSandbox;
    }

    public void setAcceptUnhardenedSandbox(boolean acceptUnhardenedSandbox) {
        this.acceptUnhardenedSandbox = acceptUnhardenedSandbox;
    }

    public boolean isSweepLeftovers() {
        return sweepLeftovers;
    }

    public void setSweepLeftovers(boolean sweepLeftovers) {
        this.sweepLeftovers = sweepLeftovers;
    }

    public boolean isAcceptOtherNetworkPolicies() {
        return acceptOtherNetworkPolicies;
    }

    public void setAcceptOtherNetworkPolicies(boolean acceptOtherNetworkPolicies) {
        this.acceptOtherNetworkPolicies = acceptOtherNetworkPolicies;
    }
}
