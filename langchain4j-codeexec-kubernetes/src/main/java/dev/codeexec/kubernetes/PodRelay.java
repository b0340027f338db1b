package dev.codeexec.kubernetes;

import dev.codeexec.network.EgressBridge;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The in-pod end of a workspace's egress tunnel: a relay that listens on the pod's own {@code 127.0.0.1:}{@value
 * EgressBridge#PORT} (where {@link EgressBridge#environment()} points the runs' clients) and carries each connection
 * over its exec's stdin and stdout as {@link TunnelFrames}. One script in two languages, perl first (it starts in a
 * few milliseconds) and python3 for images without it, as the runs' launcher is chosen ({@link PodScripts.Reaper}):
 * standard modules only, one process, one {@code select} loop.
 *
 * <p>The script travels as the first bytes of the exec's stdin ({@link #preamble}, read by {@link #LOADER}) rather
 * than in the exec's URL, which proxies in front of an API server limit to a few kilobytes (as {@link PodScripts#BOOT}
 * does for the run wrapper). The relay is not a security boundary: it runs as the pod's user, as programs do, and a
 * program may kill it or write frames into its pipes; every connection it carries is still decided by the engine's
 * gate on its own terms, and the pod has no other way out.
 */
final class PodRelay {

    /** What the relay's stderr starts with when it refuses to start. */
    static final String MARKER = "codeexec-relay: ";

    /**
     * {@code sh -c LOADER sh <port> <interpreter...>}: reads {@code <length>\n<script>} from stdin, then executes the
     * interpreter with the script and the port; the rest of stdin is the relay's. A script that did not arrive whole
     * is not run (exit 125). Needs a {@code head -c} that reads no more than asked.
     */
    static final String LOADER = "IFS= read -r n && s=$(head -c \"$n\"; echo .) && s=${s%.}"
            + " && [ \"${#s}\" = \"$n\" ] || exit 125\n"
            + "p=$1; shift\n"
            + "exec \"$@\" \"$s\" \"$p\"\n";

    private static final String PERL = load("pod-relay.pl");
    private static final String PYTHON = load("pod-relay.py");

    private PodRelay() {
    }

    /**
     * The relay's argv for a pod whose launcher is {@code reaper} (its probe found which interpreter works there).
     *
     * @throws IllegalArgumentException for {@link PodScripts.Reaper#NONE}: the pod has neither
     */
    static List<String> argv(PodScripts.Reaper reaper) {
        List<String> a = new ArrayList<>(List.of("sh", "-c", LOADER, "sh", Integer.toString(EgressBridge.PORT)));
        switch (reaper) {
            case PERL -> a.addAll(List.of("perl", "-e"));
            case PYTHON -> a.addAll(List.of("python3", "-I", "-S", "-c"));
            default -> throw new IllegalArgumentException("the pod has neither perl nor python3 for the relay");
        }
        return a;
    }

    /** The first bytes of the relay exec's stdin: the script for {@code reaper}'s interpreter, as one frame. */
    static byte[] preamble(PodScripts.Reaper reaper) {
        return PodScripts.frame((reaper == PodScripts.Reaper.PERL ? PERL : PYTHON)
                .getBytes(StandardCharsets.US_ASCII));
    }

    /** The script for an interpreter ({@code pl} or {@code py}), for tests that run it outside a pod. */
    static String script(PodScripts.Reaper reaper) {
        return reaper == PodScripts.Reaper.PERL ? PERL : PYTHON;
    }

    private static String load(String name) {
        try (InputStream in = PodRelay.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException(name + " is missing from the kubernetes module");
            }
            String s = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
            if (!StandardCharsets.US_ASCII.newEncoder().canEncode(s)) {
                throw new IllegalStateException(name + " must be ASCII (the loader counts characters)");
            }
            return s;
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + name, e);
        }
    }
}
