package dev.codeexec.workspace;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.FileListing;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.ListOptions;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the run history of workspaces bounded: every run gets its own {@code runs/run_<time>_<n>} folder
 * ({@link WorkspaceLayout#newRunDir()}), and without a bound they would pile up, one per run, for as long as a
 * workspace lives. After runs of a workspace, the oldest run folders beyond the newest {@code keep} are deleted,
 * through the engine's own file system, so every backend follows the same rule.
 *
 * <p>Never deleted: the folder of a run that is still going, or of a session that is still open (engines report them
 * with {@link #started} and {@link #finished}), and anything under {@code runs/} that is not a run folder (the
 * scripts the tools keep there, files a program put there). The look at {@code runs/} is made every
 * {@code max(1, keep / 10)} runs of a workspace, so a workspace holds at most about {@code keep + keep / 10} run
 * folders plus those in use, and a run pays for that look a tenth of the time. The folders are ordered by the time
 * and number in their names, the newest last.
 *
 * <p>One instance per engine; thread-safe. Internal: engines use it through {@code AbstractEngine}.
 */
public final class RunHistory {

    /** {@value}: run folders each workspace keeps unless configured otherwise. */
    public static final int DEFAULT_KEEP = 100;

    /** {@value}: most entries of {@code runs/} one look reads (a larger backlog is worked off over several looks). */
    static final int MAX_LOOKED_AT = 10_000;

    /** Workspaces whose run count is remembered; a forgotten one is simply looked at on its next run. */
    private static final int MAX_REMEMBERED = 4096;

    private static final Pattern RUN_FOLDER = Pattern.compile("run_(\\d{8}T\\d{6}\\.\\d{3})_(\\d+)");
    private static final Comparator<String> OLDEST_FIRST = Comparator
            .comparing((String n) -> group(n, 1)).thenComparingLong(n -> Long.parseLong(group(n, 2)));
    private static final Logger LOG = LoggerFactory.getLogger(RunHistory.class);

    private final int keep;
    private final int every;
    /** Names of run folders in use (unique in the JVM: their numbers come from one counter), with a use count. */
    private final Map<String, Integer> inUse = new ConcurrentHashMap<>();
    /** Per workspace id: runs since its last look. Least recently used first; guarded by itself. */
    private final Map<String, Integer> runsSinceLook = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
            return size() > MAX_REMEMBERED;
        }
    };

    /**
     * @param keep run folders each workspace keeps; 0 deletes a run's folder once the run is over
     * @throws InvalidSpecException when {@code keep} is negative
     */
    public RunHistory(int keep) {
        if (keep < 0) {
            throw new InvalidSpecException("runHistory (" + keep + ") must not be negative");
        }
        this.keep = keep;
        this.every = Math.max(1, keep / 10);
    }

    /** How many run folders each workspace keeps. */
    public int keep() {
        return keep;
    }

    /**
     * The name of the run folder a run's {@code RUN_DIR} value points to ({@code run_<time>_<n>}), or null when it is
     * none.
     */
    public static String folderName(String runDirValue) {
        if (runDirValue == null) {
            return null;
        }
        String name = runDirValue.substring(runDirValue.lastIndexOf('/') + 1);
        return RUN_FOLDER.matcher(name).matches() ? name : null;
    }

    /** A run or session uses its folder from now on ({@code name} from {@link #folderName}; null is ignored). */
    public void started(String name) {
        if (name != null) {
            inUse.merge(name, 1, Integer::sum);
        }
    }

    /** A run or session no longer uses its folder. */
    public void finished(String name) {
        if (name != null) {
            inUse.computeIfPresent(name, (k, n) -> n > 1 ? n - 1 : null);
        }
    }

    /**
     * Counts a run of {@code ws} and, every {@code max(1, keep / 10)} runs, deletes its oldest run folders beyond
     * {@code keep}. A failure (the workspace is gone or busy) is logged, never thrown, and tried again at the next
     * run.
     *
     * @return how many folders were deleted
     */
    public int ran(WorkspaceFS fs, Workspace ws) {
        boolean look;
        synchronized (runsSinceLook) {
            Integer n = runsSinceLook.get(ws.id());
            look = n == null || n + 1 >= every;
            runsSinceLook.put(ws.id(), look ? 0 : n + 1);
        }
        if (!look) {
            return 0;
        }
        try {
            return prune(fs, ws);
        } catch (RuntimeException e) {
            synchronized (runsSinceLook) {
                runsSinceLook.remove(ws.id()); // look again at the next run
            }
            if (e instanceof CodeExecException) {
                LOG.debug("could not trim the run history of a workspace: {}", e.getMessage());
            } else {
                // Never fails the run it follows, whatever the file system threw.
                LOG.warn("trimming the run history of a workspace failed", e);
            }
            return 0;
        }
    }

    /** True when {@code runs/} is a directory; one that leads outside the workspace is never trimmed. */
    private static boolean hasRuns(WorkspaceFS fs, Workspace ws) {
        try {
            return fs.stat(ws, WorkspaceLayout.RUNS).filter(FileInfo::directory).isPresent();
        } catch (PathEscapeException e) {
            return false;
        }
    }

    /** Deletes the oldest run folders of {@code ws} beyond {@code keep}, except those in use; returns how many. */
    public int prune(WorkspaceFS fs, Workspace ws) {
        if (!hasRuns(fs, ws)) {
            return 0; // no runs/ (yet): nothing to trim
        }
        FileListing l;
        try {
            l = fs.list(ws, WorkspaceLayout.RUNS, ListOptions.maxEntries(MAX_LOOKED_AT).withMaxDepth(1));
        } catch (InvalidSpecException e) {
            return 0; // removed since the stat: nothing to trim
        }
        List<String> folders = new ArrayList<>();
        for (FileInfo f : l.entries()) {
            String name = f.path().substring(f.path().lastIndexOf('/') + 1);
            if (f.directory() && RUN_FOLDER.matcher(name).matches()) {
                folders.add(name);
            }
        }
        if (folders.size() <= keep) {
            return 0;
        }
        // Newest first. Even when the listing was cut, a folder with at least `keep` newer ones seen may go.
        folders.sort(OLDEST_FIRST.reversed());
        Set<String> busy = Set.copyOf(inUse.keySet());
        int deleted = 0;
        for (String name : folders.subList(keep, folders.size())) {
            if (!busy.contains(name)) {
                fs.delete(ws, WorkspaceLayout.RUNS + "/" + name);
                deleted++;
            }
        }
        return deleted;
    }

    private static String group(String name, int g) {
        Matcher m = RUN_FOLDER.matcher(name);
        return m.matches() ? m.group(g) : "0";
    }
}
