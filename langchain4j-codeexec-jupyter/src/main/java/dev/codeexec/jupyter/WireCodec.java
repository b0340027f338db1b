package dev.codeexec.jupyter;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The Jupyter wire format of one signed message: {@code [identities..., "<IDS|MSG>", hmac, header, parent_header,
 * metadata, content, buffers...]}, each dict a UTF-8 JSON frame, the signature the lowercase hex HMAC-SHA256 of the
 * four dict frames' exact bytes under the connection key.
 *
 * <p>Not thread-safe (a {@link Mac} is stateful): each kernel's socket-reader thread owns one.
 */
final class WireCodec {

    /** The frame that separates routing identities (and IOPub topics) from the message. */
    static final byte[] DELIMITER = "<IDS|MSG>".getBytes(StandardCharsets.US_ASCII);

    private static final HexFormat HEX = HexFormat.of();

    private final Mac mac;

    /**
     * @param key the connection file's key, used as its UTF-8 bytes; must not be empty (this client never turns
     *            authentication off)
     */
    WireCodec(String key) {
        if (key == null || key.isEmpty()) {
            throw new IllegalArgumentException("key must not be empty: messages are always signed");
        }
        try {
            this.mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
        }
    }

    /** The frames to send for a message (no identities: a DEALER adds none). */
    List<byte[]> encode(byte[] header, byte[] parent, byte[] metadata, byte[] content) {
        byte[] signature = sign(header, parent, metadata, content).getBytes(StandardCharsets.US_ASCII);
        return List.of(DELIMITER, signature, header, parent, metadata, content);
    }

    /** The lowercase hex HMAC-SHA256 of the frames, in order. */
    String sign(byte[]... frames) {
        for (byte[] f : frames) {
            mac.update(f);
        }
        return HEX.formatHex(mac.doFinal());
    }

    /**
     * Splits received frames at the delimiter and checks the signature.
     *
     * @return the message's parts, or a {@link Decoded} with a problem ({@code malformed} or a bad signature): such a
     *         message must be dropped
     */
    Decoded decode(List<byte[]> frames) {
        int d = -1;
        for (int i = 0; i < frames.size(); i++) {
            if (Arrays.equals(frames.get(i), DELIMITER)) {
                d = i;
                break;
            }
        }
        if (d < 0 || frames.size() < d + 6) {
            return Decoded.problem("malformed message (" + frames.size() + " frames, delimiter "
                    + (d < 0 ? "missing" : "at " + d) + ")");
        }
        byte[] signature = frames.get(d + 1);
        byte[] header = frames.get(d + 2);
        byte[] parent = frames.get(d + 3);
        byte[] metadata = frames.get(d + 4);
        byte[] content = frames.get(d + 5);
        byte[] expected = sign(header, parent, metadata, content).getBytes(StandardCharsets.US_ASCII);
        // Constant time: the comparison must not tell a forger how many leading characters were right.
        if (!MessageDigest.isEqual(expected, signature)) {
            return Decoded.problem("bad signature");
        }
        List<byte[]> buffers = new ArrayList<>(frames.subList(d + 6, frames.size()));
        return new Decoded(header, parent, metadata, content, buffers, null);
    }

    /**
     * A decoded message, or why it was dropped.
     *
     * @param problem null for a well-formed message with a valid signature
     */
    record Decoded(byte[] header, byte[] parent, byte[] metadata, byte[] content, List<byte[]> buffers,
                   String problem) {

        static Decoded problem(String why) {
            return new Decoded(null, null, null, null, List.of(), why);
        }

        boolean ok() {
            return problem == null;
        }
    }
}
