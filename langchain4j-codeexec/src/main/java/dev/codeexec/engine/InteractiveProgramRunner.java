package dev.codeexec.engine;

/** Starts long-running programs that keep running between calls ({@link Capabilities#interactive()}). */
public interface InteractiveProgramRunner {

    /**
     * Starts a program and returns at once. The spec's timeout bounds the session's whole life: on expiry the
     * process tree is killed. The caller must {@link ProgramSession#close() close} the session.
     */
    ProgramSession startProgram(Workspace ws, RunProgramSpec spec);
}
