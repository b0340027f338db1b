package dev.codeexec.policy;

import dev.codeexec.engine.PolicyViolationException;
import java.util.List;

/**
 * Checks the arguments of one command before a {@link CommandPolicy} lets it run, for commands that can run other
 * commands (or write where they should not) through their arguments: {@code find -exec}, {@code awk 'BEGIN{system(...)}'},
 * {@code git -c core.pager=...}.
 *
 * <p><b>Best effort.</b> A validator sees only the command line. It cannot see files the command reads (a script, a
 * {@code .git/config}, a {@code Makefile}) or the environment, and a tool's option syntax has more corners than any
 * validator models. Prefer validators that accept a small, understood subset and refuse everything else. Ready-made
 * ones are in {@link ArgumentValidators}.
 *
 * <p>Register one with {@link CommandPolicy.Builder#validator(String, ArgumentValidator)}; it then runs for every
 * segment whose command name matches (like a deny entry: basename, case-folded, trailing version removed), after the
 * command passed the allow and deny lists.
 */
@FunctionalInterface
public interface ArgumentValidator {

    /**
     * Returns normally when {@code argv} may run; throws otherwise.
     *
     * @param argv the segment's words after quote removal: {@code argv.get(0)} is the command as written, the rest its
     *             arguments; never empty, unmodifiable
     * @throws PolicyViolationException naming the argument that was refused, why, and what to do instead; the
     *                                  message goes to the model, so it must not contain host paths or secrets
     */
    void validate(List<String> argv);
}
