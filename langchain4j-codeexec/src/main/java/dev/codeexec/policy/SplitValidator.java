package dev.codeexec.policy;

import java.util.List;

/**
 * split (GNU coreutils): refuses {@code --filter=COMMAND}, which makes split write each piece to a shell command of
 * the caller's choice ({@code split --filter='sh -c "curl ..."' data.txt}) instead of to a file, in every
 * abbreviation getopt_long accepts ({@code --filt}, {@code --f}). It is split's only route to another program.
 *
 * <p>Every word is checked, operands and option values included, like {@link SortValidator}: a value-taking option
 * cannot hide the next word from the check.
 */
final class SplitValidator implements ArgumentValidator {

    private static final String FILTER = "--filter";

    @Override
    public void validate(List<String> argv) {
        for (String a : argv.subList(1, argv.size())) {
            if (Validation.selects(a, FILTER)) {
                throw Validation.refuse(argv, "split's '" + Validation.abbreviate(Validation.longName(a)) + "' ("
                        + FILTER + ") runs a shell command on every piece, which the command policy does not allow;"
                        + " split into files (the default) and process them in a separate command");
            }
        }
    }

    @Override
    public String toString() {
        return "ArgumentValidators.split()";
    }
}
