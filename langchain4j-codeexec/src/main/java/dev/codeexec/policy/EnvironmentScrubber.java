package dev.codeexec.policy;

import dev.codeexec.engine.InvalidSpecException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Removes environment variables that would let a caller-provided environment (the model's {@code env} argument) change
 * what a policy-checked command does: start-up files a shell reads ({@code BASH_ENV}, {@code ENV}), exported shell
 * functions ({@code BASH_FUNC_*}), the search path ({@code PATH}, {@code CDPATH}), libraries injected into every
 * program ({@code LD_PRELOAD}, {@code DYLD_INSERT_LIBRARIES}), and the variables through which common tools run
 * commands or load code (pagers, editors, {@code GIT_*}, {@code PYTHONSTARTUP}, {@code TAR_OPTIONS}, ...).
 *
 * <p>A pure function over maps: {@link #scrub(Map)} returns a new map and touches nothing else. Use it on the
 * variables a caller adds to a policy run, which must itself start from the engine's clean environment
 * ({@code RunProgramSpec.cleanEnv}); scrubbing the host's full environment is not a substitute for a clean one.
 *
 * <p>Names are compared case-insensitively on every OS (Windows folds them; elsewhere dropping {@code Path} as well as
 * {@code PATH} costs nothing). Also dropped: names that are not {@code [A-Za-z_][A-Za-z0-9_]*}, and values that
 * contain NUL, CR or LF. A deny list of variable names is best effort: it covers what is known to run code, and a tool
 * with its own variables may still honour them.
 *
 * <p>Immutable and thread-safe.
 */
public final class EnvironmentScrubber {

    private static final Pattern VALID_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /** The shell and loader variables every policy run must not take from a caller. */
    private static final List<String> SHELL_AND_LOADER = List.of("HOME", "ENV", "BASH_ENV", "PROMPT_COMMAND", "PS0",
            "PS1", "PS2", "PS3", "PS4", "SHELL", "SHELLOPTS", "BASHOPTS", "PATH", "IFS", "CDPATH", "GLOBIGNORE",
            "ZDOTDIR", "INPUTRC", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES",
            "DYLD_LIBRARY_PATH", "DYLD_FORCE_FLAT_NAMESPACE", "GCONV_PATH", "GLIBC_TUNABLES", "HOSTALIASES");

    /** Variables through which common tools run a command or load code or configuration. */
    private static final List<String> TOOL_HOOKS = List.of("PAGER", "MANPAGER", "MANOPT", "SYSTEMD_PAGER", "EDITOR",
            "VISUAL", "BROWSER", "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS", "SUDO_ASKPASS", "XDG_CONFIG_HOME",
            "XDG_CONFIG_DIRS", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONBREAKPOINT", "PYTHONUSERBASE",
            "PYTHONINSPECT", "PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "RUBYOPT", "RUBYLIB", "NODE_OPTIONS",
            "NODE_PATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "LUA_INIT", "LUA_PATH",
            "LUA_CPATH", "PHPRC", "PHP_INI_SCAN_DIR", "TAR_OPTIONS", "TAPE", "OPENSSL_CONF", "OPENSSL_ENGINES",
            "CURL_HOME", "WGETRC", "AWKPATH", "AWKLIBPATH", "EXINIT", "VIMINIT", "MYVIMRC", "MAKEFLAGS", "MFLAGS",
            "GNUMAKEFLAGS", "MAKEFILES", "MAKESHELL", "COMPILER_PATH", "GCC_EXEC_PREFIX", "CCACHE_PREFIX", "GOFLAGS",
            "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTC", "RUSTDOC", "CARGO_BUILD_RUSTC_WRAPPER");

    /** Prefixes dropped whole: exported bash functions, loader, git and Lua versioned init variables. */
    private static final List<String> PREFIXES = List.of("BASH_FUNC_", "LD_", "DYLD_", "GIT_", "LUA_INIT_",
            "CARGO_TARGET_");

    /** git variables that only name the author or committer; kept although {@code GIT_*} is dropped. */
    private static final Set<String> KEPT = Set.of("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE",
            "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE");

    private static final EnvironmentScrubber DEFAULTS = new EnvironmentScrubber(defaultNames(), Set.copyOf(PREFIXES));

    private final Set<String> names;
    private final Set<String> prefixes;

    private EnvironmentScrubber(Set<String> names, Set<String> prefixes) {
        this.names = Collections.unmodifiableSet(new TreeSet<>(names));
        this.prefixes = Collections.unmodifiableSet(new TreeSet<>(prefixes));
    }

    /**
     * The default scrubber. Drops, case-insensitively: {@code HOME ENV BASH_ENV PROMPT_COMMAND PS0-PS4 SHELL SHELLOPTS
     * BASHOPTS PATH IFS CDPATH GLOBIGNORE ZDOTDIR INPUTRC LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT DYLD_INSERT_LIBRARIES
     * DYLD_LIBRARY_PATH DYLD_FORCE_FLAT_NAMESPACE GCONV_PATH GLIBC_TUNABLES HOSTALIASES}; every name starting with
     * {@code BASH_FUNC_ LD_ DYLD_ GIT_ LUA_INIT_ CARGO_TARGET_} (except {@code GIT_AUTHOR_*} and {@code GIT_COMMITTER_*} name, email
     * and date); tool hooks {@code PAGER MANPAGER EDITOR VISUAL BROWSER LESSOPEN SSH_ASKPASS XDG_CONFIG_HOME
     * PYTHONSTARTUP PYTHONPATH PERL5OPT RUBYOPT NODE_OPTIONS JAVA_TOOL_OPTIONS TAR_OPTIONS OPENSSL_CONF VIMINIT MAKEFLAGS
     * COMPILER_PATH GOFLAGS RUSTC_WRAPPER} and
     * similar (see {@link #droppedNames()}); malformed names; values with NUL, CR or LF.
     */
    public static EnvironmentScrubber defaults() {
        return DEFAULTS;
    }

    /** A builder starting from {@link #defaults()}, to drop more names or prefixes. */
    public static Builder builder() {
        return new Builder(DEFAULTS);
    }

    /** The exact names dropped (upper case), besides the prefixes. */
    public Set<String> droppedNames() {
        return names;
    }

    /** The name prefixes dropped (upper case). */
    public Set<String> droppedPrefixes() {
        return prefixes;
    }

    /**
     * The variables of {@code env} that may be passed to a policy run, in their original order. Never modifies
     * {@code env}; null means empty.
     *
     * @return a new unmodifiable map
     */
    public Map<String, String> scrub(Map<String, String> env) {
        if (env == null || env.isEmpty()) {
            return Map.of();
        }
        Map<String, String> out = new LinkedHashMap<>();
        env.forEach((k, v) -> {
            if (isAllowed(k, v)) {
                out.put(k, v);
            }
        });
        return Collections.unmodifiableMap(out);
    }

    /** True when the variable {@code name=value} survives {@link #scrub(Map)}. */
    public boolean isAllowed(String name, String value) {
        if (name == null || value == null || !VALID_NAME.matcher(name).matches()) {
            return false;
        }
        if (value.indexOf('\0') >= 0 || value.indexOf('\r') >= 0 || value.indexOf('\n') >= 0) {
            return false;
        }
        String upper = name.toUpperCase(Locale.ROOT);
        if (names.contains(upper)) {
            return false;
        }
        if (KEPT.contains(upper)) {
            return true;
        }
        for (String p : prefixes) {
            if (upper.startsWith(p)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EnvironmentScrubber other && names.equals(other.names) && prefixes.equals(other.prefixes);
    }

    @Override
    public int hashCode() {
        return Objects.hash(names, prefixes);
    }

    @Override
    public String toString() {
        return "EnvironmentScrubber[" + names.size() + " names, prefixes=" + prefixes + "]";
    }

    private static Set<String> defaultNames() {
        Set<String> s = new TreeSet<>(SHELL_AND_LOADER);
        s.addAll(TOOL_HOOKS);
        return s;
    }

    /** Builder for an {@link EnvironmentScrubber} that drops more than the defaults; it never drops less. */
    public static final class Builder {
        private final Set<String> names;
        private final Set<String> prefixes;

        private Builder(EnvironmentScrubber base) {
            this.names = new TreeSet<>(base.names);
            this.prefixes = new TreeSet<>(base.prefixes);
        }

        /** Also drops these names (case-insensitive). */
        public Builder drop(String... names) {
            for (String name : Objects.requireNonNull(names, "names")) {
                this.names.add(valid(name, "name"));
            }
            return this;
        }

        /** Also drops every name starting with one of these prefixes (case-insensitive), e.g. {@code "AWS_"}. */
        public Builder dropPrefix(String... prefixes) {
            for (String prefix : Objects.requireNonNull(prefixes, "prefixes")) {
                this.prefixes.add(valid(prefix, "prefix"));
            }
            return this;
        }

        /** Builds the scrubber. */
        public EnvironmentScrubber build() {
            return new EnvironmentScrubber(names, prefixes);
        }

        private static String valid(String s, String what) {
            if (s == null || !VALID_NAME.matcher(s).matches()) {
                throw new InvalidSpecException("environment variable " + what + " (" + s + ") must match"
                        + " [A-Za-z_][A-Za-z0-9_]*");
            }
            return s.toUpperCase(Locale.ROOT);
        }
    }
}
