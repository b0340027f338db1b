package dev.codeexec.sandbox;

import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.workspace.WorkspaceGlob;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a sandboxed program may see and change: path rules, no-access globs, protected metadata and the network.
 * Immutable; every {@code with…} method returns a changed copy.
 *
 * <p><b>Start from a preset.</b> {@link #workspaceWrite()} (the default of {@link SandboxEngine}) lets a program read
 * the host read-only, write its own workspace, and nothing else: other workspaces, {@link #DEFAULT_HIDDEN_PATHS host
 * secrets} and the network are out of reach. {@link #readOnly()} also makes the workspace read-only.
 * {@link #dangerFullAccess()} turns the sandbox off, as its name says; {@link #external(NetworkMode)} declares that
 * isolation is provided outside this library.
 *
 * <pre>{@code
 * PermissionProfile profile = PermissionProfile.workspaceWrite()
 *         .withReadPaths("/srv/datasets")          // a host directory, read-only
 *         .withNoAccessGlobs("**}{@code /.env")            // never visible, wherever it lies in the workspace
 *         .withNetwork(NetworkMode.ENABLED);
 * }</pre>
 *
 * <p><b>Paths.</b> An absolute path is a host path. A relative path is relative to the workspace root ({@code "."} is
 * the root itself). In no-access rules, {@code ~/x} means {@code x} in every user's home directory. Globs ({@code *},
 * {@code ?}, {@code [}, <code>{</code>: the syntax of {@link WorkspaceGlob}) are only allowed in
 * {@link #withNoAccessGlobs}; {@code **} crosses directories.
 *
 * <p><b>Decision.</b> For any path the most specific matching rule wins (the one with most path segments); on equal
 * specificity no-access beats write, which beats read; a path no rule covers is not visible. A no-access glob counts as
 * an exact rule on each path it matches, so it beats every directory grant. Protected metadata ({@code .git} by
 * default) stays read-only wherever it appears in a writable root, even when the root is writable.
 *
 * <p><b>Errors.</b> Bad input fails here, before anything runs, with {@link InvalidSpecException}: a grant of a host
 * path that does not exist, a glob in a grant, a no-access rule and a grant on the same path, a write grant inside
 * protected metadata or on the host root, and path rules on a profile that does not sandbox.
 */
public final class PermissionProfile {

    /**
     * Host paths no managed profile shows (each hidden only where it exists; extend with {@link #withNoAccessPaths}).
     * {@code ~/} entries apply to {@code /root} and every home directory under {@code /home} and in
     * {@code /etc/passwd}.
     */
    public static final List<String> DEFAULT_HIDDEN_PATHS = List.of(
            "/root",
            "~/.ssh", "~/.aws", "~/.gnupg", "~/.kube", "~/.docker", "~/.netrc", "~/.config/gcloud", "~/.azure",
            "~/.git-credentials", "~/.npmrc", "~/.pypirc", "~/.m2/settings.xml", "~/.config/gh",
            "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d",
            "/etc/ssh", "/etc/ssl/private", "/etc/security/opasswd",
            "/run", "/var/run", "/var/lib/docker", "/var/lib/containerd", "/var/backups", "/var/log", "/var/mail",
            "/var/spool");

    /**
     * Names that stay read-only wherever they appear in a writable root (the workspace and each write grant, at the
     * top and below it), so that a program cannot plant, for example, git hooks the host later runs.
     */
    public static final List<String> DEFAULT_PROTECTED_METADATA = List.of(".git", ".codeexec");

    /** How the profile is enforced. */
    public enum Enforcement {
        /** This library builds the sandbox from the rules (bubblewrap or Seatbelt). */
        MANAGED,
        /** No sandbox: the program runs as the host user with full file and network access. */
        DISABLED,
        /** The whole process already runs in a sandbox provided outside this library; rules are not applied. */
        EXTERNAL
    }

    /** One path rule: a host-absolute, workspace-relative or {@code ~/} path, and what it allows. */
    public record PathRule(String path, FileAccess access) {
        public PathRule {
            Objects.requireNonNull(path, "path");
            Objects.requireNonNull(access, "access");
        }

        /** True when {@link #path()} is a host path. */
        public boolean isHostPath() {
            return path.startsWith("/");
        }

        /** True when {@link #path()} names a path in every home directory. */
        public boolean isHomePath() {
            return path.startsWith("~/");
        }
    }

    static final String WORKSPACE_ROOT = ".";

    private final Enforcement enforcement;
    private final NetworkMode network;
    private final Map<String, FileAccess> rules;
    private final List<String> noAccessGlobs;
    private final List<String> protectedMetadata;
    private final boolean protectedMetadataCreation;
    private final boolean nestedMetadataWrites;

    private PermissionProfile(Enforcement enforcement, NetworkMode network, Map<String, FileAccess> rules,
                              List<String> noAccessGlobs, List<String> protectedMetadata) {
        this(enforcement, network, rules, noAccessGlobs, protectedMetadata, false, false);
    }

    private PermissionProfile(Enforcement enforcement, NetworkMode network, Map<String, FileAccess> rules,
                              List<String> noAccessGlobs, List<String> protectedMetadata,
                              boolean protectedMetadataCreation, boolean nestedMetadataWrites) {
        this.enforcement = enforcement;
        this.network = network;
        this.rules = Collections.unmodifiableMap(new LinkedHashMap<>(rules));
        this.noAccessGlobs = List.copyOf(noAccessGlobs);
        this.protectedMetadata = List.copyOf(protectedMetadata);
        this.protectedMetadataCreation = protectedMetadataCreation;
        this.nestedMetadataWrites = nestedMetadataWrites;
    }

    /**
     * A managed profile in which nothing is writable: the host (minus {@link #DEFAULT_HIDDEN_PATHS}) and the
     * workspace are read-only, the rest of the sandbox root is hidden, and the network is
     * {@link NetworkMode#RESTRICTED}. Programs still get a private, memory-backed {@code /tmp} that disappears with the
     * run.
     */
    public static PermissionProfile readOnly() {
        Map<String, FileAccess> rules = new LinkedHashMap<>();
        rules.put("/", FileAccess.READ);
        rules.put(WORKSPACE_ROOT, FileAccess.READ);
        for (String hidden : DEFAULT_HIDDEN_PATHS) {
            rules.put(hidden, FileAccess.NONE);
        }
        return new PermissionProfile(Enforcement.MANAGED, NetworkMode.RESTRICTED, rules, List.of(),
                DEFAULT_PROTECTED_METADATA);
    }

    /**
     * The default: {@link #readOnly()} plus write access to the whole workspace ({@code work/}, {@code out/},
     * {@code runs/}, {@code home/}, {@code tmp/}, …), except {@link #DEFAULT_PROTECTED_METADATA}, which stays
     * read-only. Network {@link NetworkMode#RESTRICTED}.
     */
    public static PermissionProfile workspaceWrite() {
        return readOnly().withRule(WORKSPACE_ROOT, FileAccess.WRITE);
    }

    /**
     * <b>No sandbox at all.</b> Programs run as the host user and can read and write every file that user can, and use
     * the network. Only for trusted code on a disposable host. The environment policy, timeouts, output caps and
     * process-tree kill still apply. Path rules cannot be added and the network cannot be restricted.
     */
    public static PermissionProfile dangerFullAccess() {
        return new PermissionProfile(Enforcement.DISABLED, NetworkMode.ENABLED, Map.of(), List.of(), List.of());
    }

    /**
     * Declares that this whole process already runs inside a sandbox provided outside this library (a locked-down
     * container, a VM), with the given network. Programs run without an extra sandbox layer; the declaration is
     * reported as {@link dev.codeexec.engine.Isolation#EXTERNAL}. Path rules cannot be added.
     *
     * @param network what the outside sandbox allows; must not be null
     */
    public static PermissionProfile external(NetworkMode network) {
        Objects.requireNonNull(network, "network");
        return new PermissionProfile(Enforcement.EXTERNAL, network, Map.of(), List.of(), List.of());
    }

    /**
     * Parses a preset name: {@code read-only}, {@code workspace-write} or {@code danger-full-access}.
     *
     * @throws InvalidSpecException naming the bad value otherwise
     */
    public static PermissionProfile preset(String name) {
        String n = name == null ? "" : name.trim();
        switch (n) {
            case "read-only":
                return readOnly();
            case "workspace-write":
                return workspaceWrite();
            case "danger-full-access":
                return dangerFullAccess();
            default:
                throw new InvalidSpecException("profile '" + name
                        + "' is not known; use read-only, workspace-write or danger-full-access");
        }
    }

    /** How this profile is enforced. */
    public Enforcement enforcement() {
        return enforcement;
    }

    /** The network mode. */
    public NetworkMode network() {
        return network;
    }

    /** The path rules in the order they were added (later rules on the same path replaced earlier ones). */
    public List<PathRule> rules() {
        List<PathRule> out = new ArrayList<>();
        rules.forEach((p, a) -> out.add(new PathRule(p, a)));
        return Collections.unmodifiableList(out);
    }

    /** Workspace-relative no-access globs. */
    public List<String> noAccessGlobs() {
        return noAccessGlobs;
    }

    /** Names kept read-only wherever they appear in a writable root (see {@link #withProtectedMetadata}). */
    public List<String> protectedMetadata() {
        return protectedMetadata;
    }

    /** True when programs may create protected metadata where none exists (see {@link #withProtectedMetadataCreation}). */
    public boolean allowsProtectedMetadataCreation() {
        return protectedMetadataCreation;
    }

    /**
     * Lets programs create protected metadata where none exists yet (say, {@code git init} at the workspace root).
     * <b>Off by default</b>: a name of {@link #protectedMetadata()} that does not exist at the top of a writable root
     * is occupied by an empty read-only directory during each run, so no program can create a repository there that
     * the host would later trust (its hooks and configuration run on the host). Allowed, what a program creates is
     * read-only from the next run on, and must be trusted like anything the program wrote.
     */
    public PermissionProfile withProtectedMetadataCreation() {
        requireManaged("withProtectedMetadataCreation");
        return new PermissionProfile(enforcement, network, rules, noAccessGlobs, protectedMetadata, true,
                nestedMetadataWrites);
    }

    /**
     * True when programs may keep writing protected metadata they created below the workspace root (see
     * {@link #withNestedMetadataWrites}).
     */
    public boolean allowsNestedMetadataWrites() {
        return nestedMetadataWrites;
    }

    /**
     * Lets programs keep writing the protected metadata they created <em>below</em> the workspace root in later runs:
     * their own repositories ({@code git init} or {@code git clone} into {@code work/}), so that {@code git commit}
     * keeps working run after run. <b>Off by default</b>: protected metadata is read-only wherever it appears in the
     * writable tree, from the run after it appeared on, because the host's git may later run its hooks and
     * configuration. Allowed, a program's repositories below the root must be trusted like anything else it wrote;
     * the host must not run git in them. What stays protected regardless: the workspace root's own protected
     * metadata, the metadata the application staged (anywhere in the workspace), and every repository inside a host
     * directory (a write grant, or a host directory used as the workspace).
     */
    public PermissionProfile withNestedMetadataWrites() {
        requireManaged("withNestedMetadataWrites");
        return new PermissionProfile(enforcement, network, rules, noAccessGlobs, protectedMetadata,
                protectedMetadataCreation, true);
    }

    /**
     * Grants read-only access to the given paths (host-absolute paths must exist). A later grant of the same path
     * replaces an earlier read or write grant.
     *
     * @throws InvalidSpecException for a glob, a missing host path, or a path that has a no-access rule
     */
    public PermissionProfile withReadPaths(String... paths) {
        return withRules(FileAccess.READ, paths);
    }

    /**
     * Grants read and write access to the given paths (host-absolute paths must exist). Protected metadata inside each
     * of them stays read-only.
     *
     * @throws InvalidSpecException for a glob, a missing host path, the host root, a path inside protected metadata,
     *                              or a path that has a no-access rule
     */
    public PermissionProfile withWritePaths(String... paths) {
        return withRules(FileAccess.WRITE, paths);
    }

    /**
     * Hides the given paths: host-absolute, workspace-relative or {@code ~/x} (in every home directory). Paths that
     * do not exist are allowed (there is nothing to hide yet; workspace file operations still refuse them).
     *
     * @throws InvalidSpecException for a glob (use {@link #withNoAccessGlobs}) or a path that has a grant
     */
    public PermissionProfile withNoAccessPaths(String... paths) {
        return withRules(FileAccess.NONE, paths);
    }

    /**
     * Hides every workspace path matching the globs, for example {@code **}{@code /.env} or {@code secrets/*}.
     * {@code *} and {@code ?} stay within one path segment, {@code **} crosses directories, {@code [abc]} is a
     * character class, <code>{a,b}</code> an alternation (the syntax of {@link WorkspaceGlob}). Matches are hidden
     * from the program at the start of each run, and workspace file operations (read, write, collect) refuse them at
     * any time.
     *
     * @throws InvalidSpecException for an absolute glob, {@code ..}, an empty or a malformed pattern
     */
    public PermissionProfile withNoAccessGlobs(String... globs) {
        requireManaged("withNoAccessGlobs");
        List<String> out = new ArrayList<>(noAccessGlobs);
        for (String g : Objects.requireNonNull(globs, "globs")) {
            if (g == null || g.isBlank() || g.indexOf('\0') >= 0) {
                throw new InvalidSpecException("no-access glob (" + g + ") must be a non-blank pattern");
            }
            if (g.startsWith("/") || g.startsWith("~")) {
                throw new InvalidSpecException("no-access glob '" + g + "' must be workspace-relative; hide host "
                        + "paths with withNoAccessPaths and exact paths");
            }
            for (String seg : g.split("/", -1)) {
                if (seg.equals("..") || seg.isEmpty() && !g.isEmpty()) {
                    throw new InvalidSpecException("no-access glob '" + g + "' must not contain '..' or empty segments");
                }
            }
            WorkspaceGlob.compile(g); // a malformed pattern (an unclosed '[' or '{') fails here, not at the first run
            if (!out.contains(g)) {
                out.add(g);
            }
        }
        return new PermissionProfile(enforcement, network, rules, out, protectedMetadata, protectedMetadataCreation,
                nestedMetadataWrites);
    }

    /**
     * Adds names that stay read-only wherever they appear in a writable root (in addition to
     * {@link #DEFAULT_PROTECTED_METADATA}): at the top of each root (where a missing one is occupied by a read-only
     * placeholder during each run, unless {@link #withProtectedMetadataCreation} allows creating it) and at any depth
     * below it, from the run after it appeared on.
     *
     * @throws InvalidSpecException for a name with {@code /}, a glob, {@code ..} or blank
     */
    public PermissionProfile withProtectedMetadata(String... names) {
        requireManaged("withProtectedMetadata");
        List<String> out = new ArrayList<>(protectedMetadata);
        for (String n : Objects.requireNonNull(names, "names")) {
            if (n == null || n.isBlank() || n.contains("/") || n.equals(".") || n.equals("..") || isGlob(n)
                    || n.indexOf('\0') >= 0) {
                throw new InvalidSpecException("protected metadata name (" + n + ") must be a single plain name "
                        + "such as .git");
            }
            if (!out.contains(n)) {
                out.add(n);
            }
        }
        return new PermissionProfile(enforcement, network, rules, noAccessGlobs, out, protectedMetadataCreation,
                nestedMetadataWrites);
    }

    /**
     * Sets the network mode.
     *
     * @throws InvalidSpecException when restricting the network of {@link #dangerFullAccess()}, which cannot
     *                              restrict anything
     */
    public PermissionProfile withNetwork(NetworkMode mode) {
        Objects.requireNonNull(mode, "mode");
        if (enforcement == Enforcement.DISABLED && mode != NetworkMode.ENABLED) {
            throw new InvalidSpecException("dangerFullAccess() cannot restrict the network: there is no sandbox to "
                    + "enforce it; use workspaceWrite() or readOnly() for a restricted network");
        }
        return new PermissionProfile(enforcement, mode, rules, noAccessGlobs, protectedMetadata,
                protectedMetadataCreation, nestedMetadataWrites);
    }

    /** Parses the mode (see {@link NetworkMode#parse}) and sets it. */
    public PermissionProfile withNetwork(String mode) {
        return withNetwork(NetworkMode.parse(mode));
    }

    private PermissionProfile withRules(FileAccess access, String... paths) {
        requireManaged(access == FileAccess.NONE ? "withNoAccessPaths"
                : access == FileAccess.WRITE ? "withWritePaths" : "withReadPaths");
        PermissionProfile p = this;
        for (String path : Objects.requireNonNull(paths, "paths")) {
            p = p.withRule(path, access);
        }
        return p;
    }

    private PermissionProfile withRule(String rawPath, FileAccess access) {
        String path = RulePathSpelling.normalize(rawPath, access);
        FileAccess existing = rules.get(path);
        if (existing != null && existing != access && (existing == FileAccess.NONE || access == FileAccess.NONE)) {
            throw new InvalidSpecException("contradictory rules for path '" + rawPath + "': "
                    + RulePathSpelling.describe(existing) + " and " + RulePathSpelling.describe(access)
                    + "; a path has one rule, remove one of them");
        }
        if (access == FileAccess.WRITE) {
            checkNotInsideProtected(path, rawPath);
        }
        Map<String, FileAccess> next = new LinkedHashMap<>(rules);
        next.remove(path);
        next.put(path, access);
        return new PermissionProfile(enforcement, network, next, noAccessGlobs, protectedMetadata,
                protectedMetadataCreation, nestedMetadataWrites);
    }

    private void checkNotInsideProtected(String path, String rawPath) {
        // A write root nested in protected metadata would make it writable again below its read-only mount.
        List<String> roots = new ArrayList<>();
        rules.forEach((p, a) -> {
            if (a == FileAccess.WRITE) {
                roots.add(p);
            }
        });
        roots.add(path);
        for (String root : roots) {
            String rest = RulePathSpelling.childPart(root, path);
            if (rest == null) {
                continue;
            }
            String first = rest.contains("/") ? rest.substring(0, rest.indexOf('/')) : rest;
            if (protectedMetadata.contains(first)) {
                throw new InvalidSpecException("write grant '" + rawPath + "' lies inside protected metadata '"
                        + first + "', which stays read-only; grant a path outside it");
            }
        }
    }

    /**
     * Adds per-run grants to a copy of this profile: the copy is used for one run only. The same rules as
     * {@link #withReadPaths}/{@link #withWritePaths} apply, and a grant of a path this profile hides is refused as
     * contradictory.
     */
    PermissionProfile withGrants(List<String> readPaths, List<String> writePaths) {
        PermissionProfile p = this;
        if (readPaths != null && !readPaths.isEmpty()) {
            p = p.withReadPaths(readPaths.toArray(String[]::new));
        }
        if (writePaths != null && !writePaths.isEmpty()) {
            p = p.withWritePaths(writePaths.toArray(String[]::new));
        }
        return p;
    }

    private void requireManaged(String operation) {
        if (enforcement != Enforcement.MANAGED) {
            throw new InvalidSpecException(operation + " has no effect on a " + enforcement.name().toLowerCase()
                    + " profile (no sandbox built by this library enforces it); start from workspaceWrite() or "
                    + "readOnly()");
        }
    }

    /** Glob syntax of {@link WorkspaceGlob}, the one glob syntax: {@code * ? [ {}. */
    static boolean isGlob(String s) {
        return WorkspaceGlob.isGlob(s);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof PermissionProfile)) {
            return false;
        }
        PermissionProfile that = (PermissionProfile) o;
        return enforcement == that.enforcement && network == that.network && rules.equals(that.rules)
                && noAccessGlobs.equals(that.noAccessGlobs) && protectedMetadata.equals(that.protectedMetadata)
                && protectedMetadataCreation == that.protectedMetadataCreation
                && nestedMetadataWrites == that.nestedMetadataWrites;
    }

    @Override
    public int hashCode() {
        return Objects.hash(enforcement, network, rules, noAccessGlobs, protectedMetadata, protectedMetadataCreation,
                nestedMetadataWrites);
    }

    @Override
    public String toString() {
        return "PermissionProfile{enforcement=" + enforcement + ", network=" + network.id() + ", rules=" + rules
                + ", noAccessGlobs=" + noAccessGlobs + ", protectedMetadata=" + protectedMetadata
                + (protectedMetadataCreation ? ", protectedMetadataCreation" : "")
                + (nestedMetadataWrites ? ", nestedMetadataWrites" : "") + "}";
    }
}
