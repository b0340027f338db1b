package dev.codeexec.sandbox;

import java.util.Objects;

/**
 * One filesystem operation of a bubblewrap sandbox, at an absolute, canonical path that is the same on the host and
 * inside the sandbox.
 *
 * <p>A bind normally mounts the path onto itself. A bind whose path lies inside a directory a sandboxed program can
 * change (a workspace, a write grant) is <em>pinned</em> instead, so that no name the program controls is resolved
 * when bubblewrap mounts it: a directory is bound from a descriptor the launcher opened and verified ({@link #fd()}),
 * a file from a private hard link to it that the engine made without following links ({@link #source()}).
 *
 * @param path   absolute, normalised path without symbolic links: where the operation lands
 * @param kind   what to do there
 * @param fd     for a bind pinned to a directory: the descriptor (opened and verified by the launcher) to bind;
 *               else -1
 * @param source for a bind pinned to a file: the private hard link to bind from; else null (bind {@code path})
 */
record Mount(String path, Kind kind, int fd, String source) {

    /** The operations, in the order of precedence on equal specificity (later kinds win). */
    enum Kind {
        /** A read grant: a read-only bind. */
        RO_BIND(0),
        /** A write grant: a writable bind. */
        BIND(1),
        /** Protected metadata (a file or a directory) inside a writable root: a read-only bind. */
        PROTECT(2),
        /** A private, memory-backed, writable {@code /tmp}-like directory ({@code --tmpfs}). */
        SCRATCH(3),
        /** Hide a directory: an empty tmpfs, read-only at the end of setup. */
        HIDE_DIR(3),
        /** Hide a file: {@code /dev/null} bound read-only over it (reads fail, nothing leaks). */
        HIDE_FILE(3),
        /**
         * Hold a directory in place: a writable bind of a directory onto itself, inside a writable root, on the way
         * to something a rule names (a hidden, protected or read-only path). A mount point cannot be renamed or
         * removed, so no program can move what the rule names away from its name.
         */
        KEEP(1),
        /**
         * Make an existing mount point read-only at the end of setup: a kernel interface file system (proc, sysfs,
         * cgroup, ...) that the host mounted inside a writable grant.
         */
        REMOUNT_RO(3),
        /**
         * Occupy a name that does not exist with an empty, read-only directory for the run (bubblewrap creates the
         * mount point; the engine removes it afterwards): protected metadata no program may create.
         */
        PLACEHOLDER(3);

        final int precedence;

        Kind(int precedence) {
            this.precedence = precedence;
        }

        /** True for the kinds that bind a path (and so may need pinning). */
        boolean isBind() {
            return this == RO_BIND || this == BIND || this == PROTECT || this == KEEP;
        }

        /** True for the kinds that leave what lies below writable ({@link #BIND}, {@link #KEEP}). */
        boolean isWritable() {
            return this == BIND || this == KEEP;
        }

        /** True for the kinds that hide what lies below. */
        boolean isHidden() {
            return this == HIDE_DIR || this == HIDE_FILE;
        }
    }

    Mount {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(kind, "kind");
        if (!path.startsWith("/")) {
            throw new IllegalArgumentException("mount path must be absolute: " + path);
        }
        if ((fd >= 0 || source != null) && !kind.isBind()) {
            throw new IllegalArgumentException("only binds take a descriptor or a source: " + path);
        }
        if (fd >= 0 && source != null) {
            throw new IllegalArgumentException("a bind is pinned by a descriptor or by a source, not both: " + path);
        }
    }

    static Mount of(String path, Kind kind) {
        return new Mount(path, kind, -1, null);
    }

    /** A bind of {@code path} from the directory descriptor {@code fd}. */
    static Mount pinned(String path, Kind kind, int fd) {
        return new Mount(path, kind, fd, null);
    }

    /** A bind of {@code path} from the private hard link {@code source}. */
    static Mount aliased(String path, Kind kind, String source) {
        return new Mount(path, kind, -1, source);
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
