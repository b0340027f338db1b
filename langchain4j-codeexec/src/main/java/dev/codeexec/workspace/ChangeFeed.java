package dev.codeexec.workspace;

import dev.codeexec.engine.Workspace;
import java.util.List;
import java.util.Map;

/**
 * Tells a {@link WorkspaceChangeTracker} which paths of a workspace changed, so that a look re-reads those instead of
 * walking the whole tree. The core's host-directory file systems have one on Linux ({@link HostChangeFeed}); a
 * backend without one is walked on every look. A notice says where to look; what is there is always read again
 * through the backend's primitives and the listing rules, so a notice for a path outside the folders, for a link out
 * of the workspace or for something that is gone again costs a read and reports nothing wrong. A notice for a file
 * that exists before and after counts as a modification (that is how a same-size rewrite is seen), and a change
 * without a notice is not seen: a feed names every change, or says it lost track.
 */
interface ChangeFeed {

    /**
     * Starts watching folders of a workspace and everything below them, including folders that do not exist yet.
     *
     * @param folders normalised, resolved workspace-relative directories
     * @return the watch, or null when this one cannot be watched (too many directories, a limit of the system): the
     *         tracker walks instead
     */
    Watch watch(Workspace ws, List<String> folders);

    /** One workspace's watch. Used by one tracker, one call at a time. */
    interface Watch extends AutoCloseable {

        /**
         * The paths below the folders that changed since the previous poll (or since the watch started), including
         * every change made before this call began.
         *
         * @return the notices, or null when the watch had to stop (it closed itself): the tracker walks from then on
         */
        Notices poll();

        @Override
        void close();
    }

    /**
     * @param paths     workspace-relative paths that changed, each with true when what is below it may have changed
     *                  too (it was created, deleted or renamed) and false when only the entry itself did (a file
     *                  written, a directory's attributes changed)
     * @param complete  false when the watch lost track of some changes (its queue overflowed, a folder was replaced):
     *                  the tracker reads the folders whole
     * @param deletions true when something was deleted or renamed away
     */
    record Notices(Map<String, Boolean> paths, boolean complete, boolean deletions) {

        static Notices lostTrack() {
            return new Notices(Map.of(), false, true);
        }
    }
}
