package dev.codeexec.sandbox;

/**
 * What the sandbox's preflight accepts. Whatever the mode, a failed preflight never leads to an unsandboxed run.
 */
public enum PreflightMode {

    /**
     * The default: the full sandbox must work, including a fresh {@code /proc} of the sandbox's PID namespace.
     * Otherwise the engine refuses to start with an error that says what to fix.
     */
    STRICT,

    /**
     * <b>Opt-in, weaker</b>: accept hosts where a fresh {@code /proc} cannot be mounted (typical inside Docker or
     * Kubernetes without {@code systempaths=unconfined} / {@code procMount: Unmasked}). Programs then run with an
     * empty, read-only {@code /proc}: everything else (namespaces, mounts, seccomp, capability drop) is unchanged, but
     * tools that read {@code /proc} ({@code ps}, some language runtimes) fail. The host's {@code /proc} is never
     * exposed. Used only when the strict probe failed for exactly that reason.
     */
    ALLOW_NO_PROC
}
