package dev.codeexec.engine;

/** A program's output stream. */
public enum StdStream {
    STDOUT,
    STDERR
}
