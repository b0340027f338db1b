package dev.codeexec.sandbox;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.workspace.FileTrees;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The account files {@link SandboxAccounts} binds into runs ({@code /etc/passwd} and {@code /etc/group} with the
 * sandbox user's line), written once and reused by the next runs of the same workspace instead of being written into
 * each run's private directory.
 *
 * <p><b>Rule of the cache.</b> A file is reused only when the text the run needs is exactly the text it holds: the
 * host file as it is read for this run, plus the line for this run's user, group and home. The host file is read for
 * every run (a small read); only the writing is saved. So a host file that changed between runs (an account added or
 * removed) gives the next run a new file with the new text; nothing derived from it is trusted across runs. A file is
 * never rewritten in place (a run of the same home may have it mounted): new text goes to a new file, and the file it
 * replaces stays until the home is {@linkplain #forget forgotten} (its workspace is cleaned up) or the engine closes.
 *
 * <p>The files live in the engine's private state ({@code state/runs/accounts-*}, {@code 0711}, files {@code 0644}),
 * which no sandbox can see or change; a run binds them read-only.
 *
 * <p>Thread-safe.
 */
final class AccountFiles {

    /** A written file and the text it holds. */
    private record Written(String text, Path file) {
    }

    private final Path dir;
    /** By home and file name; the latest file of each. */
    private final Map<String, Written> latest = new ConcurrentHashMap<>();
    /** Every directory written, by home, so that {@link #forget} removes replaced files too. */
    private final Map<String, List<Path>> dirs = new ConcurrentHashMap<>();

    /** @param dir where the files' directories are created (the engine's private runs directory) */
    AccountFiles(Path dir) {
        this.dir = dir;
    }

    /**
     * A file holding exactly {@code text}, for runs whose home is {@code home}: the one written before when it holds
     * that text and is still there, else a new one.
     *
     * @throws BackendUnavailableException when the file cannot be written
     */
    String file(String home, String name, String text) {
        String key = home + "\0" + name;
        Written w = latest.get(key);
        if (w != null && w.text.equals(text) && Files.isRegularFile(w.file, LinkOption.NOFOLLOW_LINKS)) {
            return w.file.toString();
        }
        synchronized (this) {
            w = latest.get(key);
            if (w != null && w.text.equals(text) && Files.isRegularFile(w.file, LinkOption.NOFOLLOW_LINKS)) {
                return w.file.toString();
            }
            Path d = dir.resolve("accounts-" + UUID.randomUUID());
            Path f = write(d, name, text);
            dirs.computeIfAbsent(home, h -> new ArrayList<>()).add(d);
            latest.put(key, new Written(text, f));
            return f.toString();
        }
    }

    /** Removes the files of every home at or below {@code root} (a workspace that is cleaned up). */
    synchronized void forget(Path root) {
        String r = root.toString();
        latest.keySet().removeIf(k -> LayoutPaths.isAtOrBelow(k.substring(0, k.indexOf('\0')), r));
        dirs.entrySet().removeIf(e -> {
            if (!LayoutPaths.isAtOrBelow(e.getKey(), r)) {
                return false;
            }
            for (Path d : e.getValue()) {
                try {
                    FileTrees.deleteTree(d);
                } catch (RuntimeException ignored) {
                    // Removed with the engine's state at close.
                }
            }
            return true;
        });
    }

    /** Files written so far for {@code home} (for tests). */
    synchronized int written(String home) {
        return dirs.getOrDefault(home, List.of()).size();
    }

    private static Path write(Path d, String name, String text) {
        try {
            Files.createDirectories(d);
            Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwx--x--x"));
            Path f = d.resolve(name);
            Files.writeString(f, text, StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
            return f;
        } catch (IOException | UnsupportedOperationException e) {
            throw new BackendUnavailableException("cannot write the sandbox user's " + name + " entry for the run: "
                    + e.getMessage(), e);
        }
    }
}
