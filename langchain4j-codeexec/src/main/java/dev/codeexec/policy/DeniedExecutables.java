package dev.codeexec.policy;

import dev.codeexec.engine.InvalidSpecException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.stream.Stream;

/** The search behind {@link CommandPolicy#deniedExecutables(String)}; see there. */
final class DeniedExecutables {

    private DeniedExecutables() {
    }

    /**
     * @param path       the run's {@code PATH}
     * @param denied     the deny list as configured (absolute entries are files too)
     * @param noDenyList true when the deny list is empty
     * @param isDenied   whether a name is denied, as the policy matches it
     */
    static Set<Path> find(String path, Set<String> denied, boolean noDenyList, Predicate<String> isDenied) {
        if (path == null || path.isBlank()) {
            throw new InvalidSpecException("path must not be null or blank");
        }
        Set<Path> found = new TreeSet<>();
        if (noDenyList) {
            return Collections.unmodifiableSet(found);
        }
        List<Path> dirs = new ArrayList<>();
        for (String entry : path.split(":", -1)) {
            if (entry.startsWith("/")) {
                dirs.add(Path.of(entry));
            }
        }
        List<Path> entries = new ArrayList<>();
        for (Path dir : dirs) {
            try (Stream<Path> list = Files.list(dir)) {
                list.forEach(entries::add);
            } catch (IOException | RuntimeException e) {
                // Not a readable directory: nothing on it can be run from this PATH entry either.
            }
        }
        for (Path entry : entries) {
            if (isDenied.test(entry.getFileName().toString())) {
                addRealFile(found, entry);
            }
        }
        for (String d : denied) {
            if (d.startsWith("/")) {
                addRealFile(found, Path.of(d));
            }
        }
        Set<Object> keys = new HashSet<>();
        for (Path p : found) {
            Object key = fileKey(p);
            if (key != null) {
                keys.add(key);
            }
        }
        if (!keys.isEmpty()) {
            for (Path entry : entries) {
                Object key = fileKey(entry);
                if (key != null && keys.contains(key)) {
                    addRealFile(found, entry);
                }
            }
        }
        return Collections.unmodifiableSet(found);
    }

    private static void addRealFile(Set<Path> found, Path p) {
        try {
            Path real = p.toRealPath();
            if (Files.isRegularFile(real)) {
                found.add(real);
            }
        } catch (IOException | RuntimeException e) {
            // A dangling link or an unreadable entry: there is no file to hide.
        }
    }

    private static Object fileKey(Path p) {
        try {
            BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
            return a.isRegularFile() ? a.fileKey() : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

}
