package dev.codeexec.engine;

/**
 * Where the whole of a long output stream was saved in the workspace: a run whose stream outgrew the engine's output
 * cap keeps only its start and end in the {@link RunResult}, and the engine writes the whole stream to a file under
 * the run's folder ({@code runs/<run>/stdout} or {@code runs/<run>/stderr}) so that it can be read with the file
 * tools.
 *
 * @param path        the file, workspace-relative; null when nothing could be saved
 * @param savedBytes  bytes of the stream in the file (without the marker line added when saving stopped at the cap)
 * @param totalBytes  bytes the program wrote to the stream in all
 * @param problem     why the file is incomplete or missing, for the model ("the engine's cap of N bytes was reached",
 *                    "the workspace is full"); null when the file has the whole stream
 */
public record SavedOutput(String path, long savedBytes, long totalBytes, String problem) {

    /** True when the file holds the whole stream. */
    public boolean complete() {
        return path != null && problem == null && savedBytes == totalBytes;
    }
}
