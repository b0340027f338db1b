package dev.codeexec.policy;

import dev.codeexec.engine.PolicyViolationException;
import java.util.List;

/** Shared helpers for the built-in argument validators. */
final class Validation {

    private Validation() {
    }

    /** The refusal every built-in validator throws: names the command and says what to do. */
    static PolicyViolationException refuse(List<String> argv, String reason) {
        return new PolicyViolationException("command '" + CommandNames.basename(argv.get(0)) + "' was refused by its"
                + " argument validator: " + reason);
    }

    /** The option name of a long option, without any {@code =value}; {@code null} when {@code arg} is not one. */
    static String longName(String arg) {
        if (!arg.startsWith("--") || arg.length() == 2) {
            return null;
        }
        int eq = arg.indexOf('=');
        return eq < 0 ? arg : arg.substring(0, eq);
    }

    /**
     * True when {@code arg} selects the long option {@code option} as getopt_long and git's parse-options read it:
     * the exact name or any unambiguous-looking abbreviation of at least one letter ({@code --to-c} for
     * {@code --to-command}), with or without {@code =value}. Abbreviations that are ambiguous fail in the tool
     * anyway, so refusing them costs nothing.
     */
    static boolean selects(String arg, String option) {
        String name = longName(arg);
        return name != null && name.length() >= 3 && option.startsWith(name);
    }

    /** True when {@code arg} is a cluster of short options ({@code -xvf}), not a long option or a lone dash. */
    static boolean isShortCluster(String arg) {
        return arg.length() > 1 && arg.charAt(0) == '-' && arg.charAt(1) != '-';
    }

    /** Shortens a value for a message. */
    static String abbreviate(String s) {
        return s.length() <= 60 ? s : s.substring(0, 57) + "...";
    }
}
