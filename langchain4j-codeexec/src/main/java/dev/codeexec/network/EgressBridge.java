package dev.codeexec.network;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.RunResult;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The forwarder between a sandbox's own loopback and its workspace's {@link EgressGate}, for backends whose programs
 * have no network but a Unix-domain socket bound in: a one-file Python script (standard library only) that listens on
 * {@code 127.0.0.1:}{@value #PORT}, where {@link EgressEnvironment} points every client, and carries each connection
 * to the gate's socket. When the proxy cannot be reached it answers HTTP clients with a 502 that says so.
 *
 * <p>Two ways to start it: before a program, which it then executes (optionally after installing a seccomp program
 * that the forwarder, started before, is not subject to); or on its own, when it prints {@code ready} once it listens
 * and leaves the forwarder running. Values travel as arguments, never spliced into code.
 */
public final class EgressBridge {

    /** The forwarder's port on the sandbox's loopback. */
    public static final int PORT = 3128;
    /** Exit code of the helper when it refused to start the program. */
    public static final int FAILED = 125;
    /** Prefix of the helper's reason on stderr when it refused to start the program. */
    public static final String MARKER = "codeexec-egress: ";
    /** What the helper prints, started without a program, once the forwarder listens. */
    public static final String READY = "ready";

    private static final String CODE = load();

    private EgressBridge() {
    }

    /**
     * The argv that starts the forwarder, then {@code program} (none: print {@value #READY} and return).
     *
     * @param python     the Python to run it ({@code -I -S}: no site packages, no environment)
     * @param socket     the gate's socket as the sandbox sees it
     * @param seccompHex a seccomp program to install before the program, in hexadecimal, or null for none
     */
    public static List<String> argv(String python, String socket, String seccompHex, List<String> program) {
        List<String> a = new ArrayList<>(List.of(python, "-I", "-S", "-c", CODE, Integer.toString(PORT), socket,
                seccompHex == null ? "-" : seccompHex, "--"));
        a.addAll(program);
        return a;
    }

    /** The run environment that sends every common client to the forwarder ({@link EgressEnvironment}). */
    public static java.util.Map<String, String> environment() {
        return EgressEnvironment.variables(PORT);
    }

    /**
     * Refuses a result whose program the helper did not start.
     *
     * @throws BackendUnavailableException when the run's way out could not be set up (nothing ran)
     */
    public static RunResult check(RunResult r) {
        if (r.exitCode() == FAILED && !r.timedOut() && r.stderr().startsWith(MARKER)) {
            String reason = r.stderr().lines().findFirst().orElse("").substring(MARKER.length());
            throw new BackendUnavailableException("the egress proxy could not be set up for the run (" + reason
                    + "). Nothing ran.");
        }
        return r;
    }

    private static String load() {
        try (InputStream in = EgressBridge.class.getResourceAsStream("egress-bridge.py")) {
            if (in == null) {
                throw new IllegalStateException("egress-bridge.py is missing from the core module");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read egress-bridge.py", e);
        }
    }
}
