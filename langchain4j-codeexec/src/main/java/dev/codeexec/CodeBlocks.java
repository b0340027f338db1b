package dev.codeexec;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * Finds fenced code blocks in model text.
 *
 * <p>{@link #extract} finds every block; {@link #lone} implements the response-processor rule: the whole text, trimmed,
 * is exactly one fenced block in a runnable language. Unlike a non-greedy regular expression, the scanner matches a
 * closing fence only at the start of a line, so a fence inside a string of the code does not end the block. With the
 * default {@link CodeBlockDelimiter#BACKTICKS} the fences follow Markdown (CommonMark): three or more backticks or
 * tildes, closed by a run of the same character at least as long; a custom delimiter is matched literally.
 */
public final class CodeBlocks {

    /** Tags that mark data or prose, never executed even when alone. */
    public static final Set<String> NON_EXECUTABLE_TAGS = Set.of(
            "css", "csv", "html", "json", "jsonl", "markdown", "md", "mermaid", "plain", "plaintext", "text",
            "txt", "xml", "yaml", "yml", "toml", "diff", "patch", "log", "output", "console");

    private CodeBlocks() {
    }

    /**
     * Every fenced block in {@code text}, in order. Unterminated blocks are ignored. Windows line endings ({@code \r\n})
     * are read as {@code \n}, so code written by a model on any platform runs unchanged.
     */
    public static List<CodeBlock> extract(String text, CodeBlockDelimiter delimiter) {
        List<CodeBlock> blocks = new ArrayList<>();
        if (text == null) {
            return blocks;
        }
        for (Found f : scan(normalizeLineEndings(text), CodeBlockDelimiter.orDefault(delimiter))) {
            blocks.add(f.block());
        }
        return blocks;
    }

    /** Every fenced block with the default backtick fences. */
    public static List<CodeBlock> extract(String text) {
        return extract(text, CodeBlockDelimiter.BACKTICKS);
    }

    /**
     * The block if {@code text}, trimmed, consists of exactly one fenced block whose language is runnable (non-empty
     * and not a data or prose tag); otherwise empty. Prose before or after the block, two blocks, or a closing fence
     * followed by anything but whitespace all give empty.
     */
    public static Optional<CodeBlock> lone(String text, CodeBlockDelimiter delimiter) {
        if (text == null) {
            return Optional.empty();
        }
        CodeBlockDelimiter d = CodeBlockDelimiter.orDefault(delimiter);
        String t = normalizeLineEndings(text).strip();
        List<Found> found = scan(t, d);
        // The block must span the whole text: it opens at its start and nothing but whitespace follows its closing
        // fence (a trailing fence that opens an unterminated second block counts as prose).
        if (found.size() != 1 || found.get(0).start() != 0 || !t.substring(found.get(0).end()).isBlank()) {
            return Optional.empty();
        }
        CodeBlock block = found.get(0).block();
        return isRunnableTag(block.language()) ? Optional.of(block) : Optional.empty();
    }

    /** {@link #lone(String, CodeBlockDelimiter)} with the default backtick fences. */
    public static Optional<CodeBlock> lone(String text) {
        return lone(text, CodeBlockDelimiter.BACKTICKS);
    }

    /** True when a fence tag names a language that may be executed (non-empty and not data or prose). */
    public static boolean isRunnableTag(String tag) {
        if (tag == null || tag.isBlank()) {
            return false;
        }
        return !NON_EXECUTABLE_TAGS.contains(tag.strip().toLowerCase(Locale.ROOT));
    }

    /** A block and where it lies: from its opening fence to just after its closing fence. */
    private record Found(CodeBlock block, int start, int end) {
    }

    private static List<Found> scan(String text, CodeBlockDelimiter d) {
        boolean markdown = d.equals(CodeBlockDelimiter.BACKTICKS);
        List<Found> found = new ArrayList<>();
        int pos = 0;
        while (true) {
            int open = markdown ? earliest(findAtLineStart(text, "```", pos), findAtLineStart(text, "~~~", pos))
                    : findAtLineStart(text, d.start(), pos);
            if (open < 0) {
                return found;
            }
            // Markdown fences are runs of 3 or more backticks or tildes, closed by a run of the same character at
            // least as long (CommonMark), so a block may contain a shorter fence, as a README snippet does.
            String openFence = markdown ? run(text, open) : d.start();
            String closeFence = markdown ? openFence : d.end();
            int infoStart = open + openFence.length();
            int nl = text.indexOf('\n', infoStart);
            if (nl < 0) {
                return found;
            }
            String info = text.substring(infoStart, nl).strip();
            if (markdown && openFence.charAt(0) == '`' && info.indexOf('`') >= 0) {
                // Not a fence: inline code such as ```x``` at the start of a line.
                pos = nl + 1;
                continue;
            }
            int close = findClosing(text, closeFence, markdown, nl + 1);
            if (close < 0) {
                return found;
            }
            String code = text.substring(nl + 1, close);
            if (code.endsWith("\n")) {
                code = code.substring(0, code.length() - 1);
            }
            int afterClose = text.indexOf('\n', close);
            int end = afterClose < 0 ? text.length() : afterClose;
            pos = afterClose < 0 ? text.length() : afterClose + 1;
            found.add(new Found(new CodeBlock(firstWord(info), code), open, end));
        }
    }

    private static int earliest(int a, int b) {
        return a < 0 ? b : b < 0 ? a : Math.min(a, b);
    }

    /** The run of fence characters starting at {@code at}. */
    private static String run(String text, int at) {
        char c = text.charAt(at);
        int i = at;
        while (i < text.length() && text.charAt(i) == c) {
            i++;
        }
        return text.substring(at, i);
    }

    private static String normalizeLineEndings(String text) {
        return text.indexOf('\r') < 0 ? text : text.replace("\r\n", "\n");
    }

    private static int findAtLineStart(String text, String fence, int from) {
        int i = from;
        while (i <= text.length()) {
            int at = text.indexOf(fence, i);
            if (at < 0) {
                return -1;
            }
            int lineStart = text.lastIndexOf('\n', at - 1) + 1;
            if (text.substring(lineStart, at).isBlank()) {
                return at;
            }
            i = at + fence.length();
        }
        return -1;
    }

    /**
     * The offset of the next line that is the closing fence alone (surrounding whitespace allowed); in markdown mode a
     * longer run of the same character also closes.
     */
    private static int findClosing(String text, String fence, boolean markdown, int from) {
        int i = from;
        while (true) {
            int at = findAtLineStart(text, fence, i);
            if (at < 0) {
                return -1;
            }
            int eol = text.indexOf('\n', at);
            String rest = text.substring(at + fence.length(), eol < 0 ? text.length() : eol);
            if (markdown) {
                rest = rest.replaceFirst("^" + java.util.regex.Pattern.quote(String.valueOf(fence.charAt(0))) + "+", "");
            }
            if (rest.isBlank()) {
                return at;
            }
            i = at + fence.length();
        }
    }

    private static String firstWord(String info) {
        int sp = 0;
        while (sp < info.length() && !Character.isWhitespace(info.charAt(sp)) && info.charAt(sp) != '{') {
            sp++;
        }
        return info.substring(0, sp);
    }
}
