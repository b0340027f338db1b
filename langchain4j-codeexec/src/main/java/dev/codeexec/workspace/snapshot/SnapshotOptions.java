package dev.codeexec.workspace.snapshot;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.workspace.WorkspaceGlob;
import dev.codeexec.workspace.WorkspaceLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What a snapshot captures and how much it may hold. Immutable; {@link #DEFAULT} captures {@code work/},
 * {@code out/} and {@code home/}, no {@code runs/}, at most {@value #DEFAULT_MAX_FILES} files and
 * {@value #DEFAULT_MAX_TOTAL_BYTES} bytes. The bounds apply to a restore as well, so that a manifest (perhaps not one
 * this library wrote) cannot make a restore write without limit.
 */
public final class SnapshotOptions {

    /** {@value}: the most regular files a snapshot holds by default (also the most other entries). */
    public static final int DEFAULT_MAX_FILES = 50_000;

    /** {@value} bytes (1 GiB): the most file bytes a snapshot holds by default. */
    public static final long DEFAULT_MAX_TOTAL_BYTES = 1L << 30;

    /** The directories of the layout a snapshot captures by default: {@code work}, {@code out}, {@code home}. */
    public static final List<String> DEFAULT_ROOTS = List.of(WorkspaceLayout.WORK, WorkspaceLayout.OUT,
            WorkspaceLayout.HOME);

    /** The defaults. */
    public static final SnapshotOptions DEFAULT = builder().build();

    private final List<String> roots;
    private final List<String> globs;
    private final boolean includeRuns;
    private final int maxFiles;
    private final long maxTotalBytes;

    private SnapshotOptions(Builder b) {
        this.roots = b.roots == null ? DEFAULT_ROOTS : List.copyOf(b.roots);
        this.globs = b.globs == null ? List.of() : List.copyOf(b.globs);
        for (String g : globs) {
            WorkspaceGlob.compile(g); // refuses a glob that leaves the workspace now, not at capture time
        }
        this.includeRuns = b.includeRuns != null && b.includeRuns;
        this.maxFiles = b.maxFiles == null ? DEFAULT_MAX_FILES : b.maxFiles;
        this.maxTotalBytes = b.maxTotalBytes == null ? DEFAULT_MAX_TOTAL_BYTES : b.maxTotalBytes;
        if (maxFiles < 1) {
            throw new InvalidSpecException("maxFiles (" + maxFiles + ") must be at least 1");
        }
        if (maxTotalBytes < 0) {
            throw new InvalidSpecException("maxTotalBytes (" + maxTotalBytes + ") must not be negative");
        }
    }

    /** A builder with every default. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding these options. */
    public Builder toBuilder() {
        return new Builder().roots(roots).globs(globs).includeRuns(includeRuns).maxFiles(maxFiles)
                .maxTotalBytes(maxTotalBytes);
    }

    /** The directories captured whole, workspace-relative; {@code runs} is added when {@link #includeRuns()}. */
    public List<String> roots() {
        return roots;
    }

    /** The directories actually walked: {@link #roots()}, plus {@code runs} when asked for. */
    public List<String> walkedRoots() {
        List<String> all = new ArrayList<>(roots);
        if (includeRuns && !all.contains(WorkspaceLayout.RUNS)) {
            all.add(WorkspaceLayout.RUNS);
        }
        return List.copyOf(all);
    }

    /** Further files, by glob ({@code skills/**}, {@code notes.txt}); files under {@code runs/} only with runs. */
    public List<String> globs() {
        return globs;
    }

    /** Whether {@code runs/} (the run history) is captured. */
    public boolean includeRuns() {
        return includeRuns;
    }

    /** The most regular files, and separately the most other entries, a snapshot holds. */
    public int maxFiles() {
        return maxFiles;
    }

    /** The most bytes of file content a snapshot holds. */
    public long maxTotalBytes() {
        return maxTotalBytes;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SnapshotOptions s && s.roots.equals(roots) && s.globs.equals(globs)
                && s.includeRuns == includeRuns && s.maxFiles == maxFiles && s.maxTotalBytes == maxTotalBytes;
    }

    @Override
    public int hashCode() {
        return Objects.hash(roots, globs, includeRuns, maxFiles, maxTotalBytes);
    }

    @Override
    public String toString() {
        return "SnapshotOptions{roots=" + roots + ", globs=" + globs + ", includeRuns=" + includeRuns + ", maxFiles="
                + maxFiles + ", maxTotalBytes=" + maxTotalBytes + "}";
    }

    /** Builder for {@link SnapshotOptions}; null fields take the defaults. */
    public static final class Builder {
        private List<String> roots;
        private List<String> globs;
        private Boolean includeRuns;
        private Integer maxFiles;
        private Long maxTotalBytes;

        private Builder() {
        }

        /** The directories captured whole; default {@link #DEFAULT_ROOTS}. */
        public Builder roots(List<String> roots) {
            this.roots = roots;
            return this;
        }

        /** Further files by glob; default none. */
        public Builder globs(List<String> globs) {
            this.globs = globs;
            return this;
        }

        /** Capture {@code runs/} too; default false. */
        public Builder includeRuns(boolean includeRuns) {
            this.includeRuns = includeRuns;
            return this;
        }

        /** The most files (and other entries); default {@value #DEFAULT_MAX_FILES}. */
        public Builder maxFiles(int maxFiles) {
            this.maxFiles = maxFiles;
            return this;
        }

        /** The most bytes; default {@value #DEFAULT_MAX_TOTAL_BYTES}. */
        public Builder maxTotalBytes(long maxTotalBytes) {
            this.maxTotalBytes = maxTotalBytes;
            return this;
        }

        /** @throws InvalidSpecException for a bound below its minimum or a glob that leaves the workspace */
        public SnapshotOptions build() {
            return new SnapshotOptions(this);
        }
    }
}
