package dev.codeexec.policy;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PolicyViolationException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * A command line that passed {@link CommandPolicy#check(String)}: a list of {@link Segment}s (each an argv list) joined
 * by {@link Operator}s. Only the policy creates instances, so holding one means the line was parsed and every command
 * in it was permitted.
 *
 * <p>Run it with {@link #toShellScript()} as the argument of {@code sh -c}: the rendering single-quotes every word, so
 * the shell sees exactly the argv the policy checked and has nothing left to expand. Before rendering, call
 * {@link #resolveExecutables(String)} with the {@code PATH} of the run so that each bare command name is replaced by
 * the absolute path it will execute; a file placed later on that {@code PATH} (or a relative {@code PATH} entry) cannot
 * then shadow an allow-listed name.
 *
 * <pre>{@code
 * ParsedCommand cmd = policy.check("grep -c error work/log.txt | sort")
 *         .resolveExecutables("/usr/local/bin:/usr/bin:/bin");
 * RunProgramSpec spec = RunProgramSpec.builder("/bin/sh").args("-c", cmd.toShellScript()).cleanEnv(true).build();
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class ParsedCommand {

    /** The operators allowed between segments. */
    public enum Operator {
        /** {@code |}: the left segment's stdout feeds the right segment's stdin. */
        PIPE("|"),
        /** {@code &&}: run the right segment only if the left one succeeded. */
        AND("&&"),
        /** {@code ||}: run the right segment only if the left one failed. */
        OR("||"),
        /** {@code ;}: run the right segment after the left one, whatever its exit code. */
        SEQUENCE(";");

        private final String symbol;

        Operator(String symbol) {
            this.symbol = symbol;
        }

        /** The operator as written in a command line, e.g. {@code "&&"}. */
        public String symbol() {
            return symbol;
        }
    }

    /**
     * One simple command: the program ({@code argv[0]}) and its arguments, after quote removal.
     *
     * @param argv the words, never empty; {@code argv[0]} is non-empty
     */
    public record Segment(List<String> argv) {

        /** Copies {@code argv}; throws {@link InvalidSpecException} when it is null, empty or has an empty name. */
        public Segment {
            if (argv == null || argv.isEmpty()) {
                throw new InvalidSpecException("a segment needs at least a command name");
            }
            argv = List.copyOf(argv);
            if (argv.get(0).isEmpty()) {
                throw new InvalidSpecException("a segment's command name must not be empty");
            }
        }

        /** The command as written ({@code argv[0]}): a bare name or a path. */
        public String command() {
            return argv.get(0);
        }

        /** The arguments after the command name; empty when there are none. */
        public List<String> arguments() {
            return argv.subList(1, argv.size());
        }
    }

    /** True for a regular file the current process may execute; follows symbolic links. */
    private static final Predicate<String> HOST_EXECUTABLE = p -> {
        Path file = Path.of(p);
        return Files.isRegularFile(file) && Files.isExecutable(file);
    };

    /** Words that need no quoting anywhere. {@code %}, {@code ~}, braces and the like are quoted. */
    private static final Pattern SAFE_WORD = Pattern.compile("[A-Za-z0-9_./:@+=,-]+");

    /** Reserved words a shell would interpret in command position; quoted there so they stay plain names. */
    private static final Set<String> RESERVED = Set.of("!", "{", "}", "[[", "]]", "case", "coproc", "do", "done",
            "elif", "else", "esac", "fi", "for", "function", "if", "in", "select", "then", "time", "until", "while");

    private final String commandLine;
    private final List<Segment> segments;
    private final List<Operator> operators;
    /** The policy that checked this command, or null (tests build commands directly). */
    private final CommandPolicy checkedBy;

    ParsedCommand(String commandLine, List<Segment> segments, List<Operator> operators) {
        this(commandLine, segments, operators, null);
    }

    private ParsedCommand(String commandLine, List<Segment> segments, List<Operator> operators,
                          CommandPolicy checkedBy) {
        this.commandLine = Objects.requireNonNull(commandLine, "commandLine");
        this.segments = List.copyOf(segments);
        this.operators = List.copyOf(operators);
        this.checkedBy = checkedBy;
        if (this.segments.isEmpty() || this.operators.size() != this.segments.size() - 1) {
            throw new IllegalArgumentException("need n segments and n-1 operators, got " + this.segments.size()
                    + " and " + this.operators.size());
        }
    }

    /** This command, remembering the policy that checked it (for {@link #resolveExecutables(String)}). */
    ParsedCommand checkedBy(CommandPolicy policy) {
        return new ParsedCommand(commandLine, segments, operators, policy);
    }

    /** The command line as it was checked. */
    public String commandLine() {
        return commandLine;
    }

    /** The segments in order; never empty. */
    public List<Segment> segments() {
        return segments;
    }

    /** The operators; {@code operators().get(i)} joins segment {@code i} and segment {@code i + 1}. */
    public List<Operator> operators() {
        return operators;
    }

    /** The command of each segment ({@code argv[0]}), in order. */
    public List<String> commands() {
        List<String> out = new ArrayList<>(segments.size());
        for (Segment s : segments) {
            out.add(s.command());
        }
        return List.copyOf(out);
    }

    /**
     * {@link #resolveExecutables(String, Path)} without a working directory: a command written as a relative path
     * ({@code ./tool}, {@code work/bin/tool}) is refused, because the policy cannot see which file it names.
     *
     * @param path a POSIX {@code PATH} value ({@code :}-separated), the one the run will use; must not be blank
     * @return a command with the same words except resolved command names
     * @throws PolicyViolationException when a command is not found on {@code path}, or the file it is refused
     * @throws InvalidSpecException     when {@code path} is null or blank
     */
    public ParsedCommand resolveExecutables(String path) {
        return resolveExecutables(path, (Path) null);
    }

    /**
     * Replaces every bare command name by the absolute path it resolves to on {@code path}, as seen by this process's
     * file system, and decides every command on the file that will execute. Use it when the program runs on this
     * host's file system (the local and OS-sandbox backends), per run, just before it starts; for a container or
     * remote backend use {@link #resolveExecutables(String, Predicate)} with a lookup of that system.
     *
     * <p>Because the file is on this host, the policy that checked the command by name also checks the file each
     * command word reaches, after every symbolic link, for bare names, absolute and relative paths alike:
     * <ul>
     *   <li>by its real name: {@code x86_64} (a link to {@code setarch}), {@code /usr/bin/ld.so} or a link
     *       {@code work/l} to the dynamic loader are refused by the built-in list, a link to a denied program by the
     *       deny list, and a link to {@code python3.12} meets python's validator;</li>
     *   <li>by its content: a copy or a hard link of a program the policy judges by name (the built-in catalogue, the
     *       deny list, the commands with a validator, and the dynamic loader), recognised by its ELF build id or its
     *       bytes, is judged as that program ({@code cp /usr/bin/python3 work/calc}, then {@code work/calc -c ...}
     *       meets python's validator);</li>
     *   <li>as a script: a {@code #!} script is judged as its interpreter running it ({@code #!/bin/sh} is a
     *       shell; {@code #!/usr/bin/env python3} is python with the script), and a file that is neither a program
     *       nor a script is judged as {@code sh}, which runs it.</li>
     * </ul>
     * Multi-call binaries (busybox) reached under another name are judged by that name, which they behave as. A
     * command word that names no readable regular file is refused (fail closed). A rebuilt or patched binary is not
     * recognised: that is what an allow list is for.
     *
     * @param path a POSIX {@code PATH} value ({@code :}-separated), the one the run will use; must not be blank
     * @param cwd  the run's working directory on this host, against which relative command words are resolved; null
     *             refuses them
     * @return a command with the same words except resolved command names
     * @throws PolicyViolationException when a command is not found on {@code path}, or the file it is refused
     * @throws InvalidSpecException     when {@code path} is null or blank
     */
    public ParsedCommand resolveExecutables(String path, Path cwd) {
        ParsedCommand resolved = resolveExecutables(path, HOST_EXECUTABLE);
        if (checkedBy != null) {
            for (int i = 0; i < resolved.segments.size(); i++) {
                CommandFiles.check(checkedBy, segments.get(i).command(), resolved.segments.get(i).argv(), path, cwd);
            }
        }
        return resolved;
    }

    /**
     * Replaces every bare command name by the absolute path {@code dir/name} of the first {@code path} entry where
     * {@code isExecutable} accepts it. Relative and empty {@code PATH} entries are skipped: they name the working
     * directory, which is the workspace the model writes. Commands written with a path ({@code ./tool},
     * {@code /usr/bin/tool}) are kept as written: the policy approved exactly that path. Symbolic links are not
     * followed, because multi-call binaries (busybox) choose their behaviour from the name they were run under.
     *
     * @param path         a POSIX {@code PATH} value ({@code :}-separated); must not be blank
     * @param isExecutable tells whether an absolute path names an executable file on the system that will run it
     * @return a command with the same words except resolved command names
     * @throws PolicyViolationException when a command is not found on {@code path}
     * @throws InvalidSpecException     when {@code path} is null or blank, or {@code isExecutable} is null
     */
    public ParsedCommand resolveExecutables(String path, Predicate<String> isExecutable) {
        if (path == null || path.isBlank()) {
            throw new InvalidSpecException("path must not be null or blank");
        }
        if (isExecutable == null) {
            throw new InvalidSpecException("isExecutable must not be null");
        }
        List<String> dirs = new ArrayList<>();
        for (String entry : path.split(":", -1)) {
            if (entry.startsWith("/")) {
                dirs.add(entry.length() > 1 && entry.endsWith("/") ? entry.substring(0, entry.length() - 1) : entry);
            }
        }
        List<Segment> resolved = new ArrayList<>(segments.size());
        for (Segment s : segments) {
            String name = s.command();
            if (CommandNames.isPathful(name)) {
                resolved.add(s);
                continue;
            }
            String found = null;
            for (String dir : dirs) {
                String candidate = dir.equals("/") ? "/" + name : dir + "/" + name;
                if (isExecutable.test(candidate)) {
                    found = candidate;
                    break;
                }
            }
            if (found == null) {
                throw new PolicyViolationException("command '" + name + "' was not found on the PATH of a policy run"
                        + " (shell-only builtins have no executable and cannot run under a policy)");
            }
            List<String> argv = new ArrayList<>(s.argv());
            argv.set(0, found);
            resolved.add(new Segment(argv));
        }
        return new ParsedCommand(commandLine, resolved, operators, checkedBy);
    }

    /**
     * The command as a POSIX shell script for {@code sh -c}: every word that is not plainly safe is single-quoted, so
     * the shell performs no expansion and sees exactly {@link #segments()}. Command names that look like reserved
     * words or assignments are quoted too.
     */
    public String toShellScript() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < segments.size(); i++) {
            if (i > 0) {
                sb.append(' ').append(operators.get(i - 1).symbol()).append(' ');
            }
            List<String> argv = segments.get(i).argv();
            for (int w = 0; w < argv.size(); w++) {
                if (w > 0) {
                    sb.append(' ');
                }
                sb.append(quote(argv.get(w), w == 0));
            }
        }
        return sb.toString();
    }

    static String quote(String word, boolean commandPosition) {
        if (word.isEmpty()) {
            return "''";
        }
        boolean safe = SAFE_WORD.matcher(word).matches()
                && !(commandPosition && (word.indexOf('=') >= 0 || RESERVED.contains(word)));
        return safe ? word : "'" + word.replace("'", "'\\''") + "'";
    }

    /** Equal when segments and operators are equal; the original spelling of the line is not compared. */
    @Override
    public boolean equals(Object o) {
        return o instanceof ParsedCommand other && segments.equals(other.segments)
                && operators.equals(other.operators);
    }

    @Override
    public int hashCode() {
        return Objects.hash(segments, operators);
    }

    /** The {@link #toShellScript()} rendering. */
    @Override
    public String toString() {
        return toShellScript();
    }
}
