package dev.codeexec.spring;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.policy.CommandPolicy;
import dev.codeexec.sandbox.NetworkMode;
import dev.codeexec.sandbox.PermissionProfile;
import dev.codeexec.sandbox.SandboxEngine;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/** {@code codeexec.backend=sandbox}; loaded only when the sandbox module is present. */
final class SandboxBackend {

    private SandboxBackend() {
    }

    static SandboxEngine create(CodeExecProperties.Sandbox p, ArtifactService artifacts, CommandPolicy policy,
                                NetworkSettings network, PythonKernelProperties kernel) {
        PermissionProfile profile;
        try {
            profile = PermissionProfile.preset(p.getProfile());
        } catch (InvalidSpecException e) {
            throw new InvalidConfigurationPropertyValueException("codeexec.sandbox.profile", p.getProfile(),
                    e.getMessage());
        }
        SandboxEngine.Builder b = SandboxEngine.builder().rootDir(p.getRootDir()).profile(profile)
                .artifactService(artifacts);
        if (p.getNetwork() != null) {
            try {
                b.network(NetworkMode.parse(p.getNetwork()));
            } catch (InvalidSpecException e) {
                throw new InvalidConfigurationPropertyValueException("codeexec.sandbox.network", p.getNetwork(),
                        e.getMessage());
            }
        }
        if (network.hasPolicy()) {
            if (p.getNetwork() != null && !p.getNetwork().strip().equalsIgnoreCase(NetworkMode.RESTRICTED.id())) {
                throw new InvalidConfigurationPropertyValueException("codeexec.sandbox.network", p.getNetwork(),
                        "an egress policy (codeexec.network.*) needs the restricted network: the engine's egress "
                                + "proxy is then the only way out. Leave codeexec.sandbox.network unset or restricted");
            }
            b.egress(network.policy()).egressProxy(network.proxy());
        }
        if (policy != null && policy.isEnforcing()) {
            b.hideDeniedExecutables(policy);
        }
        if (kernel.isEnabled()) {
            b.pythonKernel(PythonKernels.options(kernel));
        }
        return b.build();
    }
}
