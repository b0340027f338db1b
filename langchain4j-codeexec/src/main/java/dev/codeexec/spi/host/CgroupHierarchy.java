package dev.codeexec.spi.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Where this JVM's control groups live: its own directory of each hierarchy, read from {@code /proc/self/mountinfo}
 * and {@code /proc/self/cgroup}, and the clean-up of engine directories that JVMs now gone left behind. The discovery
 * half of {@link Cgroups}.
 */
final class CgroupHierarchy {

    private CgroupHierarchy() {
    }

    /** Engine directories are named {@code codeexec-<JVM pid>-<n>}. */
    private static final Pattern ENGINE_DIR = Pattern.compile("codeexec-(\\d+)-\\d+");

    static boolean tryCreate(Path dir) {
        removeStale(dir.getParent());
        try {
            Files.createDirectories(dir);
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Removes the engine directories of JVMs that are gone (killed before they could close their engines): their
     * runs died with them (the parent-death signal), so what is left are empty groups. A group that still holds a
     * process (its pid was reused by a live JVM, or a run outlived its JVM on a host without a parent-death signal)
     * is left alone.
     */
    static void removeStale(Path parent) {
        if (parent == null || !Files.isDirectory(parent)) {
            return;
        }
        try (var children = Files.list(parent)) {
            for (Path d : children.toList()) {
                var m = ENGINE_DIR.matcher(d.getFileName().toString());
                if (m.matches() && Files.isDirectory(d) && ProcessHandle.of(Long.parseLong(m.group(1))).isEmpty()) {
                    try (var runs = Files.list(d)) {
                        for (Path r : runs.filter(Files::isDirectory).toList()) {
                            Files.deleteIfExists(r);
                        }
                        Files.deleteIfExists(d);
                    } catch (IOException | RuntimeException busy) {
                        // Not empty: left alone.
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // Not listable: nothing to clean.
        }
    }

    /** The JVM's own directory in the v1 hierarchy that carries {@code controller}. */
    static Optional<Path> v1Dir(String controller, List<String> mountinfo, List<String> self) {
        String ownPath = null;
        for (String line : self) {
            String[] f = line.split(":", 3);
            if (f.length == 3 && List.of(f[1].split(",")).contains(controller)) {
                ownPath = f[2];
            }
        }
        if (ownPath == null) {
            return Optional.empty();
        }
        for (String line : mountinfo) {
            int dash = line.indexOf(" - ");
            if (dash < 0) {
                continue;
            }
            String[] pre = line.substring(0, dash).split(" ");
            String[] post = line.substring(dash + 3).split(" ");
            if (pre.length < 5 || post.length < 3 || !post[0].equals("cgroup")) {
                continue;
            }
            if (!List.of(post[2].split(",")).contains(controller)) {
                continue;
            }
            return Optional.of(join(Path.of(unescape(pre[4])), unescape(pre[3]), ownPath));
        }
        return Optional.empty();
    }

    /** The JVM's own directory in the cgroup2 hierarchy. */
    static Optional<Path> v2Dir(List<String> mountinfo, List<String> self) {
        String ownPath = null;
        for (String line : self) {
            if (line.startsWith("0::")) {
                ownPath = line.substring(3);
            }
        }
        if (ownPath == null) {
            return Optional.empty();
        }
        for (String line : mountinfo) {
            int dash = line.indexOf(" - ");
            if (dash < 0) {
                continue;
            }
            String[] pre = line.substring(0, dash).split(" ");
            String[] post = line.substring(dash + 3).split(" ");
            if (pre.length >= 5 && post.length >= 1 && post[0].equals("cgroup2")) {
                return Optional.of(join(Path.of(unescape(pre[4])), unescape(pre[3]), ownPath));
            }
        }
        return Optional.empty();
    }

    /** mountpoint + (own path relative to the mount's root). */
    private static Path join(Path mountPoint, String mountRoot, String ownPath) {
        String rel = ownPath;
        if (!mountRoot.equals("/") && (ownPath.equals(mountRoot) || ownPath.startsWith(mountRoot + "/"))) {
            rel = ownPath.substring(mountRoot.length());
        }
        rel = rel.replaceFirst("^/+", "");
        return rel.isEmpty() ? mountPoint : mountPoint.resolve(rel);
    }

    private static String unescape(String s) {
        return s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\");
    }
}
