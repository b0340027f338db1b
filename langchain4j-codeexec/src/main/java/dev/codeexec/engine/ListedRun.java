package dev.codeexec.engine;

/**
 * A run's result and what its folders held when it ended ({@link ListingProgramRunner#runProgramAndList}).
 *
 * @param result  the run's result, as {@link ProgramRunner#runProgram} returns it
 * @param listing the folders' entries; null when the run could not list them (it timed out or was killed, the
 *                listing failed or did not arrive whole): the caller looks at the workspace itself then
 */
public record ListedRun(RunResult result, FolderSnapshot listing) {
}
