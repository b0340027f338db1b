package dev.codeexec.sandbox;

import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.artifact.FileSystemArtifactService;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.policy.CommandPolicy;
import java.nio.file.Path;
import java.util.Set;

/**
 * The profile every run of an engine starts from: the builder's profile with the engine's own no-access rules (the
 * executables a command policy denies, the artifact store), and its name for the log.
 */
final class EngineProfile {

    private EngineProfile() {
    }

    /**
     * The builder's profile with the engine's rules; only a profile that manages a sandbox gets them.
     *
     * @param deniedBy  a command policy whose denied executables are hidden, or null
     * @param artifacts the engine's artifact store, or null
     */
    static PermissionProfile withEngineRules(PermissionProfile p, CommandPolicy deniedBy, ArtifactService artifacts) {
        if (p.enforcement() != PermissionProfile.Enforcement.MANAGED) {
            return p;
        }
        return hideArtifactStore(deniedBy == null ? p : hideDenied(p, deniedBy), artifacts);
    }

    /**
     * Hides the files of the executables a command policy denies (resolved on {@link ShellEnvironmentPolicy#CLEAN_PATH},
     * links followed, hard links included): a program cannot start them by any route — a wrapper, the dynamic loader,
     * an interpreter, a copy — because it cannot read them.
     */
    private static PermissionProfile hideDenied(PermissionProfile p, CommandPolicy policy) {
        Set<Path> files = policy.deniedExecutables(ShellEnvironmentPolicy.CLEAN_PATH);
        return files.isEmpty() ? p : p.withNoAccessPaths(files.stream().map(Path::toString).toArray(String[]::new));
    }

    /**
     * Hides the root of a {@link FileSystemArtifactService} from every sandbox: the store holds every conversation's
     * saved artifacts, and a program must reach them only through the engine's file operations. Other stores' locations
     * are not known here; hide them with {@link PermissionProfile#withNoAccessPaths}.
     */
    private static PermissionProfile hideArtifactStore(PermissionProfile p, ArtifactService artifacts) {
        if (artifacts instanceof FileSystemArtifactService store) {
            try {
                return p.withNoAccessPaths(store.root().toString());
            } catch (InvalidSpecException e) {
                throw new InvalidSpecException("the profile grants the artifact store's root directory, which the "
                        + "sandbox must hide (it holds every conversation's artifacts); remove that grant", e);
            }
        }
        return p;
    }

    /**
     * The profile as the documentation writes it, for the log: the preset it is (whatever its network), else a
     * summary. Named before the engine adds its own no-access rules (the artifact store, denied executables).
     */
    static String name(PermissionProfile p) {
        if (p.enforcement() == PermissionProfile.Enforcement.MANAGED) {
            if (p.equals(PermissionProfile.workspaceWrite().withNetwork(p.network()))) {
                return "workspaceWrite()";
            }
            if (p.equals(PermissionProfile.readOnly().withNetwork(p.network()))) {
                return "readOnly()";
            }
            return "custom (" + p.rules().size() + " path rules)";
        }
        return p.enforcement() == PermissionProfile.Enforcement.DISABLED ? "dangerFullAccess()"
                : "external(" + p.network().id() + ")";
    }
}
