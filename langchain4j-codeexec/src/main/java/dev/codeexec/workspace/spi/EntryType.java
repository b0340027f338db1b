package dev.codeexec.workspace.spi;

/** What a workspace entry is, as seen without following a link at it. */
public enum EntryType {

    /** A regular file: the only type that is read, exported or collected. */
    FILE,

    /** A directory. */
    DIRECTORY,

    /**
     * A symbolic link, reported as itself: {@link WorkspaceFiles#stat} and {@link WorkspaceFiles#walk} never follow
     * it. The core follows one only through {@link WorkspaceFiles#resolve}, which refuses links out of the workspace.
     */
    LINK,

    /** Anything else (a FIFO, a socket, a device): never opened, since opening a FIFO blocks until a writer comes. */
    OTHER
}
