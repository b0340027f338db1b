package dev.codeexec.policy;

import dev.codeexec.engine.PolicyViolationException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Decides a command on the file that will execute, not on its spelling: follows the command word to its file (after
 * every link, for relative paths as for absolute ones), then judges that file by what it is:
 * <ul>
 *   <li>by its real name ({@code work/l} linking to {@code /lib64/ld-linux-x86-64.so.2} is the dynamic loader);</li>
 *   <li>by its content, when it is a copy or a hard link of a program the policy judges by name
 *       ({@link KnownPrograms}: a copy of {@code python3} named {@code work/calc} meets python's validator, a copy of
 *       {@code curl} the deny list of {@code curl}, a copy of the loader the built-in list);</li>
 *   <li>when it is a script ({@code #!}), by its interpreter, as the kernel will run it: {@code #!/bin/sh} is a shell,
 *       {@code #!/usr/bin/env python3} is python with the script as its program, {@code #!/usr/bin/env -S ...} is
 *       {@code env}; up to the kernel's four levels of interpreters.</li>
 * </ul>
 * A command word that names no readable regular file is refused (fail closed): the policy would not know what runs.
 */
final class CommandFiles {

    /** Linux follows at most this many levels of {@code #!} interpreters. */
    private static final int MAX_INTERPRETER_DEPTH = 4;
    /** Linux reads at most this many bytes of a {@code #!} line. */
    private static final int SHEBANG_BYTES = 256;

    private CommandFiles() {
    }

    /**
     * Checks one resolved segment.
     *
     * @param policy  the policy that checked the segment by name
     * @param written the command as the model wrote it (messages never show host paths)
     * @param argv    the segment with its command resolved (absolute for bare names)
     * @param path    the run's {@code PATH}
     * @param cwd     the run's working directory on this host, or null when it is not known here
     * @throws PolicyViolationException when the file, its real name, its identity or its interpreter is refused
     */
    static void check(CommandPolicy policy, String written, List<String> argv, String path, Path cwd) {
        Path real = realFile(argv.get(0), cwd, written, "command");
        judge(policy, written, argv, real, path, cwd, 0);
    }

    private static void judge(CommandPolicy policy, String written, List<String> argv, Path real, String path,
                              Path cwd, int depth) {
        String runName = CommandNames.fold(CommandNames.basename(argv.get(0)));
        String realName = real.getFileName().toString();
        Set<String> identity = policy.knownPrograms(path).identify(real);
        if (BuiltInDenyList.isMultiCall(realName) || identity.stream().anyMatch(BuiltInDenyList::isMultiCall)) {
            return; // busybox behaves as the name it runs under, which was checked
        }
        if (!CommandNames.fold(realName).equals(runName)) {
            policy.judge(written, argv, realName, "it runs '" + realName + "'", true);
        }
        for (String name : identity) {
            if (!CommandNames.fold(name).equals(runName) && !name.equals(realName)) {
                policy.judge(written, argv, name, "its file is the program '" + name + "'", true);
            }
        }
        byte[] head = head(real);
        if (ElfFile.isElf(head)) {
            return;
        }
        Shebang shebang = Shebang.parse(head);
        if (shebang == null) {
            // execve fails with ENOEXEC, and the shell that runs the command line then runs the file itself
            List<String> bySh = new ArrayList<>();
            bySh.add("sh");
            bySh.addAll(argv);
            policy.judge(written, bySh, "sh", "it is neither a program nor a '#!' script, so the shell runs it as"
                    + " shell code", false);
            return;
        }
        if (depth >= MAX_INTERPRETER_DEPTH) {
            throw new PolicyViolationException("command '" + shorten(written) + "' is refused: its interpreters nest"
                    + " deeper than the kernel follows");
        }
        List<String> next = new ArrayList<>();
        next.add(shebang.interpreter());
        if (shebang.argument() != null) {
            next.add(shebang.argument());
        }
        next.addAll(argv);
        Path interpreter = realFile(shebang.interpreter(), cwd, written, "the interpreter of command");
        if (isEnv(interpreter) && shebang.argument() != null && isPlainName(shebang.argument())) {
            // #!/usr/bin/env python3: env looks the name up on PATH and runs it with the script
            String program = lookUp(shebang.argument(), path, written);
            List<String> viaEnv = new ArrayList<>();
            viaEnv.add(program);
            viaEnv.addAll(argv);
            policy.judge(written, viaEnv, shebang.argument(), "it is a script for '" + shebang.argument() + "'",
                    false);
            judge(policy, written, viaEnv, realFile(program, cwd, written, "the interpreter of command"), path, cwd,
                    depth + 1);
            return;
        }
        policy.judge(written, next, CommandNames.basename(shebang.interpreter()), "it is a script for '"
                + CommandNames.basename(shebang.interpreter()) + "'", false);
        judge(policy, written, next, interpreter, path, cwd, depth + 1);
    }

    private static boolean isEnv(Path interpreter) {
        return CommandNames.candidates(interpreter.getFileName().toString()).contains("env");
    }

    private static boolean isPlainName(String word) {
        return !word.isEmpty() && !word.startsWith("-") && !CommandNames.isPathful(word) && word.indexOf('=') < 0
                && word.chars().noneMatch(Character::isWhitespace);
    }

    private static String lookUp(String name, String path, String written) {
        for (String dir : path.split(":", -1)) {
            if (!dir.startsWith("/")) {
                continue;
            }
            Path candidate = Path.of(dir, name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        throw new PolicyViolationException("command '" + shorten(written) + "' is refused: it is a script for '"
                + shorten(name) + "', which is not on the PATH of a policy run");
    }

    /** The real path of the regular file {@code word} names, or a refusal (fail closed). */
    static Path realFile(String word, Path cwd, String written, String what) {
        Path file;
        if (word.startsWith("/")) {
            file = Path.of(word);
        } else if (cwd != null) {
            file = cwd.resolve(word);
        } else {
            throw new PolicyViolationException(what + " '" + shorten(written) + "' is a relative path, and the"
                    + " policy cannot see here which file it names; write the command's bare name");
        }
        try {
            Path real = file.toRealPath();
            if (!Files.isRegularFile(real)) {
                throw new PolicyViolationException(what + " '" + shorten(written) + "' does not name a program file");
            }
            return real;
        } catch (IOException | RuntimeException e) {
            if (e instanceof PolicyViolationException p) {
                throw p;
            }
            throw new PolicyViolationException(what + " '" + shorten(written) + "' names no file the policy can"
                    + " read (a missing file, a dangling link, or a link the policy cannot follow); nothing was run");
        }
    }

    private static byte[] head(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            return in.readNBytes(SHEBANG_BYTES);
        } catch (IOException | RuntimeException e) {
            // a program the policy cannot read is a program it cannot identify
            throw new PolicyViolationException("a command's file cannot be read by the policy to identify it;"
                    + " nothing was run");
        }
    }

    private static String shorten(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }

    /** A {@code #!} line as Linux reads it: the interpreter and at most one argument (the rest of the line). */
    record Shebang(String interpreter, String argument) {

        /** The {@code #!} line at the start of {@code head}, or null when there is none. */
        static Shebang parse(byte[] head) {
            if (head.length < 2 || head[0] != '#' || head[1] != '!') {
                return null;
            }
            int end = 2;
            while (end < head.length && head[end] != '\n') {
                end++;
            }
            String line = new String(head, 2, end - 2, StandardCharsets.ISO_8859_1).strip();
            if (line.isEmpty()) {
                return null;
            }
            int space = 0;
            while (space < line.length() && line.charAt(space) != ' ' && line.charAt(space) != '\t') {
                space++;
            }
            String interpreter = line.substring(0, space);
            String argument = line.substring(space).strip();
            return new Shebang(interpreter, argument.isEmpty() ? null : argument);
        }
    }
}
