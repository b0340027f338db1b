package dev.codeexec.langchain4j;

import java.nio.charset.StandardCharsets;

/**
 * Cuts long program output to a head and a tail under a byte budget, so a model sees how the output starts and how
 * it ends (where errors usually are) without flooding its context. Cuts fall on UTF-8 character boundaries.
 */
final class OutputWindow {

    /** The text shown and how many bytes of the original were left out of the middle. */
    record Window(String text, long omittedBytes) {
        boolean cut() {
            return omittedBytes > 0;
        }
    }

    private OutputWindow() {
    }

    /** {@code text} unchanged when it fits {@code maxBytes}, else its first half and last half with a marker. */
    static Window window(String text, int maxBytes) {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        if (b.length <= maxBytes) {
            return new Window(text, 0);
        }
        int headLen = boundaryBackward(b, (maxBytes + 1) / 2);
        int tailStart = boundaryForward(b, b.length - (maxBytes - (maxBytes + 1) / 2));
        long omitted = (long) tailStart - headLen;
        String head = new String(b, 0, headLen, StandardCharsets.UTF_8);
        String tail = new String(b, tailStart, b.length - tailStart, StandardCharsets.UTF_8);
        return new Window(head + "\n...[" + omitted + " bytes omitted]...\n" + tail, omitted);
    }

    /**
     * Budgets for two streams sharing {@code maxBytes}: a stream that needs less than half gives the rest to the other.
     */
    static int[] split(int lenA, int lenB, int maxBytes) {
        if ((long) lenA + lenB <= maxBytes) {
            return new int[] {lenA, lenB};
        }
        int half = maxBytes / 2;
        if (lenA <= half) {
            return new int[] {lenA, maxBytes - lenA};
        }
        if (lenB <= half) {
            return new int[] {maxBytes - lenB, lenB};
        }
        return new int[] {maxBytes - half, half};
    }

    static int utf8Length(String s) {
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n++;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c) && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    // A UTF-8 continuation byte is 10xxxxxx; a cut must not land before one.
    private static int boundaryBackward(byte[] b, int at) {
        int i = Math.max(0, Math.min(at, b.length));
        while (i > 0 && i < b.length && (b[i] & 0xC0) == 0x80) {
            i--;
        }
        return i;
    }

    private static int boundaryForward(byte[] b, int at) {
        int i = Math.max(0, Math.min(at, b.length));
        while (i < b.length && (b[i] & 0xC0) == 0x80) {
            i++;
        }
        return i;
    }
}
