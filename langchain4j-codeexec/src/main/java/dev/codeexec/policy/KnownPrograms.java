package dev.codeexec.policy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * The files on this host that a policy judges by name (the built-in catalogue, its deny list, the commands with an
 * argument validator) as found on a {@code PATH}, and the dynamic loaders those programs use: the reference against
 * which a command's file is identified when its name says nothing (a copy of {@code python3} named {@code work/calc},
 * a hard link to {@code curl}, a copy of the loader).
 *
 * <p>A file is the same program as a known one when it is the same file after links, when it is an ELF file with the
 * same GNU build id (a copy, also with bytes appended), or when it has the same size and the same bytes. A rebuilt or
 * patched binary is not recognised: that is what an allow list (and, where the backend offers it, kernel enforcement)
 * is for.
 *
 * <p>Immutable once built; {@link #current} rebuilds an index when a {@code PATH} directory changed.
 */
final class KnownPrograms {

    /** One known file and the names under which the policy judges it. */
    private record Known(Path file, long size, Set<String> names) {
    }

    private final Map<Path, Known> byFile;
    private final Map<Long, List<Known>> bySize;
    private final Map<String, Known> byBuildId;
    /** The directories scanned and their modification times, to notice a change. */
    private final Map<Path, FileTime> stamps;

    private KnownPrograms(Map<Path, Known> byFile, Map<String, Known> byBuildId, Map<Path, FileTime> stamps) {
        this.byFile = byFile;
        this.byBuildId = byBuildId;
        this.stamps = stamps;
        Map<Long, List<Known>> sizes = new HashMap<>();
        for (Known k : byFile.values()) {
            sizes.computeIfAbsent(k.size(), s -> new ArrayList<>()).add(k);
        }
        this.bySize = sizes;
    }

    /** {@code cached} when no directory of {@code path} changed since it was built, else a new index. */
    static KnownPrograms current(KnownPrograms cached, String path, Predicate<String> judged) {
        if (cached != null && !cached.stale()) {
            return cached;
        }
        return scan(path, judged);
    }

    private boolean stale() {
        for (Map.Entry<Path, FileTime> e : stamps.entrySet()) {
            if (!Objects.equals(e.getValue(), mtime(e.getKey()))) {
                return true;
            }
        }
        return false;
    }

    /** Scans every absolute entry of {@code path} for names {@code judged} accepts, and their loaders. */
    static KnownPrograms scan(String path, Predicate<String> judged) {
        Map<Path, FileTime> stamps = new LinkedHashMap<>();
        Map<Path, Set<String>> names = new LinkedHashMap<>();
        for (String entry : path.split(":", -1)) {
            if (!entry.startsWith("/")) {
                continue;
            }
            Path dir = Path.of(entry);
            if (stamps.containsKey(dir)) {
                continue;
            }
            stamps.put(dir, mtime(dir));
            try (Stream<Path> list = Files.list(dir)) {
                list.forEach(p -> {
                    String name = p.getFileName().toString();
                    if (judged.test(name)) {
                        Path real = realFile(p);
                        if (real != null) {
                            names.computeIfAbsent(real, r -> new LinkedHashSet<>()).add(name);
                        }
                    }
                });
            } catch (IOException | RuntimeException e) {
                // not a readable directory: nothing runs from it
            }
        }
        Map<Path, Known> byFile = new LinkedHashMap<>();
        Map<String, Known> byBuildId = new HashMap<>();
        Set<Path> loaders = new LinkedHashSet<>();
        for (Map.Entry<Path, Set<String>> e : names.entrySet()) {
            Known k = add(byFile, byBuildId, e.getKey(), e.getValue());
            ElfFile elf = k == null ? null : ElfFile.read(k.file());
            if (elf != null && elf.interpreter() != null) {
                Path loader = realFile(Path.of(elf.interpreter()));
                if (loader != null) {
                    loaders.add(loader);
                }
            }
        }
        for (Path loader : loaders) {
            if (!byFile.containsKey(loader)) {
                add(byFile, byBuildId, loader, Set.of(loader.getFileName().toString()));
            }
        }
        return new KnownPrograms(Map.copyOf(byFile), Map.copyOf(byBuildId), Map.copyOf(stamps));
    }

    private static Known add(Map<Path, Known> byFile, Map<String, Known> byBuildId, Path real, Set<String> names) {
        long size;
        try {
            size = Files.size(real);
        } catch (IOException | RuntimeException e) {
            return null;
        }
        Known k = new Known(real, size, Set.copyOf(names));
        byFile.put(real, k);
        ElfFile elf = ElfFile.read(real);
        if (elf != null && elf.buildId() != null) {
            byBuildId.putIfAbsent(elf.buildId(), k);
        }
        return k;
    }

    /**
     * The names under which the policy judges the program {@code real} is (a real path of a regular file), or an
     * empty set when it is none of the known programs.
     */
    Set<String> identify(Path real) {
        Known same = byFile.get(real);
        if (same != null) {
            return same.names();
        }
        ElfFile elf = ElfFile.read(real);
        if (elf != null && elf.buildId() != null) {
            Known k = byBuildId.get(elf.buildId());
            if (k != null) {
                return k.names();
            }
        }
        long size;
        try {
            size = Files.size(real);
        } catch (IOException | RuntimeException e) {
            return Set.of();
        }
        Set<String> out = new LinkedHashSet<>();
        for (Known k : bySize.getOrDefault(size, List.of())) {
            try {
                if (Files.mismatch(real, k.file()) == -1) {
                    out.addAll(k.names());
                }
            } catch (IOException | RuntimeException e) {
                // unreadable: not this one
            }
        }
        return out;
    }

    /** The number of known files, for tests and diagnostics. */
    int size() {
        return byFile.size();
    }

    private static Path realFile(Path p) {
        try {
            Path real = p.toRealPath();
            return Files.readAttributes(real, BasicFileAttributes.class).isRegularFile() ? real : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static FileTime mtime(Path dir) {
        try {
            return Files.getLastModifiedTime(dir);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
