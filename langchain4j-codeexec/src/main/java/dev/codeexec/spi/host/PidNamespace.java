package dev.codeexec.spi.host;

import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.ProgramRuns;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wrapper that puts each host run in its own PID namespace, so that killing the namespace's init kills every
 * process of the run, including daemons that left their process group or session (see {@code ProcessTreeKiller}).
 * The one probe of the host backends that launch plain host processes (local, Jupyter). Host-family SPI
 * (see the package). Chosen once per JVM by probing:
 * <ol>
 *   <li>{@code unshare --pid --fork --kill-child} (root, or CAP_SYS_ADMIN);</li>
 *   <li>the same with {@code --map-current-user} (an unprivileged user namespace);</li>
 *   <li>none: kills fall back to a snapshot of descendants, which misses re-parented daemons (logged as a WARN).</li>
 * </ol>
 */
public final class PidNamespace {

    private static final Logger LOG = LoggerFactory.getLogger(PidNamespace.class);

    private static final List<String> ROOT = List.of("unshare", "--pid", "--fork", "--kill-child", "--");
    private static final List<String> USER = List.of("unshare", "--map-current-user", "--pid", "--fork",
            "--kill-child", "--");

    private PidNamespace() {
    }

    /** The argv prefix to put before the program; empty when no namespace can be made here. */
    public static List<String> wrapper() {
        return Probed.WRAPPER;
    }

    /** Probed once, on first use: the JVM's class initialisation makes it lazy and safe across threads. */
    private static final class Probed {
        static final List<String> WRAPPER = probe();
    }

    private static List<String> probe() {
        String unshare = find("unshare");
        String truePath = find("true");
        if (unshare != null && truePath != null) {
            for (List<String> candidate : List.of(ROOT, USER)) {
                List<String> argv = new java.util.ArrayList<>(candidate);
                argv.set(0, unshare);
                argv.add(truePath);
                try {
                    var r = ProgramRuns.run(HostProcessChannel.direct(), new ProgramLaunch(argv,
                            Map.of("PATH", ShellEnvironmentPolicy.CLEAN_PATH), "/", null, Duration.ofSeconds(10), 4096,
                            null));
                    if (r.exitCode() == 0) {
                        List<String> chosen = new java.util.ArrayList<>(candidate);
                        chosen.set(0, unshare);
                        return List.copyOf(chosen);
                    }
                } catch (RuntimeException e) {
                    // Try the next candidate.
                }
            }
        }
        LOG.warn("Host runs cannot get PID namespaces on this host (unshare missing or not permitted): "
                + "a timeout kills the program and its visible descendants, but a daemon that detached itself "
                + "may survive");
        return List.of();
    }

    /** The absolute path of a system executable, or null. */
    static String find(String name) {
        for (String dir : List.of("/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin")) {
            Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return null;
    }
}
