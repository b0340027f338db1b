package dev.codeexec.artifact;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A stream that hashes what passes through it and, at its end, fails unless exactly the expected number of bytes with
 * the expected SHA-256 went by; a stream longer than expected fails as soon as it is. Whoever consumes it (a store
 * lending a version, a workspace file system writing a file, a snapshot reading a pack) then drops what it did with the
 * bytes, so bytes that do not match their digest are never kept. The failure is the caller's own
 * {@link IOException}, made by a {@link Mismatch} function, so that each caller says what was damaged in its terms.
 */
public final class DigestCheckingStream extends FilterInputStream {

    private final MessageDigest sha = sha256();
    private final String expectedSha;
    private final long expectedSize;
    private final Mismatch mismatch;
    private long count;
    private boolean verified;

    /**
     * @param in           the bytes to check
     * @param expectedSha  the SHA-256 they must have, 64 lower-case hex digits
     * @param expectedSize how many bytes there must be
     * @param mismatch     makes the failure, given what differs
     */
    public DigestCheckingStream(InputStream in, String expectedSha, long expectedSize, Mismatch mismatch) {
        super(in);
        this.expectedSha = expectedSha;
        this.expectedSize = expectedSize;
        this.mismatch = mismatch;
    }

    /** Makes the failure of a stream whose bytes differ from what was expected. */
    @FunctionalInterface
    public interface Mismatch {
        /**
         * @param what what differs, such as "SHA-256 ab… where cd… is recorded"
         * @return the exception the read throws
         */
        IOException failure(String what);
    }

    /** A new SHA-256 digest. */
    public static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform provides SHA-256", e);
        }
    }

    /** The lower-case hex form of a finished digest. */
    public static String hex(MessageDigest d) {
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
        if (verified) {
            return -1;
        }
        int n = super.read(b, off, len);
        if (n > 0) {
            sha.update(b, off, n);
            count += n;
            if (count > expectedSize) {
                throw mismatch.failure("more than the " + expectedSize + " bytes recorded");
            }
        } else if (n < 0) {
            if (count != expectedSize) {
                throw mismatch.failure(count + " bytes where " + expectedSize + " are recorded");
            }
            String actual = hex(sha);
            if (!actual.equals(expectedSha)) {
                throw mismatch.failure("SHA-256 " + actual + " where " + expectedSha + " is recorded");
            }
            verified = true; // the digest is spent: a read after the end must not check an empty one
        }
        return n;
    }

    /** Reads what is left to the end, where the size and digest are checked: for a consumer that stopped early. */
    public void finish() throws IOException {
        byte[] buf = new byte[8192];
        while (read(buf, 0, buf.length) >= 0) {
            // only the check at the end matters
        }
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
