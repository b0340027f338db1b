package dev.codeexec.e2b;

import static dev.codeexec.workspace.spi.RelativePaths.parentOf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.FileWindow;
import dev.codeexec.workspace.spi.ImportSource;
import dev.codeexec.workspace.spi.RelativePaths;
import dev.codeexec.workspace.spi.RemoteEntry;
import dev.codeexec.workspace.spi.RemoteWorkspaceFiles;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The file primitives of one workspace in a sandbox, over envd: metadata from {@code filesystem.Filesystem/Stat} (an
 * {@code lstat}; a link is the entry whose {@code symlinkTarget} is set, fully resolved by envd), trees from one {@code
 * ListDir}, directories from {@code MakeDir}, deletes from {@code Remove} (which never follows links), contents from a
 * program in the sandbox that checks the path and reads the file in one step ({@link SandboxRead}), and writes and
 * imports ({@link EnvdUploads}) as one multipart upload into the engine's root-only staging directory plus one helper
 * that gives the files their owner, mode and time and renames them into place ({@link SandboxScripts#FINISH_WRITES},
 * {@link SandboxScripts#FINISH_IMPORT}).
 *
 * <p>The path rules and the link-resolving walk are {@link RemoteWorkspaceFiles}'s, over what Stat reports: a link
 * whose target leaves the workspace or does not resolve is refused. envd's own file calls follow links, so every call
 * names a path checked this way. Reads never rely on that check: a link swapped in between a check and envd's {@code
 * GET /files} would redirect it, so contents come from {@link SandboxRead}, where a swap can only make the read refuse.
 * {@link #put} (the engine's {@code putFiles}) leaves the walk of its targets' parents to the helper that moves the
 * files into place, which applies the same rules in the sandbox, so that a batch asks no Stat.
 * What remains for metadata and directory calls: between a check and envd's call a program of the same sandbox could
 * swap a directory for a link, which makes a Stat or a listing describe (never return the contents of) another
 * directory of the same VM, and a write could be renamed into another directory of the same VM (never this host).
 *
 * <p>Messages name workspace-relative paths only. An instance belongs to one operation of the core: it remembers what
 * Stat answered, and forgets it when it changes the workspace.
 */
final class EnvdFiles extends RemoteWorkspaceFiles {

    /** The depth asked of ListDir: the whole tree. */
    private static final int WALK_DEPTH = 1 << 16;

    private final Sandbox sandbox;
    private final String user;
    private final EnvdUploads uploads;
    /** What Stat answered for each workspace-relative path, present or absent, in this operation. */
    private final Map<String, Optional<Entry>> seen = new HashMap<>();

    /**
     * @param root    the workspace's real path in the sandbox (no links in it)
     * @param staging the engine's root-only staging directory in the sandbox, on the workspace's file system
     * @param user    the workspace user, who owns what is created
     */
    EnvdFiles(Sandbox sandbox, String root, String staging, String user) {
        super(root);
        this.sandbox = sandbox;
        this.user = user;
        this.uploads = new EnvdUploads(sandbox, staging, root);
    }

    // ------------------------------------------------------------------ envd

    /** An entry as Stat reports it; for a link, {@code type} is the target's and {@code linkTarget} is set. */
    private record Entry(EntryType type, long size, int mode, Instant mtime, String linkTarget, boolean dangling) {
        boolean isLink() {
            return linkTarget != null;
        }

        /** The type seen without following a link at the entry. */
        EntryType own() {
            return isLink() ? EntryType.LINK : type;
        }
    }

    /** Connect codes envd answers for one request that failed (a name too long, a path it could not use). */
    private static final java.util.Set<String> REQUEST_FAILURES = java.util.Set.of("internal", "invalid_argument",
            "failed_precondition", "out_of_range", "unknown", "already_exists", "not_found", "aborted");

    /**
     * A failed request about a path: the sandbox gone stays gone, an outage stays {@link E2bApiException}, and envd
     * refusing this one request is a {@link CodeExecException} that names the workspace path only.
     */
    private RuntimeException failed(RuntimeException e, String what) {
        return failed(sandbox, e, what);
    }

    /** {@link #failed(RuntimeException, String)} for the sandbox given. */
    static RuntimeException failed(Sandbox sandbox, RuntimeException e, String what) {
        RuntimeException f = sandbox.failure(e, what);
        if (f instanceof E2bApiException api && !(f instanceof E2bAuthenticationException) && api.httpStatus() != 0
                && REQUEST_FAILURES.contains(api.errorCode())) {
            return new CodeExecException("could not " + what + " (the sandbox answered '" + api.errorCode() + "')",
                    f);
        }
        return f;
    }

    static boolean code(RuntimeException e, String code) {
        return e instanceof E2bApiException api && code.equals(api.errorCode());
    }

    /**
     * The entry at {@code rel} itself (envd's Stat is an lstat), or empty. Remembered for the rest of this instance's
     * operation (an operation of the core asks about the same paths several times), until this instance changes the
     * workspace.
     */
    @Override
    protected Optional<RemoteEntry> lstat(String rel) {
        Optional<Entry> known = seen.get(rel);
        if (known == null) {
            known = fetch(rel);
            seen.put(rel, known);
        }
        return known.map(EnvdFiles::remote);
    }

    /** The entry for the base: a link's target and type as envd resolved them; a dangling link has no target. */
    private static RemoteEntry remote(Entry e) {
        if (!e.isLink()) {
            return RemoteEntry.of(e.type(), e.size(), e.mode(), e.mtime());
        }
        return new RemoteEntry(EntryType.LINK, e.size(), e.mode(), e.mtime(), e.dangling() ? null : e.linkTarget(),
                e.type() == EntryType.LINK ? null : e.type());
    }

    /** Forgets what this instance saw: after it changed the workspace. */
    @Override
    protected void forget() {
        seen.clear();
        super.forget();
    }

    @Override
    protected RuntimeException workspaceGone() {
        return workspaceGone(sandbox);
    }

    static WorkspaceGoneException workspaceGone(Sandbox sandbox) {
        return new WorkspaceGoneException("the workspace is gone (its directory in sandbox " + sandbox.id()
                + " was removed)");
    }

    private Optional<Entry> fetch(String rel) {
        sandbox.requireAlive();
        ObjectNode req = Json.object();
        req.put("path", abs(rel));
        JsonNode answer;
        try {
            answer = sandbox.envd.call("filesystem.Filesystem/Stat", req, user, E2bHttp.Retry.TRANSIENT,
                    "stat '" + rel + "'");
        } catch (RuntimeException e) {
            if (code(e, "not_found")) {
                return Optional.empty();
            }
            throw failed(e, "stat '" + rel + "'");
        }
        return Optional.of(entry(answer.path("entry"), abs(rel)));
    }

    private static Entry entry(JsonNode e, String absPath) {
        String target = Json.text(e, "symlinkTarget");
        EntryType type = switch (e.path("type").asText("")) {
            case "FILE_TYPE_FILE" -> EntryType.FILE;
            case "FILE_TYPE_DIRECTORY" -> EntryType.DIRECTORY;
            case "FILE_TYPE_SYMLINK" -> EntryType.LINK;
            default -> EntryType.OTHER;
        };
        if (type == EntryType.LINK && target == null) {
            target = absPath; // a link whose target envd did not report: treat as not resolving
        }
        // envd reports a link it cannot resolve with its own path as the target (EvalSymlinks failed).
        boolean dangling = target != null && target.equals(absPath);
        return new Entry(type, Json.int64(e, "size"), e.path("mode").asInt(0) & 07777, time(Json.text(e,
                "modifiedTime")), target, dangling);
    }

    private static Instant time(String s) {
        if (s == null) {
            return Instant.EPOCH;
        }
        try {
            return OffsetDateTime.parse(s).toInstant();
        } catch (DateTimeParseException e) {
            return Instant.EPOCH;
        }
    }

    // ------------------------------------------------------------------ walk

    @Override
    protected void list(String d, ListVisitor visitor) {
        ObjectNode req = Json.object();
        req.put("path", abs(d));
        req.put("depth", WALK_DEPTH);
        JsonNode answer;
        try {
            answer = sandbox.envd.call("filesystem.Filesystem/ListDir", req, user, E2bHttp.Retry.TRANSIENT,
                    "list '" + d + "'");
        } catch (RuntimeException e) {
            if (code(e, "not_found")) {
                return;
            }
            throw failed(e, "list '" + d + "'");
        }
        // Entries by parent, so that the tree is walked depth first in pre-order whatever order envd sent.
        String base = abs(d) + "/";
        Map<String, List<Map.Entry<String, Entry>>> children = new LinkedHashMap<>();
        for (JsonNode n : answer.path("entries")) {
            String p = Json.text(n, "path");
            if (p == null || !p.startsWith(base)) {
                continue;
            }
            String rel = p.substring(base.length());
            if (rel.isEmpty() || rel.contains("//")) {
                continue;
            }
            children.computeIfAbsent(parentOf(rel), k -> new ArrayList<>()).add(Map.entry(rel, entry(n, p)));
        }
        children.values().forEach(l -> l.sort(Comparator.comparing(Map.Entry::getKey)));
        visit(".", children, visitor);
    }

    /** Reports the children of {@code rel} in pre-order; false when the visitor stopped. */
    private static boolean visit(String rel, Map<String, List<Map.Entry<String, Entry>>> children,
                                 ListVisitor visitor) {
        for (Map.Entry<String, Entry> c : children.getOrDefault(rel, List.of())) {
            Entry e = c.getValue();
            if (!visitor.entry(c.getKey(), RemoteEntry.of(e.own(), e.size(), e.mode(), e.mtime()))
                    || e.own() == EntryType.DIRECTORY && !visit(c.getKey(), children, visitor)) {
                return false;
            }
        }
        return true;
    }

    // ------------------------------------------------------------------ read and export

    /**
     * A read in the sandbox ({@link SandboxRead}): the path's check and the read are one program there, so a link
     * swapped in meanwhile makes the read refuse, never return what the link points to.
     */
    private SandboxRead open(String path, long offset, OptionalLong length) {
        if (path.equals(".")) {
            throw new InvalidSpecException("'.' is not a regular file");
        }
        return SandboxRead.open(sandbox, user, root(), path, path, offset, length);
    }

    @Override
    protected FileWindow readFile(String path, long offset, int maxBytes) {
        try (SandboxRead r = open(path, offset, OptionalLong.of(maxBytes))) {
            byte[] bytes = r.body().readNBytes(maxBytes);
            drainSmall(r.body()); // the end of the stream, so that the connection can be used again
            return new FileWindow(bytes, r.size());
        } catch (IOException e) {
            E2bSandboxGoneException g = sandbox.checkGone("read '" + path + "'");
            if (g != null) {
                throw g;
            }
            throw new CodeExecException("'" + path + "' could not be read (the read broke off)", e);
        }
    }

    @Override
    protected boolean exportFile(String path, ExportVisitor visitor) {
        try (SandboxRead r = open(path, 0, OptionalLong.empty())) {
            InputStream lent = new FilterInputStream(r.body()) {
                @Override
                public void close() {
                    // The provider closes the read.
                }
            };
            boolean goOn;
            try {
                goOn = visitor.file(path, r.size(), lent);
            } catch (IOException x) {
                throw new InvalidSpecException("'" + path + "' could not be read", x);
            }
            // What the visitor left, when little, is read so that the connection can be used again.
            drainSmall(r.body());
            return goOn;
        }
    }

    private static void drainSmall(InputStream in) {
        try {
            byte[] buf = new byte[16 << 10];
            long left = 256 << 10;
            int n;
            while (left > 0 && (n = in.read(buf, 0, (int) Math.min(buf.length, left))) >= 0) {
                left -= n;
            }
        } catch (IOException ignored) {
            // The connection is dropped instead.
        }
    }

    // ------------------------------------------------------------------ directories

    @Override
    protected void makeDirs(String dir, List<String> names, String asked) {
        makeDir(dir.equals(".") ? names.get(names.size() - 1) : dir + "/" + names.get(names.size() - 1), asked);
        for (String n : names) {
            seen.remove(dir.equals(".") ? n : dir + "/" + n);
        }
    }

    /** MakeDir creates the directory and its missing parents, owned by the workspace user. */
    private void makeDir(String rel, String asked) {
        ObjectNode req = Json.object();
        req.put("path", abs(rel));
        try {
            sandbox.envd.call("filesystem.Filesystem/MakeDir", req, user, E2bHttp.Retry.TRANSIENT,
                    "create directory '" + asked + "'");
        } catch (RuntimeException e) {
            if (code(e, "already_exists")) {
                return;
            }
            if (code(e, "invalid_argument")) {
                throw new InvalidSpecException("'" + asked + "': a component is not a directory");
            }
            throw failed(e, "create directory '" + asked + "'");
        }
    }

    @Override
    protected void remove(String target, String asked) {
        uploads.remove(abs(target), "delete '" + asked + "'");
    }

    // ------------------------------------------------------------------ writes

    /**
     * Writes a batch of files whose paths are normalised but not yet checked nor resolved, in two requests (the
     * upload and one helper): the path rules are checked here ({@link RelativePaths#check}), and the parents are
     * resolved, checked and created in the sandbox by the helper that moves the files into place, with the same typed
     * exceptions as the base's walk, before anything is written ({@link EnvdUploads#writeAll}).
     */
    void put(List<PutFile> files) {
        List<String> targets = new ArrayList<>(files.size());
        for (PutFile f : files) {
            if (RelativePaths.check(f.path()).equals(".")) {
                throw new InvalidSpecException("cannot write the workspace root");
            }
            targets.add(abs(f.path()));
        }
        sandbox.requireAlive();
        uploads.writeAll(files, targets);
    }

    @Override
    protected void writeFiles(List<WriteTarget> batch) {
        uploads.writeAll(batch.stream().map(WriteTarget::file).toList(),
                batch.stream().map(t -> abs(t.target())).toList());
    }

    @Override
    protected void importInto(ImportSource source, String parent, String target, String to, boolean readOnly) {
        uploads.importTree(source, abs(target), to, readOnly);
    }
}
