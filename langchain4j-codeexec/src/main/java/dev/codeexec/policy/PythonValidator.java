package dev.codeexec.policy;

import java.util.List;
import java.util.Set;

/**
 * python, python3, python3.x, pypy: by default refuses inline code ({@code -c}), running a module as a program
 * ({@code -m}, which covers {@code pip install} and {@code http.server}) and reading the program from stdin (a lone
 * {@code -} or no script at all). With inline code allowed, only the options are checked.
 *
 * <p>This does not make python safe: a script file runs whatever it contains, and the model can usually write one.
 * Allowing python in a policy means allowing arbitrary code in the backend's isolation.
 */
final class PythonValidator implements ArgumentValidator {

    /** Single-letter flags that take no value. */
    private static final String FLAG_LETTERS = "bBdEiIOPqRsSuvx";

    /** Options that print something and exit. */
    private static final Set<String> INFO = Set.of("--help", "--version", "--help-env", "--help-xoptions",
            "--help-all");

    private final boolean allowInlineCode;

    PythonValidator(boolean allowInlineCode) {
        this.allowInlineCode = allowInlineCode;
    }

    @Override
    public void validate(List<String> argv) {
        boolean infoOnly = false;
        int i = 1;
        while (i < argv.size()) {
            String a = argv.get(i);
            if (a.equals("-")) {
                refuseInline(argv, "'-' reads the program from stdin");
                return;
            }
            if (a.equals("--")) {
                i++;
                break;
            }
            if (!a.startsWith("-")) {
                return; // the script; what follows are its own arguments
            }
            if (a.startsWith("--")) {
                if (INFO.contains(a)) {
                    infoOnly = true;
                } else if (a.equals("--check-hash-based-pycs")) {
                    i++;
                } else {
                    throw Validation.refuse(argv, "python option '" + Validation.abbreviate(a) + "' is not"
                            + " recognised by the command policy");
                }
                i++;
                continue;
            }
            for (int k = 1; k < a.length(); k++) {
                char c = a.charAt(k);
                if (c == 'c') {
                    refuseInline(argv, "'-c' runs program text from the command line");
                    return; // the rest of the line is the program and its arguments
                }
                if (c == 'm') {
                    refuseInline(argv, "'-m' runs a module as a program (e.g. -m pip installs packages)");
                    return;
                }
                if (c == 'W' || c == 'X') {
                    if (k + 1 == a.length()) {
                        i++;
                    }
                    break;
                }
                if (c == 'h' || c == 'V' || c == '?') {
                    infoOnly = true;
                } else if (FLAG_LETTERS.indexOf(c) < 0) {
                    throw Validation.refuse(argv, "python option '-" + c + "' is not recognised by the command"
                            + " policy");
                }
            }
            i++;
        }
        if (i < argv.size()) {
            return; // a script after "--"
        }
        if (!infoOnly) {
            refuseInline(argv, "without a script, python reads its program from stdin");
        }
    }

    private void refuseInline(List<String> argv, String what) {
        if (!allowInlineCode) {
            throw Validation.refuse(argv, what + ", which the command policy does not allow; write the program to"
                    + " a file under work/ and run it as 'python3 work/script.py'");
        }
    }

    @Override
    public String toString() {
        return allowInlineCode ? "ArgumentValidators.pythonAllowingInlineCode()" : "ArgumentValidators.python()";
    }
}
