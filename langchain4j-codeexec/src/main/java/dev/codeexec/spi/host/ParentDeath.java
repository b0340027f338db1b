package dev.codeexec.spi.host;

import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.ProgramRuns;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The parent-death wrapper of host runs: {@code setpriv --pdeathsig KILL --} (util-linux) asks the kernel to kill the
 * launched process when the thread that forked it ends, so that nothing a JVM started outlives it, even after a
 * {@code kill -9} or a crash. The one probe of the host backends that launch plain host processes (local, Jupyter);
 * the sandbox gets the same from bubblewrap's {@code --die-with-parent}. Host-family SPI (see the package).
 *
 * <p>The rule of every host launch: the parent-death wrapper comes first, then the PID-namespace wrapper
 * ({@link PidNamespace}: {@code unshare --kill-child} hands the signal on to the namespace's init, whose death ends
 * every process of the run), then the program; and the launch is forked on a {@link LauncherThreads} thread, which
 * lives as long as the processes it forked (the signal is tied to the forking <em>thread</em>, not to the JVM).
 * {@code setpriv} sets the signal just after it was forked and executed: the one death it misses is the JVM's in that
 * moment, before the call (the forking thread itself does not end before its processes do).
 *
 * <p>Chosen once per JVM by running {@code setpriv --pdeathsig KILL -- true}; where it is missing (not Linux, or an
 * old util-linux) runs have no parent-death signal and the fact is logged as a WARN.
 */
public final class ParentDeath {

    private static final Logger LOG = LoggerFactory.getLogger(ParentDeath.class);

    private ParentDeath() {
    }

    /** The argv prefix to put first; empty when this host cannot set a parent-death signal. */
    public static List<String> wrapper() {
        return Probed.WRAPPER;
    }

    /** Probed once, on first use: the JVM's class initialisation makes it lazy and safe across threads. */
    private static final class Probed {
        static final List<String> WRAPPER = probe();
    }

    private static List<String> probe() {
        String setpriv = PidNamespace.find("setpriv");
        String truePath = PidNamespace.find("true");
        if (setpriv != null && truePath != null) {
            List<String> prefix = List.of(setpriv, "--pdeathsig", "KILL", "--");
            List<String> argv = new ArrayList<>(prefix);
            argv.add(truePath);
            try {
                if (ProgramRuns.run(HostProcessChannel.direct(), new ProgramLaunch(argv,
                        Map.of("PATH", ShellEnvironmentPolicy.CLEAN_PATH), "/", null, Duration.ofSeconds(10), 4096,
                        null)).exitCode() == 0) {
                    return prefix;
                }
            } catch (RuntimeException e) {
                // Not usable: no wrapper.
            }
        }
        LOG.warn("Host runs cannot get a parent-death signal on this host (util-linux setpriv --pdeathsig missing): "
                + "a program still running when this JVM is killed or crashes survives it");
        return List.of();
    }
}
