package dev.codeexec.sandbox;

import dev.codeexec.engine.BackendUnavailableException;

/**
 * Bubblewrap could not set up a sandbox because the host's mount table changed while it copied it: a mount elsewhere
 * on the host came or went (another workspace's volume, a container's file system) between bubblewrap listing the
 * mounts and remounting them read-only (bubblewrap issue 650). Nothing ran; a new attempt copies the new table.
 */
final class MountTableChangedException extends BackendUnavailableException {

    MountTableChangedException(String message) {
        super(message);
    }
}
