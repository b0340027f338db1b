package dev.codeexec.workspace;

/**
 * Finer access rules a backend applies on top of workspace containment (the sandbox's no-access paths and
 * protected metadata, for example). Paths are normalised workspace-relative paths ({@code "."} is the root).
 */
public interface PathAccess {

    /** Everything inside the workspace is readable and writable. */
    PathAccess ALLOW_ALL = new PathAccess() {
        @Override
        public boolean canRead(String relativePath) {
            return true;
        }

        @Override
        public boolean canWrite(String relativePath) {
            return true;
        }
    };

    boolean canRead(String relativePath);

    boolean canWrite(String relativePath);
}
