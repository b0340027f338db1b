package dev.codeexec.kubernetes;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.RemoteEntry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * Reads the listing {@link PodFiles} asks of {@code find -P DIR -mindepth 1 -printf '%y %m %s %T@ %P\0'}: one
 * NUL-terminated record per entry, pre-order, links as links ({@code -P} never follows one). The pod is untrusted: a
 * name that is empty, absolute or holds an empty or {@code ..} segment is refused with {@link PathEscapeException},
 * a record that is not well formed or longer than {@value #MAX_RECORD} bytes with {@link CodeExecException}.
 * Stateless.
 */
final class PodListing {

    /** The longest record accepted: a path of the longest length Linux allows, and the fields before it. */
    static final int MAX_RECORD = 8 << 10;

    private PodListing() {
    }

    /** Passes each record to the visitor until the end of the stream, or until the visitor returns false. */
    static void read(InputStream in, Visitor visitor) throws IOException {
        ByteArrayOutputStream record = new ByteArrayOutputStream();
        byte[] buf = new byte[16 << 10];
        int n;
        while ((n = in.read(buf)) >= 0) {
            for (int i = 0; i < n; i++) {
                if (buf[i] != 0) {
                    if (record.size() >= MAX_RECORD) {
                        throw new CodeExecException("the pod sent a listing record longer than " + MAX_RECORD
                                + " bytes");
                    }
                    record.write(buf[i]);
                    continue;
                }
                String text = record.toString(StandardCharsets.UTF_8);
                record.reset();
                String[] f = text.split(" ", 5);
                if (f.length != 5) {
                    throw new CodeExecException("the pod sent a listing record that is not well formed");
                }
                String rel = checked(f[4]);
                if (!visitor.entry(rel, entry(f))) {
                    return;
                }
            }
        }
        if (record.size() > 0) {
            throw new CodeExecException("the pod's listing ended in the middle of a record");
        }
    }

    /** Receives the entries of a listing; the same as {@code RemoteWorkspaceFiles.ListVisitor}. */
    @FunctionalInterface
    interface Visitor {
        boolean entry(String rel, RemoteEntry entry);
    }

    private static RemoteEntry entry(String[] f) {
        EntryType type = switch (f[0]) {
            case "d" -> EntryType.DIRECTORY;
            case "f" -> EntryType.FILE;
            case "l" -> EntryType.LINK;
            default -> EntryType.OTHER;
        };
        try {
            int mode = Integer.parseInt(f[1], 8) & 07777;
            long size = type == EntryType.FILE ? Math.max(0, Long.parseLong(f[2])) : 0;
            BigDecimal t = new BigDecimal(f[3]);
            long seconds = t.longValue();
            long nanos = t.subtract(BigDecimal.valueOf(seconds)).movePointRight(9).longValue();
            return RemoteEntry.of(type, size, mode, Instant.ofEpochSecond(seconds, nanos));
        } catch (RuntimeException e) {
            throw new CodeExecException("the pod sent a listing record that is not well formed");
        }
    }

    /** A listed name relative to the listed directory, refused when it could leave it. */
    static String checked(String rel) {
        if (rel.isEmpty() || rel.startsWith("/")) {
            throw new PathEscapeException("the pod sent a listing entry with an absolute or empty name");
        }
        for (String seg : rel.split("/", -1)) {
            if (seg.isEmpty() || seg.equals(".") || seg.equals("..")) {
                throw new PathEscapeException("the pod sent a listing entry that leaves the listed directory");
            }
        }
        return rel;
    }
}
