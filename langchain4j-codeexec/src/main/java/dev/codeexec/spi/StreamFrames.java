package dev.codeexec.spi;

import java.nio.ByteBuffer;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * Frames that carry several connections (and a few control messages) over one byte stream, such as a program's
 * stdin and stdout: a 9-byte header, {@code [type: 1 byte][connection id: 4 bytes][length: 4 bytes]} (big-endian),
 * then {@code length} bytes of payload. The Kubernetes egress tunnel and the relay of a kernel inside a boundary
 * speak it; each names its own frame types and, per direction, which types it accepts and how much payload each may
 * carry ({@link Type}).
 *
 * <p>A peer's stream may be hostile (a program of the workspace may write it): the {@link Decoder} refuses an unknown
 * type, a payload where none belongs and a length over the type's bound with a {@link Malformed}, which ends that
 * stream's user (never the engine), and holds at most one frame. Stateless apart from each decoder; a decoder is used
 * by one thread.
 */
public final class StreamFrames {

    /** Bytes of a header. */
    public static final int HEADER = 9;

    private StreamFrames() {
    }

    /**
     * A frame type a decoder accepts.
     *
     * @param code       the type's byte on the wire
     * @param name       its name in messages
     * @param maxPayload the most bytes of payload it may carry; 0 when none belongs
     */
    public record Type(byte code, String name, int maxPayload) {
        public Type {
            if (maxPayload < 0) {
                throw new IllegalArgumentException("maxPayload (" + maxPayload + ") must not be negative");
            }
        }
    }

    /** A frame that breaks the format: the stream's user ends. */
    public static final class Malformed extends Exception {
        public Malformed(String message) {
            super(message);
        }
    }

    /** Receives decoded frames; {@code payload} is valid only during the call. */
    @FunctionalInterface
    public interface Handler {
        void frame(byte type, int id, byte[] payload, int offset, int length) throws Malformed;
    }

    /** A frame without payload. */
    public static byte[] encode(byte type, int id) {
        return encode(type, id, new byte[0], 0, 0);
    }

    /** A frame carrying {@code length} bytes of {@code b}; the caller keeps to the receiver's bound. */
    public static byte[] encode(byte type, int id, byte[] b, int offset, int length) {
        if (length < 0) {
            throw new IllegalArgumentException("payload length (" + length + ") must not be negative");
        }
        ByteBuffer f = ByteBuffer.allocate(HEADER + length);
        f.put(type).putInt(id).putInt(length).put(b, offset, length);
        return f.array();
    }

    /**
     * Decodes a stream of frames in the chunks it arrives in (a frame may span chunks, a chunk may hold several),
     * accepting only the types it was given. Holds at most one frame. Open for a codec that names its decoder (the
     * Kubernetes tunnel's).
     */
    public static class Decoder {
        private final Map<Byte, Type> accepted = new HashMap<>();
        private final byte[] header = new byte[HEADER];
        private int headerFill;
        private byte type;
        private int id;
        private byte[] payload = new byte[0];
        private int payloadFill;
        private boolean inPayload;

        /** @param accepted the frame types this direction of the stream may carry */
        public Decoder(Collection<Type> accepted) {
            for (Type t : accepted) {
                this.accepted.put(t.code(), t);
            }
        }

        /** Feeds {@code length} bytes; calls {@code handler} for each whole frame, in order. */
        public final void feed(byte[] b, int offset, int length, Handler handler) throws Malformed {
            int i = offset;
            int end = offset + length;
            while (i < end) {
                if (!inPayload) {
                    int n = Math.min(HEADER - headerFill, end - i);
                    System.arraycopy(b, i, header, headerFill, n);
                    headerFill += n;
                    i += n;
                    if (headerFill < HEADER) {
                        return;
                    }
                    headerFill = 0;
                    startFrame();
                    if (payload.length == 0) {
                        handler.frame(type, id, payload, 0, 0);
                        continue;
                    }
                    inPayload = true;
                }
                int n = Math.min(payload.length - payloadFill, end - i);
                System.arraycopy(b, i, payload, payloadFill, n);
                payloadFill += n;
                i += n;
                if (payloadFill == payload.length) {
                    inPayload = false;
                    handler.frame(type, id, payload, 0, payload.length);
                }
            }
        }

        private void startFrame() throws Malformed {
            ByteBuffer h = ByteBuffer.wrap(header);
            type = h.get();
            id = h.getInt();
            int length = h.getInt();
            Type t = accepted.get(type);
            if (t == null) {
                throw new Malformed("an unknown frame type " + (type & 0xff));
            }
            if (t.maxPayload() == 0 && length != 0) {
                throw new Malformed("a " + t.name() + " frame with " + Integer.toUnsignedString(length)
                        + " bytes of payload (none belongs)");
            }
            if (length < 0 || length > t.maxPayload()) {
                throw new Malformed("a " + t.name() + " frame of " + Integer.toUnsignedString(length)
                        + " bytes (at most " + t.maxPayload() + ")");
            }
            payload = length == 0 ? new byte[0] : payload.length == length ? payload : new byte[length];
            payloadFill = 0;
        }

        /** Whether a frame was started and not finished (the stream ended inside it). */
        public final boolean midFrame() {
            return headerFill > 0 || inPayload;
        }
    }
}
