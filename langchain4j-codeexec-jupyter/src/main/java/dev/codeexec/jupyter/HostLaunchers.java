package dev.codeexec.jupyter;

import dev.codeexec.spi.host.ParentDeath;
import dev.codeexec.spi.host.PidNamespace;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host launchers put in front of kernels and runs, chosen once per JVM by probing (util-linux):
 * <ul>
 *   <li>a PID namespace, {@code unshare --pid --fork --kill-child} (as root, else with {@code --map-current-user}):
 *       killing its launcher kills every process inside, daemons that detached themselves included;</li>
 *   <li>a parent-death signal, {@code setpriv --pdeathsig KILL}: the kernel's launcher is killed when the thread that
 *       forked it ends, so a kernel does not outlive a JVM that crashed or was killed (the namespace takes the kernel
 *       with it; {@code --kill-child} gives the kernel the same signal when its launcher dies);</li>
 *   <li>{@code setsid}: the kernel leads its own process group, so its own interrupt (ipykernel signals its group
 *       when it leads one) reaches the processes a cell started, too.</li>
 * </ul>
 * What is missing is logged once as a WARN and left out. The namespace and parent-death wrappers are the core's
 * probes ({@link PidNamespace}, {@link ParentDeath}), the local engine's too.
 */
final class HostLaunchers {

    private static final Logger LOG = LoggerFactory.getLogger(HostLaunchers.class);


    private static volatile HostLaunchers probed;

    private final List<String> pidNamespace;
    private final List<String> parentDeath;
    private final List<String> newSession;

    private HostLaunchers(List<String> pidNamespace, List<String> parentDeath, List<String> newSession) {
        this.pidNamespace = pidNamespace;
        this.parentDeath = parentDeath;
        this.newSession = newSession;
    }

    /** The launchers of this host, probed at the first call. */
    static HostLaunchers get() {
        HostLaunchers h = probed;
        if (h == null) {
            synchronized (HostLaunchers.class) {
                h = probed;
                if (h == null) {
                    h = probe();
                    probed = h;
                }
            }
        }
        return h;
    }

    /** The PID-namespace wrapper's argv prefix; empty when none can be made here. */
    List<String> pidNamespace() {
        return pidNamespace;
    }

    /** The parent-death prefix; empty when {@code setpriv --pdeathsig} is missing. */
    List<String> parentDeath() {
        return parentDeath;
    }

    /** The new-session prefix; empty when {@code setsid} is missing. */
    List<String> newSession() {
        return newSession;
    }

    /**
     * The argv prefix of a kernel: parent death, namespace, new session. The result is <em>wrapped</em> (its first
     * element is a launcher whose descendants are the kernel) when a namespace is used; without one, the launchers
     * exec the kernel in place, so the launched process is the kernel.
     */
    List<String> kernelPrefix() {
        List<String> argv = new ArrayList<>(parentDeath);
        argv.addAll(pidNamespace);
        argv.addAll(newSession);
        return argv;
    }

    private static HostLaunchers probe() {
        // The core's one probe of the PID-namespace wrapper, shared with the local engine.
        List<String> ns = PidNamespace.wrapper();
        // The core's one probe of the parent-death wrapper, shared with the local engine.
        List<String> death = ParentDeath.wrapper();
        if (death.isEmpty()) {
            LOG.warn("JupyterEngine cannot set a parent-death signal (util-linux setpriv --pdeathsig missing): a "
                    + "kernel may outlive a JVM that crashes (ipykernel's own parent check still ends it where the "
                    + "kernel is re-parented to init)");
        }
        String setsid = find("setsid");
        return new HostLaunchers(ns, death, setsid == null ? List.of() : List.of(setsid));
    }

    private static String find(String name) {
        for (String dir : List.of("/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin")) {
            Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return null;
    }
}
