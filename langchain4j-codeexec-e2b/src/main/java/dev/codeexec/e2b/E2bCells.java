package dev.codeexec.e2b;

import dev.codeexec.engine.BlockPrograms;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.spi.InterpreterEngine.CellRunner;
import dev.codeexec.workspace.WorkspaceLayout;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Python cells of {@link E2bEngine} in the code interpreter of the workspace's sandbox: one interpreter context per
 * workspace (created with the first cell, in its {@code work/}), state kept between cells, rich outputs saved as
 * {@code out/display_<n>.<ext>}. A cell past its timeout is interrupted (the connection is closed, and the interpreter
 * interrupts the kernel); a kernel that does not answer within {@link #INTERRUPT_PROBE} afterwards is restarted. A
 * context the interpreter lost is created again, once, and the cell run in it, with a note.
 */
final class E2bCells {

    /**
     * How long the kernel may take to answer after a cell was interrupted at its timeout before it is restarted: 20
     * seconds (the interrupted cell ends first, then the probe).
     */
    static final Duration INTERRUPT_PROBE = Duration.ofSeconds(20);

    private final E2bWorkspaces workspaces;
    private final WorkspaceFS fs;
    private final E2bRuns runs;

    E2bCells(E2bWorkspaces workspaces, WorkspaceFS fs, E2bRuns runs) {
        this.workspaces = workspaces;
        this.fs = fs;
        this.runs = runs;
    }

    /** The cells of the workspace's interpreter context. */
    CellRunner of(Workspace ws) {
        E2bWorkspaces.Slot slot = workspaces.slot(ws);
        return (code, timeout, cap) -> cell(ws, slot, code, timeout, cap);
    }

    /** Restarts the workspace's code interpreter context, if it has one. */
    void restart(Workspace ws) {
        E2bWorkspaces.Slot slot = workspaces.slot(ws);
        String ctx = slot.currentContext();
        if (ctx != null) {
            slot.sandbox.interpreter().restartContext(ctx);
        }
    }

    private BlockPrograms.Outcome cell(Workspace ws, E2bWorkspaces.Slot slot, String code, Duration timeout, int cap) {
        CodeInterpreter ci = slot.sandbox.interpreter();
        Map<String, String> env = runs.environmentFor(slot, RunProgramSpec.builder("python3").build(),
                WorkspaceLayout.newRunDir());
        InterpreterCell cell = new InterpreterCell(cap, displayNames(ws, slot));
        CodeInterpreter.End end;
        try {
            String ctx = slot.context(() -> ci.createContext(slot.root + "/" + WorkspaceLayout.WORK));
            end = ci.execute(code, ctx, env, timeout, cell::accept);
            if (end == CodeInterpreter.End.CONTEXT_LOST) {
                slot.forgetContext();
                cell.note("[the code interpreter had lost this workspace's context; a new one was created: variables "
                        + "and imports of earlier cells are gone]");
                ctx = slot.context(() -> ci.createContext(slot.root + "/" + WorkspaceLayout.WORK));
                end = ci.execute(code, ctx, env, timeout, cell::accept);
            }
            if (end == CodeInterpreter.End.TIMED_OUT) {
                cell.note("[timed out after " + timeout.toSeconds() + " s: the cell was interrupted]");
                if (ci.execute("pass", ctx, Map.of(), INTERRUPT_PROBE, i -> { }) != CodeInterpreter.End.COMPLETED) {
                    ci.restartContext(ctx);
                    cell.note("[the kernel did not stop; it was restarted: variables and imports are gone]");
                }
            }
        } catch (RuntimeException e) {
            throw slot.sandbox.failure(e, "execute a python cell");
        }
        List<PutFile> files = cell.files();
        if (!files.isEmpty()) {
            try {
                fs.putFiles(ws, files);
            } catch (RuntimeException e) {
                cell.note("[the displays could not be saved: " + e.getMessage() + "]");
            }
        }
        if (cell.dropped() > 0) {
            cell.note("[" + cell.dropped() + " more displays were not saved: a cell saves at most "
                    + InterpreterCell.MAX_FILES + "]");
        }
        boolean timedOut = end == CodeInterpreter.End.TIMED_OUT;
        int exit = timedOut ? -1 : cell.errorName() != null ? 1 : 0;
        return new BlockPrograms.Outcome(cell.text(), exit, timedOut, cell.truncated());
    }

    /** Names for a cell's rich outputs: {@code out/display_<n>.<ext>}, never over a file in {@code out/}. */
    private InterpreterCell.Names displayNames(Workspace ws, E2bWorkspaces.Slot slot) {
        Set<String> existing = new HashSet<>();
        boolean[] listed = {false};
        return ext -> {
            if (!listed[0]) {
                listed[0] = true;
                try {
                    for (FileInfo f : fs.list(ws, WorkspaceLayout.OUT)) {
                        existing.add(f.path());
                    }
                } catch (RuntimeException e) {
                    // No out/ (yet): nothing to avoid.
                }
            }
            String name;
            do {
                name = WorkspaceLayout.OUT + "/display_" + slot.displays.incrementAndGet() + "." + ext;
            } while (!existing.add(name));
            return name;
        };
    }
}
