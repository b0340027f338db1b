package dev.codeexec.sandbox;

import dev.codeexec.engine.OutputManifest;
import dev.codeexec.engine.OutputSpec;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The output collection that needs no pause of the workspace's kernel: when every glob lies under {@code out/} and
 * {@code out/} is a real directory with no entry, nothing can be collected, and the manifest is empty. This is the
 * common case after a cell (most cells write no file), and it spares the kernel a freeze and a thaw per cell.
 *
 * <p>Why it is safe with the kernel running: {@code out/} is opened relative to an open handle of the workspace root
 * and without following a link ({@code openat} with {@code O_NOFOLLOW}, through {@link SecureDirectoryStream}), so no
 * process of the workspace can redirect it; only whether the directory has an entry is read, never a name or a
 * content. An empty answer is the one a paused collection would have given at that instant: a file written after it
 * is collected by the next collection, exactly as one written after a paused collection's walk. Anything else (a
 * link, an entry, a directory the host cannot read, a file system without {@code openat}) gives no answer, and the
 * caller pauses the kernel and collects as usual.
 */
final class SettledOutputs {

    private static final String OUT = "out";

    private SettledOutputs() {
    }

    /** The empty manifest when {@code spec} can collect nothing under {@code root} now; empty otherwise. */
    static Optional<OutputManifest> emptyOut(Path root, OutputSpec spec) {
        OutputSpec s = spec == null ? OutputSpec.DEFAULT : spec;
        if (!s.globs().stream().allMatch(SettledOutputs::underOut) || !emptyDirectory(root, OUT)) {
            return Optional.empty();
        }
        return Optional.of(new OutputManifest(List.of(), Set.of()));
    }

    /** A glob that can match nothing outside {@code out/}. */
    static boolean underOut(String glob) {
        return glob.startsWith(OUT + "/") && !glob.contains("..") && !glob.contains("\\") && !glob.contains("//");
    }

    /** True when {@code name} under {@code root} is a directory, not a link, and has no entry. */
    static boolean emptyDirectory(Path root, String name) {
        try (DirectoryStream<Path> r = Files.newDirectoryStream(root)) {
            if (!(r instanceof SecureDirectoryStream<Path> parent)) {
                return false;
            }
            try (DirectoryStream<Path> d = parent.newDirectoryStream(Path.of(name), LinkOption.NOFOLLOW_LINKS)) {
                return !d.iterator().hasNext();
            }
        } catch (IOException | RuntimeException e) {
            return false; // a link, no directory, unreadable: the paused collection answers
        }
    }
}
