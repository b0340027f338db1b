package dev.codeexec.policy;

import java.util.List;

/**
 * sort (GNU coreutils, BSD): refuses {@code --compress-program}, which makes sort run a program of the caller's
 * choice on its temporary files ({@code sort -S 16K --compress-program=sh data.txt} runs {@code sh} on the
 * contents of {@code data.txt}), in every abbreviation getopt_long accepts ({@code --compress-prog},
 * {@code --compress}, {@code --co}, ...). It is sort's only route to another program.
 *
 * <p>Every word is checked, operands and option values included, so a value-taking option cannot hide the next
 * word from the check ({@code sort -t -- --compress-program=sh} passes {@code --} to {@code -t}); a file that really
 * is named like the option is refused too, which costs nothing.
 *
 * <p>{@code -o FILE} / {@code --output=FILE} is allowed: without shell redirection (which the policy refuses) it is
 * how sorted output reaches a file, and where a program may write is the backend's to confine (the sandbox and
 * container engines do; the local engine writes wherever the user running it can). {@code -T DIR} (temporary files)
 * is allowed for the same reason. Reading files ({@code --files0-from}, {@code --random-source}) is like
 * {@code cat}.
 */
final class SortValidator implements ArgumentValidator {

    private static final String COMPRESS_PROGRAM = "--compress-program";

    @Override
    public void validate(List<String> argv) {
        for (String a : argv.subList(1, argv.size())) {
            if (Validation.selects(a, COMPRESS_PROGRAM)) {
                throw Validation.refuse(argv, "sort's '" + Validation.abbreviate(Validation.longName(a)) + "' ("
                        + COMPRESS_PROGRAM + ") runs a program on sort's temporary files, which the command policy"
                        + " does not allow; sort without it");
            }
        }
    }

    @Override
    public String toString() {
        return "ArgumentValidators.sort()";
    }
}
