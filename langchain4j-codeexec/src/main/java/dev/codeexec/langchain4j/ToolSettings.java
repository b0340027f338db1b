package dev.codeexec.langchain4j;

import java.time.Duration;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/** The resolved limits and switches of the tools; built once, with {@link #builder()}, by {@link CodeExecution.Builder}. */
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
        return builder().build();
    }

    static Builder builder() {
        return new Builder();
    }

    /**
     * Settings by name; unset values take the documented defaults, and {@link #build()} checks them (limits positive,
     * the default time limit within the longest, tool names distinct).
     */
    static final class Builder {

        private Duration defaultTimeout = Duration.ofSeconds(CodeExecution.DEFAULT_TIMEOUT_SECONDS);
        private Duration maxTimeout = Duration.ofSeconds(CodeExecution.DEFAULT_MAX_TIMEOUT_SECONDS);
        private Integer maxOutputBytes;
        private Integer maxReadBytes;
        private Long maxWriteBytes;
        private Long maxArtifactBytes;
        private Long maxAttachmentBytes;
        private boolean requireMemoryId;
        private boolean inheritEnvironment;
        private boolean reportChangedFiles = true;
        private Duration workspaceIdleTtl = Duration.ofMinutes(CodeExecution.DEFAULT_WORKSPACE_IDLE_MINUTES);
        private final Map<WorkspaceTool, String> names = new EnumMap<>(WorkspaceTool.class);
        private Set<WorkspaceTool> enabled = EnumSet.allOf(WorkspaceTool.class);

        private Builder() {
        }

        Builder defaultTimeout(Duration timeout) {
            this.defaultTimeout = timeout;
            return this;
        }

        Builder maxTimeout(Duration timeout) {
            this.maxTimeout = timeout;
            return this;
        }

        Builder maxOutputBytes(int bytes) {
            this.maxOutputBytes = bytes;
            return this;
        }

        Builder maxReadBytes(int bytes) {
            this.maxReadBytes = bytes;
            return this;
        }

        Builder maxWriteBytes(long bytes) {
            this.maxWriteBytes = bytes;
            return this;
        }

        Builder maxArtifactBytes(long bytes) {
            this.maxArtifactBytes = bytes;
            return this;
        }

        Builder maxAttachmentBytes(long bytes) {
            this.maxAttachmentBytes = bytes;
            return this;
        }

        Builder requireMemoryId(boolean require) {
            this.requireMemoryId = require;
            return this;
        }

        Builder inheritEnvironment(boolean inherit) {
            this.inheritEnvironment = inherit;
            return this;
        }

        Builder reportChangedFiles(boolean report) {
            this.reportChangedFiles = report;
            return this;
        }

        /** @param ttl null to keep workspaces however long they are idle */
        Builder workspaceIdleTtl(Duration ttl) {
            if (ttl != null) {
                positive(ttl, "workspaceIdleTtl");
            }
            this.workspaceIdleTtl = ttl;
            return this;
        }

        Builder toolName(WorkspaceTool tool, String name) {
            names.put(tool, name);
            return this;
        }

        Builder enabled(Set<WorkspaceTool> tools) {
            this.enabled = tools;
            return this;
        }

        /** @throws IllegalArgumentException for a limit that is not positive, or names that are not distinct */
        ToolSettings build() {
            positive(defaultTimeout, "defaultTimeout");
            positive(maxTimeout, "maxTimeout");
            if (defaultTimeout.compareTo(maxTimeout) > 0) {
                throw new IllegalArgumentException("defaultTimeout (" + defaultTimeout + ") must not exceed maxTimeout ("
                        + maxTimeout + ")");
            }
            Map<WorkspaceTool, String> allNames = new EnumMap<>(WorkspaceTool.class);
            for (WorkspaceTool t : WorkspaceTool.values()) {
                allNames.put(t, t.defaultName());
            }
            allNames.putAll(names);
            if (new HashSet<>(allNames.values()).size() != allNames.size()) {
                throw new IllegalArgumentException("tool names must be distinct, got " + allNames.values());
            }
            int output = positive(maxOutputBytes, CodeExecution.DEFAULT_MAX_OUTPUT_BYTES, "maxOutputBytes");
            int maxRead = positive(maxReadBytes, CodeExecution.DEFAULT_MAX_READ_BYTES, "maxReadBytes");
            return new ToolSettings(defaultTimeout, maxTimeout, output,
                    Math.min(CodeExecution.DEFAULT_READ_BYTES, maxRead), maxRead,
                    positive(maxWriteBytes, CodeExecution.DEFAULT_MAX_WRITE_BYTES, "maxWriteBytes"),
                    positive(maxArtifactBytes, CodeExecution.DEFAULT_MAX_ARTIFACT_BYTES, "maxArtifactBytes"),
                    positive(maxAttachmentBytes, CodeExecution.DEFAULT_MAX_ATTACHMENT_BYTES, "maxAttachmentBytes"),
                    CodeExecution.DEFAULT_MAX_LIST_ENTRIES, requireMemoryId, inheritEnvironment, reportChangedFiles,
                    Duration.ofMillis(CodeExecution.DEFAULT_SESSION_YIELD_MILLIS),
                    Duration.ofMinutes(CodeExecution.DEFAULT_SESSION_TTL_MINUTES), workspaceIdleTtl, allNames,
                    enabled);
        }

        static void positive(Duration d, String name) {
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " (" + d + ") must be positive");
            }
        }

        private static int positive(Integer v, int def, String name) {
            if (v == null) {
                return def;
            }
            if (v < 1) {
                throw new IllegalArgumentException(name + " (" + v + ") must be positive");
            }
            return v;
        }

        private static long positive(Long v, long def, String name) {
            if (v == null) {
                return def;
            }
            if (v < 1) {
                throw new IllegalArgumentException(name + " (" + v + ") must be positive");
            }
            return v;
        }
    }
}
