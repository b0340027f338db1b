package dev.codeexec.artifact;

import com.fasterxml.jackson.databind.JsonNode;
import dev.codeexec.engine.BackendUnavailableException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;

/**
 * The streaming side of {@link FileSystemArtifactService}: a save that copies a stream into the temporary file while
 * hashing it (or while a writer pushes it), and a read that lends the content file through a
 * {@link DigestCheckingStream} whose end checks the size and SHA-256 recorded at save time, so that neither ever holds a whole version in memory.
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
        MessageDigest sha = DigestCheckingStream.sha256();
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
        return ArtifactVersions.metadata(size, DigestCheckingStream.hex(sha), mime);
    }

    /**
     * Lets {@code writer} push the bytes into {@code ch}, hashing them; returns the version's metadata. A failure to
     * write the channel is the store's; any other {@link IOException} of the writer is its own ({@link SourceFailure}).
     */
    static byte[] write(ArtifactWriter writer, FileChannel ch, String mime) throws IOException {
        HashingChannelOutput out = new HashingChannelOutput(ch);
        try {
            writer.write(out);
            out.flush();
        } catch (StoreFailure e) {
            throw (IOException) e.getCause();
        } catch (IOException e) {
            throw new SourceFailure(e);
        }
        return ArtifactVersions.metadata(out.size, DigestCheckingStream.hex(out.sha), mime);
    }

    /** A failure of the store's own channel, carried through the writer to tell it from the writer's failures. */
    private static final class StoreFailure extends IOException {
        StoreFailure(IOException cause) {
            super(cause.getMessage(), cause);
        }
    }

    /** Buffers, hashes and counts what the writer pushes, then writes it into the channel. */
    private static final class HashingChannelOutput extends java.io.OutputStream {
        private final FileChannel ch;
        private final MessageDigest sha = DigestCheckingStream.sha256();
        private final ByteBuffer buf = ByteBuffer.allocate(BUFFER);
        private long size;

        HashingChannelOutput(FileChannel ch) {
            this.ch = ch;
        }

        @Override
        public void write(int b) throws IOException {
            if (!buf.hasRemaining()) {
                flush();
            }
            buf.put((byte) b);
            sha.update((byte) b);
            size++;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            java.util.Objects.checkFromIndexSize(off, len, b.length);
            sha.update(b, off, len);
            size += len;
            while (len > 0) {
                if (!buf.hasRemaining()) {
                    flush();
                }
                int n = Math.min(len, buf.remaining());
                buf.put(b, off, n);
                off += n;
                len -= n;
            }
        }

        @Override
        public void flush() throws IOException {
            buf.flip();
            try {
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
            } catch (IOException e) {
                throw new StoreFailure(e);
            } finally {
                buf.clear();
            }
        }
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
            InputStream checked = new DigestCheckingStream(raw, expected, size, what -> new IOException(
                    new BackendUnavailableException("artifact '" + name + "' version " + version
                            + " is damaged in the store (size or checksum differs from what was saved)")));
            try {
                return reader.read(checked, size);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
