package dev.codeexec.engine;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;

/**
 * Limits for one run. A null field means "not requested". Use {@link #NONE} or the builder.
 *
 * @param cpuTime        CPU time of the run
 * @param memoryBytes    memory of the run, in bytes
 * @param maxFileBytes   largest file the run may write
 * @param maxOpenFiles   open file descriptors per process
 * @param maxProcesses   processes of the run
 */
public record ResourceLimits(Duration cpuTime, Long memoryBytes, Long maxFileBytes, Integer maxOpenFiles,
                             Integer maxProcesses) {

    /** No limit requested. */
    public static final ResourceLimits NONE = new ResourceLimits(null, null, null, null, null);

    public ResourceLimits {
        if (cpuTime != null && (cpuTime.isNegative() || cpuTime.isZero())) {
            throw new InvalidSpecException("cpuTime (" + cpuTime + ") must be positive");
        }
        positive("memoryBytes", memoryBytes);
        positive("maxFileBytes", maxFileBytes);
        positive("maxOpenFiles", maxOpenFiles == null ? null : maxOpenFiles.longValue());
        positive("maxProcesses", maxProcesses == null ? null : maxProcesses.longValue());
    }

    private static void positive(String name, Long value) {
        if (value != null && value <= 0) {
            throw new InvalidSpecException(name + " (" + value + ") must be positive");
        }
    }

    /** The kinds this object requests. */
    public Set<ResourceLimit> requested() {
        Set<ResourceLimit> s = EnumSet.noneOf(ResourceLimit.class);
        if (cpuTime != null) {
            s.add(ResourceLimit.CPU_TIME);
        }
        if (memoryBytes != null) {
            s.add(ResourceLimit.MEMORY);
        }
        if (maxFileBytes != null) {
            s.add(ResourceLimit.FILE_SIZE);
        }
        if (maxOpenFiles != null) {
            s.add(ResourceLimit.OPEN_FILES);
        }
        if (maxProcesses != null) {
            s.add(ResourceLimit.PROCESSES);
        }
        return s;
    }

    /** True when nothing is requested. */
    public boolean isEmpty() {
        return requested().isEmpty();
    }

    /**
     * These limits over {@code defaults}, field by field: a limit this one sets wins, one it leaves unset is taken
     * from {@code defaults}.
     */
    public ResourceLimits withDefaults(ResourceLimits defaults) {
        if (defaults == null || defaults.isEmpty()) {
            return this;
        }
        if (isEmpty()) {
            return defaults;
        }
        return new ResourceLimits(cpuTime != null ? cpuTime : defaults.cpuTime,
                memoryBytes != null ? memoryBytes : defaults.memoryBytes,
                maxFileBytes != null ? maxFileBytes : defaults.maxFileBytes,
                maxOpenFiles != null ? maxOpenFiles : defaults.maxOpenFiles,
                maxProcesses != null ? maxProcesses : defaults.maxProcesses);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Builder for {@link ResourceLimits}; every limit is optional. */
    public static final class Builder {
        private Duration cpuTime;
        private Long memoryBytes;
        private Long maxFileBytes;
        private Integer maxOpenFiles;
        private Integer maxProcesses;

        public Builder cpuTime(Duration cpuTime) {
            this.cpuTime = cpuTime;
            return this;
        }

        public Builder memoryBytes(long memoryBytes) {
            this.memoryBytes = memoryBytes;
            return this;
        }

        public Builder maxFileBytes(long maxFileBytes) {
            this.maxFileBytes = maxFileBytes;
            return this;
        }

        public Builder maxOpenFiles(int maxOpenFiles) {
            this.maxOpenFiles = maxOpenFiles;
            return this;
        }

        public Builder maxProcesses(int maxProcesses) {
            this.maxProcesses = maxProcesses;
            return this;
        }

        public ResourceLimits build() {
            return new ResourceLimits(cpuTime, memoryBytes, maxFileBytes, maxOpenFiles, maxProcesses);
        }
    }
}
