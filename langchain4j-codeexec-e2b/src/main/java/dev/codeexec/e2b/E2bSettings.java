package dev.codeexec.e2b;

import java.time.Duration;
import java.util.Map;

/**
 * What {@link E2bEngine}'s builder resolved, for the parts that create and use sandboxes; {@code egress} is null
 * without an egress policy.
 */
record E2bSettings(String template, Duration sandboxTimeout, WorkspaceMode mode, boolean internetAccess,
                   Map<String, String> metadata, Map<String, String> envVars, String user, String baseDir,
                   boolean codeInterpreter, String sharedSandboxId, boolean secure, E2bEgress egress) {

    E2bSettings {
        metadata = Map.copyOf(metadata);
        envVars = Map.copyOf(envVars);
    }

    /** The network of the sandboxes it creates, for log lines. */
    String network() {
        return egress != null ? "by egress policy" : internetAccess ? "on" : "off";
    }

    /** The private staging directory under the base directory (root-only, same file system as the workspaces). */
    String stagingDir() {
        return baseDir + "/.codeexec";
    }
}
