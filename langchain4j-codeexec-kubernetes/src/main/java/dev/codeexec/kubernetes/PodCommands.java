package dev.codeexec.kubernetes;

import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.List;

/**
 * Runs one short command in a workspace pod's container ({@link PodLayout#CONTAINER}) over the {@code pods/exec}
 * subresource and waits for its exit: a file operation (a tar stream, a rename), a tree kill, a signal. Each is an
 * argv, never a command line built from data; scripts are constants given their data as positional arguments.
 *
 * <p>Implementations are thread-safe. A command that ran reports its exit status, whatever it is; a command whose
 * outcome is not known (the stream broke, no status came) or that could not start throws: a
 * {@link dev.codeexec.engine.WorkspaceGoneException} when the pod no longer exists, a
 * {@link dev.codeexec.engine.BackendUnavailableException} otherwise, naming what was lost.
 */
interface PodCommands {

    /**
     * The end of one command.
     *
     * @param exitCode the command's exit status, as the API server reported it
     * @param stderr   the start of its standard error, as text, for messages
     */
    record Result(int exitCode, String stderr) {
    }

    /**
     * Runs {@code argv} in {@code pod} to its end.
     *
     * @param pod     the pod's name (in the engine's namespace)
     * @param argv    the command; {@code argv[0]} is looked up on the container's {@code PATH}
     * @param stdin   the command's standard input, sent to its end and then closed; {@code null} for none
     * @param stdout  receives the standard output as it arrives (a tar stream may be large: it is never buffered
     *                whole); {@code null} to discard it
     * @param timeout how long the command may take; past it the command's stream is closed and this throws
     * @return the exit status and the start of standard error
     */
    Result run(String pod, List<String> argv, InputStream stdin, OutputStream stdout, Duration timeout);
}
