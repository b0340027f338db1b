package dev.codeexec.spi;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.SavedOutput;
import dev.codeexec.engine.Workspace;
import dev.codeexec.workspace.EngineFileImport;
import dev.codeexec.workspace.WorkspaceLayout;

/**
 * The saving of one run's long output: both streams spooled on this host while the run goes on
 * ({@link OutputSpool}), then imported into the run's folder as {@code runs/<run>/stdout} and
 * {@code runs/<run>/stderr} through the engine's file system, so every backend saves the same way and the bytes land
 * wherever the workspace lives (a host directory, a container, a remote sandbox), bounded by its quota where it has
 * one. Used once, by one run, on the thread that runs it.
 */
final class OutputSaving {

    /** The name of the saved stdout file in the run's folder. */
    static final String STDOUT_FILE = "stdout";

    /** The name of the saved stderr file in the run's folder. */
    static final String STDERR_FILE = "stderr";

    private final EngineFileImport files;
    final OutputSpool out;
    final OutputSpool err;
    /** The run's folder name under {@code runs/}; null until the run is started. */
    private String folder;

    OutputSaving(EngineFileImport files, long cap) {
        this.files = files;
        this.out = new OutputSpool(STDOUT_FILE, cap);
        this.err = new OutputSpool(STDERR_FILE, cap);
    }

    /** Claims this saving for the run in {@code folder}; false when a run already claimed it (or has no folder). */
    boolean claim(String folder) {
        if (this.folder != null || folder == null) {
            return false;
        }
        this.folder = folder;
        return true;
    }

    /** Finishes the spools and moves them into the run's folder; the result says where each stream went. */
    RunResult save(Workspace ws, RunResult r) {
        if (folder == null) {
            return r;
        }
        return r.withSavedOutput(save(ws, out, STDOUT_FILE), save(ws, err, STDERR_FILE));
    }

    private SavedOutput save(Workspace ws, OutputSpool spool, String name) {
        spool.finish();
        if (spool.total() == 0) {
            return null;
        }
        if (spool.file() == null) {
            return new SavedOutput(null, 0, spool.total(), spool.problem());
        }
        String dest = WorkspaceLayout.RUNS + "/" + folder + "/" + name;
        try {
            files.importEngineFile(ws, spool.file(), dest);
        } catch (CodeExecException e) {
            // Messages of the library's own exceptions are written for the model (a full workspace says so).
            return new SavedOutput(null, 0, spool.total(), "it could not be saved in the workspace: "
                    + e.getMessage());
        } catch (RuntimeException e) {
            return new SavedOutput(null, 0, spool.total(), "it could not be saved in the workspace ("
                    + e.getClass().getSimpleName() + ")");
        }
        return new SavedOutput(dest, spool.written(), spool.total(), spool.problem());
    }

    /** Deletes the spooled files on this host. */
    void discard() {
        out.delete();
        err.delete();
    }
}
