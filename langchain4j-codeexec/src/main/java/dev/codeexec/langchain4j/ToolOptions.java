package dev.codeexec.langchain4j;

import java.time.Duration;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The part of {@link CodeExecution.Builder} that sets the tools' limits and switches ({@link ToolSettings}): time
 * limits, byte limits, the conversation rules, tool names and the tools offered. Its methods are documented and used as
 * methods of {@link CodeExecution.Builder}.
 */
abstract class ToolOptions {

    private static final Pattern TOOL_NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    private final ToolSettings.Builder settings = ToolSettings.builder();

    ToolOptions() {
    }

    /** The builder these options belong to. */
    abstract CodeExecution.Builder self();

    /** The settings as set, checked. */
    ToolSettings settings() {
        return settings.build();
    }

    /** Time limit when the model gives none; default {@value CodeExecution#DEFAULT_TIMEOUT_SECONDS} seconds. */
    public CodeExecution.Builder defaultTimeout(Duration timeout) {
        settings.defaultTimeout(Objects.requireNonNull(timeout, "timeout"));
        return self();
    }

    /**
     * Longest time limit a model may ask for (larger values are refused), and the life of a background session;
     * default {@value CodeExecution#DEFAULT_MAX_TIMEOUT_SECONDS} seconds.
     */
    public CodeExecution.Builder maxTimeout(Duration timeout) {
        settings.maxTimeout(Objects.requireNonNull(timeout, "timeout"));
        return self();
    }

    /**
     * Bytes of program output shown to the model per call; longer output keeps its first and last half with a
     * marker in between. Default {@value CodeExecution#DEFAULT_MAX_OUTPUT_BYTES}.
     */
    public CodeExecution.Builder maxOutputBytes(int bytes) {
        settings.maxOutputBytes(bytes);
        return self();
    }

    /**
     * Largest window {@code workspace_read_file} returns; default {@value CodeExecution#DEFAULT_MAX_READ_BYTES}.
     */
    public CodeExecution.Builder maxReadBytes(int bytes) {
        settings.maxReadBytes(bytes);
        return self();
    }

    /**
     * Largest file {@code workspace_write_file} writes (the whole file after an append); larger writes are
     * refused and change nothing. Default {@value CodeExecution#DEFAULT_MAX_WRITE_BYTES}.
     */
    public CodeExecution.Builder maxWriteBytes(long bytes) {
        settings.maxWriteBytes(bytes);
        return self();
    }

    /**
     * Largest file saved as or staged from an artifact; default
     * {@value CodeExecution#DEFAULT_MAX_ARTIFACT_BYTES}.
     */
    public CodeExecution.Builder maxArtifactBytes(long bytes) {
        settings.maxArtifactBytes(bytes);
        return self();
    }

    /** Largest attached file staged; default {@value CodeExecution#DEFAULT_MAX_ATTACHMENT_BYTES}. */
    public CodeExecution.Builder maxAttachmentBytes(long bytes) {
        settings.maxAttachmentBytes(bytes);
        return self();
    }

    /**
     * When true, tool calls from an AI service without {@code @MemoryId} (whose users would all share the
     * workspace {@code "default"}) are refused. Default false: they run, and a warning is logged once.
     */
    public CodeExecution.Builder requireMemoryId(boolean require) {
        settings.requireMemoryId(require);
        return self();
    }

    /**
     * When true, commands get the engine's base environment (for the local engine: this JVM's, secrets included).
     * Default false: commands start from the engine's clean, minimal environment where the engine supports one.
     * Ignored when a command policy is set: policy runs always use a clean environment.
     */
    public CodeExecution.Builder inheritEnvironment(boolean inherit) {
        settings.inheritEnvironment(inherit);
        return self();
    }

    /**
     * Whether exec results list created, deleted and resized files below {@code work/} and {@code out/}. The engine's
     * change tracker finds them: from kernel notices on host workspaces, from a listing the run itself makes at its end
     * where the runner can ({@link dev.codeexec.engine.ListingProgramRunner}: container, E2B), else from a look after
     * the run (and one before it when something else may have changed the files). Default true.
     */
    public CodeExecution.Builder reportChangedFiles(boolean report) {
        settings.reportChangedFiles(report);
        return self();
    }

    /**
     * Removes a conversation's workspace (and its files) after it was unused this long; the next call gets a
     * fresh one. Durable results belong in artifacts. Default {@value CodeExecution#DEFAULT_WORKSPACE_IDLE_MINUTES}
     * minutes; null keeps workspaces until {@link CodeExecution#closeWorkspace} or {@link CodeExecution#close()}.
     */
    public CodeExecution.Builder workspaceIdleTtl(Duration ttl) {
        settings.workspaceIdleTtl(ttl);
        return self();
    }

    /**
     * Renames a tool for the {@link CodeExecution#toolProvider()} face (for example when another tool already
     * uses the name). Names must match {@code [A-Za-z0-9_-]{1,64}} and be distinct.
     */
    public CodeExecution.Builder toolName(WorkspaceTool tool, String name) {
        Objects.requireNonNull(tool, "tool");
        if (name == null || !TOOL_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("tool name (" + name + ") must match [A-Za-z0-9_-]{1,64}");
        }
        settings.toolName(tool, name);
        return self();
    }

    /** The tools to offer; default all. Disabled tools are absent from the provider and refuse when called. */
    public CodeExecution.Builder tools(WorkspaceTool... tools) {
        if (tools.length == 0) {
            throw new IllegalArgumentException("tools: give at least one tool");
        }
        settings.enabled(EnumSet.copyOf(Arrays.asList(tools)));
        return self();
    }
}
