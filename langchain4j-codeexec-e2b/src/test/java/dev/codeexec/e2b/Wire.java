package dev.codeexec.e2b;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * Bytes as envd sends them: Connect envelopes (flags byte, big-endian uint32 length, JSON), standard padded base64 for
 * {@code bytes} fields. {@code ConnectFramesTest} pins the envelope layout against literal bytes, so the stubs built
 * with this class are the wire format, not this class's idea of it.
 */
final class Wire {

    private Wire() {
    }

    static byte[] envelope(int flags, String json) {
        byte[] p = json.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(5 + p.length).put((byte) flags).putInt(p.length).put(p).array();
    }

    /** A message envelope (flags 0x00). */
    static byte[] message(String json) {
        return envelope(0x00, json);
    }

    /** The end-of-stream envelope (flags 0x02). */
    static byte[] end(String json) {
        return envelope(0x02, json);
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    static byte[] start(long pid) {
        return message("{\"event\":{\"start\":{\"pid\":" + pid + "}}}");
    }

    static byte[] stdout(String text) {
        return message("{\"event\":{\"data\":{\"stdout\":\"" + b64(text) + "\"}}}");
    }

    static byte[] stderr(String text) {
        return message("{\"event\":{\"data\":{\"stderr\":\"" + b64(text) + "\"}}}");
    }

    static byte[] keepalive() {
        return message("{\"event\":{\"keepalive\":{}}}");
    }

    /** The end event; exitCode is omitted when 0, as proto3 JSON does. */
    static byte[] exit(int code) {
        String status = code < 0 ? "signal: killed" : "exit status " + code;
        return message("{\"event\":{\"end\":{" + (code == 0 ? "" : "\"exitCode\":" + code + ",")
                + "\"exited\":" + (code >= 0) + ",\"status\":\"" + status + "\"}}}");
    }

    /** A whole helper's stream: start, stdout, end, end-of-stream. */
    static byte[] helper(long pid, String stdout, int exit) {
        return concat(start(pid), stdout.isEmpty() ? new byte[0] : stdout(stdout), exit(exit), end("{}"));
    }
}
