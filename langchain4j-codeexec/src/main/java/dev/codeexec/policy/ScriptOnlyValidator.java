package dev.codeexec.policy;

import java.util.List;
import java.util.Set;

/**
 * An interpreter whose options the policy does not know in detail ({@code julia}, {@code raku}, {@code guile},
 * {@code elixir}, {@code groovy}, {@code jshell}, ...): it may run a script file and print its version or help, and
 * nothing else, because many of their options carry program text ({@code -e}, {@code --eval}, {@code -c}) and without
 * a script most read their program from stdin.
 */
final class ScriptOnlyValidator implements ArgumentValidator {

    private static final Set<String> INFO = Set.of("--version", "-v", "-V", "--help", "-h", "-version", "-help");

    private final String name;

    ScriptOnlyValidator(String name) {
        this.name = name;
    }

    @Override
    public void validate(List<String> argv) {
        if (argv.size() == 2 && INFO.contains(argv.get(1))) {
            return;
        }
        if (argv.size() < 2) {
            throw Validation.refuse(argv, "without a script, " + name + " reads its program from stdin, which the"
                    + " command policy does not allow; write the program to a file under work/ and run it as '" + name
                    + " work/script'");
        }
        String first = argv.get(1);
        if (first.startsWith("-") || first.startsWith("+")) {
            throw Validation.refuse(argv, name + " option '" + Validation.abbreviate(first) + "' is not recognised by"
                    + " the command policy (options of " + name + " may carry program text); run a script as '"
                    + name + " work/script'");
        }
    }

    @Override
    public String toString() {
        return "ArgumentValidators.scriptOnly(" + name + ")";
    }
}
