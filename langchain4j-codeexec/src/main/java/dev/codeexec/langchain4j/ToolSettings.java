package dev.codeexec.langchain4j;

import java.time.Duration;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/** The resolved limits and switches of the tools; built once by {@link CodeExecution.Builder}. */
record ToolSettings(
        Duration defaultTimeout,
        Duration maxTimeout,
        int maxOutputBytes,
        int defaultReadBytes,
        int maxReadBytes,
        long maxWriteBytes,
        long maxArtifactBytes,
        long maxAttachmentBytes,
        int maxListEntries,
        boolean requireMemoryId,
        boolean inheritEnvironment,
        boolean reportChangedFiles,
        Duration sessionYield,
        Duration sessionTtl,
        Duration workspaceIdleTtl,
        Map<WorkspaceTool, String> names,
        Set<WorkspaceTool> enabled) {

    ToolSettings {
        names = Map.copyOf(names);
        enabled = enabled.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(enabled));
    }

    String name(WorkspaceTool tool) {
        return names.getOrDefault(tool, tool.defaultName());
    }

    /** Defaults for tests and for {@link CodeExecution.Builder}. */
    static ToolSettings defaults() {
        Map<WorkspaceTool, String> names = new EnumMap<>(WorkspaceTool.class);
        for (WorkspaceTool t : WorkspaceTool.values()) {
            names.put(t, t.defaultName());
        }
        return new ToolSettings(Duration.ofSeconds(CodeExecution.DEFAULT_TIMEOUT_SECONDS),
                Duration.ofSeconds(CodeExecution.DEFAULT_MAX_TIMEOUT_SECONDS), CodeExecution.DEFAULT_MAX_OUTPUT_BYTES,
                CodeExecution.DEFAULT_READ_BYTES, CodeExecution.DEFAULT_MAX_READ_BYTES,
                CodeExecution.DEFAULT_MAX_WRITE_BYTES, CodeExecution.DEFAULT_MAX_ARTIFACT_BYTES,
                CodeExecution.DEFAULT_MAX_ATTACHMENT_BYTES, CodeExecution.DEFAULT_MAX_LIST_ENTRIES, false, false, true,
                Duration.ofMillis(CodeExecution.DEFAULT_SESSION_YIELD_MILLIS),
                Duration.ofMinutes(CodeExecution.DEFAULT_SESSION_TTL_MINUTES),
                Duration.ofMinutes(CodeExecution.DEFAULT_WORKSPACE_IDLE_MINUTES), names,
                EnumSet.allOf(WorkspaceTool.class));
    }
}
