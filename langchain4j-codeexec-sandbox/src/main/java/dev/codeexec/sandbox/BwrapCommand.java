package dev.codeexec.sandbox;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Builds the bubblewrap argument vector: a pure function of its inputs, so every security property of the layout can
 * be read off (and unit-tested on) the argv.
 *
 * <p>Layout: new user (nested user namespaces disabled), PID, IPC, UTS, cgroup (when possible) and, when the network
 * is restricted, network namespaces; {@code --new-session} (no controlling terminal, so no TIOCSTI into the caller's
 * terminal), {@code --die-with-parent}, {@code --cap-drop ALL}. Filesystem operations follow the root grant, a fresh
 * {@code /dev} and {@code /proc}, then every {@link Mount} by increasing depth and, on equal depth, by precedence
 * (read, write, protected, hidden): bubblewrap applies operations in order and later mounts shadow earlier ones, so
 * this order <em>is</em> the rule "most specific wins; ties none &gt; write &gt; read". Hidden directories are
 * remounted read-only last, and so is the whole fresh {@code /proc} (no host-wide setting can be written through it).
 * The environment is replaced ({@code --clearenv}, then one {@code --setenv} per variable).
 *
 * <p>A pinned bind (see {@link Mount}) becomes {@code --ro-bind-fd}/{@code --bind-fd} from the launcher's verified
 * descriptor (bubblewrap checks after the mount that what it mounted is that descriptor's directory), or a bind from
 * the private hard link. With a status descriptor, bubblewrap reports on it whether the program was started
 * ({@code --json-status-fd}: an {@code "exit-code"} document is written only after the program was executed), so a
 * failed setup is told from a program's failure without reading anything the program wrote.
 */
final class BwrapCommand {

    /** Default size of the private {@code /tmp}. */
    static final long DEFAULT_SCRATCH_BYTES = 256L * 1024 * 1024;

    private BwrapCommand() {
    }

    /**
     * Inputs of one sandboxed run.
     *
     * @param bwrap        absolute path of the bubblewrap executable
     * @param restrictNet  true for a private network namespace (loopback only)
     * @param proc         how /proc is provided
     * @param mounts       filesystem operations, in any order (they are sorted here); at most one per path
     * @param scratchBytes size limit of each {@link Mount.Kind#SCRATCH} tmpfs
     * @param seccompFd    descriptor holding the seccomp program, or -1 for none
     * @param statusFd     descriptor for bubblewrap's JSON status reports, or -1 for none
     * @param env          the complete environment of the program, in order
     * @param chdir        absolute working directory inside the sandbox
     * @param command      the program and its arguments
     * @param launchPrefix what executes bubblewrap (the change to the sandbox user, see {@link SandboxUser}), or
     *                     empty
     * @param identity     bubblewrap's {@code --uid}/{@code --gid} options, or empty
     * @param inside       what runs the program inside the sandbox (the process limit, see {@link RunLimits}), or
     *                     empty
     */
    record Spec(String bwrap, boolean restrictNet, ProcMode proc, List<Mount> mounts, long scratchBytes,
                int seccompFd, int statusFd, Map<String, String> env, String chdir, List<String> command,
                List<String> launchPrefix, List<String> identity, List<String> inside) {
        Spec {
            Objects.requireNonNull(bwrap, "bwrap");
            Objects.requireNonNull(proc, "proc");
            mounts = List.copyOf(mounts);
            env = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(env));
            Objects.requireNonNull(chdir, "chdir");
            command = List.copyOf(command);
            if (command.isEmpty()) {
                throw new IllegalArgumentException("command must not be empty");
            }
            launchPrefix = List.copyOf(launchPrefix);
            identity = List.copyOf(identity);
            inside = List.copyOf(inside);
        }

        /** A sandbox of the JVM's own user, without a process limit inside. */
        Spec(String bwrap, boolean restrictNet, ProcMode proc, List<Mount> mounts, long scratchBytes, int seccompFd,
             int statusFd, Map<String, String> env, String chdir, List<String> command) {
            this(bwrap, restrictNet, proc, mounts, scratchBytes, seccompFd, statusFd, env, chdir, command, List.of(),
                    List.of(), List.of());
        }
    }

    /** The argv of a managed sandbox. */
    static List<String> argv(Spec spec) {
        List<String> a = new ArrayList<>(spec.launchPrefix());
        a.add(spec.bwrap());
        a.add("--unshare-user");
        a.add("--disable-userns");
        a.add("--unshare-pid");
        a.add("--unshare-ipc");
        a.add("--unshare-uts");
        a.add("--unshare-cgroup-try");
        if (spec.restrictNet()) {
            a.add("--unshare-net");
        }
        a.add("--hostname");
        a.add("sandbox");
        a.add("--die-with-parent");
        a.add("--new-session");
        a.add("--cap-drop");
        a.add("ALL");
        a.addAll(spec.identity());
        addStatus(a, spec.statusFd());

        List<Mount> sorted = sort(spec.mounts());
        List<String> remountReadOnly = new ArrayList<>();
        boolean systemMounted = false;
        for (Mount m : sorted) {
            if (!systemMounted && m.depth() > 0) {
                addSystemMounts(a, spec.proc(), remountReadOnly);
                systemMounted = true;
            }
            addMount(a, m, sorted, spec.scratchBytes(), remountReadOnly);
        }
        if (!systemMounted) {
            addSystemMounts(a, spec.proc(), remountReadOnly);
        }
        for (String p : remountReadOnly) {
            a.add("--remount-ro");
            a.add(p);
        }
        if (spec.seccompFd() >= 0) {
            a.add("--seccomp");
            a.add(Integer.toString(spec.seccompFd()));
        }
        addEnvironment(a, spec.env());
        a.add("--chdir");
        a.add(spec.chdir());
        a.add("--");
        a.addAll(spec.inside());
        a.addAll(spec.command());
        return a;
    }

    /**
     * The argv for {@link PermissionProfile#dangerFullAccess()}: no isolation at all (the host's files, devices and
     * network), only a PID namespace so that the whole process tree dies with the run, {@code --new-session} and
     * {@code --die-with-parent}.
     */
    static List<String> unsandboxedArgv(String bwrap, int statusFd, Map<String, String> env, String chdir,
                                        List<String> command) {
        List<String> a = new ArrayList<>(List.of(bwrap, "--dev-bind", "/", "/", "--unshare-pid", "--proc", "/proc",
                "--die-with-parent", "--new-session"));
        addStatus(a, statusFd);
        addEnvironment(a, env);
        a.add("--chdir");
        a.add(chdir);
        a.add("--");
        a.addAll(command);
        return a;
    }

    private static void addStatus(List<String> a, int statusFd) {
        if (statusFd >= 0) {
            a.add("--json-status-fd");
            a.add(Integer.toString(statusFd));
        }
    }

    static List<Mount> sort(List<Mount> mounts) {
        List<Mount> sorted = new ArrayList<>(mounts);
        sorted.sort(Comparator.comparingInt(Mount::depth).thenComparingInt(m -> m.kind().precedence)
                .thenComparing(Mount::path));
        for (int i = 1; i < sorted.size(); i++) {
            if (sorted.get(i).path().equals(sorted.get(i - 1).path())) {
                throw new IllegalArgumentException("two mounts for " + sorted.get(i).path());
            }
        }
        return sorted;
    }

    private static void addSystemMounts(List<String> a, ProcMode proc, List<String> remountReadOnly) {
        a.add("--dev");
        a.add("/dev");
        if (proc == ProcMode.FRESH) {
            a.add("--proc");
            a.add("/proc");
            // Read-only as a whole: through /proc/sys, /proc/sysrq-trigger and the like a process that passes the
            // kernel's checks could change host-wide settings. A program still reads its own process information.
            remountReadOnly.add("/proc");
        } else {
            a.add("--perms");
            a.add("0555");
            a.add("--tmpfs");
            a.add("/proc");
            remountReadOnly.add("/proc");
        }
    }

    private static void addMount(List<String> a, Mount m, List<Mount> all, long scratchBytes,
                                 List<String> remountReadOnly) {
        switch (m.kind()) {
            case RO_BIND:
            case PROTECT:
                addBind(a, "--ro-bind", m);
                break;
            case BIND:
            case KEEP:
                addBind(a, "--bind", m);
                break;
            case REMOUNT_RO:
                remountReadOnly.add(m.path());
                break;
            case PLACEHOLDER:
                a.add("--perms");
                a.add("0555");
                a.add("--tmpfs");
                a.add(m.path());
                remountReadOnly.add(m.path());
                break;
            case SCRATCH:
                a.add("--size");
                a.add(Long.toString(scratchBytes));
                a.add("--perms");
                a.add("1777");
                a.add("--tmpfs");
                a.add(m.path());
                break;
            case HIDE_DIR:
                // A hidden directory that holds a deeper grant must stay traversable to reach it; it lists nothing
                // but the mount points bubblewrap creates. A leaf hidden directory is not even traversable.
                boolean traversable = all.stream().anyMatch(m::isStrictAncestorOf);
                a.add("--perms");
                a.add(traversable ? "0755" : "0000");
                a.add("--tmpfs");
                a.add(m.path());
                remountReadOnly.add(m.path());
                break;
            case HIDE_FILE:
                a.add("--ro-bind");
                a.add("/dev/null");
                a.add(m.path());
                break;
            default:
                throw new IllegalStateException("unknown mount kind " + m.kind());
        }
    }

    private static void addBind(List<String> a, String option, Mount m) {
        if (m.fd() >= 0) {
            a.add(option + "-fd");
            a.add(Integer.toString(m.fd()));
        } else {
            a.add(option);
            a.add(m.source() != null ? m.source() : m.path());
        }
        a.add(m.path());
    }

    private static void addEnvironment(List<String> a, Map<String, String> env) {
        a.add("--clearenv");
        env.forEach((k, v) -> {
            a.add("--setenv");
            a.add(k);
            a.add(v);
        });
    }
}
