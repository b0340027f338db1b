package dev.codeexec.langchain4j;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.math.BigDecimal;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A tool call's arguments with lenient, explained conversion: models send {@code "30"} for 30 and {@code "true"} for
 * true, and both faces (the {@code @Tool} methods and the tool provider) validate through this one class. Every
 * failure is an {@link InvalidArgument} whose message names the argument and the bad value.
 */
final class ToolArguments {

    // Sizes are checked by the tools (with messages that name the limit), not by the parser's default 20 MB cap.
    private static final ObjectMapper JSON = JsonMapper.builder(JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(Integer.MAX_VALUE).build())
            .build()).build();
    private static final int MAX_ECHO = 60;

    /** A bad argument; the message is written for the model. */
    static final class InvalidArgument extends RuntimeException {
        InvalidArgument(String message) {
            super(message, null, false, false);
        }
    }

    private final Map<String, Object> values;

    ToolArguments(Map<String, Object> values) {
        this.values = values == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(values));
    }

    /** Parses a tool call's raw JSON arguments; blank means no arguments. */
    static ToolArguments parse(String json) {
        return parse(json, Long.MAX_VALUE, 0);
    }

    /**
     * Parses a tool call's raw JSON arguments, refusing more than {@code maxChars} characters before parsing.
     *
     * @param maxWriteBytes the write limit, named in the refusal
     */
    @SuppressWarnings("unchecked")
    static ToolArguments parse(String json, long maxChars, long maxWriteBytes) {
        if (json == null || json.isBlank()) {
            return new ToolArguments(Map.of());
        }
        if (json.length() > maxChars) {
            throw new InvalidArgument("the arguments are " + json.length() + " characters, more than the "
                    + maxChars + " these tools accept (files written by a tool are limited to " + maxWriteBytes
                    + " bytes); generate large content with a program instead");
        }
        Object parsed;
        try {
            parsed = JSON.readValue(json, Object.class);
        } catch (JsonProcessingException e) {
            throw new InvalidArgument("the arguments are not valid JSON (" + e.getOriginalMessage()
                    + "); send a JSON object such as {\"command\": \"ls\"}");
        }
        if (!(parsed instanceof Map)) {
            throw new InvalidArgument("the arguments must be a JSON object, got " + echo(String.valueOf(parsed)));
        }
        return new ToolArguments((Map<String, Object>) parsed);
    }

    Map<String, Object> asMap() {
        return values;
    }

    /** The first present value among {@code names} (aliases), or null. */
    private Object raw(String... names) {
        for (String n : names) {
            Object v = values.get(n);
            if (v != null) {
                return v;
            }
        }
        return null;
    }

    String requiredString(String... names) {
        String s = string(names);
        if (s == null || s.isBlank()) {
            throw new InvalidArgument("'" + names[0] + "' is required and must be a non-empty string");
        }
        return s;
    }

    String string(String... names) {
        Object v = raw(names);
        if (v == null) {
            return null;
        }
        if (v instanceof String s) {
            return s;
        }
        if (v instanceof Number || v instanceof Boolean) {
            return v.toString();
        }
        throw new InvalidArgument("'" + names[0] + "' must be a string, got " + typeOf(v));
    }

    Long integer(String... names) {
        Object v = raw(names);
        if (v == null) {
            return null;
        }
        try {
            if (v instanceof Number n) {
                return new BigDecimal(n.toString()).longValueExact();
            }
            if (v instanceof String s && !s.isBlank()) {
                return new BigDecimal(s.strip()).longValueExact();
            }
        } catch (ArithmeticException | NumberFormatException e) {
            // fall through to the explanation below
        }
        throw new InvalidArgument("'" + names[0] + "' must be a whole number, got " + echo(String.valueOf(v)));
    }

    Boolean bool(String... names) {
        Object v = raw(names);
        if (v == null) {
            return null;
        }
        if (v instanceof Boolean b) {
            return b;
        }
        if (v instanceof String s) {
            String t = s.strip().toLowerCase(Locale.ROOT);
            if (t.equals("true")) {
                return true;
            }
            if (t.equals("false")) {
                return false;
            }
        }
        throw new InvalidArgument("'" + names[0] + "' must be true or false, got " + echo(String.valueOf(v)));
    }

    /** A JSON object of string values (numbers and booleans are accepted as their text). */
    Map<String, String> stringMap(String... names) {
        Object v = raw(names);
        if (v == null) {
            return Map.of();
        }
        if (v instanceof String s && s.isBlank()) {
            return Map.of();
        }
        if (v instanceof String s && s.strip().startsWith("{")) {
            // Some models double-encode objects as strings.
            v = parse(s).asMap();
        }
        if (!(v instanceof Map<?, ?> m)) {
            throw new InvalidArgument("'" + names[0] + "' must be a JSON object of strings, got " + typeOf(v));
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : m.entrySet()) {
            Object val = e.getValue();
            if (val == null || val instanceof Map || val instanceof Iterable) {
                throw new InvalidArgument("'" + names[0] + "." + e.getKey() + "' must be a string, got "
                        + typeOf(val));
            }
            out.put(String.valueOf(e.getKey()), val.toString());
        }
        return out;
    }

    static String echo(String s) {
        String t = s.length() > MAX_ECHO ? s.substring(0, MAX_ECHO) + "..." : s;
        return "'" + t.replace('\n', ' ') + "'";
    }

    private static String typeOf(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof Map) {
            return "an object";
        }
        if (v instanceof Iterable) {
            return "an array";
        }
        if (v instanceof Number) {
            return "a number";
        }
        if (v instanceof Boolean) {
            return "a boolean";
        }
        return "a string";
    }
}
