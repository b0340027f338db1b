package dev.codeexec.policy;

import java.util.List;
import java.util.Map;

/**
 * {@code find}: refuses the actions that run commands ({@code -exec -execdir -ok -okdir}), delete files
 * ({@code -delete}) or write files ({@code -fprint -fprint0 -fprintf -fls}). find has no abbreviations and no other
 * way to start a program, so an exact match on each argument is enough.
 */
final class FindValidator implements ArgumentValidator {

    private static final Map<String, String> REFUSED = Map.of(
            "-exec", "runs another command for each file",
            "-execdir", "runs another command for each file",
            "-ok", "runs another command for each file",
            "-okdir", "runs another command for each file",
            "-delete", "deletes files",
            "-fprint", "writes to a file",
            "-fprint0", "writes to a file",
            "-fprintf", "writes to a file",
            "-fls", "writes to a file");

    @Override
    public void validate(List<String> argv) {
        for (String arg : argv.subList(1, argv.size())) {
            String why = REFUSED.get(arg);
            if (why != null) {
                throw Validation.refuse(argv, "find's '" + arg + "' " + why + ", which the command policy does not"
                        + " allow; list the files with find, then process them with a separate command");
            }
        }
    }

    @Override
    public String toString() {
        return "ArgumentValidators.find()";
    }
}
