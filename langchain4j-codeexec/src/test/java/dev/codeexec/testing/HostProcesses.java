package dev.codeexec.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Host processes as tests see them: processes marked by a unique {@code sleep} duration, found by their command line
 * in {@code /proc}; bounded waits; child JVMs on the test class path.
 */
public final class HostProcesses {

    private static final Random RANDOM = new Random();

    private HostProcesses() {
    }

    /** A unique sleep duration (about 35 to 100 hours) that marks one test's processes. */
    public static String uniqueSleep() {
        return "3" + (100000 + RANDOM.nextInt(800000)) + "." + (100 + RANDOM.nextInt(900));
    }

    /** Pids of live, non-zombie host processes whose command line contains {@code marker}. */
    public static List<Long> withMarker(String marker) {
        List<Long> found = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : procs.filter(x -> x.getFileName().toString().chars().allMatch(Character::isDigit))
                    .toList()) {
                try {
                    String cmd = new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8);
                    String stat = Files.readString(p.resolve("stat"));
                    if (cmd.contains(marker) && !stat.substring(stat.lastIndexOf(')') + 2).startsWith("Z")) {
                        found.add(Long.parseLong(p.getFileName().toString()));
                    }
                } catch (IOException | RuntimeException ignored) {
                    // Ended while we looked.
                }
            }
        } catch (IOException e) {
            throw new AssertionError("cannot list /proc", e);
        }
        return found;
    }

    /**
     * True when {@code sleep <marker>} itself runs: a process whose {@code argv[0]} is {@code sleep}, not one of the
     * wrappers whose argv also holds the marker. Every wrapper has done its set-up (a parent-death signal included)
     * before it executes the next, so from then on the whole chain is in place.
     */
    public static boolean sleeping(String marker) {
        for (long pid : withMarker(marker)) {
            try {
                String cmd = new String(Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline")),
                        StandardCharsets.UTF_8);
                String argv0 = cmd.substring(0, Math.max(0, cmd.indexOf('\0')));
                if (argv0.equals("sleep") || argv0.endsWith("/sleep")) {
                    return true;
                }
            } catch (IOException | RuntimeException ignored) {
                // Ended while we looked.
            }
        }
        return false;
    }

    /** Kills what is left of a test's marked processes (cleanup after a failed assertion). */
    public static void killMarked(String marker) {
        for (long pid : withMarker(marker)) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    /** A condition a test waits for. */
    public interface Check {
        boolean ok() throws Exception;
    }

    /** Polls {@code check} until it holds, for at most {@code max}; no timing is asserted, only that it happens. */
    public static void waitFor(Check check, String what, Duration max) {
        long deadline = System.nanoTime() + max.toNanos();
        try {
            while (!check.ok()) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("timed out after " + max.toSeconds() + " s waiting for " + what);
                }
                Thread.sleep(25);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        } catch (AssertionError e) {
            throw e;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** True when {@code check} holds for the whole of {@code period} (checked every 25 ms). */
    public static boolean holdsFor(Check check, Duration period) throws Exception {
        long end = System.nanoTime() + period.toNanos();
        while (System.nanoTime() < end) {
            if (!check.ok()) {
                return false;
            }
            Thread.sleep(25);
        }
        return check.ok();
    }

    /**
     * Starts a child JVM running {@code main} on this test's class path, with {@code tmpDir} as its temporary
     * directory (what it leaves there when killed is the test's to remove), stderr merged into stdout. Surefire may
     * hide the class path behind a manifest-only jar; its own property has the real one.
     */
    public static Process startJava(Path tmpDir, Class<?> main, String... args) throws IOException {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> argv = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-Xmx128m", "-Djava.io.tmpdir=" + tmpDir, "-cp", classPath, main.getName()));
        argv.addAll(List.of(args));
        return new ProcessBuilder(argv).redirectErrorStream(true).start();
    }

    /** Waits for a line of the child's output that contains {@code text}; fails with what it printed otherwise. */
    public static void awaitLine(Process child, String text, Duration max) throws Exception {
        StringBuilder seen = new StringBuilder();
        Thread reader = new Thread(() -> {
            try {
                var in = new java.io.BufferedReader(new java.io.InputStreamReader(child.getInputStream(),
                        StandardCharsets.UTF_8));
                String line;
                while ((line = in.readLine()) != null) {
                    synchronized (seen) {
                        seen.append(line).append('\n');
                    }
                }
            } catch (IOException ignored) {
                // The child is gone.
            }
        }, "child-output");
        reader.setDaemon(true);
        reader.start();
        long deadline = System.nanoTime() + max.toNanos();
        while (System.nanoTime() < deadline) {
            synchronized (seen) {
                if (seen.toString().contains(text)) {
                    return;
                }
            }
            if (!child.isAlive() && !reader.isAlive()) {
                break;
            }
            TimeUnit.MILLISECONDS.sleep(25);
        }
        synchronized (seen) {
            throw new AssertionError("the child JVM did not print '" + text + "'; it printed:\n" + seen);
        }
    }
}
