package dev.codeexec.spi;

import dev.codeexec.engine.FolderSnapshot;
import dev.codeexec.engine.StdStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs {@link RunListing#FUNCTION} with the host's {@code sh}, {@code find} and {@code head} in a directory, after a
 * "program" (a shell snippet) wrote its output, and passes the stream through the listing's filter, as a backend's
 * wrapper and channel would.
 */
public final class RunListingShell {

    /** What the filter delivered as the program's output, and the snapshot. */
    public record Outcome(byte[] stdout, FolderSnapshot snapshot) {
    }

    private RunListingShell() {
    }

    /** Lists {@code folders} of {@code root} after {@code program}, with the exit status {@code rc}, in one chunk. */
    public static Outcome run(Path root, String program, List<String> folders, int maxEntries, int chunk)
            throws IOException, InterruptedException {
        RunListing l = new RunListing(folders, maxEntries, ChronoUnit.NANOS);
        List<String> argv = new ArrayList<>(List.of("sh", "-c", RunListing.FUNCTION + "cd \"$1\"; shift\n"
                + "(" + program + ")\nlistfolders 0 \"$@\"\n", "sh", root.toString()));
        argv.addAll(l.arguments());
        Process p = new ProcessBuilder(argv).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        byte[] all = p.getInputStream().readAllBytes();
        int rc = p.waitFor();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        OutputSink sink = (stream, bytes, offset, length) -> {
            if (stream == StdStream.STDOUT) {
                out.write(bytes, offset, length);
            }
        };
        OutputSink filter = l.filter(sink);
        for (int i = 0; i < all.length; i += chunk) {
            filter.write(StdStream.STDOUT, all, i, Math.min(chunk, all.length - i));
        }
        l.streamEnded(sink);
        return new Outcome(out.toByteArray(), l.snapshot(rc, true));
    }
}
