package dev.codeexec.engine;

/** A limit of {@link OutputSpec} that cut a collection short. */
public enum OutputLimit {
    /** More files matched than {@link OutputSpec#maxFiles()}; the rest were not collected. */
    MAX_FILES,
    /** A file was larger than {@link OutputSpec#maxFileBytes()}; it was read partly and marked truncated. */
    MAX_FILE_BYTES,
    /** The total reached {@link OutputSpec#maxTotalBytes()}; later files were truncated or skipped. */
    MAX_TOTAL_BYTES,
    /**
     * The search for matching files visited as many entries as one walk may (100,000 on the core's file systems) and
     * stopped: files beyond them were not looked at, so more may match than were collected.
     */
    MAX_WALK_ENTRIES
}
