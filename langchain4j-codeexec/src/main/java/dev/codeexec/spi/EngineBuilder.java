package dev.codeexec.spi;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.engine.EgressControl;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The settings every engine's builder has, so each backend's builder adds only its own. Fields stay null until set;
 * the engine's constructor resolves the defaults (they differ per backend: the local engine inherits the host's
 * environment, the sandbox keeps only core variables).
 *
 * @param <B> the backend's builder type, returned by every setter
 */
public abstract class EngineBuilder<B extends EngineBuilder<B>> {

    private List<Path> inputRoots = List.of();
    private ArtifactService artifacts;
    private Integer maxOutputBytes;
    private ShellEnvironmentPolicy environmentPolicy;
    private Map<String, String> hostEnvironment;
    private Integer runHistory;
    private Long maxSavedOutputBytes;
    private EgressPolicy egressPolicy;
    private EgressProxy.Builder egressProxy;
    private boolean warmPython;

    protected EngineBuilder() {
    }

    /**
     * Lets programs reach the hosts {@code policy} allows, and nothing else ({@code docs/network.md}). How it is
     * enforced is the backend's ({@link dev.codeexec.engine.Capabilities#egressControl()}): through a proxy the engine
     * owns (sandbox, container), or the provider's own controls (E2B). A backend that cannot enforce it (local,
     * Jupyter) refuses it at build with {@link dev.codeexec.engine.UnsupportedCapabilityException}. Default: none
     * (the backend's network setting alone).
     */
    public B egress(EgressPolicy policy) {
        this.egressPolicy = policy;
        return self();
    }

    /**
     * Configures the egress proxy an engine with {@link EgressControl#PROXY} builds and owns: its resolver, its
     * {@link dev.codeexec.network.EgressApprover} for hosts no rule covers, per-workspace limits, listeners. Default:
     * {@link EgressProxy#builder()}. Refused without {@link #egress(EgressPolicy)} and by engines without a proxy.
     */
    public B egressProxy(EgressProxy.Builder proxy) {
        this.egressProxy = proxy;
        return self();
    }

    /** Host directories whose files may be staged as inputs; default none. */
    public B inputRoots(List<Path> inputRoots) {
        this.inputRoots = List.copyOf(inputRoots);
        return self();
    }

    /** The artifact store for {@code artifact://} inputs and saved outputs; default none. */
    public B artifactService(ArtifactService artifacts) {
        this.artifacts = artifacts;
        return self();
    }

    /** Bytes kept per output stream when a run does not say; default 1 MiB. */
    public B maxOutputBytes(int maxOutputBytes) {
        this.maxOutputBytes = maxOutputBytes;
        return self();
    }

    /** How runs' environments are built from the host's; the default is the engine's (see its builder). */
    public B environmentPolicy(ShellEnvironmentPolicy policy) {
        this.environmentPolicy = policy;
        return self();
    }

    /**
     * The host environment the {@link #environmentPolicy environment policy} filters for runs that do not ask for a
     * clean one; default {@code System.getenv()}. Pass a smaller map to keep host secrets out of every run.
     */
    public B hostEnvironment(Map<String, String> hostEnvironment) {
        this.hostEnvironment = hostEnvironment == null ? null : Map.copyOf(hostEnvironment);
        return self();
    }

    /**
     * How many run folders ({@code runs/run_<time>_<n>}, one per run) each workspace keeps; older ones are deleted
     * after later runs, never while their run or session goes on. Default
     * {@value dev.codeexec.workspace.RunHistory#DEFAULT_KEEP}; 0 deletes a run's folder once it is over.
     */
    public B runHistory(int keep) {
        this.runHistory = keep;
        return self();
    }

    /**
     * Bytes of a stream saved at most when a run's output outgrows {@link #maxOutputBytes}: the result then keeps
     * the start and the end of the stream, and the whole stream is saved as {@code runs/<run>/stdout} (or
     * {@code stderr}) in the workspace, up to this many bytes, followed by a marker line when it was longer. Default
     * {@value AbstractEngine#DEFAULT_MAX_SAVED_OUTPUT_BYTES} (16 MiB); 0 saves nothing. The workspace's disk quota,
     * where the backend has one, bounds it too.
     */
    public B maxSavedOutputBytes(long maxSavedOutputBytes) {
        this.maxSavedOutputBytes = maxSavedOutputBytes;
        return self();
    }

    /**
     * Runs python blocks of {@link dev.codeexec.engine.Engine#executeCode} in a <em>warm</em> interpreter: one
     * started ahead, through this engine, with the spec a fresh run of the block would have (working directory,
     * environment, limits, boundary), waiting for its block. Each warm interpreter runs exactly one block and exits,
     * as {@code python3 <file>} would: no state passes between blocks. A block falls back to a fresh process when
     * there is no warm one (the first block of a workspace, another program ran there since, the spare died or was
     * idle too long); nothing fails because of the warm path. Default false. See {@code docs/execution-path.md}.
     *
     * <p>It has effect only on engines whose runs it can reproduce exactly (without a boundary, such as the local
     * engine, or with one the engine can tell is unchanged: see {@link AbstractEngine#warmSpareKey}); elsewhere every
     * block runs fresh. Engines whose python blocks are cells of a stateful interpreter (Jupyter) are warm anyway.
     */
    public B warmPython(boolean warmPython) {
        this.warmPython = warmPython;
        return self();
    }

    @SuppressWarnings("unchecked")
    protected final B self() {
        return (B) this;
    }

    /** The egress policy set, or null. */
    protected final EgressPolicy egressPolicy() {
        return egressPolicy;
    }

    /** The egress proxy's settings: those set, or the defaults. */
    protected final EgressProxy.Builder egressProxy() {
        return egressProxy == null ? EgressProxy.builder() : egressProxy;
    }

    /** True when {@link #warmPython(boolean)} turned the warm path on. */
    final boolean warmPythonOn() {
        return warmPython;
    }

    /** True when {@link #egressProxy(EgressProxy.Builder)} was called. */
    final boolean egressProxySet() {
        return egressProxy != null;
    }

    /**
     * How this backend enforces an egress policy; {@link EgressControl#NONE} (the default) makes the engine refuse
     * one. A backend that enforces policies overrides it.
     */
    protected EgressControl egressControl() {
        return EgressControl.NONE;
    }

    /** The input roots set, or an empty list. */
    protected final List<Path> inputRoots() {
        return inputRoots;
    }

    /** The artifact store set, or null. */
    protected final ArtifactService artifacts() {
        return artifacts;
    }

    /** The output cap set, or null for the default. */
    protected final Integer maxOutputBytes() {
        return maxOutputBytes;
    }

    /** The saved output bound set, or null for the default. */
    protected final Long maxSavedOutputBytes() {
        return maxSavedOutputBytes;
    }

    /** The run history bound set, or null for the default. */
    protected final Integer runHistory() {
        return runHistory;
    }

    /** The environment of runs: the policy set (or {@code defaultPolicy}) over the host environment set. */
    protected final RunEnvironment environment(ShellEnvironmentPolicy defaultPolicy) {
        return RunEnvironment.of(environmentPolicy == null ? defaultPolicy : environmentPolicy,
                hostEnvironment == null ? System.getenv() : hostEnvironment);
    }
}
