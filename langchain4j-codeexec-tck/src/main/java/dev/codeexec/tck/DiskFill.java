package dev.codeexec.tck;

import dev.codeexec.engine.RunResult;

/** A program that writes until its workspace is full, and what it wrote: for the disk quota tests of every backend. */
public final class DiskFill {

    private DiskFill() {
    }

    /**
     * A shell line that writes {@code mib} MiB of zeros to {@code file}, then prints {@code rc=<status>} and the
     * file's size in bytes on the last line.
     */
    public static String command(String file, int mib) {
        return "dd if=/dev/zero of=" + file + " bs=1M count=" + mib + " 2>&1; echo rc=$?; wc -c < " + file;
    }

    /** The number on the last line of a run's output: the size {@link #command} printed. */
    public static long writtenBytes(RunResult r) {
        String[] lines = r.stdout().strip().split("\n");
        return Long.parseLong(lines[lines.length - 1].strip());
    }
}
