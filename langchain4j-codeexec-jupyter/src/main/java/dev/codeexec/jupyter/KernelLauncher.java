package dev.codeexec.jupyter;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.spi.PreparedRun;

/**
 * How an engine with a boundary (a sandbox, a container) starts a program inside it: the engine's own run planning
 * ({@code AbstractEngine.prepare}), so a kernel started through it gets exactly what a run gets: the same mounts, user,
 * limits, network policy and environment policy. {@link BoundaryKernels} starts each workspace's kernel through it.
 */
@FunctionalInterface
public interface KernelLauncher {

    /**
     * Plans {@code spec} in {@code ws} as the engine plans a run. The caller starts the result's channel itself and
     * calls {@link PreparedRun#release()} exactly once, after the program is gone.
     */
    PreparedRun prepare(Workspace ws, RunProgramSpec spec);
}
