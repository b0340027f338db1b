package dev.codeexec.artifact;

import com.fasterxml.jackson.databind.JsonNode;
import dev.codeexec.engine.BackendUnavailableException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The streaming side of {@link FileSystemArtifactService}: a save that copies a stream into the temporary file while
 * hashing it, and a read that lends the content file as a stream whose end checks the size and SHA-256 recorded at
 * save time, so that neither ever holds a whole version in memory.
 */
final class ArtifactStreams {

    private static final int BUFFER = 64 * 1024;

    private ArtifactStreams() {
    }

    /** The source stream of a save failed (not the store): reported to the caller as its own failure. */
    static final class SourceFailure extends IOException {
        SourceFailure(IOException cause) {
            super(cause.getMessage(), cause);
        }
    }

    /** Copies {@code in} into {@code ch}, hashing it; returns the version's metadata. */
    static byte[] copy(InputStream in, FileChannel ch, String mime) throws IOException {
        MessageDigest sha = sha256();
        byte[] buf = new byte[BUFFER];
        long size = 0;
        while (true) {
            int n;
            try {
                n = in.read(buf);
            } catch (IOException e) {
                throw new SourceFailure(e);
            }
            if (n < 0) {
                break;
            }
            sha.update(buf, 0, n);
            ByteBuffer b = ByteBuffer.wrap(buf, 0, n);
            while (b.hasRemaining()) {
                ch.write(b);
            }
            size += n;
        }
        return ArtifactVersions.metadata(size, HexFormat.of().formatHex(sha.digest()), mime);
    }

    /** Whether a version is visible: its content and metadata files exist as regular files (links not followed). */
    static boolean visible(Path dir, int version) throws IOException {
        java.nio.file.attribute.BasicFileAttributes c = ArtifactVersions.attributes(
                dir.resolve(ArtifactVersions.contentFile(version)));
        java.nio.file.attribute.BasicFileAttributes m = ArtifactVersions.attributes(
                dir.resolve(ArtifactVersions.metaFile(version)));
        return c != null && c.isRegularFile() && m != null && m.isRegularFile();
    }

    /** Lends the content of one visible version, checked against its metadata at the end. */
    static <T> T read(Path dir, String name, int version, ArtifactReader<T> reader) throws IOException {
        JsonNode meta = ArtifactVersions.readMetadata(dir, version);
        long size = meta.path("size").asLong(-1);
        String expected = meta.path("sha256").asText("");
        try (InputStream raw = Files.newInputStream(dir.resolve(ArtifactVersions.contentFile(version)),
                LinkOption.NOFOLLOW_LINKS)) {
            InputStream checked = new Checked(raw, size, expected, name, version);
            try {
                return reader.read(checked, size);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform provides SHA-256", e);
        }
    }

    /** Hashes what passes; at the end, fails when size or digest differ from what was saved. */
    private static final class Checked extends FilterInputStream {
        private final MessageDigest sha = sha256();
        private final long size;
        private final String expected;
        private final String name;
        private final int version;
        private long read;

        Checked(InputStream in, long size, String expected, String name, int version) {
            super(in);
            this.size = size;
            this.expected = expected;
            this.name = name;
            this.version = version;
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
                read += n;
            } else if (n < 0 && (read != size || !HexFormat.of().formatHex(sha.digest()).equals(expected))) {
                throw new IOException(new BackendUnavailableException("artifact '" + name + "' version " + version
                        + " is damaged in the store (size or checksum differs from what was saved)"));
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            byte[] buf = new byte[(int) Math.min(n, BUFFER)];
            int r = read(buf, 0, buf.length);
            return Math.max(r, 0);
        }
    }
}
