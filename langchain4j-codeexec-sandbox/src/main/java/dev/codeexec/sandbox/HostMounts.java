package dev.codeexec.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The host's mount table: mount points and their file system types, read from {@code /proc/self/mountinfo}, so that
 * kernel interface file systems below a writable bind can be remounted read-only (see {@link KernelGuards}).
 */
final class HostMounts {

    private HostMounts() {
    }

    /** Each mount as {mount point, fstype}, from /proc/self/mountinfo; empty when it cannot be read. */
    static List<String[]> read() {
        List<String[]> out = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
                int dash = line.indexOf(" - ");
                if (dash < 0) {
                    continue;
                }
                String[] pre = line.substring(0, dash).split(" ");
                String[] post = line.substring(dash + 3).split(" ");
                if (pre.length >= 5 && post.length >= 1) {
                    out.add(new String[]{unescape(pre[4]), post[0]});
                }
            }
        } catch (IOException | RuntimeException ignored) {
            // No mount table: nothing known to remount.
        }
        return out;
    }

    private static String unescape(String s) {
        return s.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\");
    }
}
