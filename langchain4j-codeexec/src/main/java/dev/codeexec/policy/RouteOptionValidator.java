package dev.codeexec.policy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.regex.Pattern;

/**
 * A table of the options through which a tool runs a program named in its arguments (or reads the commands it runs
 * from stdin), for tools that are useful without them: {@code make SHELL=...}, {@code gcc -wrapper},
 * {@code rsync -e}, {@code ssh -o ProxyCommand=...}, {@code zip -TT}, {@code man -P}, {@code nc -e}, ... Each tool's
 * table is built by one factory method of {@link RouteOptionValidators}. What a table cannot see (a Makefile's
 * recipes, a project's build configuration) is the backend's to bound, as for any allowed program.
 */
final class RouteOptionValidator implements ArgumentValidator {

    private final String name;
    private final String hint;
    /** Long options (with {@code --}) refused in any abbreviation of at least {@link #minAbbrev} characters. */
    private final Map<String, String> longOptions;
    private final int minAbbrev;
    /** Short option letters refused in a cluster ({@code -avze}). */
    private final Map<Character, String> letters;
    /** Short option letters that take a value (the rest of the cluster, or the next word). */
    private final String valueLetters;
    /** Whether single-dash words are clusters of letters ({@code rsync -avz}) or whole options ({@code gcc -wrapper}). */
    private final boolean clusters;
    /** Words refused by their start ({@code -fplugin}, {@code -B}, {@code @}), case-sensitive. */
    private final Map<String, String> prefixes;
    /** Words refused anywhere as a whole ({@code exec}). */
    private final Map<String, String> words;
    /** A check of an option's value: option letter or word to (value -> reason or null). */
    private final Map<String, BiFunction<String, String, String>> values;
    /** Non-option words refused when they match: (pattern, reason). */
    private final List<Map.Entry<Pattern, String>> operands;
    /** Any word refused when it matches: (pattern, reason). */
    private final List<Map.Entry<Pattern, String>> anyWords;

    private RouteOptionValidator(Builder b) {
        this.name = b.name;
        this.hint = b.hint;
        this.longOptions = Map.copyOf(b.longOptions);
        this.minAbbrev = b.minAbbrev;
        this.letters = Map.copyOf(b.letters);
        this.valueLetters = b.valueLetters;
        this.clusters = b.clusters;
        this.prefixes = Map.copyOf(b.prefixes);
        this.words = Map.copyOf(b.words);
        this.values = Map.copyOf(b.values);
        this.operands = List.copyOf(b.operands);
        this.anyWords = List.copyOf(b.anyWords);
    }

    static Builder builder(String name, String hint) {
        return new Builder(name, hint);
    }

    @Override
    public void validate(List<String> argv) {
        boolean options = true;
        for (int i = 1; i < argv.size(); i++) {
            String a = argv.get(i);
            String reason = words.get(a);
            if (reason != null) {
                throw refuse(argv, reason);
            }
            for (Map.Entry<Pattern, String> e : anyWords) {
                if (e.getKey().matcher(a).matches()) {
                    throw refuse(argv, e.getValue());
                }
            }
            for (Map.Entry<String, String> p : prefixes.entrySet()) {
                if (a.startsWith(p.getKey())) {
                    throw refuse(argv, p.getValue());
                }
            }
            if (options && a.equals("--")) {
                options = false;
                continue;
            }
            if (options && a.startsWith("--") && a.length() > 2) {
                String option = Validation.longName(a);
                for (Map.Entry<String, String> e : longOptions.entrySet()) {
                    if (option.length() >= minAbbrev && e.getKey().startsWith(option)) {
                        throw refuse(argv, e.getValue());
                    }
                }
                BiFunction<String, String, String> check = values.get(option);
                if (check != null) {
                    int eq = a.indexOf('=');
                    String value = eq >= 0 ? a.substring(eq + 1) : i + 1 < argv.size() ? argv.get(++i) : "";
                    fail(argv, check.apply(option, value));
                }
                continue;
            }
            if (options && a.startsWith("-") && a.length() > 1) {
                if (!clusters) {
                    BiFunction<String, String, String> check = values.get(a);
                    if (check != null && i + 1 < argv.size()) {
                        fail(argv, check.apply(a, argv.get(++i)));
                    }
                    continue;
                }
                for (int k = 1; k < a.length(); k++) {
                    char c = a.charAt(k);
                    reason = letters.get(c);
                    if (reason != null) {
                        throw refuse(argv, reason);
                    }
                    if (valueLetters.indexOf(c) >= 0) {
                        String value = k + 1 < a.length() ? a.substring(k + 1) : i + 1 < argv.size() ? argv.get(++i)
                                : "";
                        BiFunction<String, String, String> check = values.get("-" + c);
                        if (check != null) {
                            fail(argv, check.apply("-" + c, value));
                        }
                        break;
                    }
                }
                continue;
            }
            for (Map.Entry<Pattern, String> e : operands) {
                if (e.getKey().matcher(a).matches()) {
                    throw refuse(argv, e.getValue());
                }
            }
        }
    }

    private void fail(List<String> argv, String reason) {
        if (reason != null) {
            throw refuse(argv, reason);
        }
    }

    private RuntimeException refuse(List<String> argv, String reason) {
        return Validation.refuse(argv, reason + ", which the command policy does not allow" + hint);
    }

    @Override
    public String toString() {
        return "ArgumentValidators." + name + "()";
    }

    /** The keys of {@code ssh_config} options that run a local command or load code. */
    static final Set<String> SSH_COMMAND_KEYS = Set.of("proxycommand", "localcommand", "permitlocalcommand",
            "knownhostscommand", "match", "include", "pkcs11provider", "securitykeyprovider", "proxyusefdpass");

    /** An {@code -o} value of ssh, scp or sftp: refused when its key is one of {@link #SSH_COMMAND_KEYS}. */
    static String sshOption(String option, String value) {
        String v = value.strip();
        int end = 0;
        while (end < v.length() && v.charAt(end) != '=' && !Character.isWhitespace(v.charAt(end))) {
            end++;
        }
        String key = v.substring(0, end).toLowerCase(Locale.ROOT);
        return SSH_COMMAND_KEYS.contains(key) ? "ssh option '" + Validation.abbreviate(key) + "' runs a local"
                + " command or loads code" : null;
    }

    /** Builds a tool's table. */
    static final class Builder {
        private final String name;
        private final String hint;
        private final Map<String, String> longOptions = new HashMap<>();
        private int minAbbrev = 3;
        private final Map<Character, String> letters = new HashMap<>();
        private String valueLetters = "";
        private boolean clusters = true;
        private final Map<String, String> prefixes = new HashMap<>();
        private final Map<String, String> words = new HashMap<>();
        private final Map<String, BiFunction<String, String, String>> values = new HashMap<>();
        private final List<Map.Entry<Pattern, String>> operands = new ArrayList<>();
        private final List<Map.Entry<Pattern, String>> anyWords = new ArrayList<>();

        private Builder(String name, String hint) {
            this.name = name;
            this.hint = hint.isEmpty() ? "" : "; " + hint;
        }

        Builder longOption(String option, String reason) {
            longOptions.put(option, reason);
            return this;
        }

        /** Long options are refused from this many characters on ({@code --strip-} for {@code --strip-program}). */
        Builder minAbbrev(int chars) {
            minAbbrev = chars;
            return this;
        }

        Builder letter(char c, String reason) {
            letters.put(c, reason);
            return this;
        }

        Builder valueLetters(String chars) {
            valueLetters = chars;
            return this;
        }

        /** Single-dash words are whole options ({@code gcc -wrapper}), not clusters of letters. */
        Builder wholeWords() {
            clusters = false;
            return this;
        }

        Builder prefix(String start, String reason) {
            prefixes.put(start, reason);
            return this;
        }

        Builder word(String word, String reason) {
            words.put(word, reason);
            return this;
        }

        Builder value(String option, BiFunction<String, String, String> check) {
            values.put(option, check);
            return this;
        }

        Builder operand(String regex, String reason) {
            operands.add(Map.entry(Pattern.compile(regex), reason));
            return this;
        }

        Builder anyWord(String regex, String reason) {
            anyWords.add(Map.entry(Pattern.compile(regex), reason));
            return this;
        }

        RouteOptionValidator build() {
            return new RouteOptionValidator(this);
        }
    }
}
