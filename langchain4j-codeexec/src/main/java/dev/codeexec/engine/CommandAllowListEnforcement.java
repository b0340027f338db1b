package dev.codeexec.engine;

/**
 * How far an engine makes a command policy's allow list hold: {@link Capabilities#commandAllowListEnforcement()}.
 * See docs/command-policy.md.
 */
public enum CommandAllowListEnforcement {

    /**
     * Checked before the run, on the command line and (where the engine runs programs on this host's file system) on
     * the files its command words reach. Once a permitted program runs, nothing stops it from starting any other
     * program the backend lets it reach: an allowed interpreter's script, a {@code Makefile}, a tool option the
     * argument validators do not know.
     */
    TEXT,

    /**
     * Also enforced by the kernel when a program is executed: a program that is not on the allow list cannot be
     * executed at all, whatever wrapper, shell or loader tries. An allowed general interpreter still does in-process
     * what any program would; keep interpreters off the list (see docs/command-policy.md).
     */
    KERNEL
}
