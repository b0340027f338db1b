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

    static SandboxEngine create(CodeExecProperties.Sandbox p, ArtifactService artifacts, CommandPolicy policy) {
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
        if (policy != null && policy.isEnforcing()) {
            b.hideDeniedExecutables(policy);
        }
        return b.build();
    }
}
