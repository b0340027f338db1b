package dev.codeexec.policy;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An interpreter run as a command: refuses program text on the command line ({@code perl -e}, {@code node -e},
 * {@code ruby -e}, {@code php -r}, {@code lua -e}, {@code Rscript -e}), programs read from stdin ({@code -}, an
 * interactive mode, or no script at all where the interpreter then reads stdin), and options it does not know, so
 * that an option taking a value cannot hide the next word from the check. A script file is allowed, and with it
 * whatever the script does: allowing an interpreter is allowing arbitrary code within the backend's isolation. The
 * same rules as {@link PythonValidator}, which predates this table and keeps its own class.
 *
 * <p>Each interpreter is described by a table of its options ({@link #perl()}, {@link #node()}, ...): the words scanned
 * are those before the script (the first word that is not an option); after it come the script's own arguments.
 */
final class InterpreterValidator implements ArgumentValidator {

    /** What an option does, for the check. */
    enum Kind {
        /** Takes no value. */
        FLAG,
        /** Needs no script: prints something and exits, or finds its files itself ({@code node --test}). */
        INFO,
        /** Takes a value, attached ({@code -Idir}, {@code --opt=v}) or as the next word. */
        VALUE,
        /** Takes the rest of its word as an optional value, never the next word ({@code perl -i.bak}, {@code -F:}). */
        ATTACHED,
        /** Its value is program text. */
        INLINE,
        /** Reads the program from stdin. */
        STDIN,
        /** Its value is the script ({@code php -f file}); what follows belongs to the script. */
        SCRIPT,
        /** The rest of the words are its own, not a program ({@code luajit -b in out}). */
        TERMINAL,
        /** Ends the options; the next word is the script. */
        END
    }

    private final String name;
    private final String example;
    private final Map<String, Kind> words;
    private final Map<Character, Kind> letters;
    /**
     * For letters that take a value of a fixed shape attached and then go on reading switches from the same word
     * ({@code perl -l0 -0777 -CSDA}, {@code ruby -W0 -Ku}): the shape, consumed before the rest of the word is read
     * as switches again. {@code perl -lne} is {@code -l -n -e}, not {@code -l} with a value {@code ne}.
     */
    private final Map<Character, Pattern> prefixes;
    private final Map<String, String> refused;
    private final Set<String> moduleOptions;
    private final Set<String> rescan;
    private final boolean anyLongWithValue;
    private final boolean noScriptReadsStdin;
    /** Letters whose value is pasted into program text by the interpreter: the value must have this shape. */
    private final Map<Character, Pattern> shapes;

    /**
     * Schemes of URLs whose content an interpreter loads as program text ({@code --import=data:...},
     * {@code -d auto_prepend_file=php://stdin}), in any option value before the script.
     */
    private static final Pattern CODE_URL = Pattern.compile("(?i)(?<![a-z0-9+.-])(data|https?|ftps?|blob|javascript"
            + "|php|phar|expect|glob|zip|zlib|compress\\.zlib|compress\\.bzip2|rar|ogg|ssh2\\.[a-z]+):");

    InterpreterValidator(InterpreterTable b) {
        this.name = b.name;
        this.example = b.example;
        this.words = Map.copyOf(b.words);
        this.letters = Map.copyOf(b.letters);
        this.prefixes = Map.copyOf(b.prefixes);
        this.refused = Map.copyOf(b.refused);
        this.moduleOptions = Set.copyOf(b.moduleOptions);
        this.rescan = Set.copyOf(b.rescan);
        this.anyLongWithValue = b.anyLongWithValue;
        this.noScriptReadsStdin = b.noScriptReadsStdin;
        this.shapes = Map.copyOf(b.shapes);
    }

    /**
     * A module name with an optional import list, as perl's {@code -M}, {@code -m} and {@code -d:} paste them into
     * program text ({@code use Module split(/,/, q{list})}): anything else there is code ({@code -M'strict;system...'}).
     */
    private static final String PERL_MODULE = "[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z0-9_]+)*(=[A-Za-z0-9_,.:/+-]*)?";

    /**
     * perl: {@code -e -E} (program text), {@code -S} (looks the script up on PATH), {@code -} and no script (stdin).
     * Allowed: the other switches of perlrun, e.g. {@code -n -p -a -F: -l -i.bak -w -Mstrict -Ilib -c}.
     */
    static InterpreterValidator perl() {
        return new InterpreterTable("perl", "perl work/script.pl")
                .letters("eE", Kind.INLINE)
                .letters("acfnpstTuUwWX", Kind.FLAG)
                .prefix('0', Kind.FLAG, "[xX][0-9a-fA-F]*|[0-7]*")
                .prefix('l', Kind.FLAG, "[0-7]*")
                .prefix('C', Kind.FLAG, "[0-9]+|[IOESioDALa]*")
                .prefix('D', Kind.FLAG, "[0-9]*")
                .prefix('d', Kind.FLAG, "t?(:" + PERL_MODULE + ")?")
                .letters("vh", Kind.INFO)
                .prefix('V', Kind.INFO, "(:.*)?")
                .letters("iFx", Kind.ATTACHED)
                .letters("IMm", Kind.VALUE)
                .shape('M', "-?" + PERL_MODULE)
                .shape('m', "-?" + PERL_MODULE)
                .shape('F', "(/[^/;(){}$@`]*/|[^/\"';(){}$@`][^;(){}$@`]*)?")
                .refuse("-S", "'-S' looks the script up on PATH")
                .build();
    }

    /**
     * ruby: {@code -e} (program text), {@code -S} (looks the script up on PATH), {@code -} and no script (stdin).
     * Allowed: {@code -n -p -a -l -c -w -W2 -rjson -Ilib -Eutf-8 --jit --yjit --enable=... --disable-gems}, ...
     */
    static InterpreterValidator ruby() {
        return new InterpreterTable("ruby", "ruby work/script.rb")
                .letters("e", Kind.INLINE)
                .letters("acdlnpswy", Kind.FLAG)
                .prefix('0', Kind.FLAG, "[0-7]{0,4}")
                .prefix('W', Kind.FLAG, ":.*|[0-9]?")
                .prefix('T', Kind.FLAG, "[0-9]*")
                .prefix('K', Kind.FLAG, ".?")
                .letters("vh", Kind.INFO)
                .letters("Fix", Kind.ATTACHED)
                .letters("CEIr", Kind.VALUE)
                .refuse("-S", "'-S' looks the script up on PATH")
                .words(Kind.FLAG, "--verbose", "--debug", "--jit", "--yjit", "--rjit", "--mjit", "--disable-gems",
                        "--disable-did_you_mean", "--disable-rubyopt", "--disable-frozen-string-literal",
                        "--enable-frozen-string-literal", "--disable-all", "--enable-all")
                .words(Kind.INFO, "--help", "--version", "--copyright")
                .words(Kind.VALUE, "--enable", "--disable", "--encoding", "--external-encoding",
                        "--internal-encoding", "--dump", "--backtrace-limit", "--crash-report", "--parser")
                .build();
    }

    /**
     * node: {@code -e --eval -p --print} (program text), {@code -i --interactive}, {@code -} and no script (stdin),
     * {@code --run} (a package.json script, run by a shell), module options whose value is a {@code data:} or remote
     * URL ({@code --import=data:text/javascript,...}), {@code node inspect -e ...}. Allowed: a script, {@code -c},
     * {@code -r ./setup.js}, {@code --test}, {@code --watch}, and any {@code --name=value} option.
     */
    static InterpreterValidator node() {
        return new InterpreterTable("node", "node work/script.js")
                .letters("ep", Kind.INLINE)
                .letters("i", Kind.STDIN)
                .letters("c", Kind.FLAG)
                .letters("vh", Kind.INFO)
                .letters("rC", Kind.VALUE)
                .words(Kind.INLINE, "--eval", "--print")
                .words(Kind.STDIN, "--interactive")
                .refuse("--run", "'--run' runs a package.json script through a shell")
                .words(Kind.INFO, "--version", "--help", "--v8-options", "--completion-bash", "--test")
                .words(Kind.VALUE, "--require", "--import", "--loader", "--experimental-loader", "--conditions",
                        "--input-type", "--title", "--env-file", "--env-file-if-exists", "--watch-path",
                        "--test-reporter", "--test-reporter-destination", "--test-name-pattern", "--test-skip-pattern",
                        "--stack-size", "--max-old-space-size", "--unhandled-rejections")
                .words(Kind.FLAG, "--check", "--enable-source-maps", "--expose-gc", "--frozen-intrinsics",
                        "--no-deprecation", "--no-warnings", "--pending-deprecation", "--preserve-symlinks",
                        "--preserve-symlinks-main", "--throw-deprecation", "--trace-deprecation", "--trace-warnings",
                        "--trace-uncaught", "--use-strict", "--watch", "--watch-preserve-output", "--test-only", "--experimental-vm-modules", "--experimental-strip-types",
                        "--experimental-transform-types", "--no-experimental-strip-types",
                        "--experimental-test-coverage", "--jitless", "--abort-on-uncaught-exception", "--no-addons",
                        "--no-global-search-paths", "--disallow-code-generation-from-strings", "--cpu-prof",
                        "--heap-prof", "--prof", "--report-on-fatalerror", "--report-uncaught-exception",
                        "--experimental-default-type")
                .modules("-r", "--require", "--import", "--loader", "--experimental-loader", "--test-reporter")
                .rescan("inspect")
                .anyLongWithValue()
                .build();
    }

    /**
     * php: {@code -r -B -R -E} and their long forms (program text), {@code -a --interactive}, {@code -} and no
     * script (stdin). Allowed: a script, {@code -f file}, {@code -F file}, {@code -l} (lint), {@code -n},
     * {@code -d key=value}, {@code -c php.ini}, information options ({@code -v -m -i --ini}).
     */
    static InterpreterValidator php() {
        return new InterpreterTable("php", "php work/script.php")
                .letters("rBRE", Kind.INLINE)
                .letters("a", Kind.STDIN)
                .letters("eHlnqsw", Kind.FLAG)
                .letters("hvim", Kind.INFO)
                .letters("cdtzS", Kind.VALUE)
                .letters("fF", Kind.SCRIPT)
                .words(Kind.INLINE, "--run", "--process-begin", "--process-code", "--process-end")
                .words(Kind.STDIN, "--interactive")
                .words(Kind.SCRIPT, "--file", "--process-file")
                .words(Kind.VALUE, "--php-ini", "--define", "--docroot", "--server", "--zend-extension")
                .words(Kind.FLAG, "--no-php-ini", "--no-header", "--hide-args", "--syntax-check", "--strip",
                        "--syntax-highlight", "--profile-info")
                .words(Kind.INFO, "--help", "--version", "--info", "--modules", "--ini", "--rf", "--rc", "--re",
                        "--rz", "--ri", "--rfunction", "--rclass", "--rextension", "--rzendextension", "--rextinfo")
                .build();
    }

    /**
     * lua and luajit: {@code -e} (program text), {@code -i} (reads stdin after the script), {@code -} and no
     * script (stdin). Allowed: a script, {@code -l module}, {@code -v}, {@code -E}, {@code -W}, luajit's
     * {@code -O}, {@code -j} and {@code -b} (save bytecode).
     */
    static InterpreterValidator lua() {
        return new InterpreterTable("lua", "lua work/script.lua")
                .letters("e", Kind.INLINE)
                .letters("i", Kind.STDIN)
                .letters("EW", Kind.FLAG)
                .letters("v", Kind.INFO)
                .letters("O", Kind.ATTACHED)
                .letters("lj", Kind.VALUE)
                .letters("b", Kind.TERMINAL)
                .build();
    }

    /**
     * Rscript: {@code -e} (program text), {@code -} (stdin). Allowed: a script, {@code --file=script.R}, and the R
     * options ({@code --vanilla}, {@code --default-packages=...}, any {@code --name=value}). Without a script it
     * prints its usage.
     */
    static InterpreterValidator rscript() {
        return new InterpreterTable("Rscript", "Rscript work/script.R")
                .letters("e", Kind.INLINE)
                .words(Kind.SCRIPT, "--file")
                .words(Kind.INFO, "--help", "--version")
                .words(Kind.FLAG, "--verbose", "--vanilla", "--no-environ", "--no-site-file", "--no-init-file",
                        "--no-restore", "--no-restore-data", "--no-save", "--save", "--restore", "--no-echo",
                        "--quiet", "--silent", "--slave", "--no-readline", "--interactive")
                .words(Kind.END, "--args")
                .anyLongWithValue()
                .noScriptPrintsUsage()
                .build();
    }

    /** tclsh: no script (stdin; so is any unknown option, which tclsh takes for a missing script). */
    static InterpreterValidator tclsh() {
        return new InterpreterTable("tclsh", "tclsh work/script.tcl")
                .words(Kind.VALUE, "-encoding")
                .build();
    }

    /** wish: no script (stdin). Allowed: a script and Tk's options ({@code -display}, {@code -geometry}, ...). */
    static InterpreterValidator wish() {
        return new InterpreterTable("wish", "wish work/script.tcl")
                .words(Kind.VALUE, "-encoding", "-colormap", "-display", "-geometry", "-name", "-use", "-visual")
                .words(Kind.FLAG, "-sync")
                .build();
    }

    @Override
    public void validate(List<String> argv) {
        scan(argv, 1);
    }

    private void scan(List<String> argv, int from) {
        boolean infoOnly = false;
        int i = from;
        while (i < argv.size()) {
            String a = argv.get(i);
            if (a.equals("-")) {
                throw refuseInline(argv, "'-' reads the program from stdin");
            }
            if (!a.startsWith("-")) {
                if (rescan.contains(a)) {
                    scan(argv, i + 1); // node inspect [options] script: node's options again
                }
                return; // the script; what follows are its own arguments
            }
            String reason = refused.get(a);
            if (reason != null) {
                throw refuse(argv, reason);
            }
            checkCodeUrl(argv, a);
            // --name=value is one option; single-dash words (tclsh's -encoding) match only as a whole
            int eq = a.startsWith("--") ? a.indexOf('=') : -1;
            String word = eq > 0 ? a.substring(0, eq) : a;
            Kind kind = words.get(word);
            if (kind == null && a.startsWith("--")) {
                reason = refused.get(word);
                if (reason != null) {
                    throw refuse(argv, reason);
                }
                if (eq > 0 && anyLongWithValue) {
                    kind = Kind.VALUE;
                }
            }
            if (kind != null) {
                String value = eq > 0 ? a.substring(eq + 1) : null;
                switch (kind) {
                    case END -> {
                        if (i + 1 >= argv.size() && noScriptReadsStdin && !infoOnly) {
                            throw refuseNoScript(argv);
                        }
                        return; // the next word is the script
                    }
                    case INLINE -> throw refuseInline(argv, "'" + word + "' runs program text from the command line");
                    case STDIN -> throw refuseInline(argv, "'" + word + "' reads the program from stdin");
                    case SCRIPT -> {
                        return;
                    }
                    case TERMINAL -> {
                        return;
                    }
                    case INFO -> infoOnly = true;
                    case VALUE -> {
                        if (value == null) {
                            i++;
                            value = i < argv.size() ? argv.get(i) : "";
                        }
                        checkCodeUrl(argv, value);
                        checkModule(argv, word, value);
                    }
                    default -> {
                        // FLAG and ATTACHED as whole words take no separate value
                    }
                }
                i++;
                continue;
            }
            if (a.startsWith("--") || a.length() < 2) {
                throw Validation.refuse(argv, name + " option '" + Validation.abbreviate(word) + "' is not"
                        + " recognised by the command policy");
            }
            // a cluster of short options: -lne, -Ilib, -r ./x.js
            for (int k = 1; k < a.length(); k++) {
                char c = a.charAt(k);
                Kind letter = letters.get(c);
                reason = refused.get("-" + c);
                if (reason != null) {
                    throw refuse(argv, reason);
                }
                if (letter == null) {
                    String option = letters.isEmpty() ? Validation.abbreviate(word) : "-" + c;
                    throw Validation.refuse(argv, name + " option '" + option + "' is not recognised by the command"
                            + " policy");
                }
                String rest = a.substring(k + 1);
                Pattern prefix = prefixes.get(c);
                if (prefix != null) {
                    Matcher m = prefix.matcher(rest);
                    if (m.lookingAt()) {
                        k += m.end(); // the value; the switches go on after it
                    }
                }
                switch (letter) {
                    case INLINE -> throw refuseInline(argv, "'-" + c + "' runs program text from the command line");
                    case STDIN -> throw refuseInline(argv, "'-" + c + "' reads the program from stdin");
                    case SCRIPT, TERMINAL -> {
                        return;
                    }
                    case FLAG -> {
                        continue;
                    }
                    case INFO -> {
                        infoOnly = true;
                        continue;
                    }
                    case VALUE -> {
                        String value = rest;
                        if (rest.isEmpty()) {
                            i++;
                            value = i < argv.size() ? argv.get(i) : "";
                        }
                        checkCodeUrl(argv, value);
                        checkShape(argv, c, value);
                        checkModule(argv, "-" + c, value);
                    }
                    default -> {
                        // ATTACHED: the rest of the cluster is its value
                        checkCodeUrl(argv, rest);
                        checkShape(argv, c, rest);
                    }
                }
                break;
            }
            i++;
        }
        if (!infoOnly && noScriptReadsStdin) {
            throw refuseNoScript(argv);
        }
    }

    private RuntimeException refuseNoScript(List<String> argv) {
        return refuseInline(argv, "without a script, " + name + " reads its program from stdin");
    }

    private void checkCodeUrl(List<String> argv, String value) {
        if (value.length() > MAX_SCANNED) {
            throw refuseInline(argv, name + " option value of " + value.length() + " characters is longer than any"
                    + " real option needs");
        }
        Matcher m = CODE_URL.matcher(value);
        if (m.find()) {
            throw refuseInline(argv, name + " option value '" + Validation.abbreviate(value) + "' carries a '"
                    + m.group(1).toLowerCase(Locale.ROOT) + ":' URL, whose content would be loaded as program text");
        }
    }

    private void checkShape(List<String> argv, char letter, String value) {
        Pattern shape = shapes.get(letter);
        if (shape != null && !shape.matcher(value).matches()) {
            throw refuseInline(argv, name + "'s '-" + letter + "' value '" + Validation.abbreviate(value) + "' is"
                    + " pasted into program text, and it is not a plain name");
        }
    }

    /** Option values longer than this are refused outright: no real option needs one. */
    private static final int MAX_SCANNED = 4096;

    private void checkModule(List<String> argv, String option, String value) {
        if (!moduleOptions.contains(option)) {
            return;
        }
        int colon = value.indexOf(':');
        String scheme = colon > 1 ? value.substring(0, colon).toLowerCase(Locale.ROOT) : "";
        if (!scheme.isEmpty() && scheme.chars().allMatch(ch -> Character.isLetterOrDigit(ch) || ch == '+'
                || ch == '-' || ch == '.') && !scheme.equals("node") && !scheme.equals("file")) {
            throw refuseInline(argv, name + "'s '" + option + "' with a '" + Validation.abbreviate(scheme)
                    + ":' URL loads program text that is not a file (a data: or remote module)");
        }
    }

    private RuntimeException refuseInline(List<String> argv, String what) {
        return Validation.refuse(argv, what + ", which the command policy does not allow; write the program to a"
                + " file under work/ and run it as '" + example + "'");
    }

    private RuntimeException refuse(List<String> argv, String reason) {
        return Validation.refuse(argv, reason + ", which the command policy does not allow; run the script by its"
                + " path, as '" + example + "'");
    }

    @Override
    public String toString() {
        return "ArgumentValidators." + CommandNames.fold(name) + "()";
    }
}
