package dev.codeexec.policy;

import java.util.List;

/**
 * Walks a sed script command by command, as GNU sed's compiler does, to find the commands that run programs or touch
 * files. Brackets in regular expressions are honoured ({@code s/[/]/x/} has one {@code /} of syntax fewer than it
 * seems), replacement text and {@code y} strings are not, just like sed. Anything unexpected is refused, so a script
 * this scanner misreads fails closed instead of hiding a command.
 */
final class SedScriptScanner {

    private final List<String> argv;
    private final String s;
    private final int n;
    private int i;

    SedScriptScanner(List<String> argv, String script) {
        this.argv = argv;
        this.s = script;
        this.n = script.length();
    }

    void scan() {
        while (true) {
            skipSeparators();
            if (i >= n) {
                return;
            }
            if (s.charAt(i) == '#') {
                skipLine();
                continue;
            }
            if (address()) {
                skipBlanks();
                if (i < n && s.charAt(i) == ',') {
                    i++;
                    skipBlanks();
                    if (i < n && (s.charAt(i) == '+' || s.charAt(i) == '~')) {
                        i++;
                        digits();
                    } else if (!address()) {
                        throw refuse("a second address is missing after ','");
                    }
                }
                skipBlanks();
            }
            while (i < n && s.charAt(i) == '!') {
                i++;
                skipBlanks();
            }
            if (i >= n) {
                throw refuse("a command is missing after an address");
            }
            command(s.charAt(i++));
        }
    }

    private void command(char c) {
        switch (c) {
            case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F' -> {
                // no argument
            }
            case 'l', 'L', 'q', 'Q' -> {
                skipBlanks();
                digits();
            }
            case ':', 'b', 't', 'T' -> label(c);
            case 'a', 'i', 'c' -> text();
            case 'v' -> {
                skipBlanks();
                while (i < n && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
                    i++;
                }
            }
            case 's' -> substitute();
            case 'y' -> {
                char d = delimiter('y');
                literal(d, "y");
                literal(d, "y");
            }
            case 'e' -> throw refuse("the 'e' command runs a shell command");
            case 'w', 'W' -> throw refuse("the '" + c + "' command writes to a file");
            case 'r', 'R' -> throw refuse("the '" + c + "' command reads a file named in the script");
            default -> throw refuse("'" + c + "' is not a sed command the command policy knows");
        }
    }

    private void substitute() {
        char d = delimiter('s');
        regex(d);
        literal(d, "s");
        while (i < n) {
            char f = s.charAt(i);
            if (f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' || Character.isDigit(f)) {
                i++;
            } else if (f == 'e') {
                throw refuse("the s///e flag runs the pattern space as a shell command");
            } else if (f == 'w') {
                throw refuse("the s///w flag writes to a file");
            } else if (f == ';' || f == '\n' || f == '}' || f == '#' || f == ' ' || f == '\t') {
                return;
            } else {
                throw refuse("'" + f + "' is not an s/// flag the command policy knows");
            }
        }
    }

    /** Reads an address if one starts here: a line number, first~step, $, /regex/ or \cregexc, with I/M flags. */
    private boolean address() {
        if (i >= n) {
            return false;
        }
        char c = s.charAt(i);
        if (Character.isDigit(c)) {
            digits();
            if (i < n && s.charAt(i) == '~') {
                i++;
                digits();
            }
            return true;
        }
        if (c == '$') {
            i++;
            return true;
        }
        if (c == '/' || c == '\\') {
            char d = '/';
            i++;
            if (c == '\\') {
                d = delimiterChar("address");
            }
            regex(d);
            while (i < n && (s.charAt(i) == 'I' || s.charAt(i) == 'M')) {
                i++;
            }
            return true;
        }
        return false;
    }

    private char delimiter(char command) {
        if (i >= n) {
            throw refuse("'" + command + "' needs a delimiter");
        }
        return delimiterChar("'" + command + "' command");
    }

    /**
     * Accepts punctuation delimiters only. Letters, digits, blanks, backslash, newline and brackets are legal in GNU
     * sed but make the syntax depend on rules this scanner would have to model; refusing them costs nothing.
     */
    private char delimiterChar(String what) {
        if (i >= n) {
            throw refuse("the " + what + " needs a delimiter");
        }
        char d = s.charAt(i++);
        if (d > 0x7E || d <= ' ' || Character.isLetterOrDigit(d) || d == '\\' || d == '[' || d == ']') {
            throw refuse("use '/' or another punctuation character as the delimiter of the " + what);
        }
        return d;
    }

    /** A regular expression up to the unescaped delimiter; bracket expressions may contain the delimiter. */
    private void regex(char d) {
        while (i < n) {
            char c = s.charAt(i);
            if (c == '\n') {
                throw refuse("a newline inside a regular expression");
            }
            if (c == '\\') {
                if (i + 1 >= n || s.charAt(i + 1) == '\n') {
                    throw refuse("an unterminated regular expression");
                }
                i += 2;
            } else if (c == d) {
                i++;
                return;
            } else if (c == '[') {
                bracket();
            } else {
                i++;
            }
        }
        throw refuse("an unterminated regular expression");
    }

    /** A bracket expression: [^]...], with [:class:], [=equiv=] and [.coll.] inside; backslash is literal. */
    private void bracket() {
        i++;
        if (i < n && s.charAt(i) == '^') {
            i++;
        }
        if (i < n && s.charAt(i) == ']') {
            i++;
        }
        while (i < n) {
            char c = s.charAt(i);
            if (c == '\n') {
                throw refuse("a newline inside a bracket expression");
            }
            if (c == ']') {
                i++;
                return;
            }
            if (c == '[' && i + 1 < n && (s.charAt(i + 1) == ':' || s.charAt(i + 1) == '='
                    || s.charAt(i + 1) == '.')) {
                String close = s.charAt(i + 1) + "]";
                int end = s.indexOf(close, i + 2);
                if (end < 0) {
                    throw refuse("an unterminated bracket expression");
                }
                i = end + 2;
            } else {
                i++;
            }
        }
        throw refuse("an unterminated bracket expression");
    }

    /** Replacement text or a y string: up to the unescaped delimiter; a backslash escapes any character. */
    private void literal(char d, String command) {
        while (i < n) {
            char c = s.charAt(i);
            if (c == '\\') {
                i += 2;
            } else if (c == '\n') {
                throw refuse("a newline inside the '" + command + "' command; escape it or use \\n");
            } else {
                i++;
                if (c == d) {
                    return;
                }
            }
        }
        throw refuse("an unterminated '" + command + "' command");
    }

    /** A label made of plain characters, then the end of the command. */
    private void label(char c) {
        skipBlanks();
        while (i < n && (Character.isLetterOrDigit(s.charAt(i)) || s.charAt(i) == '_' || s.charAt(i) == '.'
                || s.charAt(i) == '-')) {
            i++;
        }
        skipBlanks();
        if (i < n && s.charAt(i) != ';' && s.charAt(i) != '\n' && s.charAt(i) != '}') {
            throw refuse("the label of '" + c + "' must be letters, digits, '_', '.' or '-', followed by ';' or a"
                    + " newline");
        }
    }

    /** The text of a, i, c: to the end of the line; a backslash escapes the next character, newline included. */
    private void text() {
        while (i < n) {
            char c = s.charAt(i);
            if (c == '\\') {
                i += 2;
            } else if (c == '\n') {
                i++;
                return;
            } else {
                i++;
            }
        }
    }

    private void digits() {
        while (i < n && Character.isDigit(s.charAt(i))) {
            i++;
        }
    }

    private void skipBlanks() {
        while (i < n && (s.charAt(i) == ' ' || s.charAt(i) == '\t')) {
            i++;
        }
    }

    private void skipSeparators() {
        while (i < n && (s.charAt(i) == ' ' || s.charAt(i) == '\t' || s.charAt(i) == '\n' || s.charAt(i) == ';')) {
            i++;
        }
    }

    private void skipLine() {
        while (i < n && s.charAt(i) != '\n') {
            i++;
        }
    }

    private RuntimeException refuse(String what) {
        return Validation.refuse(argv, "the sed script was refused: " + what + " (the command policy allows sed"
                + " scripts without the e, r, R, w and W commands and the s///e and s///w flags)");
    }
}
