package dev.codeexec.policy;

import dev.codeexec.engine.PolicyViolationException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Parser for the safe shell subset: words (bare, {@code '...'}, {@code "..."} without expansions, {@code \x} escapes)
 * joined by {@code |}, {@code &&}, {@code ||} and {@code ;}. Everything else a shell would interpret is refused with a
 * message that names the construct, its position and, where there is one, the way to say it in the subset.
 *
 * <p>The grammar follows what bash and dash do with the accepted subset, so a line that parses means the same to them
 * as to us; {@link ParsedCommand#toShellScript()} then removes any doubt by re-quoting every word. Where a construct
 * means different things in different shells or contexts (a {@code #} inside a word, a {@code ~} after {@code =}) it is
 * refused rather than interpreted.
 *
 * <p>Single pass, linear in the input; stateless and thread-safe.
 */
final class ShellParser {

    /** Longest accepted command line, in UTF-8 bytes. */
    static final int MAX_BYTES = 16 * 1024;

    /** Most segments (simple commands) in one line. */
    static final int MAX_SEGMENTS = 32;

    /** Reserved words refused at the start of a segment, with the construct each one opens. */
    private static final Map<String, String> KEYWORDS = Map.ofEntries(
            Map.entry("if", "an if statement"), Map.entry("then", "an if statement"),
            Map.entry("elif", "an if statement"), Map.entry("else", "an if statement"),
            Map.entry("fi", "an if statement"),
            Map.entry("for", "a for loop"), Map.entry("do", "a for loop"), Map.entry("done", "a for loop"),
            Map.entry("while", "a while/until loop"), Map.entry("until", "a while/until loop"),
            Map.entry("case", "a case statement"), Map.entry("esac", "a case statement"),
            Map.entry("in", "a case statement or for loop"),
            Map.entry("function", "a function declaration"), Map.entry("select", "a select loop"),
            Map.entry("{", "a block '{ ...; }'"), Map.entry("}", "a block '{ ...; }'"),
            Map.entry("[[", "a '[[ ... ]]' conditional expression"),
            Map.entry("]]", "a '[[ ... ]]' conditional expression"),
            Map.entry("!", "a negation '!'"));

    private final String src;
    private final int n;
    private int i;

    private final List<ParsedCommand.Segment> segments = new ArrayList<>();
    private final List<ParsedCommand.Operator> operators = new ArrayList<>();
    private final List<String> words = new ArrayList<>();

    // The word being read.
    private final StringBuilder word = new StringBuilder();
    private boolean inWord;
    private int wordStart;
    /** The previous character of the word if it was unquoted, else 0: a tilde after an unquoted = or : expands. */
    private char lastUnquoted;
    /** Unquoted '{' not yet closed in this word. */
    private int braceDepth;

    private ShellParser(String src) {
        this.src = src;
        this.n = src.length();
    }

    /**
     * Parses {@code line} into segments and operators.
     *
     * @throws PolicyViolationException naming the first construct outside the subset
     */
    static ParsedCommand parse(String line) {
        if (line == null || line.isBlank()) {
            throw fail("the command is empty");
        }
        int bytes = utf8Length(line);
        if (bytes > MAX_BYTES) {
            throw fail("the command is too long (" + bytes + " bytes; at most " + MAX_BYTES + ")");
        }
        return new ShellParser(line).run();
    }

    /**
     * True when {@code word} would be a shell variable assignment ({@code NAME=...} or {@code NAME+=...}) in command
     * position.
     */
    static boolean isLeadingAssignment(String word) {
        if (word == null || word.isEmpty() || !isIdentStart(word.charAt(0))) {
            return false;
        }
        for (int k = 1; k < word.length(); k++) {
            char c = word.charAt(k);
            if (c == '=' || (c == '+' && k + 1 < word.length() && word.charAt(k + 1) == '=')) {
                return true;
            }
            if (!isIdentStart(c) && !(c >= '0' && c <= '9')) {
                return false;
            }
        }
        return false;
    }

    private ParsedCommand run() {
        while (i < n) {
            char c = src.charAt(i);
            switch (c) {
                case ' ', '\t' -> {
                    endWord();
                    i++;
                }
                case '\'' -> singleQuoted();
                case '"' -> doubleQuoted();
                case '\\' -> escape();
                case '|', '&', ';' -> operator(c);
                case '$' -> throw dollar();
                case '`' -> throw at("'`' (command substitution) is not allowed; run the inner command separately");
                case '<' -> throw less();
                case '>' -> throw greater();
                case '(' -> throw at(inWord
                        ? "'(' after a word (a function declaration) is not allowed"
                        : "'(' (a subshell) is not allowed; run the commands directly, joined by '&&' or ';'");
                case ')' -> throw at("an unexpected ')' is not allowed");
                case '[' -> throw at(!inWord && i + 1 < n && src.charAt(i + 1) == '['
                        ? "'[[' (a conditional expression) is not allowed; use the 'test' command"
                        : "'[' (a test expression or glob) is not allowed; quote it if it is literal");
                case ']' -> throw at("an unexpected ']' is not allowed; quote it if it is literal");
                case '*', '?' -> throw at("the glob character '" + c + "' is not allowed; quote it if it is literal,"
                        + " or name the files explicitly");
                case '#' -> throw at("'#' (a comment) is not allowed; quote it if it is literal");
                case '!' -> throw at(words.isEmpty() && !inWord
                        ? "'!' (a negation) is not allowed"
                        : "'!' (history expansion) is not allowed; quote it if it is literal");
                case '{' -> {
                    begin();
                    braceDepth++;
                    bare(c);
                }
                case '}' -> {
                    begin();
                    if (braceDepth == 0) {
                        throw at("an unmatched '}' is not allowed; quote it if it is literal");
                    }
                    braceDepth--;
                    bare(c);
                }
                case ',' -> {
                    begin();
                    if (braceDepth > 0) {
                        throw at("brace expansion '{a,b}' is not allowed; write the words out, or quote the braces");
                    }
                    bare(c);
                }
                case '.' -> {
                    begin();
                    if (braceDepth > 0 && i + 1 < n && src.charAt(i + 1) == '.') {
                        throw at("brace expansion '{1..3}' is not allowed; write the words out, or quote the braces");
                    }
                    bare(c);
                }
                case '~' -> {
                    if (!inWord || lastUnquoted == '=' || lastUnquoted == ':') {
                        throw at("'~' (tilde expansion) is not allowed; write the path out (workspace paths are"
                                + " relative, e.g. work/data.csv), or quote it if it is literal");
                    }
                    bare(c);
                }
                default -> {
                    checkCharacter(c, null);
                    if (Character.isHighSurrogate(c)) {
                        begin();
                        word.append(c).append(src.charAt(i + 1));
                        lastUnquoted = 0;
                        i += 2;
                    } else {
                        bare(c);
                    }
                }
            }
        }
        endWord();
        if (words.isEmpty()) {
            if (segments.isEmpty()) {
                throw fail("the command is empty");
            }
            throw fail("'" + operators.get(operators.size() - 1).symbol()
                    + "' has an empty right side; put a command after it, or remove it");
        }
        flushSegment();
        return new ParsedCommand(src, segments, operators);
    }

    private void begin() {
        if (!inWord) {
            inWord = true;
            wordStart = i;
            braceDepth = 0;
            lastUnquoted = 0;
        }
    }

    private void bare(char c) {
        begin();
        word.append(c);
        lastUnquoted = c;
        i++;
    }

    private void endWord() {
        if (!inWord) {
            return;
        }
        String w = word.toString();
        if (words.isEmpty()) {
            String construct = KEYWORDS.get(w);
            if (construct != null) {
                throw failAt("'" + w + "' starts " + construct + ", which is not allowed; run simple commands joined"
                        + " by '|', '&&', '||' or ';'", wordStart);
            }
        }
        if (braceDepth > 0) {
            throw failAt("an unmatched '{' is not allowed; quote it if it is literal", wordStart);
        }
        if (words.isEmpty()) {
            if (w.isEmpty()) {
                throw failAt("the command name is empty", wordStart);
            }
            if (isLeadingAssignment(w)) {
                throw failAt("a leading variable assignment ('" + abbreviate(w) + "') is not allowed; pass"
                        + " environment variables through the tool's env parameter", wordStart);
            }
        }
        words.add(w);
        word.setLength(0);
        inWord = false;
    }

    private void flushSegment() {
        segments.add(new ParsedCommand.Segment(words));
        words.clear();
        if (segments.size() > MAX_SEGMENTS) {
            throw fail("the command has too many segments (more than " + MAX_SEGMENTS + "); split it into several"
                    + " calls");
        }
    }

    private void operator(char c) {
        char next = i + 1 < n ? src.charAt(i + 1) : 0;
        ParsedCommand.Operator op;
        int width = 1;
        if (c == '|') {
            if (next == '|') {
                op = ParsedCommand.Operator.OR;
                width = 2;
            } else if (next == '&') {
                throw at("'|&' (a pipe of stderr) is not allowed; use '|' (stderr is captured separately)");
            } else {
                op = ParsedCommand.Operator.PIPE;
            }
        } else if (c == '&') {
            if (next == '&') {
                op = ParsedCommand.Operator.AND;
                width = 2;
            } else if (next == '>') {
                throw at("'&>' (a redirection) is not allowed; output is captured for you");
            } else {
                throw at("'&' (running in the background) is not allowed; commands run to completion");
            }
        } else {
            if (next == ';' || next == '&') {
                throw at("'" + c + next + "' (a case statement separator) is not allowed");
            }
            op = ParsedCommand.Operator.SEQUENCE;
        }
        endWord();
        if (words.isEmpty()) {
            throw at("'" + op.symbol() + "' has an empty left side; put a command before it, or remove it");
        }
        flushSegment();
        operators.add(op);
        i += width;
    }

    private void singleQuoted() {
        begin();
        int open = i;
        i++;
        while (i < n) {
            char c = src.charAt(i);
            if (c == '\'') {
                i++;
                lastUnquoted = 0;
                return;
            }
            checkCharacter(c, "single-quoted string");
            if (Character.isHighSurrogate(c)) {
                word.append(c);
                i++;
                c = src.charAt(i);
            }
            word.append(c);
            i++;
        }
        throw failAt("an unterminated single-quoted string is not allowed; close the quote", open);
    }

    private void doubleQuoted() {
        begin();
        int open = i;
        i++;
        while (i < n) {
            char c = src.charAt(i);
            switch (c) {
                case '"' -> {
                    i++;
                    lastUnquoted = 0;
                    return;
                }
                case '$' -> throw at("'$' inside a double-quoted string (parameter expansion) is not allowed; use"
                        + " single quotes for a literal '$'");
                case '`' -> throw at("'`' inside a double-quoted string (command substitution) is not allowed; use"
                        + " single quotes for a literal '`'");
                case '\\' -> {
                    if (i + 1 >= n) {
                        throw at("a trailing backslash in a double-quoted string is not allowed");
                    }
                    char e = src.charAt(i + 1);
                    if (e == '\n' || e == '\r') {
                        throw at("an escaped newline is not allowed; write the command on one line");
                    }
                    // POSIX: inside "...", a backslash escapes only $ ` " \ (and newline); before anything else it
                    // stays. Folding it would make "./s\afe" look like ./safe to the policy while the shell runs
                    // ./s\afe.
                    if (e == '$' || e == '`' || e == '"' || e == '\\') {
                        word.append(e);
                        i += 2;
                    } else {
                        word.append('\\');
                        i++;
                    }
                }
                default -> {
                    checkCharacter(c, "double-quoted string");
                    if (Character.isHighSurrogate(c)) {
                        word.append(c);
                        i++;
                        c = src.charAt(i);
                    }
                    word.append(c);
                    i++;
                }
            }
        }
        throw failAt("an unterminated double-quoted string is not allowed; close the quote", open);
    }

    private void escape() {
        begin();
        if (i + 1 >= n) {
            throw at("a trailing backslash is not allowed");
        }
        char e = src.charAt(i + 1);
        if (e == '\n' || e == '\r') {
            throw at("an escaped newline is not allowed; write the command on one line");
        }
        i++;
        checkCharacter(e, null);
        word.append(e);
        if (Character.isHighSurrogate(e)) {
            word.append(src.charAt(i + 1));
            i++;
        }
        lastUnquoted = 0;
        i++;
    }

    /**
     * Refuses newlines, other control characters (C0, DEL, C1) and broken UTF-16 wherever they occur: a control
     * character can hide text on a terminal and a newline would start a second command.
     */
    private void checkCharacter(char c, String where) {
        if (c == '\n' || c == '\r') {
            throw at(where == null
                    ? "a newline is not allowed; join commands with ';' or '&&' on one line"
                    : "a newline is not allowed inside a " + where);
        }
        if (Character.getType(c) == Character.CONTROL && c != '\t') {
            throw at(String.format("the control character U+%04X is not allowed", (int) c));
        }
        // Line separators and bidirectional overrides change how the line reads to a person reviewing it.
        int type = Character.getType(c);
        if (type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR
                || (c >= '\u202A' && c <= '\u202E') || (c >= '\u2066' && c <= '\u2069')) {
            throw at(String.format("the invisible formatting character U+%04X is not allowed", (int) c));
        }
        if (Character.isLowSurrogate(c)
                || (Character.isHighSurrogate(c) && (i + 1 >= n || !Character.isLowSurrogate(src.charAt(i + 1))))) {
            throw at("invalid Unicode (an unpaired surrogate) is not allowed");
        }
    }

    private PolicyViolationException dollar() {
        char next = i + 1 < n ? src.charAt(i + 1) : 0;
        char after = i + 2 < n ? src.charAt(i + 2) : 0;
        return switch (next) {
            case '(' -> after == '('
                    ? at("'$((...))' (arithmetic expansion) is not allowed; compute the value first")
                    : at("'$(...)' (command substitution) is not allowed; run the inner command separately and pass"
                    + " its output explicitly");
            case '[' -> at("'$[...]' (arithmetic expansion) is not allowed; compute the value first");
            case '{' -> at("'${...}' (parameter expansion) is not allowed; write the value out, or use single quotes"
                    + " for a literal '$'");
            case '\'' -> at("'$'...'' (ANSI-C quoting) is not allowed; use plain single quotes");
            case '"' -> at("'$\"...\"' (locale translation) is not allowed; use plain quotes");
            default -> at("'$' (parameter expansion) is not allowed; write the value out, or use single quotes for a"
                    + " literal '$'");
        };
    }

    private PolicyViolationException less() {
        char next = i + 1 < n ? src.charAt(i + 1) : 0;
        if (next == '(') {
            return at("'<(...)' (process substitution) is not allowed; write the output to a file first");
        }
        if (next == '<') {
            return i + 2 < n && src.charAt(i + 2) == '<'
                    ? at("'<<<' (a here-string, a redirection) is not allowed; pass the text through the tool's stdin"
                    + " parameter")
                    : at("'<<' (a here-document, a redirection) is not allowed; write the text to a file first, or"
                    + " pass it through the tool's stdin parameter");
        }
        return at("'<' (input redirection) is not allowed; pass the file name as an argument, or use the tool's"
                + " stdin parameter");
    }

    private PolicyViolationException greater() {
        char next = i + 1 < n ? src.charAt(i + 1) : 0;
        if (next == '(') {
            return at("'>(...)' (process substitution) is not allowed");
        }
        return at("'>' (output redirection) is not allowed; output is captured for you, and files are written with"
                + " the file tools or the program's own output option");
    }

    private PolicyViolationException at(String message) {
        return failAt(message, i);
    }

    private static PolicyViolationException failAt(String message, int index) {
        return fail(message + " (at character " + (index + 1) + ")");
    }

    private static PolicyViolationException fail(String message) {
        return new PolicyViolationException("command rejected by the command policy: " + message);
    }

    private static boolean isIdentStart(char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
    }

    private static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 37) + "...";
    }

    private static int utf8Length(String s) {
        // Cheap bound first; only long lines pay for the exact count.
        if (s.length() * 3L <= MAX_BYTES) {
            return s.length();
        }
        return s.getBytes(StandardCharsets.UTF_8).length;
    }
}
