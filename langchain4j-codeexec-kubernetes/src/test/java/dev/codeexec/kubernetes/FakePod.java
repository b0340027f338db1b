package dev.codeexec.kubernetes;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.WorkspaceGoneException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One "pod" on this host, for tests of the Kubernetes backend where no cluster can run: a long-lived process in its
 * own PID, mount, IPC, UTS and network namespaces, made with bubblewrap as root (no user namespace). Its root is a
 * tmpfs, read-only once built, with the host's {@code /usr} and {@code /etc} bound read-only (merged {@code /usr}:
 * {@code /bin}, {@code /lib}, {@code /lib64}, {@code /sbin} are symlinks into it), {@code /proc}, {@code /dev}, and one
 * writable host temp directory per {@code emptyDir} mount (by default {@link PodLayout#VOLUME} and
 * {@link PodLayout#TMP}), owned by the pod's user and group like an {@code emptyDir} with an {@code fsGroup}. PID 1
 * inside is a sleep loop, as a container's init; its host pid is {@link #initPid()}.
 *
 * <p>What is real: the namespaces (a process cannot see the host's processes; all of the pod's processes die with its
 * init), the read-only root, the user and group ids, the clean environment. What is modelled: the image (the host's
 * {@code /usr}), the network (an empty network namespace with only loopback, no CNI), resource limits (none).
 *
 * <p>{@link #exec} enters the namespaces with {@code nsenter} and drops to the pod's user with {@code setpriv}
 * ({@code --clear-groups --no-new-privs}), with only {@code PATH} and {@code HOME} ({@link PodLayout#ROOT}) set, in
 * {@code /}. Thread-safe: each exec is its own process; {@link #close()} may be called from any thread, more than
 * once. Pods left open when the JVM ends are killed by a shutdown hook.
 */
final class FakePod implements AutoCloseable {

    /** The container's {@code PATH}, as a Debian image has it. */
    static final String PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    private static final Set<FakePod> OPEN = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> OPEN.forEach(FakePod::close), "fake-pod-reaper"));
    }

    private final String name;
    private final long uid;
    private final long gid;
    private final Path base;
    private final Process bwrap;
    private final long initPid;
    private final Path cgroup;
    private volatile boolean closed;

    private FakePod(String name, long uid, long gid, Path base, Process bwrap, long initPid, Path cgroup) {
        this.name = name;
        this.uid = uid;
        this.gid = gid;
        this.base = base;
        this.bwrap = bwrap;
        this.initPid = initPid;
        this.cgroup = cgroup;
    }

    /** Whether this host can run fake pods: root, bubblewrap, nsenter and setpriv. */
    static boolean available() {
        return "root".equals(System.getProperty("user.name"))
                && Stream.of("/usr/bin/bwrap", "/usr/bin/nsenter", "/usr/bin/setpriv")
                        .allMatch(p -> Files.isExecutable(Path.of(p)));
    }

    /** Starts a pod running as {@link PodLayout#DEFAULT_UID} with the default volumes. */
    static FakePod start(String name) {
        return start(name, PodLayout.DEFAULT_UID, PodLayout.DEFAULT_UID, List.of(PodLayout.VOLUME, PodLayout.TMP));
    }

    /**
     * Starts a pod.
     *
     * @param name      the pod's name, also its host name
     * @param uid       the user every exec runs as
     * @param gid       its group
     * @param emptyDirs the absolute mount paths of the pod's writable volumes, each a fresh host temp directory
     */
    static FakePod start(String name, long uid, long gid, List<String> emptyDirs) {
        return start(name, uid, gid, emptyDirs, null);
    }

    /**
     * Starts a pod whose processes, the init and every exec, are in the control group {@code cgroup} (a directory of
     * a cgroup v1 hierarchy or of cgroup v2, made by the caller, with its limits set; null for none), as a pod's
     * containers and execs are in the pod's: its {@code pids.max} is the pod's pids limit.
     */
    static FakePod start(String name, long uid, long gid, List<String> emptyDirs, Path cgroup) {
        Path base = null;
        try {
            base = Files.createTempDirectory("fake-pod-");
            List<String> cmd = new ArrayList<>(List.of("/usr/bin/bwrap",
                    "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net",
                    "--hostname", name,
                    "--tmpfs", "/",
                    "--ro-bind", "/usr", "/usr",
                    "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
                    "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
                    "--ro-bind", "/etc", "/etc",
                    "--proc", "/proc", "--dev", "/dev"));
            int i = 0;
            for (String mount : emptyDirs) {
                Path dir = Files.createDirectory(base.resolve("volume-" + i++));
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxr-x"));
                chown(dir, uid, gid);
                cmd.addAll(List.of("--bind", dir.toString(), mount));
            }
            cmd.addAll(List.of("--remount-ro", "/", "--chdir", "/", "--as-pid-1",
                    "sh", "-c", "while :; do sleep 3600 & wait $!; done"));
            ProcessBuilder pb = new ProcessBuilder(inCgroup(cgroup, cmd)).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(base.resolve("bwrap.log").toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            pb.environment().clear();
            pb.environment().put("PATH", PATH);
            Process bwrap = pb.start();
            long init = awaitInit(bwrap, base);
            FakePod pod = new FakePod(name, uid, gid, base, bwrap, init, cgroup);
            OPEN.add(pod);
            return pod;
        } catch (IOException e) {
            if (base != null) {
                deleteTree(base);
            }
            throw new UncheckedIOException("fake pod " + name + " did not start", e);
        }
    }

    /** The pod's name. */
    String name() {
        return name;
    }

    /** The host pid of the pod's init (PID 1 inside). */
    long initPid() {
        return initPid;
    }

    /** The user id every exec runs as. */
    long uid() {
        return uid;
    }

    /** Whether the pod's init still runs. */
    boolean isAlive() {
        return !closed && ProcessHandle.of(initPid).map(ProcessHandle::isAlive).orElse(false);
    }

    /**
     * Where {@code argv0} resolves inside the pod ({@link #PATH} lookup when it has no slash), if it is an
     * executable file there. Lets the kubelet answer "executable file not found" as a container runtime does.
     */
    Optional<String> resolve(String argv0) {
        Path root = Path.of("/proc", Long.toString(initPid), "root");
        List<String> candidates = argv0.contains("/") ? List.of(argv0)
                : Stream.of(PATH.split(":")).map(d -> d + "/" + argv0).toList();
        for (String c : candidates) {
            Path p = root.resolve(c.startsWith("/") ? c.substring(1) : c);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return Optional.of(c);
            }
        }
        return Optional.empty();
    }

    /**
     * Starts {@code argv} in the pod and returns the host-side process ({@code nsenter}; the command is its child, in
     * the pod). Its standard streams are pipes. End it early with {@link #kill(Process)}.
     */
    Process start(List<String> argv) throws IOException {
        if (!isAlive()) {
            throw new IOException("fake pod " + name + " is not running");
        }
        List<String> cmd = new ArrayList<>(List.of("/usr/bin/nsenter", "-t", Long.toString(initPid),
                "-p", "-m", "-i", "-u", "-n", "-r", "-w",
                "/usr/bin/setpriv", "--reuid=" + uid, "--regid=" + gid, "--clear-groups", "--no-new-privs", "--"));
        cmd.addAll(argv);
        ProcessBuilder pb = new ProcessBuilder(inCgroup(cgroup, cmd));
        Map<String, String> env = pb.environment();
        env.clear();
        env.put("PATH", PATH);
        env.put("HOME", PodLayout.ROOT);
        return pb.start();
    }

    /** Kills an exec's process in the pod (the {@code nsenter} child) and then {@code nsenter} itself. */
    static void kill(Process process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }

    /**
     * Runs {@code argv} in the pod to its end.
     *
     * @param stdin  its standard input, copied to its end and then closed; {@code null} for none
     * @param stdout receives its standard output; {@code null} discards it
     * @param stderr receives its standard error; {@code null} discards it
     * @return its exit status
     */
    int exec(List<String> argv, InputStream stdin, OutputStream stdout, OutputStream stderr) throws IOException {
        Process p = start(argv);
        try {
            Thread in = pump("stdin", stdin, p.getOutputStream(), true);
            Thread err = pump("stderr", p.getErrorStream(), stderr, false);
            copy(p.getInputStream(), stdout);
            err.join();
            in.join();
            return p.waitFor();
        } catch (InterruptedException e) {
            kill(p);
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /** This pod as a {@link PodCommands}, ignoring the pod name it is given. */
    PodCommands commands() {
        return (pod, argv, stdin, stdout, timeout) -> runWithTimeout(argv, stdin, stdout, timeout);
    }

    private PodCommands.Result runWithTimeout(List<String> argv, InputStream stdin, OutputStream stdout,
            Duration timeout) {
        if (!isAlive()) {
            throw new WorkspaceGoneException("fake pod " + name + " is gone");
        }
        Process p;
        try {
            p = start(argv);
        } catch (IOException e) {
            throw new BackendUnavailableException("could not start " + argv.get(0) + " in fake pod " + name, e);
        }
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Thread in = pump("stdin", stdin, p.getOutputStream(), true);
        Thread errPump = pump("stderr", p.getErrorStream(), err, false);
        Thread outPump = pump("stdout", p.getInputStream(), stdout, false);
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                kill(p);
                throw new BackendUnavailableException(argv.get(0) + " in fake pod " + name + " timed out");
            }
            outPump.join();
            errPump.join();
            in.join();
        } catch (InterruptedException e) {
            kill(p);
            Thread.currentThread().interrupt();
            throw new BackendUnavailableException("interrupted", e);
        }
        if (!isAlive()) {
            throw new WorkspaceGoneException("fake pod " + name + " went away during " + argv.get(0));
        }
        String text = err.toString(StandardCharsets.UTF_8);
        return new PodCommands.Result(p.exitValue(), text.length() > 4096 ? text.substring(0, 4096) : text);
    }

    /** Kills every process of the pod and removes its directories. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        OPEN.remove(this);
        // SIGKILL to the init: the kernel kills the rest of its PID namespace; bwrap reaps it and exits. (Killing
        // bwrap first would leave the init a zombie for the host's PID 1 to reap.)
        ProcessHandle.of(initPid).ifPresent(ProcessHandle::destroyForcibly);
        try {
            if (!bwrap.waitFor(10, TimeUnit.SECONDS)) {
                bwrap.destroyForcibly();
            }
            for (int i = 0; i < 1000 && Files.exists(Path.of("/proc", Long.toString(initPid))); i++) {
                Thread.sleep(10);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        deleteTree(base);
    }

    @Override
    public String toString() {
        return "FakePod[" + name + ", init " + initPid + "]";
    }

    /** {@code cmd}, first moved into {@code cgroup} by a shell that then execs it; {@code cmd} when null. */
    private static List<String> inCgroup(Path cgroup, List<String> cmd) {
        if (cgroup == null) {
            return cmd;
        }
        List<String> c = new ArrayList<>(List.of("/bin/sh", "-c", "echo $$ >\"$1/cgroup.procs\" && shift && exec \"$@\"",
                "sh", cgroup.toString()));
        c.addAll(cmd);
        return c;
    }

    private static long awaitInit(Process bwrap, Path base) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            if (!bwrap.isAlive()) {
                throw new IOException("bwrap exited " + bwrap.exitValue() + ": "
                        + Files.readString(base.resolve("bwrap.log")));
            }
            Optional<ProcessHandle> child = bwrap.children().findFirst();
            if (child.isPresent()) {
                // Ready once the child has executed the init: until then it is bwrap building the root.
                Path cmdline = Path.of("/proc", Long.toString(child.get().pid()), "cmdline");
                try {
                    if (Files.readString(cmdline, StandardCharsets.ISO_8859_1).startsWith("sh\0-c\0while")) {
                        return child.get().pid();
                    }
                } catch (IOException ignored) {
                    // the child is between exec and exit; look again
                }
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                bwrap.destroyForcibly();
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", e);
            }
        }
        bwrap.destroyForcibly();
        throw new IOException("the fake pod's init did not start in 20 s");
    }

    private static Thread pump(String what, InputStream from, OutputStream to, boolean closeTo) {
        Thread t = new Thread(() -> {
            try {
                if (from != null) {
                    copy(from, to);
                }
            } catch (IOException ignored) {
                // the process ended or the reader went away
            } finally {
                if (closeTo) {
                    try {
                        to.close();
                    } catch (IOException ignored) {
                        // already closed
                    }
                }
            }
        }, "fake-pod-" + what);
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static void copy(InputStream from, OutputStream to) throws IOException {
        byte[] buf = new byte[16384];
        int n;
        while ((n = from.read(buf)) >= 0) {
            if (to != null) {
                to.write(buf, 0, n);
                to.flush();
            }
        }
    }

    private static void chown(Path dir, long uid, long gid) throws IOException {
        Files.setAttribute(dir, "unix:uid", (int) uid, LinkOption.NOFOLLOW_LINKS);
        Files.setAttribute(dir, "unix:gid", (int) gid, LinkOption.NOFOLLOW_LINKS);
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> walk = Files.walk(root)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException ignored) {
                    // best effort: a temp directory
                }
            });
        } catch (IOException ignored) {
            // already gone
        }
    }
}
