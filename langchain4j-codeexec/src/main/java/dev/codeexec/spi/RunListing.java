package dev.codeexec.spi;

import dev.codeexec.engine.FolderSnapshot;
import dev.codeexec.engine.StdStream;
import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

/**
 * The folder listing a remote backend's run wrapper writes after the program, for
 * {@link dev.codeexec.engine.ListingProgramRunner}: the shell function that writes it ({@link #FUNCTION}), the filter
 * that takes it out of the run's standard output before the output cap and the listener see it ({@link #filter}),
 * and its parser ({@link #snapshot}). One instance per run; thread-safe for one writing thread and one reader.
 *
 * <p>Format, on standard output after everything the program wrote: a marker line {@code \0\1codeexec-listing
 * <nonce>\n}, then one record per entry, {@code <type>\t<size>\t<mtime>\t<path>\0} (GNU {@code find -printf}), then
 * {@code E<status>\0} when the listing went through, then a trailer {@code \1end <nonce> <exit status>\n} that ends the
 * stream. The nonce is random per run. Records end with a NUL, which no file name holds, and a record starts with a
 * type letter: the marker cannot appear inside a listing. Names with newlines or tabs keep them; a name that is not
 * UTF-8 makes the listing unusable (the caller looks at the workspace instead), so that no name is decoded otherwise
 * than the engine's own listings decode it.
 *
 * <p>Imitation: only the last marker of the stream can start the listing; everything before it, a marker the program
 * wrote included, is the program's output and is delivered as written. The wrapper writes its marker after the program
 * and every process it started ended, so a program cannot write after it. A listing is accepted only when it ends the
 * stream with the run's nonce and exit status, and the run neither timed out nor was killed. A program that learns the
 * nonce (it is an argument of the wrapper, readable by a program of the same user) and then has its wrapper killed
 * could still pass a listing of its own: it can name only paths below the listed folders (the parser rejects any
 * other), the report built from it is about files of the program's own workspace, and every consumer of a change
 * report checks a path again like any workspace path. A listing is never more trusted than that.
 *
 * <p>Bounds: at most {@code maxEntries} entries ({@code head -z -n}) and {@link #MAX_LISTING_BYTES} bytes
 * ({@code head -c}); a listing cut at either is {@linkplain FolderSnapshot#complete() incomplete}. The filter holds
 * back at most that much (plus the marker) while it cannot tell a listing from output.
 */
public final class RunListing {

    /** {@value}: the most bytes of records a listing holds. */
    public static final int MAX_LISTING_BYTES = 4 << 20;

    /**
     * {@code listfolders <exit status> <nonce> <max entries> <max bytes> <folders, one per line>}: writes the listing
     * of the folders (relative to the working directory, the workspace root) on standard output, then the trailer.
     * Needs a POSIX {@code sh}, GNU {@code find} and GNU {@code head} ({@code -z}); without them the listing says it
     * failed, or is cut, and the caller looks for itself.
     */
    public static final String FUNCTION = ""
            + "listfolders() {\n"
            + "  printf '\\000\\001codeexec-listing %s\\n' \"$2\"\n"
            + "  ( st=0; set -f; IFS='\n'\n"
            + "    for f in $5; do\n"
            + "      if [ -e \"$f\" ] || [ -L \"$f\" ]; then\n"
            + "        find \"$f\" -printf '%y\\t%s\\t%T@\\t%p\\0' 2>/dev/null || st=1\n"
            + "      fi\n"
            + "    done\n"
            + "    printf 'E%s\\000' \"$st\" ) | head -z -n \"$(($3 + 1))\" | head -c \"$4\"\n"
            + "  printf '\\001end %s %s\\n' \"$2\" \"$1\"\n"
            + "}\n";

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final byte[] END = "\u0001end ".getBytes(StandardCharsets.US_ASCII);

    private final List<String> folders;
    private final int maxEntries;
    private final String nonce;
    private final byte[] marker;
    private final ChronoUnit precision;
    /** Bytes of stdout not yet delivered: a possible marker prefix, or everything since the last marker. */
    private final ByteArrayOutputStream held = new ByteArrayOutputStream();
    /** True when {@link #held} starts with a marker. */
    private boolean capturing;
    private boolean ended;
    /** The listing found when the stream ended, and the exit status its trailer gave; null for none. */
    private FolderSnapshot parsed;
    private Integer listedStatus;

    /**
     * @param folders    normalised workspace-relative folders, without newlines
     * @param maxEntries the most entries listed
     * @param precision  the unit modification times are cut to, that of the engine's own listings
     */
    public RunListing(List<String> folders, int maxEntries, ChronoUnit precision) {
        for (String f : folders) {
            if (!normal(f) || f.startsWith("-") || f.indexOf('\n') >= 0) {
                throw new IllegalArgumentException("not a normalised workspace folder: " + f);
            }
        }
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be positive");
        }
        this.folders = List.copyOf(folders);
        this.maxEntries = maxEntries;
        this.precision = precision;
        byte[] n = new byte[16];
        RANDOM.nextBytes(n);
        this.nonce = HexFormat.of().formatHex(n);
        this.marker = ("\u0000\u0001codeexec-listing " + nonce + "\n").getBytes(StandardCharsets.US_ASCII);
    }

    /** The arguments of {@link #FUNCTION} after the exit status: nonce, max entries, max bytes, folders. */
    public List<String> arguments() {
        return List.of(nonce, Integer.toString(maxEntries), Integer.toString(MAX_LISTING_BYTES),
                String.join("\n", folders));
    }

    /** The sink a channel delivers the run's output to: standard output without the listing, into {@code out}. */
    public OutputSink filter(OutputSink out) {
        return (stream, bytes, offset, length) -> {
            if (stream == StdStream.STDOUT) {
                stdout(out, bytes, offset, length);
            } else {
                out.write(stream, bytes, offset, length);
            }
        };
    }

    private void stdout(OutputSink out, byte[] bytes, int offset, int length) {
        byte[] deliver;
        synchronized (this) {
            if (ended) {
                deliver = Arrays.copyOfRange(bytes, offset, offset + length);
            } else {
                int searchFrom = Math.max(capturing ? 1 : 0, held.size() - marker.length + 1);
                held.write(bytes, offset, length);
                deliver = split(searchFrom);
            }
        }
        if (deliver != null && deliver.length > 0) {
            out.write(StdStream.STDOUT, deliver, 0, deliver.length);
        }
    }

    /** Moves what can no longer be (part of) the listing out of {@link #held}, and returns it. */
    private byte[] split(int searchFrom) {
        byte[] h = held.toByteArray();
        int last = -1;
        for (int i = indexOf(h, marker, Math.max(0, searchFrom)); i >= 0; i = indexOf(h, marker, i + 1)) {
            last = i;
        }
        int keepFrom;
        if (last >= 0) {
            capturing = true;
            keepFrom = last;
        } else if (capturing) {
            keepFrom = 0;
        } else {
            keepFrom = h.length - longestMarkerPrefixAtEnd(h);
        }
        if (capturing && h.length - keepFrom > MAX_LISTING_BYTES + 2 * marker.length + 64) {
            // Longer than any listing: output that merely imitates a marker.
            capturing = false;
            keepFrom = h.length - longestMarkerPrefixAtEnd(h);
        }
        held.reset();
        held.write(h, keepFrom, h.length - keepFrom);
        return keepFrom == 0 ? null : Arrays.copyOf(h, keepFrom);
    }

    /**
     * Ends the stream (the channel's stdout ended): when what is held is not a whole, readable listing, it is
     * delivered to {@code out} as the program's output. Idempotent.
     */
    public void streamEnded(OutputSink out) {
        byte[] deliver;
        synchronized (this) {
            if (ended) {
                return;
            }
            ended = true;
            byte[] h = held.toByteArray();
            Integer status = capturing ? trailerStatus(h) : null;
            parsed = status == null ? null : parse(h, marker.length, h.length - trailer(status).length);
            listedStatus = status;
            deliver = parsed == null ? h : null;
            held.reset();
        }
        if (deliver != null && deliver.length > 0) {
            out.write(StdStream.STDOUT, deliver, 0, deliver.length);
        }
    }

    /**
     * The listing, once the stream ended; null when none arrived whole and readable, when it does not end with the
     * run's exit status, or when the run timed out or was killed ({@code usable} false).
     */
    public synchronized FolderSnapshot snapshot(int exitCode, boolean usable) {
        if (!ended || parsed == null || !usable || listedStatus != exitCode) {
            return null;
        }
        return parsed;
    }

    /** The trailer's exit status when {@code h} ends with a trailer of this run; else null. */
    private Integer trailerStatus(byte[] h) {
        int end = h.length - 1;
        if (end < marker.length || h[end] != '\n') {
            return null;
        }
        int sp = end - 1;
        while (sp > 0 && h[sp] != ' ') {
            sp--;
        }
        String code = new String(h, sp + 1, end - sp - 1, StandardCharsets.US_ASCII);
        if (!code.matches("-?[0-9]{1,10}")) {
            return null;
        }
        int status;
        try {
            status = Integer.parseInt(code);
        } catch (NumberFormatException e) {
            return null;
        }
        byte[] t = trailer(status);
        if (h.length - t.length < marker.length
                || !Arrays.equals(h, h.length - t.length, h.length, t, 0, t.length)) {
            return null;
        }
        return status;
    }

    private byte[] trailer(int status) {
        String s = "\u0001end " + nonce + " " + status + "\n";
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** The records between {@code from} and {@code to}; null when they failed or cannot be read. */
    private FolderSnapshot parse(byte[] h, int from, int to) {
        List<FolderSnapshot.Entry> entries = new ArrayList<>();
        boolean complete = false;
        int start = from;
        for (int i = from; i < to; i++) {
            if (h[i] != 0) {
                continue;
            }
            String rec = utf8(h, start, i);
            start = i + 1;
            if (rec == null) {
                return null;
            }
            if (rec.startsWith("E")) {
                if (!rec.equals("E0") || start != to) {
                    return null; // the listing failed, or something follows its end
                }
                complete = true;
                break;
            }
            FolderSnapshot.Entry e = entry(rec);
            if (e == null) {
                return null;
            }
            entries.add(e);
        }
        if (entries.size() > maxEntries) {
            complete = false;
        }
        // Without its end record the listing was cut at a bound (what follows its last NUL is a partial record).
        return new FolderSnapshot(folders, complete ? entries : entries.subList(0, Math.min(entries.size(),
                maxEntries)), complete);
    }

    /** One record; null when it is malformed or names a path outside the folders. */
    private FolderSnapshot.Entry entry(String rec) {
        String[] f = rec.split("\t", 4);
        if (f.length != 4 || f[0].length() != 1 || !normal(f[3]) || !inFolders(f[3])) {
            return null;
        }
        FolderSnapshot.Kind kind = switch (f[0].charAt(0)) {
            case 'f' -> FolderSnapshot.Kind.FILE;
            case 'd' -> FolderSnapshot.Kind.DIRECTORY;
            case 'l' -> FolderSnapshot.Kind.LINK;
            default -> FolderSnapshot.Kind.OTHER;
        };
        try {
            long size = Long.parseLong(f[1]);
            BigDecimal t = new BigDecimal(f[2]);
            long seconds = t.setScale(0, RoundingMode.FLOOR).longValueExact();
            int nanos = t.subtract(BigDecimal.valueOf(seconds)).movePointRight(9).intValue();
            Instant mtime = Instant.ofEpochSecond(seconds, nanos).truncatedTo(precision);
            return new FolderSnapshot.Entry(f[3], kind, kind == FolderSnapshot.Kind.DIRECTORY ? 0 : size, mtime);
        } catch (NumberFormatException | ArithmeticException | DateTimeException e) {
            return null;
        }
    }

    private boolean inFolders(String path) {
        for (String f : folders) {
            if (path.equals(f) || path.startsWith(f + "/")) {
                return true;
            }
        }
        return false;
    }

    /** A relative path without empty, {@code .} or {@code ..} segments, newline-free for a folder. */
    private static boolean normal(String path) {
        if (path.isEmpty() || path.startsWith("/") || path.endsWith("/") || path.indexOf('\0') >= 0) {
            return false;
        }
        for (String seg : path.split("/", -1)) {
            if (seg.isEmpty() || seg.equals(".") || seg.equals("..")) {
                return false;
            }
        }
        return true;
    }

    private static String utf8(byte[] b, int from, int to) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b, from, to - from))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private static int indexOf(byte[] h, byte[] m, int from) {
        outer:
        for (int i = from; i + m.length <= h.length; i++) {
            for (int j = 0; j < m.length; j++) {
                if (h[i + j] != m[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** How many bytes at the end of {@code h} are a proper prefix of the marker. */
    private int longestMarkerPrefixAtEnd(byte[] h) {
        for (int n = Math.min(marker.length - 1, h.length); n > 0; n--) {
            if (Arrays.equals(h, h.length - n, h.length, marker, 0, n)) {
                return n;
            }
        }
        return 0;
    }
}
