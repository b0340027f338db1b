package dev.codeexec.engine;

/** What stands between a program and the host. */
public enum Isolation {
    /** Nothing: the program runs as the host user with the host's files and network ({@code LocalEngine}). */
    NONE,
    /** An OS sandbox on the host: namespaces and seccomp (bubblewrap) or Seatbelt. */
    OS_SANDBOX,
    /** A container of a container engine (Docker). */
    CONTAINER,
    /** A remote virtual machine (E2B). */
    REMOTE_VM,
    /** Isolation is provided outside this library (the process already runs inside a sandbox) and declared so. */
    EXTERNAL
}
