package dev.codeexec.sandbox;

import java.util.Objects;

/**
 * One filesystem operation of a bubblewrap sandbox, at an absolute, canonical path that is the same on the host and
 * inside the sandbox.
 *
 * @param path absolute, normalised path without symbolic links
 * @param kind what to do there
 * @param fd   for {@link Kind#RO_BIND_FD}: the descriptor (opened and verified by the launcher) to bind; else -1
 */
record Mount(String path, Kind kind, int fd) {

    /** The operations, in the order of precedence on equal specificity (later kinds win). */
    enum Kind {
        /** {@code --ro-bind path path}: a read grant. */
        RO_BIND(0),
        /** {@code --bind path path}: a write grant. */
        BIND(1),
        /** {@code --ro-bind path path} of protected metadata inside a writable root (a file). */
        PROTECT(2),
        /** {@code --ro-bind-fd fd path}: protected metadata directory, bound from a descriptor verified to be it. */
        RO_BIND_FD(2),
        /** A private, memory-backed, writable {@code /tmp}-like directory ({@code --tmpfs}). */
        SCRATCH(3),
        /** Hide a directory: an empty tmpfs, read-only at the end of setup. */
        HIDE_DIR(3),
        /** Hide a file: {@code /dev/null} bound read-only over it (reads fail, nothing leaks). */
        HIDE_FILE(3);

        final int precedence;

        Kind(int precedence) {
            this.precedence = precedence;
        }
    }

    Mount {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(kind, "kind");
        if (!path.startsWith("/")) {
            throw new IllegalArgumentException("mount path must be absolute: " + path);
        }
    }

    static Mount of(String path, Kind kind) {
        return new Mount(path, kind, -1);
    }

    /** Number of path segments: "/" is 0, "/a/b" is 2. */
    int depth() {
        if (path.equals("/")) {
            return 0;
        }
        int d = 0;
        for (int i = 0; i < path.length(); i++) {
            if (path.charAt(i) == '/') {
                d++;
            }
        }
        return d;
    }

    /** True when {@code other} lies strictly below this path. */
    boolean isStrictAncestorOf(Mount other) {
        if (path.equals("/")) {
            return !other.path.equals("/");
        }
        return other.path.startsWith(path + "/");
    }
}
