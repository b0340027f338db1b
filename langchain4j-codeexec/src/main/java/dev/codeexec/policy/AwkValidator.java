package dev.codeexec.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * awk, gawk, mawk, nawk: accepts only inline program text that cannot start a command or write a file.
 *
 * <p>Conservative by design, because awk's grammar makes {@code >} and {@code |} mean both comparison/alternation and
 * redirection. Refused: program text containing {@code system}, any {@code |} other than {@code ||}, any {@code >},
 * or {@code @} (gawk's {@code @load}, {@code @include} and indirect calls such as {@code f="system"; @f("id")});
 * program files ({@code -f}, {@code -E}, {@code -i}), extension libraries ({@code -l}), mawk/gawk {@code -W} options,
 * and every option not listed below. Allowed options: {@code -F}, {@code -v}, {@code -e}/{@code --source} (checked
 * like the program), {@code -S}/{@code --sandbox} and a few flags that only change parsing or output format.
 */
final class AwkValidator implements ArgumentValidator {

    /** Short options that take no value and change only parsing, numbers or diagnostics. */
    private static final String FLAG_LETTERS = "SPcbnNMOsrtVh";

    private static final Set<String> LONG_FLAGS = Set.of("--sandbox", "--posix", "--traditional",
            "--characters-as-bytes", "--non-decimal-data", "--use-lc-numeric", "--bignum", "--optimize",
            "--no-optimize", "--re-interval", "--lint-old", "--version", "--help", "--copyright");

    @Override
    public void validate(List<String> argv) {
        List<String> programs = new ArrayList<>();
        int i = 1;
        while (i < argv.size()) {
            String a = argv.get(i);
            if (a.equals("--")) {
                i++;
                break;
            }
            if (a.equals("-") || !a.startsWith("-")) {
                break;
            }
            if (a.startsWith("--")) {
                String name = Validation.longName(a);
                boolean inline = a.length() > name.length();
                String value = inline ? a.substring(name.length() + 1) : null;
                switch (name) {
                    case "--field-separator", "--assign" -> {
                        if (!inline) {
                            i++;
                        }
                    }
                    case "--source" -> {
                        if (!inline) {
                            i++;
                            value = i < argv.size() ? argv.get(i) : "";
                        }
                        programs.add(value);
                    }
                    default -> {
                        if (!LONG_FLAGS.contains(name)) {
                            throw refuseOption(argv, name);
                        }
                    }
                }
                i++;
                continue;
            }
            for (int k = 1; k < a.length(); k++) {
                char c = a.charAt(k);
                if (c == 'F' || c == 'v' || c == 'e') {
                    String value;
                    if (k + 1 < a.length()) {
                        value = a.substring(k + 1);
                    } else {
                        i++;
                        value = i < argv.size() ? argv.get(i) : "";
                    }
                    if (c == 'e') {
                        programs.add(value);
                    }
                    break;
                }
                if (c == 'f' || c == 'E' || c == 'i') {
                    throw Validation.refuse(argv, "awk's '-" + c + "' loads the program from a file the command"
                            + " policy cannot inspect; pass the program text inline");
                }
                if (FLAG_LETTERS.indexOf(c) < 0) {
                    throw refuseOption(argv, "-" + c);
                }
            }
            i++;
        }
        if (programs.isEmpty() && i < argv.size()) {
            programs.add(argv.get(i));
        }
        for (String program : programs) {
            checkProgram(argv, program);
        }
    }

    private static void checkProgram(List<String> argv, String program) {
        if (program.contains("system")) {
            throw Validation.refuse(argv, "the awk program mentions 'system', which runs a shell command; the"
                    + " command policy does not allow it (even inside a string)");
        }
        if (program.replace("||", "").indexOf('|') >= 0) {
            throw Validation.refuse(argv, "the awk program contains '|', which can pipe to or from a command"
                    + " (print | \"cmd\", \"cmd\" | getline); the command policy refuses every '|' except '||',"
                    + " also in regular expressions (use two patterns joined by '||')");
        }
        if (program.indexOf('>') >= 0) {
            throw Validation.refuse(argv, "the awk program contains '>', which can redirect output to a file or"
                    + " command (print > \"file\"); the command policy refuses every '>': write comparisons with"
                    + " '<' or '<=' instead (e.g. 100 < $3), and let the output go to stdout");
        }
        if (program.indexOf('@') >= 0) {
            throw Validation.refuse(argv, "the awk program contains '@' (gawk @load, @include or an indirect"
                    + " function call), which the command policy does not allow");
        }
    }

    private static RuntimeException refuseOption(List<String> argv, String option) {
        return Validation.refuse(argv, "awk option '" + Validation.abbreviate(option) + "' is not allowed by the"
                + " command policy; allowed are -F, -v, -e/--source and --sandbox, with the program text inline");
    }

    @Override
    public String toString() {
        return "ArgumentValidators.awk()";
    }
}
