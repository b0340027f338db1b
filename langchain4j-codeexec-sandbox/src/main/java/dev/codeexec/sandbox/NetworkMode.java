package dev.codeexec.sandbox;

import dev.codeexec.engine.InvalidSpecException;
import java.util.Locale;

/**
 * Whether a sandboxed program may use the network.
 *
 * <p>The mode is binary: none or all. A program that needs a few hosts gets them with an egress policy
 * ({@code SandboxEngine.builder().egress(policy)}), which keeps the network {@link #RESTRICTED} and makes the engine's
 * proxy the only way out.
 */
public enum NetworkMode {

    /**
     * No network at all (the default of every managed profile). On Linux the program gets its own network namespace
     * with only a loopback interface, and a seccomp filter refuses UNIX-domain sockets ({@code socket(AF_UNIX)},
     * datagram {@code socketpair}) and {@code AF_VSOCK}: no TCP, UDP, filesystem or abstract socket of the host is
     * reachable. Programs that need UNIX sockets internally (some database clients, {@code multiprocessing.Manager})
     * fail with {@code EPERM}; stream socket pairs (used by {@code asyncio}) still work.
     */
    RESTRICTED,

    /**
     * The host's network, including services listening on the host's loopback interface and abstract UNIX sockets.
     * Host filesystem sockets stay out of reach only where their directories are hidden ({@code /run} is by default).
     */
    ENABLED;

    /**
     * Parses {@code restricted} or {@code enabled}, ignoring case and surrounding blanks.
     *
     * @throws InvalidSpecException naming the bad value when it is neither
     */
    public static NetworkMode parse(String value) {
        if (value != null) {
            switch (value.trim().toLowerCase(Locale.ROOT)) {
                case "restricted":
                    return RESTRICTED;
                case "enabled":
                    return ENABLED;
                default:
                    break;
            }
        }
        throw new InvalidSpecException("network mode '" + value + "' is not known; use 'restricted' or 'enabled'");
    }

    /** The lower-case name used in configuration and on the command line. */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }
}
