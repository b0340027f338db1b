package dev.codeexec.langchain4j;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** Whether a window of a file is shown to the model as text or described as binary ({@code workspace_read_file}). */
final class BinaryContent {

    private BinaryContent() {
    }

    /** Text is shown when it is valid UTF-8 without NULs and the type is not a known binary one. */
    static boolean isBinary(byte[] content, String mimeType) {
        String m = mimeType == null ? "" : mimeType.toLowerCase(Locale.ROOT);
        if (m.startsWith("image/") && !m.contains("svg") || m.startsWith("audio/") || m.startsWith("video/")
                || m.equals("application/pdf") || m.equals("application/zip") || m.equals("application/gzip")) {
            return true;
        }
        for (byte b : content) {
            if (b == 0) {
                return true;
            }
        }
        // A window may end inside a multi-byte character: ignore an incomplete sequence at the very end.
        int len = content.length;
        int back = 0;
        while (back < 3 && len - back - 1 >= 0 && (content[len - back - 1] & 0xC0) == 0x80) {
            back++;
        }
        if (len - back - 1 >= 0 && (content[len - back - 1] & 0xC0) == 0xC0) {
            len = len - back - 1;
        }
        CharsetDecoder d = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        try {
            d.decode(ByteBuffer.wrap(content, 0, len));
            return false;
        } catch (CharacterCodingException e) {
            return true;
        }
    }
}
