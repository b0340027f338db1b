package dev.codeexec.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * sed (GNU sed, BSD sed): refuses the commands GNU sed's own {@code --sandbox} disables, found by parsing the script:
 * {@code e} (runs a command), {@code w}/{@code W} and the {@code s///w} flag (write a file), {@code r}/{@code R} (read
 * a file), and the {@code s///e} flag (runs the pattern space). Also refuses script files ({@code -f}), in-place
 * suffixes with a {@code /}, and any option not in a small known set. A script the parser does not understand is
 * refused, not guessed at.
 */
final class SedValidator implements ArgumentValidator {

    private static final Set<String> LONG_FLAGS = Set.of("--quiet", "--silent", "--regexp-extended", "--separate",
            "--null-data", "--zero-terminated", "--unbuffered", "--posix", "--sandbox", "--debug", "--binary",
            "--follow-symlinks", "--help", "--version");

    @Override
    public void validate(List<String> argv) {
        List<String> scripts = new ArrayList<>();
        int i = 1;
        boolean optionsDone = false;
        String firstOperand = null;
        String secondOperand = null;
        while (i < argv.size()) {
            String a = argv.get(i);
            if (optionsDone || a.equals("-") || !a.startsWith("-")) {
                if (firstOperand == null) {
                    firstOperand = a;
                } else if (secondOperand == null) {
                    secondOperand = a;
                }
                i++;
                continue;
            }
            if (a.equals("--")) {
                optionsDone = true;
                i++;
                continue;
            }
            if (a.startsWith("--")) {
                String name = Validation.longName(a);
                boolean inline = a.length() > name.length();
                switch (name) {
                    case "--expression" -> {
                        if (inline) {
                            scripts.add(a.substring(name.length() + 1));
                        } else {
                            i++;
                            scripts.add(i < argv.size() ? argv.get(i) : "");
                        }
                    }
                    case "--line-length" -> {
                        if (!inline) {
                            i++;
                        }
                    }
                    case "--in-place" -> {
                        if (inline) {
                            checkSuffix(argv, a.substring(name.length() + 1));
                        }
                    }
                    case "--file" -> throw refuseScriptFile(argv);
                    default -> {
                        if (!LONG_FLAGS.contains(name)) {
                            throw Validation.refuse(argv, "sed option '" + Validation.abbreviate(name) + "' is not"
                                    + " allowed by the command policy");
                        }
                    }
                }
                i++;
                continue;
            }
            for (int k = 1; k < a.length(); k++) {
                char c = a.charAt(k);
                if (c == 'e' || c == 'l') {
                    String value;
                    if (k + 1 < a.length()) {
                        value = a.substring(k + 1);
                    } else {
                        i++;
                        value = i < argv.size() ? argv.get(i) : "";
                    }
                    if (c == 'e') {
                        scripts.add(value);
                    }
                    break;
                }
                if (c == 'i') {
                    checkSuffix(argv, a.substring(k + 1)); // GNU: the rest of the cluster is the suffix ("-ie")
                    break;
                }
                if (c == 'f') {
                    throw refuseScriptFile(argv);
                }
                if ("nrEszub".indexOf(c) < 0) {
                    throw Validation.refuse(argv, "sed option '-" + c + "' is not allowed by the command policy");
                }
            }
            i++;
        }
        if (scripts.isEmpty()) {
            if (firstOperand == null) {
                return; // sed prints its usage
            }
            scripts.add(firstOperand);
            // BSD sed reads "-i ''" as an empty backup suffix, so the script is the next word; GNU sed reads '' as
            // the script. Check both readings.
            if (firstOperand.isEmpty() && secondOperand != null) {
                scripts.add(secondOperand);
            }
        }
        // sed joins -e scripts with newlines, so an 'a\' at the end of one continues into the next.
        new SedScriptScanner(argv, String.join("\n", scripts)).scan();
    }

    private static void checkSuffix(List<String> argv, String suffix) {
        if (suffix.indexOf('/') >= 0) {
            throw Validation.refuse(argv, "an in-place backup suffix with '/' writes the backup into another"
                    + " directory, which the command policy does not allow");
        }
    }

    private static RuntimeException refuseScriptFile(List<String> argv) {
        return Validation.refuse(argv, "sed's '-f' loads the script from a file the command policy cannot inspect;"
                + " pass the script inline with -e");
    }

    @Override
    public String toString() {
        return "ArgumentValidators.sed()";
    }
}
