package dev.codeexec.engine;

import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import java.util.Optional;

/**
 * A backend that runs programs in workspaces. It composes three roles, {@link #manager()} (lifecycle), {@link #fs()}
 * (files in and out) and {@link #runner()} (runs), and declares what it really does in {@link #describe()}.
 *
 * <p>An engine owns what it creates: {@link #close()} removes its workspaces and stops its processes, containers or
 * kernels. Engines are thread-safe; runs in different workspaces may proceed in parallel.
 *
 * <p>An engine configured with an artifact store also implements {@link dev.codeexec.artifact.ArtifactSource}.
 */
public interface Engine extends AutoCloseable {

    /** A short, stable name for messages and logs, for example {@code local} or {@code sandbox}. */
    String name();

    WorkspaceManager manager();

    WorkspaceFS fs();

    ProgramRunner runner();

    /** What this engine enforces and offers. Never over-claims. */
    Capabilities describe();

    /** Long-running sessions with stdin, when {@link Capabilities#interactive()}. */
    default Optional<InteractiveProgramRunner> interactive() {
        return Optional.empty();
    }

    /**
     * Runs code blocks in a workspace. The default writes each block to {@code runs/code_<n>.<ext>} and runs it from {@code work/} with
     * the language's interpreter ({@link dev.codeexec.CodeLanguage}), with a clean environment where the engine
     * supports one; engines with a stateful interpreter override it.
     */
    default CodeExecutionResult executeCode(Workspace ws, CodeExecutionInput input) {
        return BlockPrograms.execute(this, ws, input);
    }

    /** Removes every workspace and stops every process this engine created. Idempotent. */
    @Override
    void close();
}
