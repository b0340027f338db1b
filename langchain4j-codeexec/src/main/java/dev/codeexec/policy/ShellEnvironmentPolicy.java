package dev.codeexec.policy;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.workspace.WorkspaceGlob;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Decides the environment of a program from the host's: the one environment policy, applied by every backend.
 * Immutable; build with {@link #builder()} or start from {@link #sandboxDefault()} (the sandbox's default) or
 * {@link #inheritAll()} (the local engine's default).
 *
 * <p>Resolution order, each step on the result of the previous one:
 * <ol>
 *   <li>inherit from the host: {@link Inherit#ALL all}, the {@link Inherit#CORE core} variables
 *       ({@link #CORE_VARIABLES}) or {@link Inherit#NONE nothing};</li>
 *   <li>drop names matching the {@link #DEFAULT_EXCLUDES} (names containing KEY, TOKEN, SECRET, PASSWORD or
 *       CREDENTIAL, ignoring case), when {@link #applyDefaultExcludes()};</li>
 *   <li>drop names matching the {@link #excludes()} patterns;</li>
 *   <li>add the policy's explicit {@link #set()} values;</li>
 *   <li>add the run's own variables ({@code RunProgramSpec.env});</li>
 *   <li>keep only names matching {@link #includeOnly()}, when that list is not empty;</li>
 *   <li>add the runtime variables last, overriding anything above: {@code HOME} and {@code TMPDIR} inside the
 *       workspace, {@code WORKSPACE_DIR}, {@code WORK_DIR}, {@code OUTPUT_DIR}, {@code RUN_DIR},
 *       {@code SKILLS_DIR}, …;</li>
 *   <li>set {@code PATH} to {@value #CLEAN_PATH} when nothing above set it.</li>
 * </ol>
 * A clean-environment run ({@code RunProgramSpec.cleanEnv}) skips steps 1–4 and sets {@code LANG=C.UTF-8} unless the
 * run sets it: the program sees only {@code PATH}, {@code LANG}, the run's variables and the runtime variables.
 *
 * <p>Patterns compare names ignoring case; a pattern with {@code *}, {@code ?} or {@code [} is a glob, any other is an
 * exact name.
 */
public final class ShellEnvironmentPolicy {

    /** What to take from the host environment before filtering. */
    public enum Inherit {
        /** Every host variable (then filtered). */
        ALL,
        /** Only {@link #CORE_VARIABLES} (then filtered). */
        CORE,
        /** Nothing. */
        NONE;

        /**
         * Parses {@code inherit-all}/{@code all}, {@code core} or {@code none}, ignoring case.
         *
         * @throws InvalidSpecException naming the bad value otherwise
         */
        public static Inherit parse(String value) {
            String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
            switch (v) {
                case "all":
                case "inherit-all":
                    return ALL;
                case "core":
                    return CORE;
                case "none":
                    return NONE;
                default:
                    throw new InvalidSpecException("environment inheritance '" + value
                            + "' is not known; use inherit-all, core or none");
            }
        }
    }

    /** Name patterns dropped by default: likely credentials. */
    public static final List<String> DEFAULT_EXCLUDES = List.of("*KEY*", "*TOKEN*", "*SECRET*", "*PASSWORD*",
            "*CREDENTIAL*");

    /** The variables {@link Inherit#CORE} keeps. */
    public static final Set<String> CORE_VARIABLES = Set.of("PATH", "SHELL", "HOME", "TMPDIR", "TMP", "TEMP", "LANG",
            "LC_ALL", "LC_CTYPE", "USER", "LOGNAME", "TZ", "TERM");

    /**
     * {@value}: the {@code PATH} of a clean environment, and the one set when no step sets one. The one spelling of
     * it: engines, the command policy and the tools refer to this constant.
     */
    public static final String CLEAN_PATH = "/usr/local/bin:/usr/bin:/bin";

    private final Inherit inherit;
    private final boolean applyDefaultExcludes;
    private final List<String> excludes;
    private final Map<String, String> set;
    private final List<String> includeOnly;
    private final List<Pattern> excludePatterns;
    private final List<Pattern> includePatterns;
    private final List<Pattern> defaultPatterns;

    private ShellEnvironmentPolicy(Builder b) {
        this.inherit = b.inherit == null ? Inherit.CORE : b.inherit;
        this.applyDefaultExcludes = b.applyDefaultExcludes == null || b.applyDefaultExcludes;
        this.excludes = List.copyOf(b.excludes);
        Map<String, String> s = new LinkedHashMap<>();
        b.set.forEach((k, v) -> {
            validateName(k);
            if (v == null || v.indexOf('\0') >= 0) {
                throw new InvalidSpecException("environment variable " + k + " must have a value without NUL");
            }
            s.put(k, v);
        });
        this.set = Collections.unmodifiableMap(s);
        this.includeOnly = List.copyOf(b.includeOnly);
        this.excludePatterns = compile(excludes);
        this.includePatterns = compile(includeOnly);
        this.defaultPatterns = compile(DEFAULT_EXCLUDES);
    }

    /**
     * The sandbox default: inherit {@link Inherit#CORE core} variables, apply the default excludes, nothing else. This
     * is stricter than inheriting everything: host secrets reach a program only when passed explicitly.
     */
    public static ShellEnvironmentPolicy sandboxDefault() {
        return builder().build();
    }

    /**
     * Everything the host has, without the default excludes: what a program started from a shell would see. The
     * local engine's default (it is not a sandbox); runs that ask for a clean environment still get a clean one.
     */
    public static ShellEnvironmentPolicy inheritAll() {
        return builder().inherit(Inherit.ALL).applyDefaultExcludes(false).build();
    }

    /** A builder whose defaults are those of {@link #sandboxDefault()}. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this policy's values. */
    public Builder toBuilder() {
        Builder b = new Builder().inherit(inherit).applyDefaultExcludes(applyDefaultExcludes);
        b.excludes.addAll(excludes);
        b.set.putAll(set);
        b.includeOnly.addAll(includeOnly);
        return b;
    }

    /** What is taken from the host before filtering. */
    public Inherit inherit() {
        return inherit;
    }

    /** True when names matching {@link #DEFAULT_EXCLUDES} are dropped. */
    public boolean applyDefaultExcludes() {
        return applyDefaultExcludes;
    }

    /** Extra name patterns dropped from the inherited variables. */
    public List<String> excludes() {
        return excludes;
    }

    /** Variables set explicitly, after inheritance and exclusion. */
    public Map<String, String> set() {
        return set;
    }

    /** The final allow list of name patterns; empty means no allow list. */
    public List<String> includeOnly() {
        return includeOnly;
    }

    /**
     * Computes a program's environment.
     *
     * @param host     the host environment (usually {@code System.getenv()}); null means empty
     * @param runEnv   the run's own variables; null means none
     * @param cleanEnv start from a minimal environment instead of steps 1–4
     * @param runtime  the runtime variables, injected last; null means none
     * @return a new, ordered map (sorted by name)
     */
    public Map<String, String> resolve(Map<String, String> host, Map<String, String> runEnv, boolean cleanEnv,
                                       Map<String, String> runtime) {
        return finish(cleanEnv ? Map.of() : base(host), runEnv, cleanEnv, runtime);
    }

    /**
     * Steps 1–4 (inherit, default excludes, excludes, set): the part that depends only on the host, so an engine
     * computes it once.
     */
    public Map<String, String> base(Map<String, String> host) {
        Map<String, String> env = new TreeMap<>();
        if (host != null) {
            host.forEach((k, v) -> {
                if (k == null || v == null || k.isEmpty() || k.indexOf('=') >= 0 || k.indexOf('\0') >= 0
                        || v.indexOf('\0') >= 0) {
                    return;
                }
                boolean take = inherit == Inherit.ALL || inherit == Inherit.CORE && CORE_VARIABLES.contains(k);
                if (take && !(applyDefaultExcludes && matchesAny(defaultPatterns, k))
                        && !matchesAny(excludePatterns, k)) {
                    env.put(k, v);
                }
            });
        }
        env.putAll(set);
        return env;
    }

    /**
     * Steps 5–8 on top of a {@link #base} (or of nothing, for a clean environment).
     *
     * @throws InvalidSpecException when a run's variable has an invalid name
     */
    public Map<String, String> finish(Map<String, String> base, Map<String, String> runEnv, boolean cleanEnv,
                               Map<String, String> runtime) {
        Map<String, String> env = new TreeMap<>(base);
        if (cleanEnv) {
            env.put("LANG", "C.UTF-8");
        }
        if (runEnv != null) {
            runEnv.forEach((k, v) -> {
                validateName(k);
                env.put(k, Objects.requireNonNull(v, k));
            });
        }
        if (!includePatterns.isEmpty()) {
            env.keySet().removeIf(k -> !matchesAny(includePatterns, k));
        }
        if (runtime != null) {
            env.putAll(runtime);
        }
        env.putIfAbsent("PATH", CLEAN_PATH);
        return env;
    }

    /** True when a name matches a pattern (exact or glob, ignoring case). */
    static boolean matches(String pattern, String name) {
        return compile(List.of(pattern)).get(0).matcher(name).matches();
    }

    private static boolean matchesAny(List<Pattern> patterns, String name) {
        for (Pattern p : patterns) {
            if (p.matcher(name).matches()) {
                return true;
            }
        }
        return false;
    }

    private static List<Pattern> compile(List<String> patterns) {
        List<Pattern> out = new ArrayList<>();
        for (String p : patterns) {
            String re = WorkspaceGlob.isGlob(p) ? WorkspaceGlob.toRegex(p) : Pattern.quote(p);
            out.add(Pattern.compile(re, Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE));
        }
        return out;
    }

    private static void validateName(String k) {
        if (k == null || k.isEmpty() || k.indexOf('=') >= 0 || k.indexOf('\0') >= 0) {
            throw new InvalidSpecException("environment variable name (" + k + ") is not valid");
        }
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof ShellEnvironmentPolicy)) {
            return false;
        }
        ShellEnvironmentPolicy that = (ShellEnvironmentPolicy) o;
        return inherit == that.inherit && applyDefaultExcludes == that.applyDefaultExcludes
                && excludes.equals(that.excludes) && set.equals(that.set) && includeOnly.equals(that.includeOnly);
    }

    @Override
    public int hashCode() {
        return Objects.hash(inherit, applyDefaultExcludes, excludes, set, includeOnly);
    }

    /** Lists names only: values may be secrets. */
    @Override
    public String toString() {
        return "ShellEnvironmentPolicy{inherit=" + inherit + ", applyDefaultExcludes=" + applyDefaultExcludes
                + ", excludes=" + excludes + ", set=" + set.keySet() + ", includeOnly=" + includeOnly + "}";
    }

    /** Builder for {@link ShellEnvironmentPolicy}. */
    public static final class Builder {
        private Inherit inherit;
        private Boolean applyDefaultExcludes;
        private final List<String> excludes = new ArrayList<>();
        private final Map<String, String> set = new LinkedHashMap<>();
        private final List<String> includeOnly = new ArrayList<>();

        private Builder() {
        }

        /** What to inherit from the host; default {@link Inherit#CORE}. */
        public Builder inherit(Inherit inherit) {
            this.inherit = inherit;
            return this;
        }

        /** Whether to drop {@link #DEFAULT_EXCLUDES}; default true. */
        public Builder applyDefaultExcludes(boolean apply) {
            this.applyDefaultExcludes = apply;
            return this;
        }

        /** Adds name patterns to drop from the inherited variables. */
        public Builder exclude(String... patterns) {
            for (String p : patterns) {
                if (p == null || p.isBlank()) {
                    throw new InvalidSpecException("exclude pattern (" + p + ") must not be blank");
                }
                excludes.add(p);
            }
            return this;
        }

        /** Sets a variable explicitly (after inheritance and exclusion). */
        public Builder set(String name, String value) {
            validateName(name);
            set.put(name, value);
            return this;
        }

        /** Adds name patterns of the final allow list; when any is given, only matching names survive. */
        public Builder includeOnly(String... patterns) {
            for (String p : patterns) {
                if (p == null || p.isBlank()) {
                    throw new InvalidSpecException("include-only pattern (" + p + ") must not be blank");
                }
                includeOnly.add(p);
            }
            return this;
        }

        /** Builds the policy; invalid names or values fail with {@code InvalidSpecException}. */
        public ShellEnvironmentPolicy build() {
            return new ShellEnvironmentPolicy(this);
        }
    }
}
