package dev.codeexec.e2b;

import static dev.codeexec.workspace.spi.RelativePaths.check;
import static dev.codeexec.workspace.spi.RelativePaths.join;
import static dev.codeexec.workspace.spi.RelativePaths.nameOf;
import static dev.codeexec.workspace.spi.RelativePaths.parentOf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.FileWindow;
import dev.codeexec.workspace.spi.ImportSource;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
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
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The file primitives of one workspace in a sandbox, over envd: metadata from {@code filesystem.Filesystem/Stat} (an
 * {@code lstat}; a link is the entry whose {@code symlinkTarget} is set, fully resolved by envd), trees from one
 * {@code ListDir}, directories from {@code MakeDir}, deletes from {@code Remove} (which never follows links), contents
 * from a program in the sandbox that checks the path and reads the file in one step ({@link SandboxRead}), and writes
 * and imports as one multipart upload into the engine's root-only staging directory plus one helper that gives the
 * files their owner, mode and time and renames them into place ({@link SandboxScripts#FINISH_WRITES},
 * {@link SandboxScripts#FINISH_IMPORT}).
 *
 * <p>Links are resolved here, one component at a time, from what Stat reports: a link whose target leaves the
 * workspace or does not resolve is refused. envd's own file calls follow links, so every call names a path checked
 * this way. Reads never rely on that check: a link swapped in between a check and envd's {@code GET /files} would
 * redirect it, so contents come from {@link SandboxRead}, where a swap can only make the read refuse. What remains for
 * metadata and directory calls: between a check and envd's call a program of the same sandbox could swap a directory
 * for a link, which makes a Stat or a listing describe (never return the contents of) another directory of the same
 * VM, and a write could be renamed into another directory of the same VM (never this host).
 *
 * <p>Messages name workspace-relative paths only. An instance belongs to one operation of the core: it remembers
 * which directories it found to be real directories, and forgets them when it deletes or imports.
 */
final class EnvdFiles implements WorkspaceFiles {

    /** The depth asked of ListDir: the whole tree. */
    private static final int WALK_DEPTH = 1 << 16;

    private static final AtomicInteger UPLOAD_THREADS = new AtomicInteger();

    /** Streams to upload imports from, one per import at a time. */
    private static final ExecutorService UPLOADS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "codeexec-e2b-upload-" + UPLOAD_THREADS.incrementAndGet());
        t.setDaemon(true);
        return t;
    });

    private final Sandbox sandbox;
    private final String root;
    private final String staging;
    private final String user;
    /** Workspace-relative directories found to be real directories, with their entry when seen as themselves. */
    private final Map<String, Entry> dirs = new HashMap<>();
    /** What Stat answered for each workspace-relative path, present or absent, in this operation. */
    private final Map<String, Optional<Entry>> seen = new HashMap<>();

    /**
     * @param root    the workspace's real path in the sandbox (no links in it)
     * @param staging the engine's root-only staging directory in the sandbox, on the workspace's file system
     * @param user    the workspace user, who owns what is created
     */
    EnvdFiles(Sandbox sandbox, String root, String staging, String user) {
        this.sandbox = sandbox;
        this.root = root;
        this.staging = staging;
        this.user = user;
    }

    // ------------------------------------------------------------------ paths

    private String abs(String rel) {
        return rel.equals(".") ? root : root + "/" + rel;
    }

    /** The workspace-relative path of an absolute sandbox path inside the workspace, or null outside it. */
    private String inside(String absolute) {
        if (absolute.equals(root)) {
            return ".";
        }
        if (absolute.startsWith(root + "/")) {
            return absolute.substring(root.length() + 1);
        }
        return null;
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
        RuntimeException f = sandbox.failure(e, what);
        if (f instanceof E2bApiException api && !(f instanceof E2bAuthenticationException) && api.httpStatus() != 0
                && REQUEST_FAILURES.contains(api.errorCode())) {
            return new CodeExecException("could not " + what + " (the sandbox answered '" + api.errorCode() + "')",
                    f);
        }
        return f;
    }

    private static boolean code(RuntimeException e, String code) {
        return e instanceof E2bApiException api && code.equals(api.errorCode());
    }

    /**
     * The entry at {@code rel} itself (envd's Stat is an lstat), or empty. Remembered for the rest of this instance's
     * operation (an operation of the core asks about the same paths several times), until this instance changes the
     * workspace.
     */
    private Optional<Entry> lstat(String rel) {
        Optional<Entry> known = seen.get(rel);
        if (known != null) {
            return known;
        }
        Optional<Entry> e = fetch(rel);
        seen.put(rel, e);
        return e;
    }

    /** Forgets what this instance saw: after it changed the workspace. */
    private void forget() {
        seen.clear();
        dirs.clear();
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

    /** Throws {@link WorkspaceGoneException} when the workspace root itself is gone. */
    private void requireRoot() {
        Optional<Entry> r = lstat(".");
        if (r.isEmpty() || r.get().own() != EntryType.DIRECTORY) {
            throw new WorkspaceGoneException("the workspace is gone (its directory in sandbox " + sandbox.id()
                    + " was removed)");
        }
    }

    // ------------------------------------------------------------------ resolve and stat

    /** Follows a link at {@code rel} (whose parents hold no links) to a real, existing path inside the workspace. */
    private String follow(Entry link, String asked) {
        String target = inside(link.linkTarget());
        if (target == null) {
            throw new PathEscapeException("path '" + asked + "' leads outside the workspace through a link");
        }
        if (link.dangling()) {
            throw new PathEscapeException("path '" + asked + "' goes through a link that does not resolve");
        }
        return target;
    }

    @Override
    public String resolve(String path) {
        return resolveFrom(check(path), path, true);
    }

    /**
     * Resolves {@code rel} component by component; the last component is followed only when {@code last}. Missing
     * components are kept as given.
     */
    private String resolveFrom(String rel, String asked, boolean last) {
        if (rel.equals(".")) {
            return ".";
        }
        String[] segs = rel.split("/");
        String cur = ".";
        for (int i = 0; i < segs.length; i++) {
            String next = join(cur, segs[i]);
            boolean isLast = i == segs.length - 1;
            if (isLast && !last) {
                return next;
            }
            if (!isLast && dirs.containsKey(next)) {
                cur = next;
                continue;
            }
            Optional<Entry> s = lstat(next);
            if (s.isEmpty()) {
                if (!isLast && cur.equals(".")) {
                    requireRoot(); // a first component missing may mean the whole workspace is gone
                }
                return rest(next, segs, i + 1);
            }
            Entry e = s.get();
            EntryType type = e.type();
            if (e.isLink()) {
                next = follow(e, asked);
                if (type == EntryType.LINK) {
                    // An envd that reports links as links, without their target's type: look at the target.
                    type = lstat(next).map(Entry::own).orElse(EntryType.OTHER);
                }
            }
            if (type == EntryType.DIRECTORY) {
                dirs.put(next, e.isLink() ? dirs.get(next) : e);
            } else if (!isLast) {
                // Nothing exists below a file: keep the rest as given (every lookup of it finds nothing).
                return rest(next, segs, i + 1);
            }
            cur = next;
        }
        return cur;
    }

    private static String rest(String head, String[] segs, int from) {
        StringBuilder sb = new StringBuilder(head);
        for (int j = from; j < segs.length; j++) {
            sb.append('/').append(segs[j]);
        }
        return sb.toString();
    }

    /** True when the resolved {@code dir} is a real directory (known, or checked now). */
    private boolean isDir(String dir) {
        if (dir.equals(".") || dirs.containsKey(dir)) {
            return true;
        }
        Optional<Entry> e = lstat(dir);
        if (e.isPresent() && e.get().own() == EntryType.DIRECTORY) {
            dirs.put(dir, e.get());
            return true;
        }
        return false;
    }

    /** The entry at {@code rel} itself: the one seen while resolving, when it was a real directory, else Stat's. */
    private Optional<Entry> entryAt(String rel) {
        Entry known = dirs.get(rel);
        return known != null ? Optional.of(known) : lstat(rel);
    }

    @Override
    public Optional<FileEntry> stat(String path) {
        check(path);
        if (path.equals(".")) {
            Entry r = lstat(".").filter(e -> e.own() == EntryType.DIRECTORY).orElseThrow(() ->
                    new WorkspaceGoneException("the workspace is gone (its directory in sandbox " + sandbox.id()
                            + " was removed)"));
            return Optional.of(new FileEntry(".", EntryType.DIRECTORY, 0, r.mode(), r.mtime()));
        }
        String parent = resolveFrom(parentOf(path), path, true);
        if (!isDir(parent)) {
            requireRoot(); // nothing there, unless the whole workspace is gone
            return Optional.empty();
        }
        return entryAt(join(parent, nameOf(path))).map(e -> new FileEntry(path, e.own(),
                e.own() == EntryType.FILE ? e.size() : 0, e.mode(), e.mtime()));
    }

    // ------------------------------------------------------------------ walk

    @Override
    public void walk(String dir, WalkVisitor visitor) {
        String d = resolve(dir);
        if (d.equals(".")) {
            requireRoot();
        } else if (!dirs.containsKey(d)) {
            Optional<Entry> s = lstat(d);
            if (s.isEmpty() || s.get().own() != EntryType.DIRECTORY) {
                return;
            }
        }
        ObjectNode req = Json.object();
        req.put("path", abs(d));
        req.put("depth", WALK_DEPTH);
        JsonNode answer;
        try {
            answer = sandbox.envd.call("filesystem.Filesystem/ListDir", req, user, E2bHttp.Retry.TRANSIENT,
                    "list '" + dir + "'");
        } catch (RuntimeException e) {
            if (code(e, "not_found")) {
                return;
            }
            throw failed(e, "list '" + dir + "'");
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
        visit(".", dir, children, visitor);
    }

    /** Visits the children of {@code rel}; false when the visitor stopped the walk. */
    private static boolean visit(String rel, String dir, Map<String, List<Map.Entry<String, Entry>>> children,
                                 WalkVisitor visitor) {
        for (Map.Entry<String, Entry> c : children.getOrDefault(rel, List.of())) {
            Entry e = c.getValue();
            EntryType type = e.own();
            FileEntry fe = new FileEntry(join(dir, c.getKey()), type, type == EntryType.FILE ? e.size() : 0,
                    e.mode(), e.mtime());
            WalkAction a = visitor.visit(fe);
            if (a == WalkAction.STOP) {
                return false;
            }
            if (type == EntryType.DIRECTORY && a != WalkAction.SKIP_SUBTREE
                    && !visit(c.getKey(), dir, children, visitor)) {
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
        return SandboxRead.open(sandbox, user, root, path, path, offset, length);
    }

    @Override
    public FileWindow read(String path, long offset, int maxBytes) {
        check(path);
        if (offset < 0 || maxBytes < 0) {
            throw new InvalidSpecException("offset (" + offset + ") and maxBytes (" + maxBytes
                    + ") must not be negative");
        }
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
    public void export(List<String> paths, ExportVisitor visitor) {
        for (String p : paths) {
            check(p);
        }
        for (String path : paths) {
            boolean goOn;
            try (SandboxRead r = open(path, 0, OptionalLong.empty())) {
                InputStream lent = new FilterInputStream(r.body()) {
                    @Override
                    public void close() {
                        // The provider closes the read.
                    }
                };
                try {
                    goOn = visitor.file(path, r.size(), lent);
                } catch (IOException x) {
                    throw new InvalidSpecException("'" + path + "' could not be read", x);
                }
                // What the visitor left, when little, is read so that the connection can be used again.
                drainSmall(r.body());
            }
            if (!goOn) {
                return;
            }
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

    /** Creates the missing directories of {@code rel} (resolved and checked); returns the resolved directory. */
    private String ensureDir(String rel, String asked) {
        if (rel.equals(".")) {
            return ".";
        }
        String[] segs = rel.split("/");
        String cur = ".";
        for (int i = 0; i < segs.length; i++) {
            String next = join(cur, segs[i]);
            if (dirs.containsKey(next)) {
                cur = next;
                continue;
            }
            Optional<Entry> s = lstat(next);
            if (s.isEmpty()) {
                if (cur.equals(".")) {
                    requireRoot(); // never recreate a workspace that was removed
                }
                String made = rest(next, segs, i + 1);
                makeDir(made, asked);
                String m = cur;
                for (int j = i; j < segs.length; j++) {
                    m = join(m, segs[j]);
                    dirs.put(m, null);
                    seen.remove(m);
                }
                return made;
            }
            Entry e = s.get();
            if (e.isLink()) {
                next = follow(e, asked);
            }
            if (e.type() != EntryType.DIRECTORY) {
                throw new InvalidSpecException("'" + asked + "': a component is not a directory");
            }
            dirs.put(next, e.isLink() ? dirs.get(next) : e);
            cur = next;
        }
        return cur;
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
    public void mkdirs(String path) {
        ensureDir(check(path), path);
    }

    @Override
    public void delete(String path) {
        check(path);
        if (path.equals(".")) {
            throw new InvalidSpecException("cannot delete the workspace root");
        }
        String parent = resolveFrom(parentOf(path), path, true);
        if (!isDir(parent)) {
            return;
        }
        String target = join(parent, nameOf(path));
        if (lstat(target).isEmpty()) {
            return;
        }
        try {
            remove(abs(target), "delete '" + path + "'");
        } finally {
            forget();
        }
    }

    /** Remove is {@code os.RemoveAll} as root: links are removed, never followed; read-only trees go too. */
    private void remove(String absolute, String what) {
        ObjectNode req = Json.object();
        req.put("path", absolute);
        try {
            sandbox.envd.call("filesystem.Filesystem/Remove", req, Envd.ROOT, E2bHttp.Retry.TRANSIENT, what);
        } catch (RuntimeException e) {
            if (!code(e, "not_found")) {
                throw writeFailure(e, what);
            }
        }
    }

    private void removeQuietly(String absolute, RuntimeException into) {
        try {
            remove(absolute, "remove a staging directory");
        } catch (RuntimeException e) {
            into.addSuppressed(e);
        }
    }

    // ------------------------------------------------------------------ writes

    @Override
    public void write(String path, byte[] content, int mode) {
        writeAll(List.of(PutFile.of(path, content, mode)));
    }

    /**
     * One upload of every file into a fresh staging directory, then one helper that moves each into place: two
     * requests for the batch, besides the Stat calls that check the parents.
     */
    @Override
    public void writeAll(List<PutFile> files) {
        if (files.isEmpty()) {
            return;
        }
        try {
            writeBatch(files);
        } finally {
            forget();
        }
    }

    private void writeBatch(List<PutFile> files) {
        List<String> targets = new ArrayList<>();
        for (PutFile f : files) {
            check(f.path());
            if (f.path().equals(".")) {
                throw new InvalidSpecException("cannot write the workspace root");
            }
        }
        for (PutFile f : files) {
            String parent = ensureDir(parentOf(f.path()), f.path());
            targets.add(abs(join(parent, nameOf(f.path()))));
        }
        requireIds();
        String stage = staging + "/" + UUID.randomUUID();
        Multipart body = new Multipart();
        StringBuilder manifest = new StringBuilder();
        for (int i = 0; i < files.size(); i++) {
            PutFile f = files.get(i);
            body.part(stage + "/" + i, f.content());
            manifest.append(String.format("%04o", f.mode())).append(' ').append(i).append(' ')
                    .append(SandboxScripts.encode(targets.get(i))).append('\n');
        }
        body.part(stage + "/manifest", manifest.toString().getBytes(StandardCharsets.UTF_8));
        String what = files.size() == 1 ? "write '" + files.get(0).path() + "'" : "write " + files.size() + " files";
        try {
            sandbox.envd.upload(body.build(), Envd.ROOT, E2bHttp.Retry.TRANSIENT, what);
        } catch (RuntimeException e) {
            RuntimeException f = writeFailure(e, what);
            removeQuietly(stage, f);
            throw f;
        }
        Sandbox.HelperResult r;
        try {
            r = sandbox.helper(List.of("/bin/sh", "-c", SandboxScripts.FINISH_WRITES, "sh",
                    Integer.toString(sandbox.uid()), Integer.toString(sandbox.gid()), stage), what);
        } catch (RuntimeException e) {
            RuntimeException f = writeFailure(e, what);
            removeQuietly(stage, f);
            throw f;
        }
        if (r.exitCode() == 3) {
            throw new InvalidSpecException("'" + files.get(index(r.line("codeexec-isdir"), files.size())).path()
                    + "' is a directory");
        }
        if (r.exitCode() != 0) {
            String failedAt = r.line("codeexec-failed");
            String which = failedAt == null ? what
                    : "write '" + files.get(index(failedAt, files.size())).path() + "'";
            throw new CodeExecException("could not " + which + " in sandbox " + sandbox.id() + " (status "
                    + r.exitCode() + ")");
        }
    }

    private static int index(String s, int size) {
        try {
            int i = Integer.parseInt(s == null ? "0" : s.strip());
            return i >= 0 && i < size ? i : 0;
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private RuntimeException writeFailure(RuntimeException e, String what) {
        RuntimeException f = failed(e, what);
        if (f instanceof WorkspaceGoneException || f instanceof InvalidSpecException
                || f.getClass() == CodeExecException.class) {
            return f;
        }
        return new CodeExecException("could not " + what + " (" + f.getMessage() + ")", f);
    }

    private void requireIds() {
        if (!sandbox.hasIds()) {
            throw new IllegalStateException("sandbox " + sandbox.id() + " was not set up");
        }
    }

    // ------------------------------------------------------------------ imports

    @Override
    public void importTree(ImportSource source, String to, boolean readOnly) {
        try {
            importBatch(source, to, readOnly);
        } finally {
            forget();
        }
    }

    private void importBatch(ImportSource source, String to, boolean readOnly) {
        check(to);
        if (to.equals(".")) {
            throw new InvalidSpecException("cannot import over the workspace root");
        }
        String parent = ensureDir(parentOf(to), to);
        String dest = abs(join(parent, nameOf(to)));
        requireIds();
        String stage = staging + "/" + UUID.randomUUID();
        String what = "import into '" + to + "'";
        String boundary = Multipart.boundary();
        BytePipe pipe = new BytePipe();
        Envd.Multipart body = Envd.Multipart.of(boundary, () -> HttpRequest.BodyPublishers.ofInputStream(pipe::in));
        CompletableFuture<Void> upload = CompletableFuture.runAsync(
                () -> sandbox.envd.upload(body, Envd.ROOT, E2bHttp.Retry.NEVER, what), UPLOADS);
        upload.whenComplete((v, e) -> pipe.closeReader());
        int strip = readOnly ? 0222 : 0;
        StringBuilder manifest = new StringBuilder();
        int[] blobs = {0};
        try {
            OutputStream out = pipe.out();
            source.forEach(new ImportSource.Visitor() {
                @Override
                public void directory(FileEntry d) {
                    String rel = entryPath(d.path(), to);
                    int mode = (d.mode() == 0 ? 0755 : d.mode()) & 0777 & ~strip;
                    manifest.append("d ").append(String.format("%04o", mode)).append(" - - ")
                            .append(SandboxScripts.encode(rel)).append('\n');
                }

                @Override
                public void file(FileEntry f, InputStream content) throws IOException {
                    String rel = entryPath(f.path(), to);
                    int n = blobs[0]++;
                    int mode = (f.mode() == 0 ? 0644 : f.mode()) & 0777 & ~strip;
                    Instant t = f.modifiedTime();
                    manifest.append("f ").append(String.format("%04o", mode)).append(' ')
                            .append(t.getEpochSecond()).append('.').append(String.format("%09d", t.getNano()))
                            .append(' ').append(n).append(' ').append(SandboxScripts.encode(rel)).append('\n');
                    out.write(Multipart.header(boundary, stage + "/" + n));
                    content.transferTo(out);
                    out.write(Multipart.CRLF);
                }
            });
            out.write(Multipart.header(boundary, stage + "/manifest"));
            out.write(manifest.toString().getBytes(StandardCharsets.UTF_8));
            out.write(Multipart.CRLF);
            out.write(Multipart.closing(boundary));
            out.close();
        } catch (InvalidSpecException e) {
            abortUpload(pipe, upload, stage, e);
            throw e;
        } catch (IOException | RuntimeException e) {
            if (upload.isCompletedExceptionally()) {
                // The upload ended first (an error answer): that is the failure, not the source.
                RuntimeException f = writeFailure(uploadFailure(upload), what);
                removeQuietly(stage, f);
                throw f;
            }
            CodeExecException f = new CodeExecException("could not import into '" + to + "': the source failed ("
                    + e.getClass().getSimpleName() + ")", e);
            abortUpload(pipe, upload, stage, f);
            throw f;
        }
        try {
            upload.get(sandbox.envd.http().config().requestTimeout().toMillis() * 4, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            CodeExecException f = new CodeExecException("interrupted while importing into '" + to + "'", e);
            removeQuietly(stage, f);
            throw f;
        } catch (ExecutionException | TimeoutException e) {
            RuntimeException cause = e.getCause() instanceof RuntimeException re ? re
                    : new E2bApiException("the upload did not complete", 0, null, e);
            RuntimeException f = writeFailure(cause, what);
            removeQuietly(stage, f);
            throw f;
        }
        Sandbox.HelperResult r;
        try {
            r = sandbox.helper(List.of("/bin/sh", "-c", SandboxScripts.FINISH_IMPORT, "sh",
                    Integer.toString(sandbox.uid()), Integer.toString(sandbox.gid()), stage, dest), what);
        } catch (RuntimeException e) {
            RuntimeException f = writeFailure(e, what);
            removeQuietly(stage, f);
            throw f;
        }
        if (r.exitCode() != 0) {
            throw new CodeExecException("could not import into '" + to + "' (status " + r.exitCode() + ", "
                    + r.line("codeexec-failed") + ")");
        }
    }

    private static RuntimeException uploadFailure(CompletableFuture<Void> upload) {
        try {
            upload.join();
            return new E2bApiException("the upload did not complete", 0, null);
        } catch (java.util.concurrent.CompletionException e) {
            return e.getCause() instanceof RuntimeException re ? re
                    : new E2bApiException("the upload did not complete", 0, null, e.getCause());
        }
    }

    private void abortUpload(BytePipe pipe, CompletableFuture<Void> upload, String stage, RuntimeException into) {
        pipe.fail("the import was aborted");
        try {
            upload.get(30, TimeUnit.SECONDS);
        } catch (Exception ignored) {
            // It fails, as intended.
        }
        removeQuietly(stage, into);
    }

    /** A source entry's path, checked: relative, normalised, never leaving the tree. */
    private static String entryPath(String p, String to) {
        if (p.equals(".")) {
            return ".";
        }
        if (p.startsWith("/") || p.contains("\\") || p.indexOf('\0') >= 0) {
            throw new PathEscapeException("an entry of the import into '" + to + "' has an absolute or malformed "
                    + "name");
        }
        for (String seg : p.split("/", -1)) {
            if (seg.equals("..") || seg.isEmpty() || seg.equals(".")) {
                throw new PathEscapeException("an entry of the import into '" + to + "' leaves its tree or is not "
                        + "normalised");
            }
        }
        return p;
    }

    /** A {@code multipart/form-data} body of in-memory parts named {@code file}, their filenames the targets. */
    static final class Multipart {
        static final byte[] CRLF = {'\r', '\n'};

        private final String boundary = boundary();
        private final List<byte[]> chunks = new ArrayList<>();

        static String boundary() {
            return "codeexec-" + UUID.randomUUID().toString().replace("-", "");
        }

        /** The head of a part; its filename is a path of the engine's own (safe characters only). */
        static byte[] header(String boundary, String filename) {
            return ("--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\""
                    + filename.replace("\\", "\\\\").replace("\"", "\\\"")
                    + "\"\r\nContent-Type: application/octet-stream\r\n\r\n").getBytes(StandardCharsets.UTF_8);
        }

        static byte[] closing(String boundary) {
            return ("--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8);
        }

        void part(String filename, byte[] content) {
            chunks.add(header(boundary, filename));
            chunks.add(content);
            chunks.add(CRLF);
        }

        Envd.Multipart build() {
            chunks.add(closing(boundary));
            List<byte[]> all = List.copyOf(chunks);
            return Envd.Multipart.of(boundary, () -> HttpRequest.BodyPublishers.ofByteArrays(all));
        }
    }
}
