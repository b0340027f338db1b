package dev.codeexec.policy;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@link RouteOptionValidator} tables of build tools, compilers, remote-copy and network tools whose options run
 * a program named in their arguments. Registered by {@link ArgumentValidators#defaults()}.
 */
final class RouteOptionValidators {

    private static final String STDIN = "(-|/dev/stdin|/dev/fd/0|/proc/self/fd/0)";

    private RouteOptionValidators() {
    }

    /** Built once, so that two default policies hold the same validators (and are equal). */
    private static final Map<String, ArgumentValidator> ALL = build();

    /** Every table by command name, in the order the documentation lists them; unmodifiable. */
    static Map<String, ArgumentValidator> all() {
        return ALL;
    }

    private static Map<String, ArgumentValidator> build() {
        Map<String, ArgumentValidator> m = new LinkedHashMap<>();
        ArgumentValidator make = make();
        for (String n : new String[] {"make", "gmake", "remake", "bmake", "pmake"}) {
            m.put(n, make);
        }
        ArgumentValidator cc = compiler();
        for (String n : new String[] {"cc", "c++", "gcc", "g++", "clang", "clang++", "gfortran", "cpp", "c89", "c99",
                "tcc", "icc", "icx", "icpx"}) {
            m.put(n, cc);
        }
        m.put("rsync", rsync());
        ArgumentValidator ssh = ssh();
        m.put("ssh", ssh);
        m.put("slogin", ssh);
        m.put("scp", scp());
        m.put("zip", zip());
        ArgumentValidator diff = diffProgram();
        m.put("sdiff", diff);
        m.put("diff3", diff);
        ArgumentValidator install = install();
        m.put("install", install);
        m.put("ginstall", install);
        m.put("man", man());
        m.put("wget", wget());
        ArgumentValidator nc = netcat();
        for (String n : new String[] {"nc", "netcat", "ncat", "nc.openbsd", "nc.traditional"}) {
            m.put(n, nc);
        }
        m.put("ip", ip());
        m.put("sqlite3", sqlite());
        m.put("java", java());
        m.put("cargo", cargo());
        m.put("go", go());
        ArgumentValidator runtimes = jsRuntime();
        m.put("deno", runtimes);
        m.put("bun", runtimes);
        for (String n : new String[] {"julia", "raku", "perl6", "rakudo", "guile", "racket", "sbcl", "clisp", "ecl",
                "elixir", "iex", "erl", "escript", "groovy", "jshell", "kotlin", "kotlinc", "scala", "ocaml",
                "runghc", "runhaskell", "ghci", "ipython", "micropython", "jython", "jruby", "truffleruby", "octave",
                "osascript", "ts-node", "tsx", "qjs", "bb", "gjs", "swift", "tclkit", "pike", "gst", "gforth", "io",
                "wren", "janet", "fennel", "hy"}) {
            m.put(n, new ScriptOnlyValidator(n));
        }
        return java.util.Collections.unmodifiableMap(m);
    }

    /** make: command-line variable assignments ({@code SHELL=}, {@code CC=}), {@code --eval}/{@code -E}, stdin makefiles. */
    static ArgumentValidator make() {
        return RouteOptionValidator.builder("make", "write the makefile under work/ and run 'make -f work/Makefile"
                        + " target'")
                .operand("(?s)[^=]+=.*", "a variable assignment on make's command line ('SHELL=...', 'CC=...')"
                        + " chooses the programs its recipes run")
                .longOption("--eval", "'--eval' adds makefile text, recipes included, from the command line")
                .letter('E', "'-E' ('--eval') adds makefile text, recipes included, from the command line")
                .valueLetters("CfIjlOoW")
                .value("-f", RouteOptionValidators::notStdin)
                .value("--file", RouteOptionValidators::notStdin)
                .value("--makefile", RouteOptionValidators::notStdin)
                .build();
    }

    /** C compilers: options that choose the programs or plugins the driver runs, and response files. */
    static ArgumentValidator compiler() {
        String runs = "runs the program or loads the plugin it names";
        return RouteOptionValidator.builder("cc", "")
                .wholeWords()
                .word("-wrapper", "'-wrapper' runs the compiler's subprocesses under the program it names")
                .prefix("-B", "'-B' makes the driver run the assembler, linker and compiler passes it finds there")
                .prefix("--prefix", "'--prefix' makes the driver run the programs it finds there")
                .prefix("-fplugin", "'-fplugin' " + runs)
                .prefix("-fpass-plugin", "'-fpass-plugin' " + runs)
                .prefix("-iplugindir", "'-iplugindir' " + runs)
                .prefix("-specs", "a spec file chooses the programs the driver runs")
                .prefix("--specs", "a spec file chooses the programs the driver runs")
                .prefix("--ld-path", "'--ld-path' " + runs)
                .prefix("-ccc-", "the '-ccc-' driver options choose the programs the driver runs")
                .prefix("--gcc-toolchain", "'--gcc-toolchain' makes the driver run the programs it finds there")
                .prefix("--gcc-install-dir", "'--gcc-install-dir' makes the driver run the programs it finds there")
                .prefix("-fuse-ld=/", "'-fuse-ld=' with a path " + runs)
                .prefix("-fuse-ld=.", "'-fuse-ld=' with a path " + runs)
                .prefix("@", "a response file ('@file') adds options the policy cannot see")
                .value("-Xclang", RouteOptionValidators::noPlugin)
                .value("-mllvm", RouteOptionValidators::noPlugin)
                .value("-Xlinker", RouteOptionValidators::noPlugin)
                .value("-Xassembler", RouteOptionValidators::noPlugin)
                .value("-Xpreprocessor", RouteOptionValidators::noPlugin)
                .anyWord("(?is)-Wl,.*plugin.*", "a linker '-plugin' " + runs)
                .build();
    }

    /** rsync: {@code -e}/{@code --rsh}, {@code --rsync-path}, {@code -M}, daemon mode, and {@code host:path} (ssh). */
    static ArgumentValidator rsync() {
        return RouteOptionValidator.builder("rsync", "copy between local paths only")
                .letter('e', "'-e' names the remote shell program rsync runs")
                .letter('M', "'-M' passes options to the remote rsync")
                .longOption("--rsh", "'--rsh' names the remote shell program rsync runs")
                .longOption("--rsync-path", "'--rsync-path' names the program run on the other side")
                .longOption("--remote-option", "'--remote-option' passes options to the remote rsync")
                .longOption("--daemon", "'--daemon' runs rsync as a server with a configuration that runs commands")
                .longOption("--config", "'--config' reads a daemon configuration that runs commands")
                .minAbbrev(4)
                .valueLetters("BfT@")
                .operand("(?!rsync://)[^/:]+:(?!:).*", "an rsync to or from 'host:path' runs ssh")
                .build();
    }

    /** ssh: {@code -o} keys that run local commands or load code, {@code -F} config files, {@code -I} PKCS#11. */
    static ArgumentValidator ssh() {
        return RouteOptionValidator.builder("ssh", "")
                .letter('F', "'-F' reads a configuration, which can run local commands (ProxyCommand, Match exec)")
                .letter('I', "'-I' loads a PKCS#11 library")
                .valueLetters("BbcDEeIiJLlmOoPpQRSWw")
                .value("-o", RouteOptionValidator::sshOption)
                .build();
    }

    /** scp: {@code -S} (the ssh program), {@code -D}, and ssh's {@code -o} and {@code -F}. */
    static ArgumentValidator scp() {
        return RouteOptionValidator.builder("scp", "")
                .letter('S', "'-S' names the program scp runs instead of ssh")
                .letter('D', "'-D' names a local sftp server program")
                .letter('F', "'-F' reads a configuration, which can run local commands")
                .valueLetters("cilJoPX")
                .value("-o", RouteOptionValidator::sshOption)
                .build();
    }

    /** zip: {@code -TT}/{@code --unzip-command}. */
    static ArgumentValidator zip() {
        return RouteOptionValidator.builder("zip", "")
                .wholeWords()
                .prefix("-TT", "'-TT' names the command zip runs to test the archive")
                .longOption("--unzip-command", "'--unzip-command' names the command zip runs to test the archive")
                .minAbbrev(5)
                .build();
    }

    /** sdiff and diff3: {@code --diff-program}. */
    static ArgumentValidator diffProgram() {
        return RouteOptionValidator.builder("sdiff", "")
                .longOption("--diff-program", "'--diff-program' names the program it runs")
                .valueLetters("oIw")
                .build();
    }

    /** install: {@code --strip-program}. */
    static ArgumentValidator install() {
        return RouteOptionValidator.builder("install", "")
                .longOption("--strip-program", "'--strip-program' names the program it runs")
                .minAbbrev(8)
                .valueLetters("gmotSZ")
                .build();
    }

    /** man: the pager, browser and configuration options. */
    static ArgumentValidator man() {
        return RouteOptionValidator.builder("man", "")
                .letter('P', "'-P' names the pager program man runs")
                .letter('H', "'-H' names the browser program man runs")
                .letter('C', "'-C' reads a configuration that names programs")
                .longOption("--pager", "'--pager' names the program man runs")
                .longOption("--html", "'--html' names the browser program man runs")
                .longOption("--config-file", "'--config-file' reads a configuration that names programs")
                .longOption("--preprocessor", "'--preprocessor' chooses the programs man runs")
                .valueLetters("EeLMmpRrSsW")
                .build();
    }

    /** wget: {@code --use-askpass}, {@code -e}/{@code --execute} (wgetrc commands), {@code --config}. */
    static ArgumentValidator wget() {
        return RouteOptionValidator.builder("wget", "")
                .letter('e', "'-e' runs wgetrc commands, which can name a program to run ('use_askpass')")
                .longOption("--execute", "'--execute' runs wgetrc commands, which can name a program to run")
                .longOption("--use-askpass", "'--use-askpass' names a program wget runs")
                .longOption("--config", "'--config' reads wgetrc commands, which can name a program to run")
                .valueLetters("aABDiIlnoOPQRtTUwX")
                .build();
    }

    /** nc, netcat, ncat: {@code -e}, {@code -c}, {@code --exec}, {@code --sh-exec}, {@code --lua-exec}. */
    static ArgumentValidator netcat() {
        return RouteOptionValidator.builder("nc", "")
                .letter('e', "'-e' attaches the program it names to the connection")
                .letter('c', "'-c' attaches a shell command to the connection")
                .longOption("--exec", "'--exec' attaches the program it names to the connection")
                .longOption("--sh-exec", "'--sh-exec' attaches a shell command to the connection")
                .longOption("--lua-exec", "'--lua-exec' runs a Lua script on the connection")
                .valueLetters("bdgGiIkmMOpPqsTVwWxX")
                .build();
    }

    /** ip: {@code netns exec}, {@code vrf exec}, batch files. */
    static ArgumentValidator ip() {
        return RouteOptionValidator.builder("ip", "")
                .wholeWords()
                .word("exec", "'exec' runs the program it names in a network namespace or VRF")
                .prefix("-b", "'-batch' reads commands, 'exec' among them, from a file")
                .prefix("--b", "'--batch' reads commands, 'exec' among them, from a file")
                .build();
    }

    /** sqlite3: only in {@code -safe} mode, where {@code .shell} and {@code .system} are disabled. */
    static ArgumentValidator sqlite() {
        return argv -> {
            for (String a : argv.subList(1, argv.size())) {
                if (a.equals("-safe") || a.equals("--safe")) {
                    return;
                }
            }
            throw Validation.refuse(argv, "without '-safe', the '.shell' and '.system' commands in its input run"
                    + " programs, which the command policy does not allow; run it as 'sqlite3 -safe db.sqlite ...'");
        };
    }

    /** java: the JVM options that run a command on an event, and argument files. */
    static ArgumentValidator java() {
        return RouteOptionValidator.builder("java", "")
                .wholeWords()
                .prefix("-XX:OnError", "'-XX:OnError' runs the command it names")
                .prefix("-XX:OnOutOfMemoryError", "'-XX:OnOutOfMemoryError' runs the command it names")
                .prefix("-XX:Flags", "'-XX:Flags' reads options the policy cannot see")
                .prefix("-XX:VMOptionsFile", "'-XX:VMOptionsFile' reads options the policy cannot see")
                .prefix("@", "an argument file ('@file') adds options the policy cannot see")
                .build();
    }

    /** cargo: {@code --config} (runners, linkers and wrappers are configuration) and {@code -Z}. */
    static ArgumentValidator cargo() {
        return RouteOptionValidator.builder("cargo", "")
                .longOption("--config", "'--config' can name the runner, linker or wrapper programs cargo runs")
                .minAbbrev(8)
                .letter('Z', "'-Z' enables unstable options")
                .valueLetters("jpF")
                .build();
    }

    /** go: {@code -exec} and {@code -toolexec}, with one dash or two. */
    static ArgumentValidator go() {
        return RouteOptionValidator.builder("go", "")
                .wholeWords()
                .prefix("-exec", "'-exec' runs the built program under the program it names")
                .prefix("--exec", "'-exec' runs the built program under the program it names")
                .prefix("-toolexec", "'-toolexec' runs every build tool under the program it names")
                .prefix("--toolexec", "'-toolexec' runs every build tool under the program it names")
                .build();
    }

    /** deno and bun: the subcommands and options that run program text, remote code or shell commands. */
    static ArgumentValidator jsRuntime() {
        String text = "runs program text from the command line";
        return RouteOptionValidator.builder("deno", "write the program to a file under work/ and run it")
                .wholeWords()
                .word("eval", "'eval' " + text)
                .word("repl", "'repl' reads its program from stdin")
                .word("x", "'x' downloads and runs a package")
                .word("dlx", "'dlx' downloads and runs a package")
                .word("exec", "'exec' runs a shell command")
                .word("task", "'task' runs a shell command from the project's configuration")
                .word("-e", "'-e' " + text)
                .word("-p", "'-p' " + text)
                .prefix("--eval", "'--eval' " + text)
                .prefix("--print", "'--print' " + text)
                .word("-", "'-' reads the program from stdin")
                .anyWord("(?is).*(^|[=,])(data|https?|blob|jsr|npm):.*", "a data:, remote or package URL is code the"
                        + " policy cannot see")
                .build();
    }

    private static String notStdin(String option, String value) {
        return value.matches(STDIN) ? "'" + option + "' with stdin reads the makefile from the tool's input" : null;
    }

    private static String noPlugin(String option, String value) {
        String v = value.toLowerCase(java.util.Locale.ROOT);
        return v.contains("load") || v.contains("plugin") || v.startsWith("@") ? "'" + option + " "
                + Validation.abbreviate(value) + "' loads a plugin or reads options the policy cannot see" : null;
    }
}
