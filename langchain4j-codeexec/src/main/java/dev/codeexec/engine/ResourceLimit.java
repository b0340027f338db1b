package dev.codeexec.engine;

/**
 * A kind of resource limit. An engine lists the kinds it enforces in {@link Capabilities#enforcedLimits()}; a run that
 * requests another kind is refused with {@link UnsupportedCapabilityException}, never run unlimited.
 */
public enum ResourceLimit {
    /** CPU seconds of the run; exceeding it kills the program. */
    CPU_TIME,
    /** Memory of the run; exceeding it kills the program (exit 137) or fails allocations. */
    MEMORY,
    /** Largest file the run may write; a larger write fails with EFBIG / SIGXFSZ. */
    FILE_SIZE,
    /** Open file descriptors per process. */
    OPEN_FILES,
    /** Processes and threads of the run; {@code fork} beyond it fails. */
    PROCESSES
}
