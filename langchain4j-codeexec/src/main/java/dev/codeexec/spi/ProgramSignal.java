package dev.codeexec.spi;

/** A signal a graceful stop sends to a program before the tree is killed. */
public enum ProgramSignal {
    /** SIGTERM: asks the program to exit. */
    TERMINATE,
    /** SIGINT: what Ctrl-C sends; a Jupyter kernel's interrupt. */
    INTERRUPT
}
