package dev.codeexec.spi;

import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.CodeLanguage;
import dev.codeexec.engine.BlockPrograms;
import dev.codeexec.engine.ResourceLimits;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import java.time.Duration;

/**
 * The base of engines with a stateful interpreter (a Jupyter kernel, E2B's code interpreter): python blocks run as
 * cells of the workspace's interpreter, so variables and imports persist from one block to the next; blocks in other
 * languages run as scripts, as on every engine. Everything else is {@link AbstractEngine}'s.
 *
 * <p>{@link #executeCode(Workspace, CodeExecutionInput)} is a template method: it checks that the engine is open and
 * that every block's language is known (nothing runs otherwise), asks the backend for the workspace's
 * {@link CellRunner} ({@link #cells}, which checks that the workspace is still there), then runs the blocks in order
 * through the core's one block loop ({@link BlockPrograms}): the first block that fails or times out ends it, each
 * block's output starts on a line of its own, and the files are everything under {@code out/} afterwards. A cell
 * gets the input's timeout (by default {@value RunProgramSpec#DEFAULT_TIMEOUT_SECONDS} s) and the engine's output cap.
 *
 * <p>A backend supplies, besides what {@link AbstractEngine} asks for, only {@link #cells} and
 * {@link #interpreterName()}; one that can be built without an interpreter overrides {@link #hasInterpreter()}.
 */
public abstract class InterpreterEngine extends AbstractEngine {

    /** One cell of the interpreter: runs python code and says what it left. */
    @FunctionalInterface
    public interface CellRunner {

        /**
         * Runs {@code code} as one cell.
         *
         * @param timeout        how long the cell may run before it is interrupted
         * @param maxOutputBytes the cap of the cell's text (a {@link BoundedOutput}'s)
         * @return the cell's text, its exit code (0, 1 when it raised, -1 when it timed out), whether it timed out and
         *         whether its text was cut
         */
        BlockPrograms.Outcome run(String code, Duration timeout, int maxOutputBytes);
    }

    /** The same arguments as {@link AbstractEngine}'s constructor. */
    protected InterpreterEngine(String displayName, EngineBuilder<?> settings, ShellEnvironmentPolicy defaultPolicy,
                                ResourceLimits defaultLimits) {
        super(displayName, settings, defaultPolicy, defaultLimits);
    }

    /**
     * The cells of the workspace's interpreter. Called once per {@link #executeCode(Workspace, CodeExecutionInput)},
     * after the blocks' languages were checked and before any block runs; it checks that the workspace is still
     * there. The interpreter itself may start with the first cell.
     */
    protected abstract CellRunner cells(Workspace ws);

    /** Where python blocks run, in the refusal of an unknown language: {@code a Jupyter kernel}, say. */
    protected abstract String interpreterName();

    /**
     * False when this engine was built without an interpreter: every block then runs as a script, exactly as on an
     * engine without one ({@link AbstractEngine#executeCode(Workspace, CodeExecutionInput)}, with its warm python
     * path). True by default.
     */
    protected boolean hasInterpreter() {
        return true;
    }

    /**
     * Runs the blocks in order, stopping at the first that fails: python blocks ({@code python}, {@code py},
     * {@code python3}) as cells of the workspace's interpreter, others as scripts. The output files are everything
     * under {@code out/}, the cells' rich outputs included. The timeout applies to each block.
     *
     * @throws dev.codeexec.engine.InvalidSpecException for a block in a language this engine does not run (nothing
     *                                                  runs then)
     */
    @Override
    public final CodeExecutionResult executeCode(Workspace ws, CodeExecutionInput input) {
        requireOpen();
        if (!hasInterpreter()) {
            return super.executeCode(ws, input); // as on any engine, the warm python path included
        }
        BlockPrograms.requireLanguages(input, "python (python, py, python3) in " + interpreterName()
                + " and bash (bash, sh, shell) as scripts");
        CellRunner runner = cells(ws);
        Duration timeout = input.timeout() != null ? input.timeout()
                : Duration.ofSeconds(RunProgramSpec.DEFAULT_TIMEOUT_SECONDS);
        int cap = outputCap(RunProgramSpec.builder("python3").build());
        return BlockPrograms.execute(this, ws, input, new BlockPrograms.Cells() {
            @Override
            public boolean runs(CodeLanguage language) {
                return language == CodeLanguage.PYTHON;
            }

            @Override
            public BlockPrograms.Outcome run(String code) {
                return runner.run(code, timeout, cap);
            }
        });
    }
}
