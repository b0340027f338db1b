package dev.codeexec;

import java.util.List;
import java.util.stream.Collectors;

/**
 * The outcome of {@link CodeExecutor#executeCode}.
 *
 * @param output      stdout and stderr of the blocks, in order (stderr lines follow stdout of the same block)
 * @param outputFiles files the code left under {@code out/}
 * @param exitCode    the exit code of the last block that ran; 0 when all succeeded
 * @param timedOut    true when a block hit its time limit
 * @param truncated   true when output was cut at the byte cap
 */
public record CodeExecutionResult(String output, List<FileRef> outputFiles, int exitCode, boolean timedOut,
                                  boolean truncated) {

    public CodeExecutionResult {
        output = output == null ? "" : output;
        outputFiles = outputFiles == null ? List.of() : List.copyOf(outputFiles);
    }

    /** True when every block exited with 0 and none timed out. */
    public boolean succeeded() {
        return exitCode == 0 && !timedOut;
    }

    /**
     * A compact text for a model or a user: the output (never dropped when files exist), then the saved files,
     * then the exit status when it was not a clean success.
     */
    public String toText() {
        StringBuilder sb = new StringBuilder();
        if (output.isBlank() && outputFiles.isEmpty()) {
            sb.append("Code execution result: no output.");
        } else {
            sb.append("Code execution result:\n");
            if (!output.isBlank()) {
                sb.append(output.endsWith("\n") ? output : output + "\n");
            }
            if (!outputFiles.isEmpty()) {
                sb.append("Output files:\n");
                sb.append(outputFiles.stream().map(f -> "- " + f.name() + " (" + f.sizeBytes() + " bytes)")
                        .collect(Collectors.joining("\n")));
                sb.append('\n');
            }
        }
        if (timedOut) {
            sb.append("\n[timed out]");
        } else if (exitCode != 0) {
            sb.append("\n[exit code ").append(exitCode).append(']');
        }
        if (truncated) {
            sb.append("\n[output truncated]");
        }
        return sb.toString().strip();
    }
}
