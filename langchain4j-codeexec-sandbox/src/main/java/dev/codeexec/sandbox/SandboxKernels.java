package dev.codeexec.sandbox;

import static dev.codeexec.spi.AbstractEngine.attempt;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.ProgramSession;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceBusyException;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.jupyter.BoundaryKernels;
import dev.codeexec.jupyter.KernelOptions;
import dev.codeexec.spi.InterpreterEngine;
import dev.codeexec.spi.PreparedRun;
import java.util.List;
import java.util.function.BiFunction;

/**
 * The python kernels of a sandbox engine's workspaces, one per workspace, each inside the workspace's sandbox: the
 * jupyter module's {@link BoundaryKernels}, started through the engine's own run planning (so a kernel gets the mounts,
 * user, limits, network and environment policy of a run), and fitted to the engine's one rule that nothing of a
 * workspace runs while the host works on it by name ({@link WorkspaceGates}).
 *
 * <p>A kernel lives between its cells, and so may what a cell left running (a thread, a child process). It is
 * therefore the workspace gate's occupant: its cells are turns of the gate, run alone in the workspace; every other
 * section (a file operation, a run) pauses every process of the kernel's control group first (with the cgroup freezer,
 * {@link GroupFreezer}; by signals, {@link GroupPause}, where the host has none) and resumes them afterwards. A
 * kernel needs that control group: on a host without control groups it is refused.
 *
 * <p>Threads: cells, restarts and stops run in the caller's thread, each a turn of the workspace's gate (so one at a
 * time per workspace, and never while a background session of the workspace is alive); the kernels' own threads are
 * {@link BoundaryKernels}'s. The only state here is the gate's occupant, set by a kernel's start and cleared by its
 * release.
 */
final class SandboxKernels implements AutoCloseable {

    /** The variable that tells the kernel's relay which transport to use inside the sandbox. */
    static final String TRANSPORT = "CODEEXEC_KERNEL_TRANSPORT";

    private final WorkspaceGates gates;
    /** True when every run has a network namespace of its own (the network restricted, or an egress policy). */
    private final boolean ownNetwork;
    private final BiFunction<Workspace, RunProgramSpec, SandboxRun> plan;
    private final BoundaryKernels kernels;

    /**
     * @param options   the kernel's Python and time bounds
     * @param plan      the engine's run planning (a run's checks and layout, the engine open)
     * @param gates     the engine's workspace gates
     * @param fs        the engine's file system (rich outputs are saved under {@code out/} through it)
     * @param allowList the command allow list the engine enforces in the kernel, or null
     * @param cgroups   whether this host has control groups
     * @param ownNetwork whether every run has a network namespace of its own
     * @throws UnsupportedCapabilityException on a host without control groups, or with a command allow list enforced
     *                                        in the kernel
     */
    SandboxKernels(KernelOptions options, BiFunction<Workspace, RunProgramSpec, SandboxRun> plan, WorkspaceGates gates,
                   WorkspaceFS fs, ExecAllowList allowList, boolean cgroups, boolean ownNetwork) {
        if (!cgroups) {
            throw new UnsupportedCapabilityException("pythonKernel needs control groups on this host: the kernel is "
                    + "paused through them while the engine works on the workspace (see docs/sandbox.md, Python "
                    + "kernel)");
        }
        requireAllowed(options, allowList);
        this.gates = gates;
        this.ownNetwork = ownNetwork;
        this.plan = plan;
        this.kernels = new BoundaryKernels("SandboxEngine", options, this::launch, fs);
    }

    /**
     * Refuses a kernel on an engine that enforces a command allow list in the kernel: the allow list holds at exec
     * time, so the kernel could not start anyway, but this says why at once, when the engine is built. A Python the
     * list forbids cannot run; one it allows cannot read its own standard library (the list's rules let programs read
     * system data and libraries only), and a general interpreter on the list would void it anyway.
     *
     * @throws UnsupportedCapabilityException when {@code allowList} is not null
     */
    static void requireAllowed(KernelOptions options, ExecAllowList allowList) {
        if (allowList == null) {
            return;
        }
        List<String> files = ExecAllowList.resolve(options.python());
        boolean allowed = !files.isEmpty() && allowList.executables().containsAll(files);
        throw new UnsupportedCapabilityException("pythonKernel cannot be combined with enforceAllowList: "
                + (allowed ? "under the command allow list enforced in the kernel, programs read only system data "
                        + "and libraries, and the kernel's Python (" + options.python() + ") cannot read its own "
                        + "standard library; an interpreter on the list would also do in-process what the list "
                        + "forbids"
                        : "the kernel's Python (" + options.python() + ") is not on the command allow list this "
                        + "engine enforces, so no kernel could start")
                + ". Build the engine without pythonKernel (python blocks then run as programs, under the allow "
                + "list), or without enforceAllowList");
    }

    /** The cells of {@code ws}'s kernel: each a turn of the workspace's gate; the kernel starts with the first. */
    InterpreterEngine.CellRunner cells(Workspace ws) {
        return (code, timeout, cap) -> gates.occupantTurn(ws, () -> kernels.cells(ws).run(code, timeout, cap));
    }

    /** Stops {@code ws}'s kernel and starts a fresh one, alone in the workspace. */
    void restart(Workspace ws) {
        gates.occupantTurn(ws, () -> {
            kernels.restartKernel(ws);
            return null;
        });
    }

    /** Stops {@code ws}'s kernel, if any, alone in the workspace (its sessions are gone: the workspace's cleanup). */
    void stop(Workspace ws) {
        gates.occupantTurn(ws, () -> {
            kernels.stopKernel(ws);
            return null;
        });
    }

    /**
     * The engine's workspaces, whose cleanup stops the workspace's kernel before anything is deleted: after the
     * workspace's sessions are closed (a turn waits for none), before its tree goes.
     */
    WorkspaceManager stoppingKernels(WorkspaceManager workspaces) {
        return new WorkspaceManager() {
            @Override
            public Workspace createWorkspace(String execId, WorkspacePolicy policy) {
                return workspaces.createWorkspace(execId, policy);
            }

            @Override
            public void cleanup(Workspace workspace) {
                RuntimeException failure = null;
                for (ProgramSession s : gates.sessions(workspace)) {
                    failure = attempt(failure, s::close);
                }
                failure = attempt(failure, () -> {
                    try {
                        stop(workspace);
                    } catch (WorkspaceBusyException e) {
                        kernels.stopKernel(workspace); // a session started meanwhile: the kernel goes all the same
                    }
                });
                failure = attempt(failure, () -> workspaces.cleanup(workspace));
                if (failure != null) {
                    throw failure;
                }
            }
        };
    }

    /** Stops every kernel. */
    @Override
    public void close() {
        kernels.close();
    }

    /**
     * The kernel's launcher: a run of the workspace, planned as any, that becomes the workspace's occupant until it
     * is released. Called by {@link BoundaryKernels} within a cell, that is within a turn of the gate.
     */
    private PreparedRun launch(Workspace ws, RunProgramSpec spec) {
        // A sandbox with the network restricted refuses Unix sockets (seccomp) and has a network namespace of its
        // own: there the kernel listens on that private loopback, which nothing outside the sandbox can reach.
        SandboxRun run = plan.apply(ws, ownNetwork ? spec.toBuilder().env(TRANSPORT, "tcp").build() : spec);
        if (run.group() == null || run.group().procsFiles().isEmpty()) {
            run.release();
            throw new BackendUnavailableException("a python kernel on the sandbox needs control groups on this host "
                    + "(it is paused through its run's group while the engine works on the workspace), and this run "
                    + "has none; python blocks run as programs on an engine built without pythonKernel");
        }
        GroupFreezer freezer;
        try {
            freezer = GroupFreezer.forRun(run.group().procsFiles());
        } catch (RuntimeException e) {
            run.release();
            throw e;
        }
        // Without a freezer (cgroup v1 without its hierarchy), signals do the same, slower.
        WorkspaceGates.Occupant pause = heartbeatHeld(ws, freezer != null ? freezer
                : GroupPause.ofJoinFile(run.group().procsFiles().get(0)));
        gates.occupy(ws, pause);
        return new KernelRun(run, () -> {
            gates.vacate(ws, pause);
            pause.resume(); // a v2 run group is reused by later runs: never leave it frozen
        }, freezer);
    }

    /**
     * {@code freeze} with the kernel's heartbeat watch held while it is paused: a frozen kernel cannot echo, and a run
     * or file operation that outlasts the heartbeat timeout must not have it declared dead.
     */
    private WorkspaceGates.Occupant heartbeatHeld(Workspace ws, WorkspaceGates.Occupant freeze) {
        return new WorkspaceGates.Occupant() {
            @Override
            public void pause() {
                kernels.holdHeartbeat(ws, true);
                try {
                    freeze.pause();
                } catch (RuntimeException | Error e) {
                    kernels.holdHeartbeat(ws, false);
                    throw e;
                }
            }

            @Override
            public void resume() {
                try {
                    freeze.resume();
                } finally {
                    kernels.holdHeartbeat(ws, false);
                }
            }
        };
    }

    /** The kernel's run: the planned sandbox run, whose release also ends the kernel's occupancy of the workspace. */
    private static final class KernelRun extends PreparedRun {
        private final SandboxRun run;
        private final Runnable vacate;
        /** The kernel's freezer, removed once its processes are gone; null when signals pause it. */
        private final GroupFreezer freezer;

        KernelRun(SandboxRun run, Runnable vacate, GroupFreezer freezer) {
            super(run.channel(), run.launch());
            this.run = run;
            this.vacate = vacate;
            this.freezer = freezer;
        }

        @Override
        public String runFolder() {
            return run.runFolder();
        }

        @Override
        public RunResult check(RunResult result) {
            return run.check(result);
        }

        @Override
        public void release() {
            try {
                vacate.run();
            } finally {
                try {
                    run.release(); // kills what is left of the kernel's processes
                } finally {
                    if (freezer != null) {
                        freezer.close();
                    }
                }
            }
        }
    }
}
