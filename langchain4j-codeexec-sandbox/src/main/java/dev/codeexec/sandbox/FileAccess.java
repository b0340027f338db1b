package dev.codeexec.sandbox;

/**
 * What a path rule of a {@link PermissionProfile} allows. When two rules are equally specific, {@link #NONE} beats
 * {@link #WRITE}, which beats {@link #READ}.
 */
public enum FileAccess {
    /** Visible and readable, never writable. */
    READ,
    /** Readable and writable. */
    WRITE,
    /** Not visible at all: an empty, unreadable directory or file takes its place. */
    NONE;

    /** Precedence on equal specificity: none &gt; write &gt; read. */
    int precedence() {
        return ordinal();
    }
}
