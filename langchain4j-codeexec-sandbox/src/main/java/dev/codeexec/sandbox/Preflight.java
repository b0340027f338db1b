package dev.codeexec.sandbox;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.RunResult;
import dev.codeexec.spi.host.HostProcessChannel;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.spi.ProgramRuns;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks, once per JVM and bubblewrap executable, that a sandbox of the shape this engine builds really starts here:
 * every namespace, {@code --cap-drop ALL}, {@code --disable-userns}, a private {@code /tmp}, the seccomp program
 * through the launching shell, and a fresh {@code /proc}. A definitive result (success or a failure an operator must
 * fix) is cached; a transient failure (a timeout, a resource shortage while starting) is not, so the next engine
 * tries again.
 *
 * <p>On failure the error names what failed, what bubblewrap said, and what to change on the host. Nothing ever
 * falls back to running without the sandbox.
 */
final class Preflight {

    private static final Logger LOG = LoggerFactory.getLogger(Preflight.class);

    /** How a failure to create user namespaces is explained (an unprivileged user may lack what root has). */
    static final String USERNS_PROBLEM = "User namespaces are not available";

    /** How long a probe may take; tests shorten it. */
    static volatile Duration probeTimeout = Duration.ofSeconds(10);

    /** Where to look for bubblewrap when no path is configured. */
    static final List<String> BWRAP_LOCATIONS = List.of("/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap");

    /**
     * The outcome: how the sandbox can run here.
     *
     * @param user who programs run as: the requested user, or root (capabilities dropped) when the host refuses user
     *             namespaces to unprivileged users
     */
    record Result(String bwrap, ProcMode proc, SandboxUser user) {
        Result(String bwrap, ProcMode proc) {
            this(bwrap, proc, null);
        }
    }

    private record Key(String bwrap, PreflightMode mode, SandboxUser.Mode user, int uid) {
    }

    private static final Map<Key, Object> CACHE = new ConcurrentHashMap<>();

    private Preflight() {
    }

    /** Finds bubblewrap: the configured path, else the standard locations, else the JVM's {@code PATH}. */
    static String locateBwrap(Path configured) {
        return locateBwrap(configured, BWRAP_LOCATIONS, System.getenv("PATH"));
    }

    /**
     * {@link #locateBwrap(Path)} with the {@code PATH} given. The standard locations come first, so the packaged
     * bubblewrap wins over a copy in a directory a user may write to; then the absolute entries of {@code path} in
     * order (relative entries are skipped: they would depend on the JVM's working directory).
     */
    static String locateBwrap(Path configured, List<String> locations, String path) {
        if (configured != null) {
            if (!Files.isExecutable(configured)) {
                throw new BackendUnavailableException("sandbox preflight failed: the configured bubblewrap '"
                        + configured + "' is not an executable file. Install bubblewrap (one with --ro-bind-fd: "
                        + "0.10.0 or newer, or a distribution backport such as Debian 12's; Debian/Ubuntu: apt-get "
                        + "install bubblewrap, Fedora: dnf install bubblewrap) or fix the path. The engine never runs "
                        + "programs without the sandbox.");
            }
            return configured.toAbsolutePath().toString();
        }
        for (String p : locations) {
            if (Files.isExecutable(Path.of(p))) {
                return p;
            }
        }
        for (String dir : path == null ? new String[0] : path.split(":")) {
            if (dir.startsWith("/")) {
                Path candidate = Path.of(dir, "bwrap");
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return candidate.toString();
                }
            }
        }
        throw new BackendUnavailableException("sandbox preflight failed: bubblewrap (bwrap) was not found in "
                + locations + " nor on PATH (" + (path == null || path.isBlank() ? "unset" : path) + "). "
                + "Install bubblewrap with --ro-bind-fd (0.10.0 or newer, or a distribution backport such as Debian "
                + "12's; Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Alpine: apk add "
                + "bubblewrap), or set SandboxEngine.Builder.bwrapPath. The engine never runs programs without the "
                + "sandbox.");
    }

    /**
     * Runs (or returns the cached) preflight.
     *
     * @throws BackendUnavailableException with the reason and the fix when the sandbox cannot run here
     */
    static Result check(String bwrap, PreflightMode mode, Path stateDir) {
        return check(bwrap, mode, stateDir, null);
    }

    /**
     * Runs (or returns the cached) preflight for programs of {@code user} (null: the JVM's user). When the JVM is
     * root and the host refuses to let the unprivileged sandbox user create user namespaces, but root can, the
     * sandbox runs with root's identity (every capability dropped) and the engine logs a warning.
     *
     * @throws BackendUnavailableException with the reason and the fix when the sandbox cannot run here
     */
    static Result check(String bwrap, PreflightMode mode, Path stateDir, SandboxUser user) {
        Key key = new Key(bwrap, mode, user == null ? null : user.mode(), user == null ? -1 : user.uid());
        Object cached = CACHE.get(key);
        if (cached instanceof Result r) {
            return r;
        }
        if (cached instanceof BackendUnavailableException e) {
            throw new BackendUnavailableException(e.getMessage(), e);
        }
        synchronized (CACHE) {
            cached = CACHE.get(key);
            if (cached instanceof Result r) {
                return r;
            }
            try {
                Result r;
                try {
                    r = probeAll(bwrap, mode, stateDir, user);
                } catch (BackendUnavailableException e) {
                    if (user == null || !user.drops() || !String.valueOf(e.getMessage()).contains(USERNS_PROBLEM)) {
                        throw e;
                    }
                    Result asRoot = probeAll(bwrap, mode, stateDir, user.asRoot());
                    LOG.warn("sandbox preflight: a sandbox does not start as the unprivileged sandbox user here ({});"
                            + " programs run as root with every capability dropped instead (host-wide settings stay "
                            + "read-only; RLIMIT_NPROC does not apply to root)", e.getMessage());
                    r = asRoot;
                }
                CACHE.put(key, r);
                return r;
            } catch (TransientFailure t) {
                throw new BackendUnavailableException("sandbox preflight did not complete: " + t.getMessage()
                        + ". This looks transient (it is not cached); retry, and check the host's load.", t);
            } catch (BackendUnavailableException e) {
                CACHE.put(key, e);
                throw e;
            }
        }
    }

    /** Forgets cached results (tests). */
    static void clearCache() {
        CACHE.clear();
    }

    private static Result probeAll(String bwrap, PreflightMode mode, Path stateDir, SandboxUser user) {
        String fresh = probe(bwrap, ProcMode.FRESH, stateDir, user);
        if (fresh == null) {
            LOG.info("sandbox preflight: {} passed (namespaces, cap drop, seccomp, fresh /proc, programs as {})",
                    bwrap, user == null ? "the JVM's user" : user.describe());
            return new Result(bwrap, ProcMode.FRESH, user);
        }
        boolean procProblem = isProcFailure(fresh);
        if (procProblem && mode == PreflightMode.ALLOW_NO_PROC) {
            String masked = probe(bwrap, ProcMode.MASKED, stateDir, user);
            if (masked == null) {
                LOG.warn("sandbox preflight: a fresh /proc cannot be mounted on this host; running with an empty "
                        + "/proc as PreflightMode.ALLOW_NO_PROC allows (tools that read /proc will fail)");
                return new Result(bwrap, ProcMode.MASKED, user);
            }
            throw new BackendUnavailableException(explain(masked, false));
        }
        throw new BackendUnavailableException(explain(fresh, procProblem));
    }

    /** Runs the probe; null on success, else bubblewrap's diagnostics. */
    private static String probe(String bwrap, ProcMode proc, Path stateDir, SandboxUser user) {
        String seccomp = SeccompFiles.ensure(stateDir, NetworkMode.RESTRICTED).toString();
        // A directory bound from a verified descriptor, as every run pins binds inside writable directories: a
        // bubblewrap without --ro-bind-fd fails here, not at the first run with a .git directory.
        List<Mount> mounts = List.of(Mount.of("/", Mount.Kind.RO_BIND), Mount.of("/tmp", Mount.Kind.SCRATCH),
                Mount.pinned("/tmp/codeexec-probe", Mount.Kind.RO_BIND, SandboxLayout.FIRST_PINNED_FD));
        List<String> argv = BwrapCommand.argv(new BwrapCommand.Spec(bwrap, true, proc, mounts,
                BwrapCommand.DEFAULT_SCRATCH_BYTES, 3, Launcher.STATUS_FD, Map.of("PATH", ShellEnvironmentPolicy.CLEAN_PATH), "/",
                List.of(trueCommand()), user == null ? List.of() : user.launchPrefix(),
                user == null ? List.of() : user.bwrapIdentity(), List.of()));
        List<String> launch = Launcher.argv(new Launcher.Spec("/bin/sh", null, List.of(), null, null, null,
                List.of(stateDir.toString()), seccomp, false, argv));
        RunResult r;
        try {
            r = ProgramRuns.run(HostProcessChannel.direct(), new ProgramLaunch(launch, Map.of(), "/", null,
                    probeTimeout, 64 * 1024, null));
        } catch (BackendUnavailableException e) {
            String m = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
            if (m.contains("resource temporarily unavailable") || m.contains("cannot allocate memory")
                    || m.contains("too many open files")) {
                throw new TransientFailure("could not start the probe: " + e.getMessage());
            }
            throw new BackendUnavailableException("sandbox preflight failed: could not start the probe: "
                    + e.getMessage(), e);
        }
        if (r.timedOut()) {
            throw new TransientFailure("the probe sandbox did not finish within " + probeTimeout.toSeconds() + " s");
        }
        if (r.exitCode() == 0) {
            return null;
        }
        String err = r.stderr().strip();
        return err.isEmpty() ? "exit code " + r.exitCode() + " and no message" : err;
    }

    private static String trueCommand() {
        for (String p : List.of("/usr/bin/true", "/bin/true")) {
            if (Files.isExecutable(Path.of(p))) {
                return p;
            }
        }
        return "true";
    }

    static boolean isProcFailure(String stderr) {
        return stderr.contains("Can't mount proc") || stderr.contains("mount proc");
    }

    /** The operator-facing explanation of a failed probe. */
    static String explain(String stderr, boolean procProblem) {
        String first = stderr.lines().findFirst().orElse(stderr);
        StringBuilder m = new StringBuilder("sandbox preflight failed: a test sandbox did not start (bubblewrap said: ")
                .append(first).append("). ");
        String s = stderr.toLowerCase(Locale.ROOT);
        if (procProblem) {
            m.append("A fresh /proc cannot be mounted here, which is typical inside a container whose runtime masks "
                    + "parts of /proc. Fix: run the container with --security-opt systempaths=unconfined (Docker) or "
                    + "securityContext.procMount: Unmasked (Kubernetes); or, accepting an empty /proc inside the "
                    + "sandbox, opt in with SandboxEngine.Builder.preflightMode(PreflightMode.ALLOW_NO_PROC).");
        } else if (s.contains("no permissions to create new namespace") || s.contains("creating new namespace failed")
                || s.contains("uid map") || s.contains("operation not permitted") && s.contains("namespace")) {
            m.append(USERNS_PROBLEM).append(". Fix: enable them (sysctl user.max_user_namespaces=15000; "
                    + "on Debian before 11: kernel.unprivileged_userns_clone=1; on Ubuntu 23.10+: "
                    + "kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap); inside "
                    + "Docker: --security-opt seccomp=unconfined --security-opt apparmor=unconfined; inside "
                    + "Kubernetes: seccompProfile Unconfined.");
        } else if (s.contains("unknown option") || s.contains("unrecognized option")) {
            m.append("This bubblewrap is too old for the options the sandbox needs. Fix: install a bubblewrap with "
                    + "--bind-fd and --ro-bind-fd (upstream 0.10.0 or newer; some distributions backported them to "
                    + "older versions, for example Debian 12's 0.8.0-2+deb12u1; `bwrap --help` lists them).");
        } else if (s.contains("seccomp")) {
            m.append("The kernel refused the seccomp filter. Fix: run on a kernel with seccomp filters enabled "
                    + "(CONFIG_SECCOMP_FILTER) and outside a seccomp profile that forbids installing filters.");
        } else if (s.contains("rtm_newaddr") || s.contains("loopback")) {
            m.append("The network namespace's loopback could not be set up. Fix: inside a container, allow "
                    + "namespace creation (--security-opt seccomp=unconfined) or run with --cap-add NET_ADMIN.");
        } else if (s.contains("make / slave") || s.contains("mount") || s.contains("permission denied")) {
            m.append("Mounts are not permitted here. Fix: inside Docker, --security-opt apparmor=unconfined "
                    + "--security-opt seccomp=unconfined (or --privileged as a last resort); inside Kubernetes, "
                    + "seccompProfile Unconfined and the SYS_ADMIN capability.");
        } else {
            m.append("See docs/sandbox.md, section 'Reading preflight errors'.");
        }
        m.append(" The engine never runs programs without the sandbox.");
        return m.toString();
    }

    /** A failure worth retrying later; never cached. */
    private static final class TransientFailure extends RuntimeException {
        TransientFailure(String message) {
            super(message);
        }
    }
}
