package dev.codeexec.jupyter;

import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.spi.InterpreterEngine;

/**
 * Python kernels inside another engine's boundary, one per workspace: what a sandbox or container engine composes to
 * offer stateful python cells. Each kernel is started through the engine's {@link KernelLauncher} (so it gets what a
 * run gets) and spoken to with the Jupyter engine's own client; no network path into or out of the boundary is opened.
 *
 * <p>API skeleton: the implementation is under way.
 */
public final class BoundaryKernels implements AutoCloseable {

    /**
     * @param engineName names threads and log lines
     * @param options    the Python and the time bounds
     * @param launcher   the engine's run planning
     * @param fs         the engine's file system: rich outputs are saved under {@code out/} through it
     */
    public BoundaryKernels(String engineName, KernelOptions options, KernelLauncher launcher, WorkspaceFS fs) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /** The cells of {@code ws}'s kernel, started with the first cell (for {@code InterpreterEngine.cells}). */
    public InterpreterEngine.CellRunner cells(Workspace ws) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /** Stops {@code ws}'s kernel and starts a fresh one. */
    public void restartKernel(Workspace ws) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /** Stops {@code ws}'s kernel, if any (before the workspace is removed). Idempotent. */
    public void stopKernel(Workspace ws) {
        throw new UnsupportedOperationException("not implemented yet");
    }

    /** Stops every kernel. Idempotent. */
    @Override
    public void close() {
    }
}
