package dev.codeexec.sandbox;

import dev.codeexec.engine.UnsupportedCapabilityException;
import java.util.Locale;

/** Which OS sandbox this host offers. */
enum SandboxPlatform {
    /** Linux: bubblewrap (namespaces, bind mounts, seccomp). */
    LINUX_BWRAP,
    /** macOS: Seatbelt through {@code /usr/bin/sandbox-exec}. */
    MACOS_SEATBELT;

    static SandboxPlatform detect(String osName) {
        String os = osName == null ? "" : osName.toLowerCase(Locale.ROOT);
        if (os.contains("linux")) {
            return LINUX_BWRAP;
        }
        if (os.contains("mac") || os.contains("darwin")) {
            return MACOS_SEATBELT;
        }
        throw new UnsupportedCapabilityException("the sandbox backend supports Linux (bubblewrap) and macOS "
                + "(Seatbelt), not '" + osName + "'; use the container or E2B backend on this OS. Programs are never "
                + "run without a sandbox instead.");
    }

    static SandboxPlatform current() {
        return detect(System.getProperty("os.name"));
    }
}
