package dev.codeexec.workspace.snapshot;

import java.io.IOException;

/**
 * A file's bytes did not match the manifest (size or SHA-256): raised inside a read, where only an
 * {@link IOException} can pass, and found again among the causes of whatever the engine or store wrapped it in.
 */
final class ContentMismatch extends IOException {

    private final String path;

    ContentMismatch(String path, String what) {
        super(what);
        this.path = path;
    }

    /** The workspace path whose bytes differ. */
    String path() {
        return path;
    }

    /** The mismatch among the causes of a failure, or null. */
    static ContentMismatch in(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ContentMismatch m) {
                return m;
            }
        }
        return null;
    }
}
