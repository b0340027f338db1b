package dev.codeexec.sandbox;

/** How {@code /proc} is provided inside a bubblewrap sandbox. */
enum ProcMode {
    /** A fresh procfs of the sandbox's PID namespace: only the sandbox's own processes are visible. */
    FRESH,
    /**
     * No procfs: an empty, read-only directory. For hosts (containers) that refuse a fresh procfs; opted into with
     * {@link PreflightMode#ALLOW_NO_PROC}. Programs that read {@code /proc} (ps, some runtimes) fail.
     */
    MASKED
}
