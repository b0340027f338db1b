package dev.codeexec.engine;

/**
 * The workspace's disk quota is used up (or the file system that holds it is full): nothing more fits until files
 * are deleted. The workspace and its files are intact, and the engine keeps working: deleting files under
 * {@code work/} or {@code out/} makes the next call work. The message says how much is used of how much.
 */
public class WorkspaceFullException extends CodeExecException {

    private final long usedBytes;
    private final long limitBytes;

    /**
     * @param usedBytes  bytes in use on the workspace's file system, -1 when unknown
     * @param limitBytes bytes programs may use there in all, -1 when unknown
     */
    public WorkspaceFullException(long usedBytes, long limitBytes, Throwable cause) {
        super(message(usedBytes, limitBytes), cause);
        this.usedBytes = usedBytes;
        this.limitBytes = limitBytes;
    }

    private static String message(long used, long limit) {
        String amount = used >= 0 && limit > 0 ? ": " + used + " of " + limit + " bytes used" : "";
        return "the workspace is full" + amount + "; delete files under work/ or out/ to make room";
    }

    /** Bytes in use on the workspace's file system, or -1 when unknown. */
    public long usedBytes() {
        return usedBytes;
    }

    /** Bytes programs may use there in all (its quota), or -1 when unknown. */
    public long limitBytes() {
        return limitBytes;
    }
}
