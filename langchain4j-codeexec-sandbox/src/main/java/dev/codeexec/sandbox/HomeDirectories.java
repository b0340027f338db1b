package dev.codeexec.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Finds the home directories {@code ~/} rules apply to, and caches them until {@code /etc/passwd} or {@code /home}
 * changes: the list is needed for every run, while the scan reads the password file and lists {@code /home}.
 * Separate from {@link SandboxLayout} because it reads the host's accounts, not the run's rules.
 */
final class HomeDirectories {

    private HomeDirectories() {
    }

    /**
     * Home directories for {@code ~/} rules: {@code /root}, every directory under {@code /home}, and the home of every
     * {@code /etc/passwd} entry that exists (system accounts whose home is {@code /} or a system directory are
     * skipped).
     */
    static List<Path> find() {
        // Recomputed whenever /etc/passwd or /home changes (their modification times), so a new user's home is
        // covered by the next run; otherwise reused, since this runs for every run.
        long stamp = Path.of("/etc/passwd").toFile().lastModified() * 31 + Path.of("/home").toFile().lastModified();
        HomeCache c = homeCache;
        if (c != null && c.stamp == stamp) {
            return c.homes;
        }
        List<Path> homes = scanHomeDirectories();
        homeCache = new HomeCache(stamp, homes);
        return homes;
    }

    private record HomeCache(long stamp, List<Path> homes) {
    }

    private static volatile HomeCache homeCache;

    private static List<Path> scanHomeDirectories() {
        Set<Path> homes = new LinkedHashSet<>();
        homes.add(Path.of("/root"));
        try (Stream<Path> s = Files.list(Path.of("/home"))) {
            s.filter(Files::isDirectory).forEach(homes::add);
        } catch (IOException | RuntimeException ignored) {
            // No /home.
        }
        try {
            for (String line : Files.readAllLines(Path.of("/etc/passwd"))) {
                String[] f = line.split(":");
                if (f.length >= 6 && f[5].startsWith("/") && f[5].length() > 1) {
                    Path h = Path.of(f[5]);
                    if (!SYSTEM_DIRS.contains(f[5]) && h.toFile().isDirectory()) {
                        homes.add(h);
                    }
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // No readable passwd.
        }
        return List.copyOf(homes);
    }

    private static final Set<String> SYSTEM_DIRS = Set.of("/bin", "/sbin", "/usr/bin", "/usr/sbin", "/dev", "/proc",
            "/sys", "/var", "/usr", "/etc", "/run", "/tmp", "/nonexistent", "/var/empty");
}
