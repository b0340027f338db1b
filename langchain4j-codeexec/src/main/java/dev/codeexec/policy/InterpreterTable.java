package dev.codeexec.policy;

import dev.codeexec.policy.InterpreterValidator.Kind;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/** Builds an {@link InterpreterValidator}'s table of options. */
final class InterpreterTable {
    final String name;
    final String example;
    final Map<String, Kind> words = new HashMap<>();
    final Map<Character, Kind> letters = new HashMap<>();
    final Map<Character, Pattern> prefixes = new HashMap<>();
    final Map<String, String> refused = new HashMap<>();
    final Set<String> moduleOptions = new HashSet<>();
    final Set<String> rescan = new HashSet<>();
    boolean anyLongWithValue;
    boolean noScriptReadsStdin = true;
    final Map<Character, Pattern> shapes = new HashMap<>();

    InterpreterTable(String name, String example) {
        this.name = name;
        this.example = example;
        words.put("--", Kind.END);
    }

    InterpreterTable letters(String chars, Kind kind) {
        for (char c : chars.toCharArray()) {
            if (letters.put(c, kind) != null) {
                throw new IllegalStateException(name + ": letter -" + c + " given twice");
            }
        }
        return this;
    }

    InterpreterTable words(Kind kind, String... options) {
        for (String o : options) {
            if (words.put(o, kind) != null) {
                throw new IllegalStateException(name + ": option " + o + " given twice");
            }
        }
        return this;
    }

    /** A letter of {@code kind} that first consumes an attached value matching {@code shape}. */
    InterpreterTable prefix(char letter, Kind kind, String shape) {
        letters(String.valueOf(letter), kind);
        prefixes.put(letter, Pattern.compile(shape));
        return this;
    }

    /** The value of letter {@code c} must match {@code regex} as a whole. */
    InterpreterTable shape(char c, String regex) {
        shapes.put(c, Pattern.compile(regex));
        return this;
    }

    InterpreterTable refuse(String option, String reason) {
        refused.put(option, reason);
        return this;
    }

    InterpreterTable modules(String... options) {
        moduleOptions.addAll(List.of(options));
        return this;
    }

    InterpreterTable rescan(String... subcommands) {
        rescan.addAll(List.of(subcommands));
        return this;
    }

    /** Any {@code --name=value} is accepted: the interpreter takes it as one word, whatever the name. */
    InterpreterTable anyLongWithValue() {
        anyLongWithValue = true;
        return this;
    }

    InterpreterTable noScriptPrintsUsage() {
        noScriptReadsStdin = false;
        return this;
    }

    InterpreterValidator build() {
        return new InterpreterValidator(this);
    }
}
