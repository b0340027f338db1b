package dev.codeexec.policy;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PolicyViolationException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which shell commands a model may run through {@code workspace_exec}: a parser for a safe shell subset, a built-in
 * deny list of every program that runs the program named in its arguments (shells, loaders, debuggers, privilege,
 * session and process wrappers) and of state-changing builtins, allow and deny lists by command name, and argument
 * validators for commands that can run other commands through their arguments.
 *
 * <p><b>This is a name-based policy, not a sandbox.</b> A permitted command still does whatever its arguments and the
 * files it reads tell it to: an allowed interpreter runs any script the model writes, {@code git} runs hooks and
 * config commands from a repository the model can write, and every allowed command can read what the process can read.
 * The argument validators close the common routes on the command line, on a best-effort basis. Put policy runs on a
 * backend that isolates them (the sandbox or container engine); the policy narrows what the model tries, the backend
 * bounds what it can do. See {@code docs/command-policy.md}.
 *
 * <p>{@link #check(String)} does, for every command line:
 * <ol>
 *   <li>parse it; anything but words, quotes, escapes and the operators {@code | && || ;} is refused: command and
 *       process substitution, parameter and arithmetic expansion, redirection and here-documents, subshells and
 *       blocks, globs, brace and tilde expansion, background {@code &}, comments, history {@code !}, control
 *       characters and newlines, leading assignments ({@code NAME=value cmd}), shell keywords, more than
 *       {@value #MAX_SEGMENTS} segments or {@value #MAX_COMMAND_BYTES} bytes;</li>
 *   <li>for each segment's command name, in this order of precedence:
 *     <ol>
 *       <li>the {@linkplain #builtInDeniedCommands() built-in deny list} refuses it: every program that runs another
 *           program named in its arguments (shells, {@code eval}, {@code env}, {@code xargs}, {@code sudo},
 *           {@code strace}, {@code gdb}, the dynamic loader, ...) and builtins that change shell state
 *           ({@code cd}, {@code export}, ...); no allow list overrides it;</li>
 *       <li>the {@linkplain Builder#deny(String...) deny list} refuses it;</li>
 *       <li>when an {@linkplain Builder#allow(String...) allow list} is set, a name not on it is refused;</li>
 *     </ol></li>
 *   <li>the segment's {@link ArgumentValidator}, if there is one for the command, checks its arguments
 *       ({@link ArgumentValidators#defaults()} unless configured otherwise).</li>
 * </ol>
 * Deny lists match loosely: the word, its basename, case-folded, without a Windows executable suffix, and without a
 * trailing version ({@code /usr/bin/Python3.11} matches a deny of {@code python}). Allow lists match exactly: a bare
 * entry ({@code echo}) matches only the bare name {@code echo}, never {@code ./echo} or {@code /tmp/echo}; an entry
 * with a path ({@code /usr/bin/echo}) matches only that exact path.
 *
 * <p>At run time, a name-based policy stops nothing by itself: a program it allowed can still start a denied one. On a
 * backend that can hide host files (the sandbox engine), {@link #deniedExecutables(String)} gives the files to hide;
 * the sandbox engine can also make the kernel refuse to execute every program that is not on the allow list
 * ({@code SandboxEngine.builder().enforceAllowList(policy)}).
 *
 * <p>A policy run must also start from a clean environment, or {@code BASH_ENV}, {@code LD_PRELOAD} and friends would
 * undo all of this: scrub caller-provided variables with {@link EnvironmentScrubber} and refuse engines whose
 * {@code Capabilities.supportsCleanEnv()} is false (the LangChain4j tools do both). Run the result through
 * {@link ParsedCommand#resolveExecutables(String, java.nio.file.Path)}, per run, which also decides every command on
 * the file it will execute (its real name, its identity when it is a copy of a program the policy judges by name, its
 * {@code #!} interpreter), and {@link ParsedCommand#toShellScript()}.
 *
 * <p>A deny list can never name every wrapper; an allow list can be exact. Use an allow list in production, on a
 * backend that isolates the run; {@code Capabilities.commandAllowListEnforcement()} says whether the engine also
 * enforces it when a program is executed ({@code KERNEL}: the sandbox engine with {@code enforceAllowList}).
 *
 * <pre>{@code
 * CommandPolicy policy = CommandPolicy.builder()
 *         .allow("ls", "cat", "head", "grep", "wc", "sort")
 *         .build();
 * ParsedCommand ok = policy.check("grep -c error work/log.txt");   // passes
 * policy.check("curl http://example.com");   // PolicyViolationException: not in the allow list
 * policy.check("sort --compress-program=sh f");   // PolicyViolationException: refused by sort's validator
 * }</pre>
 *
 * <p><b>Every allowed command is trusted with all of its options</b>: check each for options that run another program
 * ({@code sort --compress-program}, in any abbreviation GNU getopt accepts) before allowing it, and allow an
 * interpreter ({@code python3}) only where the backend isolates it, since it runs any script the model writes.
 *
 * <p>{@link #permissive()} is the absence of a policy: nothing is parsed or checked, and callers run the command line
 * with a full shell. Every policy from {@link #builder()}, even one with no lists, is enforcing: it parses, applies the
 * built-in deny list and the validators.
 *
 * <p>Immutable and thread-safe.
 */
public final class CommandPolicy {

    /** {@value} bytes (UTF-8): the longest command line an enforcing policy accepts. */
    public static final int MAX_COMMAND_BYTES = ShellParser.MAX_BYTES;

    /** {@value}: the most segments (simple commands joined by operators) in one command line. */
    public static final int MAX_SEGMENTS = ShellParser.MAX_SEGMENTS;

    private static final Logger log = LoggerFactory.getLogger(CommandPolicy.class);
    private static final AtomicBoolean WARNED_DENY_ONLY = new AtomicBoolean();

    private static final Set<String> BUILT_IN_DENY = BuiltInDenyList.names();

    private static final CommandPolicy PERMISSIVE = new CommandPolicy(false, Set.of(), Set.of(), Map.of());

    private final boolean enforcing;
    private final Set<String> allowed;
    private final Set<String> denied;
    /** Deny entries by {@link CommandNames#key}. */
    private final Set<String> deniedKeys;
    /** Validators by {@link CommandNames#key}, in insertion order. */
    private final Map<String, ArgumentValidator> validators;
    /** {@link KnownPrograms} by {@code PATH}: a cache, not part of the policy's value. */
    private final Map<String, KnownPrograms> knownByPath = new ConcurrentHashMap<>();

    private CommandPolicy(boolean enforcing, Set<String> allowed, Set<String> denied,
                          Map<String, ArgumentValidator> validators) {
        this.enforcing = enforcing;
        this.allowed = Collections.unmodifiableSet(new TreeSet<>(allowed));
        this.denied = Collections.unmodifiableSet(new TreeSet<>(denied));
        Set<String> keys = new TreeSet<>();
        for (String d : denied) {
            keys.add(CommandNames.key(d));
        }
        this.deniedKeys = Collections.unmodifiableSet(keys);
        this.validators = Collections.unmodifiableMap(new LinkedHashMap<>(validators));
    }

    /**
     * No policy: {@link #isEnforcing()} is false and {@link #check(String)} refuses to be called. Callers that see a
     * permissive policy run the command line unparsed with a full shell and the engine's normal environment.
     */
    public static CommandPolicy permissive() {
        return PERMISSIVE;
    }

    /**
     * A builder for an enforcing policy. Defaults: no allow list (any command not denied may run), no deny list beyond
     * the built-in one, and the {@link ArgumentValidators#defaults() default argument validators}.
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Shorthand for {@code builder().allow(commands).build()}: only these commands, with the default validators. */
    public static CommandPolicy allowing(String... commands) {
        return builder().allow(commands).build();
    }

    /**
     * The built-in deny list, applied by every enforcing policy whatever its allow list says: every program that runs
     * another program named on its command line, because through it the first word of a command is no longer the
     * program that runs ({@code strace curl}, {@code /lib64/ld-linux-x86-64.so.2 /usr/bin/curl}). By category:
     * shells ({@code sh bash zsh ...}) and multi-call binaries ({@code busybox toybox coreutils}); builtins that
     * re-execute their arguments ({@code eval exec command source . ...}); dynamic loaders and emulators
     * ({@code ldd}, {@code wine}, and by pattern {@code ld.so}, {@code ld-linux-x86-64.so.2}, {@code ld-2.31.so},
     * {@code qemu-x86_64}); debuggers, tracers and profilers ({@code gdb lldb strace ltrace valgrind perf uftrace ...},
     * and by pattern cross debuggers such as {@code aarch64-linux-gnu-gdb}); privilege, namespace and root changers
     * ({@code sudo su doas chroot unshare nsenter bwrap ...}); process wrappers ({@code env nice nohup timeout time
     * stdbuf taskset flock setarch ...}); terminal, session and display wrappers ({@code setsid script expect tmux
     * xvfb-run dbus-run-session ...}); schedulers and repeaters ({@code xargs parallel watch entr at systemd-run ...});
     * network wrappers ({@code torsocks proxychains socat ...}); Windows launchers; builtins that change shell state
     * for the following segments ({@code cd export set trap alias ulimit ...}) and builtins that assign variables
     * ({@code printf read let mapfile ...}). The complete catalogue, with the reason for each category, is in
     * {@code docs/command-policy.md}.
     *
     * <p>Matched like the deny list (name or basename, case-folded, without a Windows suffix, trailing versions and
     * build variants removed: {@code /usr/bin/STRACE}, {@code bash-5.2}, {@code lldb-18}); the pattern families match
     * the basename. On this host, {@link ParsedCommand#resolveExecutables(String)} also applies the list to the file
     * a command links to ({@code x86_64} is {@code setarch}).
     *
     * @return the members listed by name (the pattern families are not enumerable), sorted; unmodifiable
     */
    public static Set<String> builtInDeniedCommands() {
        return BUILT_IN_DENY;
    }

    /** False only for {@link #permissive()}. */
    public boolean isEnforcing() {
        return enforcing;
    }

    /** The allow list as configured; empty means every command that is not denied is allowed. */
    public Set<String> allowedCommands() {
        return allowed;
    }

    /** The deny list as configured, on top of {@link #builtInDeniedCommands()}. */
    public Set<String> deniedCommands() {
        return denied;
    }

    /** The argument validators by command name (folded basename). */
    public Map<String, ArgumentValidator> validators() {
        return validators;
    }

    /**
     * Parses {@code commandLine} and checks every command in it, as described on the class.
     *
     * @param commandLine the command line the model wrote
     * @return the parsed command, whose segments are exactly the argv lists that were checked
     * @throws PolicyViolationException with a message the model can act on, naming the construct or command and the
     *                                  rule that refused it
     * @throws IllegalStateException    when called on {@link #permissive()}, which does not parse
     */
    public ParsedCommand check(String commandLine) {
        if (!enforcing) {
            throw new IllegalStateException("the permissive policy does not parse or check commands; test"
                    + " isEnforcing() before calling check()");
        }
        ParsedCommand parsed = ShellParser.parse(commandLine);
        for (ParsedCommand.Segment segment : parsed.segments()) {
            checkName(segment.command());
        }
        for (ParsedCommand.Segment segment : parsed.segments()) {
            ArgumentValidator validator = validatorFor(segment.command());
            if (validator != null) {
                validator.validate(segment.argv());
            }
        }
        return parsed.checkedBy(this);
    }

    /**
     * {@link #check(String)}, then {@link ParsedCommand#resolveExecutables(String)} against {@code path}, the
     * {@code PATH} of the run on this host's file system.
     *
     * @throws PolicyViolationException when the policy refuses the line or a command is not found on {@code path}
     */
    public ParsedCommand check(String commandLine, String path) {
        return check(commandLine).resolveExecutables(path);
    }

    /**
     * The files on this host that hold the programs this policy's deny list names, for a backend that can make them
     * unavailable at run time. A name-based check cannot stop a program the policy allowed from starting a denied one
     * (an allowed {@code python3} script calling {@code subprocess.run(["curl", ...])}, a {@code Makefile}); a backend
     * that hides the file does (the sandbox engine: a hidden file cannot be opened). This method hides nothing itself.
     *
     * <p>For every absolute entry of {@code path} (relative and empty entries are skipped): every directory entry whose
     * name the deny list matches (loosely, as {@link #check(String)} does), followed through symbolic links to its file
     * ({@code /usr/bin/nc} gives {@code /usr/bin/nc.openbsd}); every other entry that is the same file (a hard link);
     * and every absolute deny entry that exists. Regular files count whether or not they are executable: the dynamic
     * loader runs any program file it can read, so only hiding the file makes a program unavailable, and that closes
     * every wrapper route at once.
     *
     * <p>Not included: the {@linkplain #builtInDeniedCommands() built-in list}'s programs ({@code sh} runs every policy
     * command, {@code env} is the {@code #!} line of many scripts, every dynamically linked program needs the loader;
     * they are refused on the command line instead), copies outside {@code path}, programs that do the same job under
     * another name, and relative deny entries. When a denied name is a link to a multi-call binary ({@code wget} to
     * {@code busybox}), the binary itself is returned, and hiding it hides every program it provides: check the result
     * before hiding it.
     *
     * @param path a POSIX {@code PATH} value ({@code :}-separated), the one the runs will use; must not be blank
     * @return the real absolute paths, sorted and without duplicates; empty when the deny list is empty (as it is for
     *         {@link #permissive()}); unmodifiable
     * @throws InvalidSpecException when {@code path} is null or blank
     */
    public Set<Path> deniedExecutables(String path) {
        return DeniedExecutables.find(path, denied, deniedKeys.isEmpty(), this::isDenied);
    }

    private void checkName(String name) {
        String shown = CommandNames.shown(name);
        BuiltInDenyList.Category builtIn = BuiltInDenyList.match(name);
        if (builtIn != null) {
            throw new PolicyViolationException("command '" + shown + "' is denied by the built-in policy:"
                    + " it is " + builtIn.reason() + "; no allow list can enable it. " + builtIn.hint());
        }
        if (isDenied(name)) {
            throw new PolicyViolationException("command '" + shown + "' is denied by the policy's deny list");
        }
        if (!allowed.isEmpty() && !allowed.contains(name)) {
            String hint = CommandNames.isPathful(name) && allowed.contains(CommandNames.basename(name))
                    ? " (the allow list names '" + CommandNames.basename(name) + "' without a path; write it bare)"
                    : "";
            throw new PolicyViolationException("command '" + shown + "' is not in the policy's allow list"
                    + hint + "; allowed commands: " + CommandNames.summary(allowed));
        }
    }

    private boolean isDenied(String name) {
        for (String c : CommandNames.candidates(name)) {
            if (deniedKeys.contains(c)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Judges the file a resolved segment will execute under one of the names that file really has (its real name, the
     * name of the known program it is a copy of, its {@code #!} interpreter): the built-in list, the deny list and the
     * validator of that name apply as they would to that name; the allow list does not (it names what may be
     * written). See {@link CommandFiles}.
     *
     * @param written        the command as the model wrote it, for the message (a resolved path would show host paths)
     * @param argv           the argv that name will run with
     * @param name           the name to judge by
     * @param how            why that name applies, for the message ("it runs 'setarch'")
     * @param exemptMultiCall true when the file runs under the written name: a multi-call binary (busybox) then
     *                        behaves as that name, which was checked
     */
    void judge(String written, List<String> argv, String name, String how, boolean exemptMultiCall) {
        if (exemptMultiCall && BuiltInDenyList.isMultiCall(name)) {
            return;
        }
        String shown = CommandNames.shown(written);
        BuiltInDenyList.Category builtIn = BuiltInDenyList.match(name);
        if (builtIn != null) {
            throw new PolicyViolationException("command '" + shown + "' is denied by the built-in policy: " + how
                    + ", " + builtIn.reason() + "; no allow list can enable it. " + builtIn.hint());
        }
        if (isDenied(name)) {
            throw new PolicyViolationException("command '" + shown + "' is denied by the policy's deny list: " + how);
        }
        ArgumentValidator validator = validatorFor(name);
        if (validator != null && (!exemptMultiCall || validator != validatorFor(argv.get(0)))) {
            validator.validate(argv);
        }
    }

    /** The programs this policy judges by name, as found on {@code path} on this host (cached per {@code PATH}). */
    KnownPrograms knownPrograms(String path) {
        KnownPrograms cached = knownByPath.get(path);
        KnownPrograms current = KnownPrograms.current(cached, path,
                n -> BuiltInDenyList.match(n) != null || isDenied(n) || validatorFor(n) != null);
        if (current != cached) {
            if (knownByPath.size() > 16) {
                knownByPath.clear();
            }
            knownByPath.put(path, current);
        }
        return current;
    }

    private ArgumentValidator validatorFor(String name) {
        List<String> candidates = CommandNames.candidates(name);
        for (String c : candidates) {
            ArgumentValidator v = validators.get(c);
            if (v != null) {
                return v;
            }
        }
        String cross = CommandNames.crossTool(candidates);
        return cross == null ? null : validators.get(cross);
    }

    /** A builder with this policy's lists and validators; the permissive policy gives a fresh default builder. */
    public Builder toBuilder() {
        Builder b = new Builder();
        if (enforcing) {
            b.allowed.addAll(allowed);
            b.denied.addAll(denied);
            b.validators.clear();
            b.validators.putAll(validators);
        }
        return b;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CommandPolicy other && enforcing == other.enforcing && allowed.equals(other.allowed)
                && denied.equals(other.denied) && validators.equals(other.validators);
    }

    @Override
    public int hashCode() {
        return Objects.hash(enforcing, allowed, denied, validators);
    }

    @Override
    public String toString() {
        if (!enforcing) {
            return "CommandPolicy[permissive]";
        }
        return "CommandPolicy[allow=" + (allowed.isEmpty() ? "<any not denied>" : allowed) + ", deny=" + denied
                + ", validators=" + validators.keySet() + "]";
    }

    /**
     * Builder for an enforcing {@link CommandPolicy}. Lists accumulate across calls. Entries must be non-blank and
     * free of whitespace and control characters; a bad entry throws {@link InvalidSpecException} naming it.
     */
    public static final class Builder {
        private final Set<String> allowed = new TreeSet<>();
        private final Set<String> denied = new TreeSet<>();
        private final Map<String, ArgumentValidator> validators = new LinkedHashMap<>(ArgumentValidators.defaults());

        private Builder() {
        }

        /**
         * Adds commands to the allow list. A bare name ({@code "grep"}) permits that bare name only; a name with a
         * path ({@code "/usr/bin/grep"}, {@code "./tool"}) permits exactly that path. Matching is case-sensitive.
         * Beware that a relative path such as {@code ./tool} names a file in the workspace, which the model can write.
         * Default: empty, meaning every command that is not denied is allowed.
         */
        public Builder allow(String... commands) {
            return allow(Arrays.asList(nonNull(commands, "allow")));
        }

        /** Adds commands to the allow list; see {@link #allow(String...)}. */
        public Builder allow(Collection<String> commands) {
            for (String c : nonNull(commands, "allow")) {
                allowed.add(CommandNames.entry(c, "allow"));
            }
            return this;
        }

        /**
         * Adds commands to the deny list. An entry is compared by its basename, case-folded, against the command name
         * and its basename, with a Windows executable suffix and a trailing version removed: denying {@code curl}
         * also denies {@code /usr/bin/curl} and {@code CURL}; denying {@code python} also denies {@code python3.12}.
         * Default: empty (the {@linkplain CommandPolicy#builtInDeniedCommands() built-in list} always applies).
         */
        public Builder deny(String... commands) {
            return deny(Arrays.asList(nonNull(commands, "deny")));
        }

        /** Adds commands to the deny list; see {@link #deny(String...)}. */
        public Builder deny(Collection<String> commands) {
            for (String c : nonNull(commands, "deny")) {
                denied.add(CommandNames.entry(c, "deny"));
            }
            return this;
        }

        /**
         * Sets the argument validator for {@code command} (a name, matched like a deny entry), replacing any validator
         * for that name, including a default one; {@code null} removes the validator for that name.
         */
        public Builder validator(String command, ArgumentValidator validator) {
            String key = CommandNames.key(CommandNames.entry(command, "validator"));
            if (validator == null) {
                validators.remove(key);
            } else {
                validators.put(key, validator);
            }
            return this;
        }

        /**
         * Replaces all argument validators, the defaults included; {@code Map.of()} runs none. Default:
         * {@link ArgumentValidators#defaults()}.
         */
        public Builder validators(Map<String, ArgumentValidator> validators) {
            Objects.requireNonNull(validators, "validators");
            this.validators.clear();
            validators.forEach(this::validator);
            return this;
        }

        /** Builds the policy. Logs a warning (once per JVM) when there is no allow list. */
        public CommandPolicy build() {
            if (allowed.isEmpty() && WARNED_DENY_ONLY.compareAndSet(false, true)) {
                log.warn("A command policy without an allow list lets the model run any command that is not denied;"
                        + " name-based deny lists are easy to get around. Prefer an allow list.");
            }
            return new CommandPolicy(true, allowed, denied, validators);
        }

        private static <T> T nonNull(T value, String what) {
            if (value == null) {
                throw new InvalidSpecException(what + " list must not be null");
            }
            return value;
        }
    }
}
