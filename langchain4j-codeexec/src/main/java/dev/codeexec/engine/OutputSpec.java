package dev.codeexec.engine;

import java.util.List;

/**
 * Which files to collect from a workspace after a run, and how.
 *
 * @param globs         workspace-relative globs ({@code **} crosses directories); default {@code out/**}
 * @param maxFiles      most files collected; default {@value #DEFAULT_MAX_FILES}
 * @param maxFileBytes  most bytes read of one file, the rest marked truncated; default 4 MiB
 * @param maxTotalBytes most bytes read in total; default 64 MiB
 * @param inline        include file contents in the manifest
 * @param save          save each collected file as an artifact (a truncated file is refused, not saved partly)
 * @param namePrefix    prefix of artifact names when saving; the name is prefix + workspace-relative path
 */
public record OutputSpec(List<String> globs, int maxFiles, long maxFileBytes, long maxTotalBytes, boolean inline,
                         boolean save, String namePrefix) {

    public static final int DEFAULT_MAX_FILES = 100;
    public static final long DEFAULT_MAX_FILE_BYTES = 4L << 20;
    public static final long DEFAULT_MAX_TOTAL_BYTES = 64L << 20;

    /** {@code out/**}, default limits, inline contents, not saved. */
    public static final OutputSpec DEFAULT = builder().build();

    public OutputSpec {
        globs = globs == null || globs.isEmpty() ? List.of("out/**") : List.copyOf(globs);
        if (maxFiles <= 0) {
            throw new InvalidSpecException("maxFiles (" + maxFiles + ") must be positive");
        }
        if (maxFileBytes <= 0) {
            throw new InvalidSpecException("maxFileBytes (" + maxFileBytes + ") must be positive");
        }
        if (maxTotalBytes <= 0) {
            throw new InvalidSpecException("maxTotalBytes (" + maxTotalBytes + ") must be positive");
        }
        namePrefix = namePrefix == null ? "" : namePrefix;
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        return new Builder().globs(globs).maxFiles(maxFiles).maxFileBytes(maxFileBytes).maxTotalBytes(maxTotalBytes)
                .inline(inline).save(save).namePrefix(namePrefix);
    }

    /** Builder for {@link OutputSpec}. */
    public static final class Builder {
        private List<String> globs;
        private int maxFiles = DEFAULT_MAX_FILES;
        private long maxFileBytes = DEFAULT_MAX_FILE_BYTES;
        private long maxTotalBytes = DEFAULT_MAX_TOTAL_BYTES;
        private boolean inline = true;
        private boolean save;
        private String namePrefix;

        public Builder globs(List<String> globs) {
            this.globs = globs;
            return this;
        }

        public Builder globs(String... globs) {
            return globs(List.of(globs));
        }

        public Builder maxFiles(int maxFiles) {
            this.maxFiles = maxFiles;
            return this;
        }

        public Builder maxFileBytes(long maxFileBytes) {
            this.maxFileBytes = maxFileBytes;
            return this;
        }

        public Builder maxTotalBytes(long maxTotalBytes) {
            this.maxTotalBytes = maxTotalBytes;
            return this;
        }

        public Builder inline(boolean inline) {
            this.inline = inline;
            return this;
        }

        public Builder save(boolean save) {
            this.save = save;
            return this;
        }

        public Builder namePrefix(String namePrefix) {
            this.namePrefix = namePrefix;
            return this;
        }

        public OutputSpec build() {
            return new OutputSpec(globs, maxFiles, maxFileBytes, maxTotalBytes, inline, save, namePrefix);
        }
    }
}
