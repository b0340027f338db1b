package dev.codeexec.e2b;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * JSON of both planes, as trees: requests are built field by field (proto3 JSON omits defaults, and envd reads an
 * absent {@code stdin} as true, so what is sent is spelled out), answers are read leniently (unknown fields are
 * ignored: envd and the API add fields over time; 64-bit integers arrive as strings).
 */
final class Json {

    static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {
    }

    static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    static byte[] bytes(JsonNode node) {
        try {
            return MAPPER.writeValueAsBytes(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode JSON", e);
        }
    }

    /** Parses an answer; null when it is not JSON. */
    static JsonNode parseOrNull(byte[] body) {
        if (body == null || body.length == 0) {
            return null;
        }
        try {
            return MAPPER.readTree(body);
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Parses an answer that must be JSON.
     *
     * @throws E2bProtocolException when it is not
     */
    static JsonNode parse(byte[] body, String what) {
        JsonNode n = parseOrNull(body);
        if (n == null || n.isMissingNode()) {
            throw new E2bProtocolException("the answer to '" + what + "' is not JSON: " + preview(body), 0, null);
        }
        return n;
    }

    /** A text field, or null when absent, null or not text. */
    static String text(JsonNode n, String field) {
        JsonNode v = n == null ? null : n.get(field);
        return v == null || v.isNull() ? null : v.isValueNode() ? v.asText() : null;
    }

    /**
     * A 64-bit integer field: proto3 JSON sends it as a string ({@code "size":"42"}), parsers accept numbers too;
     * absent is the default, 0.
     */
    static long int64(JsonNode n, String field) {
        JsonNode v = n == null ? null : n.get(field);
        if (v == null || v.isNull()) {
            return 0;
        }
        if (v.isNumber()) {
            return v.asLong();
        }
        try {
            return Long.parseLong(v.asText().strip());
        } catch (NumberFormatException e) {
            throw new E2bProtocolException("field '" + field + "' is not an integer: " + v, 0, null);
        }
    }

    /** The first characters of a body, printable, for a message. */
    static String preview(byte[] body) {
        if (body == null || body.length == 0) {
            return "(empty)";
        }
        String s = new String(body, 0, Math.min(body.length, 160), StandardCharsets.UTF_8)
                .replaceAll("[\\p{Cntrl}&&[^\n]]", "?").replace('\n', ' ');
        return body.length > 160 ? s + "..." : s;
    }
}
