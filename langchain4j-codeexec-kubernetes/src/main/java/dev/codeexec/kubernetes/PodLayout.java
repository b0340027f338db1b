package dev.codeexec.kubernetes;

/**
 * Where things live in a workspace pod. One container, {@value #CONTAINER}; one {@code emptyDir} volume at
 * {@value #VOLUME} holding the workspace ({@value #ROOT}) and the runs' control folders ({@value #CONTROL}); another
 * at {@value #TMP}. Everything else is the image's, read-only. The same paths are used by every class that builds a
 * pod, runs a program in it or moves files, so they are defined once, here.
 */
final class PodLayout {

    private PodLayout() {
    }

    /** The one container of a workspace pod. */
    static final String CONTAINER = "workspace";

    /** The writable volume: an {@code emptyDir} with the workspace's size limit. */
    static final String VOLUME = "/codeexec";

    /** The workspace's root inside the pod. */
    static final String ROOT = VOLUME + "/workspace";

    /** The runs' control folders (their stdin FIFO, their program's pid), outside the workspace. */
    static final String CONTROL = VOLUME + "/control";

    /** A small {@code emptyDir} for {@code /tmp}, so the root file system can stay read-only. */
    static final String TMP = "/tmp";

    /** The user and group every process of the pod runs as, unless the builder chooses others. */
    static final long DEFAULT_UID = 10001;
}
