package dev.codeexec.workspace.snapshot;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A stream that hashes what passes through it and, at its end, fails with {@link Mismatch} unless exactly the expected
 * number of bytes with the expected SHA-256 went by; a stream longer than expected fails as soon as it is. Whoever
 * consumes it (an artifact store saving a blob, a workspace file system writing a file) then drops what it wrote, so
 * bytes that do not match their digest are never kept.
 */
final class DigestCheckingStream extends FilterInputStream {

    private final MessageDigest sha = sha256();
    private final String expectedSha;
    private final long expectedSize;
    private final String path;
    private long count;

    DigestCheckingStream(InputStream in, String expectedSha, long expectedSize, String path) {
        super(in);
        this.expectedSha = expectedSha;
        this.expectedSize = expectedSize;
        this.path = path;
    }

    /** The bytes did not match: size or SHA-256 differ from what was expected for {@link #path}. */
    static final class Mismatch extends IOException {
        private final String path;

        Mismatch(String path, String what) {
            super(what);
            this.path = path;
        }

        String path() {
            return path;
        }
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform provides SHA-256", e);
        }
    }

    /** The lower-case hex form of a finished digest. */
    static String hex(MessageDigest d) {
        return HexFormat.of().formatHex(d.digest());
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        int n = super.read(b, off, len);
        if (n > 0) {
            sha.update(b, off, n);
            count += n;
            if (count > expectedSize) {
                throw new Mismatch(path, "more than the " + expectedSize + " bytes recorded");
            }
        } else if (n < 0) {
            if (count != expectedSize) {
                throw new Mismatch(path, count + " bytes where " + expectedSize + " are recorded");
            }
            String actual = hex(sha);
            if (!actual.equals(expectedSha)) {
                throw new Mismatch(path, "SHA-256 " + actual + " where " + expectedSha + " is recorded");
            }
        }
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        byte[] buf = new byte[(int) Math.min(Math.max(n, 0), 8192)];
        int r = read(buf, 0, buf.length);
        return Math.max(r, 0);
    }

    @Override
    public boolean markSupported() {
        return false;
    }
}
