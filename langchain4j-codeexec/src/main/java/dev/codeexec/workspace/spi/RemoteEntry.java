package dev.codeexec.workspace.spi;

import java.time.Instant;
import java.util.Objects;

/**
 * An entry of a remote workspace as seen without following a link at it: what
 * {@link RemoteWorkspaceFiles#lstat} reports.
 *
 * @param type       what the entry itself is ({@link EntryType#LINK} for a link)
 * @param size       the size in bytes of a {@link EntryType#FILE}
 * @param mode       Unix permission bits, 0 when unknown
 * @param mtime      the modification time, {@link Instant#EPOCH} when unknown
 * @param linkTarget for a link: the absolute remote path it resolves to, with every link on the way evaluated
 *                   by the remote side; null for a link that does not resolve, and for other entries
 * @param targetType for a link: the type of what it resolves to when the remote side reports it (saves a look),
 *                   null when unknown; null for other entries
 */
public record RemoteEntry(EntryType type, long size, int mode, Instant mtime, String linkTarget,
                          EntryType targetType) {

    public RemoteEntry {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(mtime, "mtime");
    }

    /** An entry that is not a link. */
    public static RemoteEntry of(EntryType type, long size, int mode, Instant mtime) {
        return new RemoteEntry(type, size, mode, mtime, null, null);
    }
}
