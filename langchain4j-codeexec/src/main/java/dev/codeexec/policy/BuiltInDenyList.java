package dev.codeexec.policy;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The catalogue behind {@link CommandPolicy#builtInDeniedCommands()}: every command that no allow list can enable,
 * by category. One rule decides what belongs here: <b>a program that runs another program named on its command line
 * (or a builtin that runs or re-reads shell code, or changes the shell's state for later segments) is denied</b>,
 * because the policy checks the first word of a segment only, and through such a program the first word is no longer
 * the program that runs. {@code strace curl x}, {@code /lib64/ld-linux-x86-64.so.2 /usr/bin/curl x} and
 * {@code gdb -batch -ex run --args curl x} would run {@code curl} past a deny list of {@code curl}, and past an allow
 * list that names only the wrapper.
 *
 * <p>Programs that can run another program through <em>an option</em> ({@code find -exec}, {@code sort
 * --compress-program}) are not in the catalogue: they are useful without it, so their argument validators refuse
 * those options instead. Interpreters ({@code python3}, {@code perl}, {@code node}) are not in it either: they run the
 * script the model wrote, which is what allowing one means; their validators refuse inline code ({@code -c},
 * {@code -e}) and programs from stdin.
 *
 * <p>Names match as the deny list does ({@link CommandNames#candidates}: basename, case-folded, without a Windows
 * executable suffix, trailing versions removed), so {@code /usr/bin/STRACE}, {@code strace.exe} and
 * {@code bash-5.2} are all caught. A few families have too many members to list and are matched by
 * {@linkplain Category#patterns() pattern} on the basename: dynamic loaders ({@code ld.so},
 * {@code ld-linux-x86-64.so.2}, {@code ld-2.31.so}, {@code ld64.so.2}, {@code ld-musl-x86_64.so.1}), prefixed debuggers
 * ({@code aarch64-linux-gnu-gdb}, {@code rust-lldb}) and QEMU's user-mode emulators ({@code qemu-x86_64}, {@code qemu-aarch64-static}).
 *
 * <p>docs/command-policy.md lists the same catalogue; a test keeps the two in step.
 */
final class BuiltInDenyList {

    /** Hint for the commands that wrap another one: run that one instead. */
    private static final String RUN_DIRECTLY = "Run the command you want directly (e.g. 'grep x f' instead of"
            + " \"sh -c 'grep x f'\").";

    /** Hint for the builtins that change the shell: there is no shell state to change. */
    private static final String USE_PARAMETERS = "Each command line runs in a fresh, clean shell: pass a working"
            + " directory or variables through the tool's parameters instead.";

    /**
     * Longest basename a pattern is tried on: no common file system stores a longer name (NAME_MAX), so a longer word
     * cannot name a program, and the limit keeps pattern matching linear on a 16 KiB word.
     */
    private static final int MAX_NAME = 255;

    /** The categories, in the order a refusal message and the documentation present them. */
    enum Category {

        SHELLS("a shell, which runs whatever its arguments say", RUN_DIRECTLY,
                List.of("sh", "bash", "rbash", "zsh", "ash", "dash", "ksh", "mksh", "pdksh", "oksh", "loksh", "lksh",
                        "yash", "posh", "hush", "sash", "csh", "tcsh", "fish", "elvish", "nu", "xonsh", "ion",
                        "murex", "osh", "ysh", "oil", "rc", "es", "execlineb", "pwsh", "powershell", "cmd")),

        MULTI_CALL("a multi-call binary that contains a shell and many of the wrappers below, selected by its first"
                + " argument", RUN_DIRECTLY,
                List.of("busybox", "toybox", "coreutils")),

        REEXECUTING_BUILTINS("a builtin that runs its arguments as shell code or looks commands up behind the"
                + " policy's back", RUN_DIRECTLY,
                List.of("eval", "exec", "command", "source", ".", "builtin", "fc", "coproc", "noglob", "nocorrect",
                        "emulate", "sched", "zpty", "zmodload", "autoload")),

        LOADERS_AND_EMULATORS("a dynamic loader or an emulator, which runs the program file named in its arguments"
                + " (even one without the execute bit)", RUN_DIRECTLY,
                List.of("ldd", "box64", "box86", "fexinterpreter", "fexloader", "fexbash", "wine", "wine64",
                        "wine-preloader", "wine64-preloader", "wine-stable", "wine-development", "wineconsole"),
                // ld.so, ld.so.1, ld-linux.so.2, ld-linux-x86-64.so.2, ld-2.31.so, ld64.so.2, ld-musl-x86_64.so.1,
                // ld-elf.so.1, ld-uClibc.so.0
                Pattern.compile("ld(32|64)?(-[a-z0-9_.+-]+)?\\.so(\\.[0-9]+)*"),
                // QEMU user mode: qemu-x86_64 /usr/bin/curl; the system emulators and qemu-img are not wrappers
                Pattern.compile("qemu-(aarch64(_be)?|alpha|arm(eb)?|cris|hexagon|hppa|i386|loongarch64|m68k"
                        + "|microblaze(el)?|mips(64)?(el)?|mipsn32(el)?|nios2|or1k|ppc(64(le)?)?|riscv(32|64)|s390x"
                        + "|sh4(eb)?|sparc(32plus|64)?|x86_64|xtensa(eb)?)(-static)?")),

        DEBUGGERS_TRACERS_PROFILERS("a debugger, tracer or profiler, which starts the program named in its"
                + " arguments", RUN_DIRECTLY,
                List.of("gdb", "gdb-multiarch", "gdbserver", "gdbtui", "gdbgui", "cgdb", "ddd", "lldb", "lldb-server",
                        "lldb-dap", "lldb-vscode", "lldb-mi", "rr", "strace", "ltrace", "valgrind", "valgrind.bin",
                        "vgdb", "catchsegv", "perf", "uftrace", "trace-cmd", "bpftrace", "stap", "dtrace", "dtruss",
                        "sotruss", "xtrace", "memusage", "heaptrack", "kcov", "hyperfine", "operf", "ocount", "nsys",
                        "ncu", "nvprof", "py-spy", "austin", "samply", "pin", "drrun", "frida", "frida-trace", "r2",
                        "radare2", "rizin", "rarun2", "rz-run", "apitrace"),
                // prefixed debuggers: x86_64-linux-gnu-gdb, arm-none-eabi-gdb, cuda-gdb, rust-gdb, rust-lldb
                Pattern.compile("([a-z0-9_.]+-)+(gdb|gdbserver|lldb)")),

        PRIVILEGE_AND_ISOLATION("a privilege, identity, namespace, container or root changer, which runs the program"
                + " named in its arguments as another user or in another context", RUN_DIRECTLY,
                List.of("sudo", "sudoedit", "su", "doas", "pkexec", "run0", "please", "pleaseedit", "ksu", "gosu",
                        "su-exec", "setuidgid", "envuidgid", "runuser", "setpriv", "capsh", "newgrp", "sg", "chroot",
                        "gchroot", "schroot", "dchroot", "unshare", "nsenter", "firejail", "bwrap", "nsjail",
                        "minijail0", "proot", "fakeroot", "fakeroot-sysv", "fakeroot-tcp", "fakechroot", "runcon",
                        "sandbox", "aa-exec", "systemd-nspawn", "machinectl", "lxc-execute", "lxc-attach", "jexec",
                        "sandbox-exec", "flatpak-spawn", "host-spawn", "distrobox-enter", "distrobox-host-exec",
                        "toolbox")),

        PROCESS_WRAPPERS("a wrapper that sets the environment, priority, CPU, limits, buffering, timing, locking or"
                + " architecture of a process and runs the program named in its arguments", RUN_DIRECTLY,
                List.of("env", "genv", "nice", "gnice", "nohup", "gnohup", "timeout", "gtimeout", "time", "gtime",
                        "stdbuf", "gstdbuf", "ionice", "chrt", "taskset", "numactl", "prlimit", "cgexec", "schedtool",
                        "cpulimit", "trickle", "uclampset", "coresched", "choom", "enosys", "pipesz", "setpgid",
                        "flock", "lckdo", "setlock", "chpst", "softlimit", "envdir", "pgrphack", "fghack", "faketime",
                        "eatmydata", "setarch", "linux32", "linux64", "uname26", "i386", "x86_64", "ppc", "ppc32",
                        "ppc64", "ppc64le", "s390", "s390x", "sparc", "sparc32", "sparc64", "parisc", "parisc32",
                        "parisc64", "mips", "mips32", "mips64", "ia64", "arch", "caffeinate", "systemd-inhibit",
                        "systemd-cat", "chronic", "ifne", "mispipe", "pee", "zrun", "cross-env", "env-cmd", "dotenv",
                        "npx", "pnpx")),

        SESSIONS_AND_TERMINALS("a terminal, session or display wrapper, which runs the program named in its arguments"
                + " in a new terminal, session or display", RUN_DIRECTLY,
                List.of("setsid", "script", "scriptlive", "expect", "unbuffer", "rlwrap", "screen", "tmux", "byobu",
                        "dtach", "abduco", "zellij", "openvt", "open", "xvfb-run", "xinit", "startx",
                        "dbus-run-session", "dbus-launch", "ssh-agent", "xterm", "uxterm", "x-terminal-emulator",
                        "gnome-terminal", "konsole", "xfce4-terminal", "mate-terminal", "lxterminal", "terminator",
                        "tilix", "urxvt", "rxvt", "alacritty", "kitty", "foot", "wezterm")),

        SCHEDULERS_AND_REPEATERS("a scheduler, service runner or repeater, which runs the program named in its"
                + " arguments later, in the background, once per input line, on a file change or on an interval",
                RUN_DIRECTLY,
                List.of("xargs", "gxargs", "parallel", "sem", "niceload", "env_parallel", "rush", "xjobs", "watch",
                        "entr", "watchexec", "nodemon", "reflex", "modd", "inotifyd", "at", "batch", "crontab",
                        "systemd-run", "systemd-socket-activate", "run-parts", "start-stop-daemon", "daemonize",
                        "daemon", "nq", "tsp", "launchctl", "schtasks", "forfiles")),

        NETWORK_AND_PROXIES("a network or proxy wrapper, which runs the program named in its arguments with its"
                + " connections redirected, or attaches a program to a socket", RUN_DIRECTLY,
                List.of("torsocks", "torify", "proxychains", "proxychains4", "tsocks", "socksify", "graftcp",
                        "socat", "tcpsvd", "udpsvd")),

        INPUT_COMMANDS("a program that runs the shell commands named in the input it reads ('!cmd', 'syscmd',"
                + " 'system'), and the policy cannot see that input (the tool's stdin or a file)", RUN_DIRECTLY,
                List.of("dc", "ed", "ex", "vi", "vim", "nvim", "view", "vimdiff", "gvim", "emacs",
                        "emacsclient", "m4", "gm4", "gnuplot", "sftp", "ftp", "lftp", "tftp", "mysql", "mariadb",
                        "psql", "mailx", "mail")),

        WINDOWS_LAUNCHERS("a Windows launcher, which runs the program or script named in its arguments",
                RUN_DIRECTLY,
                List.of("runas", "wsl", "wscript", "cscript", "mshta", "rundll32")),

        STATE_BUILTINS("a builtin that changes the shell's state (variables, PATH, working directory, traps, limits)"
                + " for the commands after it", USE_PARAMETERS,
                List.of("trap", "alias", "unalias", "enable", "hash", "export", "unset", "readonly", "local",
                        "declare", "typeset", "set", "shopt", "cd", "pushd", "popd", "ulimit", "umask", "bind",
                        "complete", "compgen", "compopt")),

        VARIABLE_BUILTINS("a builtin that assigns variables (printf -v PATH ..., read PATH)", USE_PARAMETERS,
                List.of("printf", "read", "getopts", "let", "mapfile", "readarray"));

        private final String reason;
        private final String hint;
        private final List<String> names;
        private final List<Pattern> patterns;

        Category(String reason, String hint, List<String> names, Pattern... patterns) {
            this.reason = reason;
            this.hint = hint;
            this.names = names;
            this.patterns = List.of(patterns);
        }

        /** What a member is and why that defeats a name-based policy, as the refusal message says it. */
        String reason() {
            return reason;
        }

        /** What the model can do instead. */
        String hint() {
            return hint;
        }

        /** The members by name (folded, as {@link CommandNames#candidates} produces them). */
        List<String> names() {
            return names;
        }

        /** Members matched by their basename as a whole ({@link Pattern#matcher}{@code .matches()}). */
        List<Pattern> patterns() {
            return patterns;
        }
    }

    /** Every name, to its category. */
    private static final Map<String, Category> BY_NAME;
    private static final Set<String> NAMES;

    static {
        Map<String, Category> byName = new LinkedHashMap<>();
        for (Category c : Category.values()) {
            for (String n : c.names) {
                Category previous = byName.put(n, c);
                if (previous != null || !n.equals(CommandNames.fold(n))) {
                    throw new ExceptionInInitializerError("built-in deny entry '" + n + "' is listed twice or not"
                            + " folded");
                }
            }
        }
        BY_NAME = Collections.unmodifiableMap(byName);
        NAMES = Collections.unmodifiableSet(new TreeSet<>(byName.keySet()));
    }

    private BuiltInDenyList() {
    }

    /** Every member listed by name (the pattern families are not enumerable). */
    static Set<String> names() {
        return NAMES;
    }

    /**
     * The category that denies {@code command} (a word as written: a bare name or a path), or {@code null} when the
     * built-in list does not deny it.
     */
    static Category match(String command) {
        List<String> candidates = CommandNames.candidates(command);
        for (String c : candidates) {
            Category category = BY_NAME.get(c);
            if (category != null) {
                return category;
            }
        }
        for (String c : CommandNames.candidates(CommandNames.basename(command))) {
            if (c.length() > MAX_NAME) {
                continue;
            }
            for (Category category : Category.values()) {
                for (Pattern p : category.patterns) {
                    if (p.matcher(c).matches()) {
                        return category;
                    }
                }
            }
        }
        return null;
    }

    /**
     * True when {@code name} is a multi-call binary, which picks its behaviour from the name it is run under: such a
     * binary reached through a link is judged by the link's name, not by its own.
     */
    static boolean isMultiCall(String name) {
        for (String c : CommandNames.candidates(name)) {
            if (BY_NAME.get(c) == Category.MULTI_CALL) {
                return true;
            }
        }
        return false;
    }
}
