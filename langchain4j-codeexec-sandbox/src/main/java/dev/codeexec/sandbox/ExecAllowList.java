package dev.codeexec.sandbox;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.policy.CommandPolicy;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A command policy's allow list, enforced by the kernel (Landlock) on every program a sandbox run starts: a file that
 * is not an allowed program cannot be executed, whatever wrapper, interpreter or loader tries.
 *
 * <p>Each run's program is started by a small helper ({@code exec-guard.py}, run by the host's {@code python3} as the
 * last step inside bubblewrap): it creates a Landlock ruleset that handles EXECUTE and READ_FILE, adds the rules this
 * class computed, restricts itself and {@code execv}s the program. The ruleset stays with every descendant. It fails
 * closed: without Landlock, or when a rule cannot be added, the program is not started ({@link #check}).
 *
 * <p>Three things together make the allow list hold (probed on Linux 6.x, Landlock ABI 7):
 * <ul>
 *   <li><b>EXECUTE</b> only on the allowed programs' files (resolved on {@link ShellEnvironmentPolicy#CLEAN_PATH},
 *   links followed), their ELF interpreter (the kernel executes the dynamic loader for every dynamic program) and the
 *   POSIX shell that policy runs start with;</li>
 *   <li><b>READ_FILE</b> only where no program lies: the dynamic loader runs any program file it can read
 *   ({@code ld.so /usr/bin/curl}), and Landlock does not cover its {@code mmap(PROT_EXEC)}. So reading is allowed for
 *   {@code /etc}, {@code /usr/share}, locales, the top-level files of the library directories that are not programs,
 *   {@code /proc}, {@code /dev}, {@code /sys}, the workspace and the scratch directories, and the profile's own read
 *   grants; not for the program directories ({@code /usr/bin}, {@code /usr/lib/jvm}, {@code /usr/lib/gcc}, ...);</li>
 *   <li><b>noexec</b> on every writable place (the workspace volume, {@code /tmp}, {@code /var/tmp},
 *   {@code /dev/shm}; {@code /dev} read-only), so that a copy a program writes can neither be executed nor mapped
 *   executable by the loader ({@link LoopVolumes}, {@link #scratchMounts}).</li>
 * </ul>
 * What it cannot hold: an allowed general interpreter ({@code python3}, {@code perl}, {@code node}) does in-process
 * whatever a denied program would (Python's ctypes loads libcurl). That is the policy's to avoid, not enforced here.
 */
final class ExecAllowList {

    private static final Logger LOG = LoggerFactory.getLogger(ExecAllowList.class);

    static final String PYTHON = PythonHelper.PYTHON;
    /** Exit code and stderr prefix of the helper when it refused to start the program. */
    static final int GUARD_FAILED = 125;
    static final String MARKER = "codeexec-exec-guard: ";

    /** Read, never executed: configuration, data, locales, the kernel's interfaces. */
    private static final List<String> READ_TREES = List.of("/etc", "/usr/share", "/usr/lib/locale",
            "/usr/lib/x86_64-linux-gnu/gconv", "/proc", "/dev", "/sys");
    /** Shared libraries: only their top-level files are readable (subdirectories hold helper programs). */
    private static final List<String> LIBRARY_DIRS = List.of("/lib64", "/usr/lib64", "/usr/lib/x86_64-linux-gnu",
            "/usr/local/lib");
    /** The scratch directories of a run, bound from the workspace's noexec volume instead of bubblewrap's tmpfs. */
    static final List<String> SCRATCH = List.of("/tmp", "/var/tmp", "/dev/shm");

    private static final PythonHelper HELPER = PythonHelper.load("exec-guard.py");

    /** Multi-call binaries: one file that is many programs (a shell among them), chosen by the name it runs as. */
    private static final Set<String> MULTI_CALL = Set.of("busybox", "toybox", "coreutils");

    /** General interpreters: each does in-process, or through a memfd, what any program would (the log warns). */
    private static final java.util.regex.Pattern INTERPRETER = java.util.regex.Pattern.compile("(python|pypy|perl|"
            + "ruby|node|nodejs|bun|deno|php|lua|luajit|rscript|r|tclsh|wish|java|jshell|julia|guile|racket|sbcl|"
            + "gawk|ocaml|erl|elixir|dotnet|mono)[0-9.]*");

    private final Set<String> executables;
    private final List<String> rules;

    private ExecAllowList(Set<String> executables, List<String> rules) {
        this.executables = executables;
        this.rules = rules;
    }

    /**
     * The allow list of a policy for an engine, after checking that this host can enforce it.
     *
     * @throws UnsupportedCapabilityException when the kernel, the platform, the engine's volumes or the profile
     *                                        cannot make it hold (the message says which)
     */
    static ExecAllowList forEngine(CommandPolicy policy, PermissionProfile profile, SandboxPlatform platform,
                                   boolean volumes) {
        String refusal = "SandboxEngine cannot enforce the command allow list in the kernel here: ";
        if (!policy.isEnforcing() || policy.allowedCommands().isEmpty()) {
            throw new InvalidSpecException("enforceAllowList needs a command policy with an allow list; "
                    + policy + " has none");
        }
        if (platform != SandboxPlatform.LINUX_BWRAP || profile.enforcement() != PermissionProfile.Enforcement.MANAGED) {
            throw new UnsupportedCapabilityException(refusal + "it needs the Linux sandbox (bubblewrap) with a managed "
                    + "permission profile");
        }
        if (!volumes) {
            throw new UnsupportedCapabilityException(refusal + "it needs a volume per workspace, mounted noexec (the "
                    + "disk quota: the engine running as root, with loop devices), so that a copy a program writes "
                    + "cannot run");
        }
        for (PermissionProfile.PathRule r : profile.rules()) {
            if (r.access() == FileAccess.WRITE && (r.isHostPath() || r.isHomePath())) {
                throw new UnsupportedCapabilityException(refusal + "the profile grants writing " + r.path()
                        + ", where a program could write a copy of a denied program and run it (only the workspace "
                        + "is mounted noexec); remove the write grant");
            }
        }
        probe(refusal);
        List<String> interpreters = policy.allowedCommands().stream().filter(c -> INTERPRETER.matcher(
                Path.of(c).getFileName().toString().toLowerCase(java.util.Locale.ROOT)).matches()).toList();
        if (!interpreters.isEmpty()) {
            LOG.warn("The command allow list enforced in the kernel allows the general interpreters {}: they can do "
                    + "in-process, or through a memory file, whatever a program that is not on the list would. See "
                    + "docs/command-policy.md, Kernel enforcement on the sandbox", interpreters);
        }
        Set<String> exec = new TreeSet<>();
        for (String command : policy.allowedCommands()) {
            exec.addAll(resolve(command));
        }
        exec.addAll(resolve("sh")); // policy runs start with sh -c: dash runs only what EXECUTE allows
        for (String file : exec) {
            String name = Path.of(file).getFileName().toString();
            if (MULTI_CALL.contains(name)) {
                throw new UnsupportedCapabilityException(refusal + file + " is a multi-call binary that an allowed "
                        + "command (or sh) leads to: the kernel sees the file, so every program it contains could run");
            }
        }
        for (String file : List.copyOf(exec)) {
            String interpreter = elfInterpreter(Path.of(file));
            String real = interpreter == null ? null : realPath(interpreter);
            if (real != null) {
                exec.add(real);
            }
        }
        List<String> rules = new ArrayList<>();
        exec.forEach(f -> rules.add("x:" + f));
        READ_TREES.forEach(t -> rules.add("r:" + t));
        for (PermissionProfile.PathRule r : profile.rules()) {
            if (r.access() == FileAccess.READ && r.isHostPath() && !r.path().equals("/")) {
                rules.add("r:" + r.path());
            }
        }
        libraryFiles(exec).forEach(f -> rules.add("r:" + f));
        LOG.info("SandboxEngine enforces the command allow list in the kernel: programs may execute {} (and nothing "
                + "else); {} Landlock rules per run", exec, rules.size() + 1 + SCRATCH.size());
        return new ExecAllowList(Set.copyOf(exec), List.copyOf(rules));
    }

    /** The files programs may execute (for tests and the log). */
    Set<String> executables() {
        return executables;
    }

    /**
     * The program argv of a run: the helper, the rules (also the run's workspace), then the program.
     *
     * @param workspace the run's workspace root (read, never executed: its volume is noexec)
     */
    List<String> wrap(List<String> program, Path workspace) {
        List<String> all = new ArrayList<>(rules);
        all.add("r:" + workspace);
        SCRATCH.forEach(s -> all.add("r:" + s));
        return helperArgv(all, program);
    }

    /** The helper's argv: every rule and every word of the program a value of its own, nothing spliced into code. */
    static List<String> helperArgv(List<String> rules, List<String> program) {
        List<String> a = new ArrayList<>(rules);
        a.add("--");
        a.addAll(program);
        return HELPER.argv(a);
    }

    /**
     * The mounts of a run's scratch directories: {@code /tmp}, {@code /var/tmp} and {@code /dev/shm} bound from
     * directories on the workspace's noexec volume (bubblewrap's tmpfs cannot be noexec), and {@code /dev} read-only
     * (its tmpfs can be neither). They are created here in {@code dir} (removed with the run's pins) and count against
     * the workspace's quota.
     */
    static List<Mount> scratchMounts(Path dir) {
        List<Mount> mounts = new ArrayList<>();
        try {
            for (String s : SCRATCH) {
                Path d = dir.resolve("scratch" + s.replace('/', '-'));
                Files.createDirectories(d);
                Files.setPosixFilePermissions(d.getParent(), java.nio.file.attribute.PosixFilePermissions
                        .fromString("rwx--x--x"));
                // Shared by nobody else, but programs expect a sticky, world-writable /tmp.
                Files.setAttribute(d, "unix:mode", 01777);
                mounts.add(Mount.aliased(s, Mount.Kind.BIND, d.toString()));
            }
        } catch (IOException | RuntimeException e) {
            throw new BackendUnavailableException("cannot create the run's scratch directories on its volume: " + e,
                    e);
        }
        mounts.add(Mount.of("/dev", Mount.Kind.REMOUNT_RO));
        return mounts;
    }

    /**
     * Refuses a result whose program the helper did not start. The helper reports on stderr only (nothing out of band
     * is left once bubblewrap executed it); a program that imitates the report can only make its own run fail.
     *
     * @throws BackendUnavailableException when the allow list could not be enforced (nothing ran)
     */
    static RunResult check(RunResult r) {
        if (r.exitCode() == GUARD_FAILED && !r.timedOut() && r.stderr().startsWith(MARKER)) {
            String reason = r.stderr().lines().findFirst().orElse("").substring(MARKER.length());
            throw new BackendUnavailableException("the command allow list could not be enforced in the kernel ("
                    + reason + "). Nothing ran.");
        }
        return r;
    }

    /** Runs the helper once on the host: Landlock must be there, with EXECUTE and READ_FILE (ABI 1 and later). */
    static void probe(String refusal) {
        if (!"amd64".equals(System.getProperty("os.arch")) && !"x86_64".equals(System.getProperty("os.arch"))) {
            throw new UnsupportedCapabilityException(refusal + "the helper knows the Landlock system calls of x86_64 "
                    + "only, this is " + System.getProperty("os.arch"));
        }
        if (!Files.isExecutable(Path.of(PYTHON))) {
            throw new UnsupportedCapabilityException(refusal + PYTHON + " (which starts programs under Landlock) "
                    + "is missing");
        }
        String out;
        int code;
        try {
            Process p = new ProcessBuilder(HELPER.argv(List.of("--probe"))).redirectErrorStream(true)
                    .start();
            p.getOutputStream().close();
            out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new UnsupportedCapabilityException(refusal + "the Landlock probe did not finish");
            }
            code = p.exitValue();
        } catch (IOException e) {
            throw new UnsupportedCapabilityException(refusal + "the Landlock probe could not run: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new UnsupportedCapabilityException(refusal + "interrupted during the Landlock probe");
        }
        if (code != 0 || !out.matches("\\d+")) {
            throw new UnsupportedCapabilityException(refusal + (out.startsWith(MARKER)
                    ? out.substring(MARKER.length()) : "the Landlock probe failed (exit code " + code + ": " + out
                    + ")"));
        }
    }

    /** The real files a command word reaches: an absolute path itself, a bare name every match on the clean PATH. */
    static List<String> resolve(String command) {
        List<String> found = new ArrayList<>();
        if (command.startsWith("/")) {
            addIfProgram(Path.of(command), found);
        } else if (!command.contains("/")) {
            for (String dir : ShellEnvironmentPolicy.CLEAN_PATH.split(":")) {
                addIfProgram(Path.of(dir, command), found);
            }
        } // A relative path names a file in the workspace, whose volume is noexec: it can never run.
        return found;
    }

    private static void addIfProgram(Path p, List<String> found) {
        if (Files.isRegularFile(p) && Files.isExecutable(p)) {
            String real = realPath(p.toString());
            if (real != null && !found.contains(real)) {
                found.add(real);
            }
        }
    }

    private static String realPath(String p) {
        try {
            return Path.of(p).toRealPath().toString();
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * The top-level regular files of the library directories (links followed) that are not programs: shared libraries,
     * linker scripts, the loader cache's neighbours. A file with an ELF interpreter is a program unless it is named as
     * a library ({@code libc.so.6} has one, to print its version); the allowed ones are readable through their x rule.
     */
    private static Set<String> libraryFiles(Set<String> allowed) {
        Set<String> files = new TreeSet<>();
        for (String dir : LIBRARY_DIRS) {
            Path d = Path.of(dir);
            if (!Files.isDirectory(d)) {
                continue;
            }
            try (Stream<Path> s = Files.list(d)) {
                for (Path p : s.toList()) {
                    String real = realPath(p.toString());
                    if (real == null || !Files.isRegularFile(Path.of(real)) || allowed.contains(real)) {
                        continue;
                    }
                    String name = Path.of(real).getFileName().toString();
                    boolean library = name.endsWith(".so") || name.contains(".so.") || name.endsWith(".a")
                            || name.endsWith(".o");
                    if (library || elfInterpreter(Path.of(real)) == null) {
                        files.add(real);
                    }
                }
            } catch (IOException e) {
                throw new UnsupportedCapabilityException("SandboxEngine cannot list the library directory " + dir
                        + " for the command allow list: " + e.getMessage());
            }
        }
        return files;
    }

    /** The ELF interpreter (PT_INTERP) of a 64-bit little-endian ELF file, or null for anything else. */
    static String elfInterpreter(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer h = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
            if (ch.read(h, 0) < 64 || h.getInt(0) != 0x464c457f || h.get(4) != 2 || h.get(5) != 1) {
                return null;
            }
            long phoff = h.getLong(32);
            int entSize = Short.toUnsignedInt(h.getShort(54));
            int count = Short.toUnsignedInt(h.getShort(56));
            if (entSize < 56 || count > 256) {
                return null;
            }
            ByteBuffer ph = ByteBuffer.allocate(entSize * count).order(ByteOrder.LITTLE_ENDIAN);
            ch.read(ph, phoff);
            for (int i = 0; i < count; i++) {
                if (ph.getInt(i * entSize) == 3) { // PT_INTERP
                    long off = ph.getLong(i * entSize + 8);
                    long size = ph.getLong(i * entSize + 32);
                    if (size <= 1 || size > 4096) {
                        return null;
                    }
                    ByteBuffer name = ByteBuffer.allocate((int) size - 1);
                    ch.read(name, off);
                    return new String(name.array(), StandardCharsets.UTF_8);
                }
            }
            return null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    @Override
    public String toString() {
        return "ExecAllowList" + Map.of("executables", executables);
    }
}
