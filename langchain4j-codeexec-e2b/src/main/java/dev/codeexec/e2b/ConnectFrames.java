package dev.codeexec.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;

/**
 * Connect's envelope framing for streaming RPCs (connectrpc.com/docs/protocol): each message is a flags byte, a
 * big-endian unsigned 32-bit length and that many bytes of payload (here JSON). A request is exactly one envelope; an
 * answer is zero or more message envelopes (flags {@code 0x00}) and then one end-of-stream envelope (flags
 * {@value #END_STREAM}) whose JSON carries an error or trailers: {@code {}} on success,
 * {@code {"error":{"code":"…","message":"…"},"metadata":{…}}} otherwise, so a stream can fail inside an HTTP 200.
 *
 * <p>Compression ({@value #COMPRESSED}) is never negotiated, so a compressed envelope is a protocol failure, like an
 * unknown flag, a length beyond the bound, or a stream that ends inside an envelope.
 */
final class ConnectFrames {

    /** Flag: the payload is compressed. */
    static final int COMPRESSED = 0x01;
    /** Flag: the end-of-stream envelope. */
    static final int END_STREAM = 0x02;

    /** The largest payload accepted: {@value} bytes (envd's output chunks are 32 KiB, base64 makes them ~43 KiB). */
    static final int MAX_PAYLOAD = 16 << 20;

    private ConnectFrames() {
    }

    /** One envelope as read. */
    record Frame(int flags, byte[] payload) {
        boolean endStream() {
            return (flags & END_STREAM) != 0;
        }
    }

    /** The end-of-stream message: its error code and message (null on success). */
    record EndStream(String errorCode, String errorMessage) {
        boolean ok() {
            return errorCode == null;
        }
    }

    /** A message envelope (flags 0) around {@code payload}. */
    static byte[] envelope(byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(5 + payload.length);
        b.put((byte) 0).putInt(payload.length).put(payload);
        return b.array();
    }

    /**
     * Reads the next envelope.
     *
     * @return the envelope, or null when the stream ended cleanly before one began
     * @throws E2bProtocolException for a stream that ended inside an envelope, unknown or compression flags, or a
     *                              length beyond {@link #MAX_PAYLOAD}
     * @throws IOException          when reading failed
     */
    static Frame read(InputStream in) throws IOException {
        int flags = in.read();
        if (flags < 0) {
            return null;
        }
        byte[] len = in.readNBytes(4);
        if (len.length < 4) {
            throw new E2bProtocolException("the stream ended inside an envelope header (" + (1 + len.length)
                    + " of 5 bytes)", 0, null);
        }
        long length = ByteBuffer.wrap(len).getInt() & 0xFFFFFFFFL;
        if ((flags & ~(COMPRESSED | END_STREAM)) != 0) {
            throw new E2bProtocolException("unknown envelope flags 0x" + Integer.toHexString(flags), 0, null);
        }
        if ((flags & COMPRESSED) != 0) {
            throw new E2bProtocolException("a compressed envelope, though no compression was negotiated", 0, null);
        }
        if (length > MAX_PAYLOAD) {
            throw new E2bProtocolException("an envelope of " + length + " bytes, more than the " + MAX_PAYLOAD
                    + " accepted", 0, null);
        }
        byte[] payload;
        try {
            payload = in.readNBytes((int) length);
        } catch (EOFException e) {
            payload = new byte[0];
        }
        if (payload.length < length) {
            throw new E2bProtocolException("the stream ended inside an envelope (" + payload.length + " of " + length
                    + " bytes)", 0, null);
        }
        return new Frame(flags, payload);
    }

    /** Parses an end-of-stream payload. */
    static EndStream endStream(byte[] payload) {
        JsonNode n = Json.parse(payload, "end of stream");
        JsonNode error = n.get("error");
        if (error == null || error.isNull()) {
            return new EndStream(null, null);
        }
        String code = Json.text(error, "code");
        return new EndStream(code == null ? "unknown" : code, Json.text(error, "message"));
    }
}
