package dev.codeexec.sandbox;

import static dev.codeexec.spi.AbstractEngine.attempt;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import dev.codeexec.spi.RunEnvironment;
import dev.codeexec.spi.host.HostProcessChannel;
import dev.codeexec.spi.host.LauncherThreads;
import dev.codeexec.workspace.HostWorkspaceFS;
import dev.codeexec.workspace.HostWorkspaceManager;
import dev.codeexec.workspace.WorkspaceStorage;
import java.nio.file.Path;
import java.util.List;

/**
 * What a {@link SandboxEngine} is made of on this host, assembled in the order the parts need each other (the root,
 * the egress proxy, the workspaces' volumes, the preflight, the run planner, the file system) and released in the
 * reverse order: a failed assembly releases what it had built before it throws, {@link #close()} releases it all.
 * The engine itself only routes its API to these parts.
 *
 * <p>Immutable once assembled; every part is thread-safe.
 */
final class SandboxParts {

    final SandboxPlatform platform;
    /** The profile every run starts from, with the engine's own rules added. */
    final PermissionProfile profile;
    /** The profile's name as the builder gave it (for the start's log line). */
    final String profileName;
    final SandboxRoot root;
    final HostWorkspaceManager manager;
    /** The workspaces' volumes (their disk quota), or null when workspaces are plain directories. */
    final LoopVolumes volumes;
    final SandboxWorkspaceFS fs;
    final WorkspaceManager workspaces;
    /** What this host gives the engine: preflight, who programs run as, control groups, run limits. */
    final SandboxHost host;
    final Capabilities capabilities;
    /** Every run's limits: the host's enforceable defaults, overridden field by field by the builder's. */
    final ResourceLimits defaultLimits;
    final SandboxRunPlanner planner;
    /** The egress proxy of an engine with an egress policy, or null. */
    final SandboxEgress egress;
    final WorkspaceGates gates;
    /** The command allow list enforced in the kernel ({@code enforceAllowList}), or null. */
    final ExecAllowList allowList;
    /**
     * Threads that start sandboxes. bubblewrap's {@code --die-with-parent} (PR_SET_PDEATHSIG) fires when the
     * <em>thread</em> that started it ends, so a sandbox must never be started from a caller's thread that may end
     * first (a request thread that started a session, a virtual thread's carrier). Each of these threads lives as
     * long as the sandboxes it started; idle ones without a live sandbox end after a keep-alive.
     */
    final LauncherThreads launchers;

    /**
     * What the engine's base knows (the builder's common settings, resolved) and the parts need.
     *
     * @param requireOpen throws when the engine is closed
     */
    record EngineSettings(EgressPolicy egressPolicy, EgressProxy.Builder egressProxy, ArtifactService artifacts,
                          List<Path> inputRoots, RunEnvironment environment, Runnable requireOpen) {
    }

    /**
     * Assembles the parts of an engine built with {@code b}.
     *
     * @throws dev.codeexec.engine.BackendUnavailableException    when the sandbox cannot run on this host
     * @throws dev.codeexec.engine.UnsupportedCapabilityException for settings this host cannot enforce
     */
    SandboxParts(SandboxEngine.Builder b, EngineSettings engine) {
        this.launchers = new LauncherThreads("codeexec-sandbox-launcher-",
                b.launcherKeepAlive == null ? LauncherThreads.DEFAULT_KEEP_ALIVE : b.launcherKeepAlive);
        this.gates = new WorkspaceGates();
        this.platform = b.platform != null ? b.platform : SandboxPlatform.current();
        PermissionProfile p = b.profile == null ? PermissionProfile.workspaceWrite() : b.profile;
        p = b.network == null ? p : p.withNetwork(b.network);
        this.profileName = EngineProfile.name(p);
        this.profile = EngineProfile.withEngineRules(p, b.deniedBy, engine.artifacts());
        long scratchBytes = b.scratchBytes == null ? BwrapCommand.DEFAULT_SCRATCH_BYTES : b.scratchBytes;
        if (scratchBytes <= 0) {
            throw new InvalidSpecException("scratchBytes (" + scratchBytes + ") must be positive");
        }

        boolean needsBwrap = platform == SandboxPlatform.LINUX_BWRAP
                && profile.enforcement() != PermissionProfile.Enforcement.EXTERNAL;
        String bwrap = needsBwrap ? Preflight.locateBwrap(b.bwrapPath) : null;

        this.root = SandboxRoot.create(b.rootDir);
        LoopVolumes vols = null;
        SandboxEgress out = null;
        try {
            out = SandboxEgress.forEngine(engine.egressPolicy(), engine.egressProxy(), platform, profile);
            this.egress = out;
            vols = LoopVolumes.forEngine(b.diskQuota, needsBwrap, root.state, b.allowListBy != null);
            this.volumes = vols;
            this.manager = new HostWorkspaceManager(root.workspaces(),
                    volumes == null ? WorkspaceStorage.DIRECTORIES : volumes);
            this.host = SandboxHost.check(platform, profile, bwrap, b.preflightMode, root, manager.baseDir(),
                    b.sandboxUid, b.sandboxGid);
            this.allowList = b.allowListBy == null ? null
                    : ExecAllowList.forEngine(b.allowListBy, profile, platform, volumes != null);
            this.capabilities = host.capabilities(platform, profile, volumes != null, egress != null,
                    allowList != null);
            capabilities.requireLimits(b.limits == null ? ResourceLimits.NONE : b.limits, limitsOwner());
            this.defaultLimits = RunLimits.withDefaults(RunLimits.defaults(capabilities.enforcedLimits()), b.limits);
            SandboxRunPlanner.validateLimits(defaultLimits);
            this.planner = new SandboxRunPlanner(profile, engine.environment(), root.root, root.runs, host.cgroups(),
                    new SandboxCommandLine(platform, host.preflight(), root.state, scratchBytes, host.runLimits(),
                            egress != null),
                    HostProcessChannel.wrapped().startingOn(launchers),
                    HostProcessChannel.direct().startingOn(launchers), volumes, allowList, egress);
            AccessDecision access = planner.access();
            this.fs = new SandboxWorkspaceFS(gates, HostWorkspaceFS.builder().hostPaths(manager::hostPath)
                    .inputRoots(engine.inputRoots()).artifacts(engine.artifacts()).access(ws -> access).build(),
                    host.user(), profile);
            this.workspaces = new SandboxWorkspaces(engine.requireOpen(), manager, host.user(), gates, planner, fs,
                    egress);
        } catch (RuntimeException e) {
            launchers.shutdown();
            if (vols != null) {
                vols.close();
            }
            if (out != null) {
                out.close();
            }
            root.removeQuietly();
            throw e;
        }
    }

    /** Who cannot enforce a limit, in a refusal: the engine on this host, and what the host supports. */
    String limitsOwner() {
        return "SandboxEngine on this host (" + host.limitsSupport() + ")";
    }

    /**
     * Removes every workspace, the engine's state and (when it created it) the root; every step runs even when one
     * fails (the first failure is thrown, the others suppressed).
     */
    void close() {
        RuntimeException failure = attempt(null, manager::close);
        if (volumes != null) {
            volumes.close();
        }
        if (egress != null) {
            failure = attempt(failure, egress::close);
        }
        launchers.shutdown();
        if (host.cgroups() != null) {
            failure = attempt(failure, host.cgroups()::close);
        }
        failure = attempt(failure, root::remove);
        if (failure != null) {
            throw failure;
        }
    }
}
