package dev.codeexec.langchain4j;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The last pass over the text of every error result before the model reads it ({@link ToolResult#error}). Messages
 * come from the engine as well as from the tools, so this pass makes sure of two things whatever their source:
 * <ul>
 *   <li>no Java exception class name reaches the model ({@code could not write 'x': FileSystemException} becomes
 *       {@code could not write 'x': the file system refused the operation}): a model cannot act on a class name, and
 *       it tells an attacker which library is underneath;</li>
 *   <li>a very long path (or any other very long word) keeps its first and last {@value #KEPT_CHARS} characters with
 *       a marker that says how much was left out, so that one path cannot fill the model's context.</li>
 * </ul>
 * Program output is never passed through here: a run's stdout and stderr are results, and the model must see them
 * as printed.
 */
final class ErrorText {

    /** Longer quoted strings and words than this are shortened. */
    static final int MAX_WORD_CHARS = 160;

    /** Characters kept at each end of a shortened word. */
    static final int KEPT_CHARS = 60;

    /**
     * A Java exception or error class name, simple or qualified, standing as a word of its own: not inside a quoted
     * path, a path segment or a file name ({@code work/MyException.java} stays).
     */
    private static final Pattern EXCEPTION_NAME = Pattern.compile(
            "(?<![\\w$./'-])(?:[a-z][a-z0-9_]*\\.)*([A-Z][A-Za-z0-9_$]*(?:Exception|Error))(?![\\w$'/-]|\\.\\w)");

    /**
     * A single-quoted string (the quotes not part of a word, so that the apostrophe of "the run's" opens none), or a
     * word (no white space, quote or parenthesis).
     */
    private static final Pattern QUOTED_OR_WORD = Pattern.compile("(?<!\\w)'[^'\\n]*'(?!\\w)|[^\\s'()]+");

    /** Plain words for the exceptions file operations end in; any other exception is "an unexpected error". */
    private static final Map<String, String> PLAIN = Map.ofEntries(
            Map.entry("AccessDeniedException", "permission denied"),
            Map.entry("NoSuchFileException", "no such file or folder"),
            Map.entry("FileNotFoundException", "no such file or folder"),
            Map.entry("FileAlreadyExistsException", "a file of that name already exists"),
            Map.entry("DirectoryNotEmptyException", "the folder is not empty"),
            Map.entry("NotDirectoryException", "a part of the path is not a folder"),
            Map.entry("NotLinkException", "the file is not a link"),
            Map.entry("FileSystemLoopException", "the links form a loop"),
            Map.entry("AtomicMoveNotSupportedException", "the file system cannot replace the file in one step"),
            Map.entry("FileSystemException", "the file system refused the operation"),
            Map.entry("ReadOnlyFileSystemException", "the file system is read-only"),
            Map.entry("ClosedByInterruptException", "the operation was interrupted"),
            Map.entry("InterruptedException", "the operation was interrupted"),
            Map.entry("InterruptedIOException", "the operation was interrupted"),
            Map.entry("UncheckedIOException", "an input/output error"),
            Map.entry("IOException", "an input/output error"),
            Map.entry("UnsupportedOperationException", "the operation is not supported here"),
            Map.entry("SecurityException", "permission denied"),
            Map.entry("OutOfMemoryError", "not enough memory"));

    private ErrorText() {
    }

    /** {@code message} made fit for the model: plain words for exception names, very long words shortened. */
    static String forModel(String message) {
        if (message == null || message.isEmpty()) {
            return "";
        }
        return shortenLongWords(plainExceptionNames(message));
    }

    /** A message without its final period, to continue the sentence. */
    static String clause(String message) {
        String m = message == null ? "" : message.strip();
        return m.endsWith(".") ? m.substring(0, m.length() - 1) : m;
    }

    static String plainExceptionNames(String message) {
        Matcher m = EXCEPTION_NAME.matcher(message);
        if (!m.find()) {
            return message;
        }
        StringBuilder sb = new StringBuilder();
        do {
            m.appendReplacement(sb, Matcher.quoteReplacement(PLAIN.getOrDefault(m.group(1), "an unexpected error")));
        } while (m.find());
        m.appendTail(sb);
        return sb.toString();
    }

    static String shortenLongWords(String message) {
        if (message.length() <= MAX_WORD_CHARS) {
            return message;
        }
        Matcher m = QUOTED_OR_WORD.matcher(message);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String w = m.group();
            boolean quoted = w.length() >= 2 && w.charAt(0) == '\'' && w.charAt(w.length() - 1) == '\'';
            String inner = quoted ? w.substring(1, w.length() - 1) : w;
            if (inner.length() > MAX_WORD_CHARS) {
                String shortened = shorten(inner);
                m.appendReplacement(sb, Matcher.quoteReplacement(quoted ? "'" + shortened + "'" : shortened));
            }
        }
        m.appendTail(sb);
        return sb.toString();
    }

    /** The first and last {@value #KEPT_CHARS} characters of {@code s} (whole code points), with the count between. */
    static String shorten(String s) {
        int head = KEPT_CHARS;
        if (Character.isHighSurrogate(s.charAt(head - 1))) {
            head--;
        }
        int tail = s.length() - KEPT_CHARS;
        if (Character.isLowSurrogate(s.charAt(tail))) {
            tail++;
        }
        return s.substring(0, head) + "...[shortened: " + (tail - head) + " characters left out]..."
                + s.substring(tail);
    }
}
