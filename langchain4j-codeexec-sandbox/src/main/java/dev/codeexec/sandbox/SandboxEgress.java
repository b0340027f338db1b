package dev.codeexec.sandbox;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.network.EgressBridge;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import dev.codeexec.network.WorkspaceEgress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The egress policy on bubblewrap: programs keep their own network namespace (loopback only, no DNS), and their one
 * way out is the engine's egress proxy, whose per-workspace socket is bound into the sandbox at {@value #DIR}.
 *
 * <p>Each run starts with the {@link EgressBridge} (the host's {@code python3}) that listens on
 * {@code 127.0.0.1:3128} inside the sandbox, leaves a forwarder behind that carries each connection to the
 * socket, and only then installs the restricted seccomp program (Unix-domain sockets refused) before it executes the
 * program. So bubblewrap itself loads the filter without that rule, the program runs under both, and the forwarder,
 * started before, is the only process that can reach the socket. The run's environment points every common client at
 * the forwarder ({@link EgressEnvironment}).
 *
 * <p>What a program can still do: kill the forwarder (its egress then fails), or connect to the forwarder's port as
 * any client does. Every connection is decided by the proxy on its own terms, whichever process asked.
 */
final class SandboxEgress implements AutoCloseable {

    /** Where the workspace's gate directory (holding the proxy's socket) is bound, under the hidden /run. */
    static final String DIR = "/run/codeexec-egress";

    private final WorkspaceEgress egress;
    /** The restricted seccomp program in hexadecimal, an argument of the helper (it is no secret). */
    private final String seccomp;

    private SandboxEgress(WorkspaceEgress egress, String seccomp) {
        this.egress = egress;
        this.seccomp = seccomp;
    }

    /**
     * The engine's egress, after checking that this host and profile can enforce it; null without a policy.
     *
     * @throws UnsupportedCapabilityException when the platform or profile cannot hold programs to the proxy
     * @throws InvalidSpecException           when the profile enables the network besides the proxy
     */
    static SandboxEgress forEngine(EgressPolicy policy, EgressProxy.Builder proxy, SandboxPlatform platform,
                                   PermissionProfile profile) {
        if (policy == null) {
            return null;
        }
        String refusal = "SandboxEngine cannot enforce an egress policy here: ";
        if (platform != SandboxPlatform.LINUX_BWRAP || profile.enforcement() != PermissionProfile.Enforcement.MANAGED) {
            throw new UnsupportedCapabilityException(refusal + "it needs the Linux sandbox (bubblewrap) with a managed "
                    + "permission profile");
        }
        if (profile.network() != NetworkMode.RESTRICTED) {
            throw new InvalidSpecException("an egress policy needs the restricted network (the proxy is then the only "
                    + "way out); the profile's network is " + profile.network().id());
        }
        if (!Files.isExecutable(Path.of(PythonHelper.PYTHON))) {
            throw new UnsupportedCapabilityException(refusal + PythonHelper.PYTHON + " (which starts each run's "
                    + "forwarder) is missing");
        }
        String filter = java.util.HexFormat.of().formatHex(SeccompProgram.build(NetworkMode.RESTRICTED));
        return new SandboxEgress(WorkspaceEgress.start(policy, proxy.build()), filter);
    }

    /** The engine's egress: its gates, their runs, narrowing. */
    WorkspaceEgress egress() {
        return egress;
    }

    /**
     * The mount that shows a run its workspace's gate.
     *
     * @throws PolicyViolationException when the profile shows the host's {@code /run}, where they would go
     */
    List<Mount> mounts(SandboxLayout.Plan plan, String workspaceId) {
        if (plan.visible(DIR)) {
            throw new PolicyViolationException("the egress proxy's socket is shown under /run, which this profile "
                    + "does not hide; hide /run (the default) to use an egress policy");
        }
        return List.of(Mount.aliased(DIR, Mount.Kind.RO_BIND, egress.directory(workspaceId).toString()));
    }


    /** The program argv of a run: the helper, then the program. */
    List<String> wrap(List<String> program) {
        return EgressBridge.argv(PythonHelper.PYTHON, DIR + "/" + WorkspaceEgress.SOCKET, seccomp, program);
    }



    @Override
    public void close() {
        egress.close();
    }
}
