package dev.codeexec.engine;

/** Runs programs in a workspace. */
public interface ProgramRunner {

    /**
     * Runs one program to completion or timeout. On timeout the whole process tree is killed and the call returns
     * promptly with what was captured. Captured output is capped per stream.
     *
     * @throws InvalidSpecException           when the spec is invalid for this workspace (cwd escapes, for example)
     * @throws UnsupportedCapabilityException when the spec requires a capability the engine lacks
     * @throws WorkspaceGoneException         when the workspace no longer exists
     * @throws BackendUnavailableException    when the backend cannot start programs
     */
    RunResult runProgram(Workspace ws, RunProgramSpec spec);
}
