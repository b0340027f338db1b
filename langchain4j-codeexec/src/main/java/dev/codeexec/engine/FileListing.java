package dev.codeexec.engine;

import java.util.List;

/**
 * A bounded listing ({@link WorkspaceFS#list(Workspace, String, ListOptions)}).
 *
 * @param entries  the entries found, sorted by path
 * @param complete false when the listing stopped at a limit (its {@link ListOptions#maxEntries()}, or the engine's
 *                 own bound on the entries one walk visits): more entries exist than are listed, and how many is not
 *                 known; true when these are all the entries the options ask for
 */
public record FileListing(List<FileInfo> entries, boolean complete) {

    public FileListing {
        entries = entries == null ? List.of() : List.copyOf(entries);
    }
}
