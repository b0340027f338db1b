package dev.codeexec.engine;

import java.time.Instant;
import java.util.List;

/**
 * What some folders of a workspace held when a run ended, as listed by the run's own process after the program and
 * everything it started had ended ({@link ListingProgramRunner}); a {@link FileChangeTracker} compares it with its last
 * look instead of looking again ({@link FileChangeTracker#changes(FolderSnapshot)}).
 *
 * <p>Entries are raw: every directory, regular file, symbolic link (not followed) and other entry found below the
 * folders, the folders themselves included, with workspace-relative paths. The tracker applies its own listing rules
 * (hidden names, access rules, links) to them. Trust: the listing comes from inside the workspace, after the program
 * ended; a program able to imitate it can at most name paths below the folders, which every consumer of a change
 * report checks again like any workspace path.
 *
 * @param folders  the workspace-relative folders that were listed, as asked
 * @param entries  what was found, in no particular order
 * @param complete false when the folders held more entries than asked for: the entries are a part only
 */
public record FolderSnapshot(List<String> folders, List<Entry> entries, boolean complete) {

    public FolderSnapshot {
        folders = List.copyOf(folders);
        entries = List.copyOf(entries);
    }

    /** The kinds of entries a snapshot tells apart. */
    public enum Kind { FILE, DIRECTORY, LINK, OTHER }

    /**
     * One entry.
     *
     * @param path      workspace-relative, with {@code /} separators, normalised (no {@code .} or {@code ..})
     * @param kind      what it is, links not followed
     * @param sizeBytes its size (meaningful for a file)
     * @param modified  its modification time, with the precision of the engine's own listings of the same files
     */
    public record Entry(String path, Kind kind, long sizeBytes, Instant modified) {
    }
}
