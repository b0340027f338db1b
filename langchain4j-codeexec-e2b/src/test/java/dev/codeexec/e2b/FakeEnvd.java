package dev.codeexec.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The envd of a {@link FakeSandbox}, written from envd's sources (e2b-dev/infra {@code packages/envd}): the
 * {@code process.Process} service (Start streams a start event, 32 KiB data chunks in base64, keepalives when silent,
 * an end event after both pipes closed, or at once after a TERM or KILL from SendSignal, then the end of stream; the
 * {@code Connect-Timeout-Ms} deadline kills the program and ends the stream with {@code deadline_exceeded}; a client
 * that goes away does not stop the program), the {@code filesystem.Filesystem} calls the engine uses (Stat is an
 * lstat reporting a link by its fully resolved {@code symlinkTarget} and its target's type; ListDir walks without
 * following links; MakeDir creates missing parents, following links as {@code os.Stat} does; Remove is
 * {@code os.RemoveAll}), and {@code /files} (downloads follow links and honour {@code Range}; uploads create parents
 * and truncate in place, following a link at the target).
 */
final class FakeEnvd {

    /** Ends a request by dropping its connection, as a sandbox that died mid-answer does. */
    static final class Abort extends IOException {
        Abort() {
            super("the sandbox is gone");
        }
    }

    private static final class ConnectError extends Exception {
        final String code;

        ConnectError(String code, String message) {
            super(message);
            this.code = code;
        }
    }

    private static final Map<String, Integer> HTTP = Map.of("not_found", 404, "invalid_argument", 400,
            "already_exists", 409, "internal", 500, "unimplemented", 501, "unknown", 500, "deadline_exceeded", 504,
            "unauthenticated", 401, "failed_precondition", 400);

    /** A program envd started. */
    private final class Proc {
        final Process process;
        final long pid;
        final OutputStream stdin;
        final BlockingQueue<byte[]> frames = new LinkedBlockingQueue<>();
        final CountDownLatch pumps = new CountDownLatch(2);
        volatile boolean outCancel;
        volatile Integer signal;

        Proc(Process process, boolean stdin) {
            this.process = process;
            this.pid = process.pid();
            this.stdin = stdin ? process.getOutputStream() : null;
            pump(process.getInputStream(), "stdout");
            pump(process.getErrorStream(), "stderr");
        }

        private void pump(InputStream in, String field) {
            Thread t = new Thread(() -> {
                byte[] buf = new byte[32 << 10];
                try (in) {
                    int n;
                    while ((n = in.read(buf)) > 0) {
                        frames.add(message("{\"event\":{\"data\":{\"" + field + "\":\""
                                + Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buf, n)) + "\"}}}"));
                    }
                } catch (IOException ignored) {
                    // The pipe broke: the program is gone.
                } finally {
                    pumps.countDown();
                }
            }, "fake-envd-pump");
            t.setDaemon(true);
            t.start();
        }
    }

    private final FakeSandbox sandbox;
    private final Map<Long, Proc> processes = new ConcurrentHashMap<>();
    private volatile boolean destroyed;

    FakeEnvd(FakeSandbox sandbox) {
        this.sandbox = sandbox;
    }

    /** The sandbox died: every program dies with it (a run's namespace with its launcher), every stream breaks. */
    void destroy() {
        destroyed = true;
        for (Proc p : processes.values()) {
            p.process.destroyForcibly();
        }
    }

    /** Programs started and still running. */
    int running() {
        return (int) processes.values().stream().filter(p -> p.process.isAlive()).count();
    }

    void handle(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        if (path.equals("/files")) {
            if (ex.getRequestMethod().equals("GET")) {
                download(ex);
            } else {
                upload(ex);
            }
            return;
        }
        if (path.equals("/health")) {
            FakeE2b.send(ex, 204, null, new byte[0]);
            return;
        }
        if (path.equals("/process.Process/Start")) {
            start(ex);
            return;
        }
        unary(ex, path.substring(1));
    }

    // ------------------------------------------------------------------ Connect

    private static byte[] message(String json) {
        return envelope(0, json);
    }

    private static byte[] envelope(int flags, String json) {
        byte[] p = json.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(5 + p.length).put((byte) flags).putInt(p.length).put(p).array();
    }

    private static String user(HttpExchange ex) {
        String auth = ex.getRequestHeaders().getFirst("Authorization");
        if (auth == null || !auth.startsWith("Basic ")) {
            return "user";
        }
        String s = new String(Base64.getDecoder().decode(auth.substring(6)), StandardCharsets.UTF_8);
        return s.substring(0, s.indexOf(':'));
    }

    private static String home(String user) {
        return user.equals("root") ? "/root" : "/home/" + user;
    }

    /** envd's ExpandAndResolve: absolute as is, {@code ~} and relative paths under the user's home. */
    private static Path resolve(String path, String user) {
        if (path.startsWith("~")) {
            path = home(user) + path.substring(1);
        }
        Path p = Path.of(path);
        return (p.isAbsolute() ? p : Path.of(home(user)).resolve(p)).normalize();
    }

    private void unary(HttpExchange ex, String method) throws IOException {
        String type = ex.getRequestHeaders().getFirst("Content-Type");
        if (type == null || !type.startsWith("application/json")
                || !"1".equals(ex.getRequestHeaders().getFirst("Connect-Protocol-Version"))) {
            FakeE2b.send(ex, 415, "text/plain", "unsupported content type or protocol version".getBytes());
            return;
        }
        JsonNode req = FakeE2b.body(ex);
        String user = user(ex);
        try {
            ObjectNode answer = switch (method) {
                case "process.Process/SendSignal" -> sendSignal(req);
                case "process.Process/SendInput" -> sendInput(req);
                case "process.Process/CloseStdin" -> closeStdin(req);
                case "filesystem.Filesystem/Stat" -> stat(req, user);
                case "filesystem.Filesystem/ListDir" -> listDir(req, user);
                case "filesystem.Filesystem/MakeDir" -> makeDir(req, user);
                case "filesystem.Filesystem/Move" -> move(req, user);
                case "filesystem.Filesystem/Remove" -> remove(req, user);
                default -> throw new ConnectError("unimplemented", method + " is not implemented");
            };
            FakeE2b.json(ex, 200, FakeE2b.JSON.writeValueAsString(answer));
        } catch (ConnectError e) {
            ObjectNode err = FakeE2b.object();
            err.put("code", e.code);
            err.put("message", e.getMessage());
            FakeE2b.json(ex, HTTP.getOrDefault(e.code, 500), FakeE2b.JSON.writeValueAsString(err));
        }
    }

    // ------------------------------------------------------------------ process

    private void start(HttpExchange ex) throws IOException {
        if (!"application/connect+json".equals(ex.getRequestHeaders().getFirst("Content-Type"))) {
            FakeE2b.send(ex, 415, "text/plain", "unsupported content type".getBytes());
            return;
        }
        byte[] body = ex.getRequestBody().readAllBytes();
        if (body.length < 5 || body[0] != 0 || ByteBuffer.wrap(body, 1, 4).getInt() != body.length - 5) {
            FakeE2b.send(ex, 400, "text/plain", "the request is not exactly one envelope".getBytes());
            return;
        }
        JsonNode req = FakeE2b.JSON.readTree(java.util.Arrays.copyOfRange(body, 5, body.length));
        String user = user(ex);
        long deadlineMs = Long.parseLong(java.util.Objects.requireNonNullElse(
                ex.getRequestHeaders().getFirst("Connect-Timeout-Ms"), "0"));
        long keepaliveS = Long.parseLong(java.util.Objects.requireNonNullElse(
                ex.getRequestHeaders().getFirst("Keepalive-Ping-Interval"), "90"));
        ex.getResponseHeaders().set("Content-Type", "application/connect+json");
        ex.sendResponseHeaders(200, 0);
        OutputStream out = ex.getResponseBody();
        JsonNode proc = req.path("process");
        Path cwd = resolve(proc.path("cwd").asText(home(user)), user);
        if (!Files.exists(cwd)) {
            endStream(out, "invalid_argument", "cwd '" + cwd + "' does not exist");
            return;
        }
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", "exec \"$@\"", "--", proc.path("cmd").asText()));
        proc.path("args").forEach(a -> argv.add(a.asText()));
        ProcessBuilder pb = new ProcessBuilder(argv).directory(cwd.toFile());
        pb.environment().clear();
        pb.environment().putAll(sandbox.baseEnvironment(user));
        proc.path("envs").properties().forEach(e -> pb.environment().put(e.getKey(), e.getValue().asText()));
        boolean stdin = !req.has("stdin") || req.get("stdin").asBoolean();
        if (!stdin) {
            pb.redirectInput(new File("/dev/null"));
        }
        Proc p;
        try {
            p = new Proc(pb.start(), stdin);
        } catch (IOException e) {
            endStream(out, "invalid_argument", "error starting process: " + e.getMessage());
            return;
        }
        processes.put(p.pid, p);
        boolean[] deadlineHit = {false};
        java.util.concurrent.ScheduledFuture<?> deadline = deadlineMs <= 0 ? null
                : TIMER.schedule(() -> {
                    deadlineHit[0] = true;
                    p.process.destroyForcibly();
                }, deadlineMs, TimeUnit.MILLISECONDS);
        long lastWrite = System.nanoTime();
        try {
            write(out, message("{\"event\":{\"start\":{\"pid\":" + p.pid + "}}}"));
            while (true) {
                if (destroyed) {
                    throw new Abort();
                }
                if (deadlineHit[0]) {
                    endStream(out, "deadline_exceeded", "context deadline exceeded");
                    return;
                }
                byte[] f = p.frames.poll(Math.min(200, keepaliveS * 1000), TimeUnit.MILLISECONDS);
                if (f != null) {
                    write(out, f);
                    lastWrite = System.nanoTime();
                    continue;
                }
                if (p.pumps.getCount() == 0 && p.frames.isEmpty() || p.outCancel) {
                    break;
                }
                if (System.nanoTime() - lastWrite >= TimeUnit.SECONDS.toNanos(keepaliveS)) {
                    // As envd's keepalive ticker, reset by every data event.
                    write(out, message("{\"event\":{\"keepalive\":{}}}"));
                    lastWrite = System.nanoTime();
                }
            }
            p.process.waitFor();
            if (destroyed) {
                throw new Abort();
            }
            write(out, message(end(p)));
            write(out, envelope(2, "{}"));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Abort a) {
            throw a;
        } catch (IOException clientGone) {
            // The client closed the stream: envd stops sending, the program runs on.
        } finally {
            if (deadline != null) {
                deadline.cancel(false);
            }
        }
    }

    private static final java.util.concurrent.ScheduledExecutorService TIMER =
            java.util.concurrent.Executors.newScheduledThreadPool(1, r -> {
                Thread t = new Thread(r, "fake-envd-deadline");
                t.setDaemon(true);
                return t;
            });

    /** The end event as Go's exec reports it: -1 and "signal: …" for a program a signal ended. */
    private static String end(Proc p) {
        int code = p.process.exitValue();
        Integer sig = p.signal;
        if (sig != null && code == 128 + sig) {
            return "{\"event\":{\"end\":{\"exitCode\":-1,\"status\":\"signal: " + (sig == 9 ? "killed" : "terminated")
                    + "\"}}}";
        }
        return "{\"event\":{\"end\":{" + (code == 0 ? "" : "\"exitCode\":" + code + ",")
                + "\"exited\":true,\"status\":\"exit status " + code + "\"}}}";
    }

    private static void write(OutputStream out, byte[] frame) throws IOException {
        out.write(frame);
        out.flush();
    }

    private static void endStream(OutputStream out, String code, String message) throws IOException {
        ObjectNode err = FakeE2b.object();
        err.putObject("error").put("code", code).put("message", message);
        write(out, envelope(2, FakeE2b.JSON.writeValueAsString(err)));
        out.close();
    }

    private Proc process(JsonNode req) throws ConnectError {
        long pid = req.path("process").path("pid").asLong();
        Proc p = processes.get(pid);
        if (p == null || !p.process.isAlive() && p.pumps.getCount() == 0) {
            throw new ConnectError("not_found", "process with pid " + pid + " not found");
        }
        return p;
    }

    private ObjectNode sendSignal(JsonNode req) throws ConnectError {
        Proc p = process(req);
        switch (req.path("signal").asText()) {
            case "SIGNAL_SIGKILL" -> {
                p.signal = 9;
                p.outCancel = true;
                p.process.destroyForcibly();
            }
            case "SIGNAL_SIGTERM" -> {
                p.signal = 15;
                p.outCancel = true;
                p.process.destroy();
            }
            default -> throw new ConnectError("unimplemented", "invalid signal: " + req.path("signal").asText());
        }
        return FakeE2b.object();
    }

    private ObjectNode sendInput(JsonNode req) throws ConnectError {
        Proc p = process(req);
        if (p.stdin == null) {
            throw new ConnectError("internal", "error writing to stdin: stdin not enabled or closed");
        }
        try {
            p.stdin.write(Base64.getDecoder().decode(req.path("input").path("stdin").asText()));
            p.stdin.flush();
        } catch (IOException e) {
            throw new ConnectError("internal", "error writing to stdin of process '" + p.pid + "': " + e.getMessage());
        }
        return FakeE2b.object();
    }

    private ObjectNode closeStdin(JsonNode req) throws ConnectError {
        Proc p = process(req);
        if (p.stdin != null) {
            try {
                p.stdin.close();
            } catch (IOException e) {
                throw new ConnectError("unknown", "error closing stdin: " + e.getMessage());
            }
        }
        return FakeE2b.object();
    }

    // ------------------------------------------------------------------ filesystem

    private ObjectNode stat(JsonNode req, String user) throws ConnectError {
        Path p = resolve(req.path("path").asText(), user);
        ObjectNode out = FakeE2b.object();
        out.set("entry", entry(p, p.toString()));
        return out;
    }

    /** envd's entryInfo: an lstat; a link reports its resolved target (or itself) and the target's type and mode. */
    static ObjectNode entry(Path p, String reported) throws ConnectError {
        PosixFileAttributes a;
        try {
            a = Files.readAttributes(p, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException | NotDirectoryException e) {
            throw new ConnectError("not_found", "file not found: lstat " + p + ": no such file or directory");
        } catch (IOException e) {
            throw new ConnectError("internal", "error getting file info: " + e.getMessage());
        }
        ObjectNode n = FakeE2b.object();
        n.put("name", p.getFileName() == null ? "/" : p.getFileName().toString());
        String type = null;
        int mode = 0;
        String target = null;
        if (a.isSymbolicLink()) {
            try {
                target = p.toRealPath().toString();
                PosixFileAttributes t = Files.readAttributes(Path.of(target), PosixFileAttributes.class);
                type = typeOf(t);
                mode = perm(t.permissions());
            } catch (IOException e) {
                target = reported;
            }
        } else {
            type = typeOf(a);
            mode = perm(a.permissions());
        }
        if (type != null) {
            n.put("type", type);
        }
        n.put("path", reported);
        if (a.size() != 0) {
            n.put("size", Long.toString(a.size()));
        }
        if (mode != 0) {
            n.put("mode", mode);
        }
        n.put("permissions", (a.isSymbolicLink() ? "L" : a.isDirectory() ? "d" : a.isOther() ? "p" : "-")
                + java.nio.file.attribute.PosixFilePermissions.toString(a.permissions()));
        n.put("owner", a.owner().getName());
        n.put("group", a.group().getName());
        n.put("modifiedTime", a.lastModifiedTime().toInstant().toString());
        if (target != null) {
            n.put("symlinkTarget", target);
        }
        return n;
    }

    private static String typeOf(PosixFileAttributes a) {
        return a.isRegularFile() ? "FILE_TYPE_FILE" : a.isDirectory() ? "FILE_TYPE_DIRECTORY" : null;
    }

    private static int perm(Set<PosixFilePermission> p) {
        int mode = 0;
        for (PosixFilePermission x : p) {
            mode |= 1 << (8 - x.ordinal());
        }
        return mode;
    }

    private ObjectNode listDir(JsonNode req, String user) throws ConnectError {
        int depth = req.path("depth").asInt(0);
        if (depth == 0) {
            depth = 1;
        }
        Path requested = resolve(req.path("path").asText(), user);
        Path resolved;
        try {
            resolved = requested.toRealPath();
        } catch (IOException e) {
            throw new ConnectError("not_found", "path not found: " + e.getMessage());
        }
        if (!Files.isDirectory(resolved)) {
            throw new ConnectError("invalid_argument", "path is not a directory: " + resolved);
        }
        ObjectNode out = FakeE2b.object();
        ArrayNode entries = out.putArray("entries");
        walk(resolved, requested, "", depth, entries);
        return out;
    }

    /** Go's filepath.WalkDir: lexical order, pre-order, links not followed. */
    private static void walk(Path dir, Path requested, String rel, int depth, ArrayNode into) throws ConnectError {
        List<Path> children;
        try (Stream<Path> s = Files.list(dir)) {
            children = s.sorted().toList();
        } catch (IOException e) {
            throw new ConnectError("internal", "error reading directory " + dir + ": " + e.getMessage());
        }
        for (Path c : children) {
            String r = rel.isEmpty() ? c.getFileName().toString() : rel + "/" + c.getFileName();
            if (r.split("/").length > depth) {
                return;
            }
            ObjectNode e;
            try {
                e = entry(c, requested + "/" + r);
            } catch (ConnectError gone) {
                continue; // removed meanwhile
            }
            into.add(e);
            if (Files.isDirectory(c, LinkOption.NOFOLLOW_LINKS)) {
                walk(c, requested, r, depth, into);
            }
        }
    }

    /** envd's EnsureDirs: each missing component created (following links of existing ones, as os.Stat does). */
    private static void ensureDirs(Path dir) throws ConnectError {
        Path cur = dir.getRoot();
        for (Path part : dir) {
            cur = cur.resolve(part);
            if (Files.isDirectory(cur)) {
                continue;
            }
            if (Files.exists(cur)) {
                throw new ConnectError("internal", "path is a file: " + cur);
            }
            try {
                Files.createDirectory(cur);
            } catch (FileAlreadyExistsException e) {
                // Created meanwhile.
            } catch (IOException e) {
                throw new ConnectError("internal", "failed to create directory: " + e.getMessage());
            }
        }
    }

    private ObjectNode makeDir(JsonNode req, String user) throws ConnectError {
        Path p = resolve(req.path("path").asText(), user);
        if (Files.exists(p)) {
            if (Files.isDirectory(p)) {
                throw new ConnectError("already_exists", "directory already exists: " + p);
            }
            throw new ConnectError("invalid_argument", "path already exists but it is not a directory: " + p);
        }
        ensureDirs(p);
        ObjectNode out = FakeE2b.object();
        out.set("entry", entry(p, p.toString()));
        return out;
    }

    private ObjectNode move(JsonNode req, String user) throws ConnectError {
        Path src = resolve(req.path("source").asText(), user);
        Path dst = resolve(req.path("destination").asText(), user);
        ensureDirs(dst.getParent());
        try {
            Files.move(src, dst, StandardCopyOption.ATOMIC_MOVE);
        } catch (NoSuchFileException e) {
            throw new ConnectError("not_found", "source file not found: " + e.getMessage());
        } catch (IOException e) {
            throw new ConnectError("internal", "error renaming: " + e.getMessage());
        }
        ObjectNode out = FakeE2b.object();
        out.set("entry", entry(dst, dst.toString()));
        return out;
    }

    private ObjectNode remove(JsonNode req, String user) throws ConnectError {
        Path p = resolve(req.path("path").asText(), user);
        try {
            removeAll(p);
        } catch (IOException e) {
            throw new ConnectError("internal", "error removing file or directory: " + e.getMessage());
        }
        return FakeE2b.object();
    }

    /** os.RemoveAll: a link is removed, never followed. */
    static void removeAll(Path p) throws IOException {
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
            try (Stream<Path> s = Files.list(p)) {
                for (Path c : s.toList()) {
                    removeAll(c);
                }
            }
        }
        try {
            Files.delete(p);
        } catch (NoSuchFileException ignored) {
            // Gone meanwhile.
        } catch (DirectoryNotEmptyException | AccessDeniedException e) {
            throw e;
        }
    }

    // ------------------------------------------------------------------ /files

    private static Map<String, String> query(HttpExchange ex) {
        Map<String, String> q = new LinkedHashMap<>();
        String raw = ex.getRequestURI().getRawQuery();
        if (raw != null) {
            for (String kv : raw.split("&")) {
                String[] p = kv.split("=", 2);
                q.put(URLDecoder.decode(p[0], StandardCharsets.UTF_8),
                        p.length > 1 ? URLDecoder.decode(p[1], StandardCharsets.UTF_8) : "");
            }
        }
        return q;
    }

    private static void jsonError(HttpExchange ex, int code, String message) throws IOException {
        ObjectNode n = FakeE2b.object();
        n.put("code", code);
        n.put("message", message);
        FakeE2b.send(ex, code, "application/json; charset=utf-8",
                (FakeE2b.JSON.writeValueAsString(n) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    private void download(HttpExchange ex) throws IOException {
        Map<String, String> q = query(ex);
        String user = q.getOrDefault("username", "user");
        Path p = resolve(q.getOrDefault("path", ""), user);
        if (!Files.exists(p)) {
            jsonError(ex, 404, "path '" + p + "' does not exist");
            return;
        }
        if (Files.isDirectory(p)) {
            jsonError(ex, 400, "path '" + p + "' is a directory");
            return;
        }
        // os.Open follows links, and blocks on a FIFO until a writer comes: as envd does. The size is the opened
        // file's (http.ServeContent seeks the file it was given), never the path's: a file renamed over the path
        // meanwhile is another file, and mixing the two would serve a part of the old one.
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(p);
             InputStream in = java.nio.channels.Channels.newInputStream(ch)) {
            long size = ch.size();
            String range = ex.getRequestHeaders().getFirst("Range");
            ex.getResponseHeaders().set("Content-Type", "application/octet-stream");
            ex.getResponseHeaders().set("Accept-Ranges", "bytes");
            if (range != null) {
                Matcher m = Pattern.compile("bytes=(\\d+)-(\\d*)").matcher(range);
                if (m.matches()) {
                    long first = Long.parseLong(m.group(1));
                    long last = m.group(2).isEmpty() ? size - 1 : Math.min(size - 1, Long.parseLong(m.group(2)));
                    if (first >= size) {
                        ex.getResponseHeaders().set("Content-Range", "bytes */" + size);
                        FakeE2b.send(ex, 416, "text/plain; charset=utf-8", "invalid range: failed to overlap\n"
                                .getBytes(StandardCharsets.UTF_8));
                        return;
                    }
                    in.skipNBytes(first);
                    byte[] part = in.readNBytes((int) (last - first + 1));
                    ex.getResponseHeaders().set("Content-Range", "bytes " + first + "-" + last + "/" + size);
                    ex.sendResponseHeaders(206, part.length);
                    try (OutputStream o = ex.getResponseBody()) {
                        o.write(part);
                    }
                    return;
                }
            }
            ex.sendResponseHeaders(200, size == 0 ? -1 : size);
            if (size > 0) {
                try (OutputStream o = ex.getResponseBody()) {
                    in.transferTo(o);
                }
            }
        }
    }

    private void upload(HttpExchange ex) throws IOException {
        Map<String, String> q = query(ex);
        String user = q.getOrDefault("username", "user");
        String type = ex.getRequestHeaders().getFirst("Content-Type");
        byte[] body = FakeE2b.readAll(ex.getRequestBody(), 512 << 20);
        List<Map.Entry<String, byte[]>> parts = new ArrayList<>();
        if (type != null && type.startsWith("application/octet-stream")) {
            if (!q.containsKey("path")) {
                jsonError(ex, 400, "path query parameter is required for raw body upload");
                return;
            }
            parts.add(Map.entry(q.get("path"), body));
        } else if (type != null && type.startsWith("multipart/")) {
            Matcher m = Pattern.compile("boundary=\"?([^\";]+)\"?").matcher(type);
            if (!m.find()) {
                jsonError(ex, 500, "error parsing multipart form: no boundary");
                return;
            }
            for (Map.Entry<String, byte[]> part : Multipart.parse(body, m.group(1))) {
                parts.add(Map.entry(q.containsKey("path") ? q.get("path") : part.getKey(), part.getValue()));
            }
        } else {
            jsonError(ex, 400, "unsupported content type: " + type);
            return;
        }
        List<String> done = new ArrayList<>();
        StringBuilder answer = new StringBuilder("[");
        for (Map.Entry<String, byte[]> part : parts) {
            Path p = resolve(part.getKey(), user);
            if (done.contains(p.toString())) {
                jsonError(ex, 400, "you cannot upload multiple files to the same path '" + p + "' in one upload request");
                return;
            }
            try {
                ensureDirs(p.getParent());
            } catch (ConnectError e) {
                jsonError(ex, 500, "error ensuring directories: " + e.getMessage());
                return;
            }
            if (Files.isDirectory(p)) {
                jsonError(ex, 400, "path is a directory: " + p);
                return;
            }
            // O_WRONLY|O_CREATE|O_TRUNC, following a link at the path.
            try (OutputStream o = Files.newOutputStream(p, StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
                o.write(part.getValue());
            }
            done.add(p.toString());
            answer.append(answer.length() > 1 ? "," : "").append("{\"path\":\"").append(p).append("\",\"name\":\"")
                    .append(p.getFileName()).append("\",\"type\":\"file\"}");
        }
        FakeE2b.json(ex, 200, answer.append("]").toString());
    }

    /** A {@code multipart/form-data} reader: the parts named {@code file}, by their filename (with its path). */
    static final class Multipart {
        static List<Map.Entry<String, byte[]>> parse(byte[] body, String boundary) throws IOException {
            byte[] delim = ("--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
            List<Map.Entry<String, byte[]>> out = new ArrayList<>();
            int pos = indexOf(body, delim, 0);
            while (pos >= 0) {
                int after = pos + delim.length;
                if (after + 1 < body.length && body[after] == '-' && body[after + 1] == '-') {
                    break;
                }
                int headStart = after + 2;
                int headEnd = indexOf(body, "\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1), headStart);
                if (headEnd < 0) {
                    throw new IOException("error reading form: bad part");
                }
                String head = new String(body, headStart, headEnd - headStart, StandardCharsets.UTF_8);
                int next = indexOf(body, ("\r\n--" + boundary).getBytes(StandardCharsets.ISO_8859_1), headEnd + 4);
                if (next < 0) {
                    throw new IOException("error reading form: unexpected EOF");
                }
                byte[] content = java.util.Arrays.copyOfRange(body, headEnd + 4, next);
                Matcher name = Pattern.compile("name=\"([^\"]*)\"").matcher(head);
                Matcher file = Pattern.compile("filename=\"((?:[^\"\\\\]|\\\\.)*)\"").matcher(head);
                if (name.find() && name.group(1).equals("file") && file.find()) {
                    out.add(Map.entry(file.group(1).replaceAll("\\\\(.)", "$1"), content));
                }
                pos = next + 2;
            }
            return out;
        }

        private static int indexOf(byte[] hay, byte[] needle, int from) {
            outer:
            for (int i = from; i <= hay.length - needle.length; i++) {
                for (int j = 0; j < needle.length; j++) {
                    if (hay[i + j] != needle[j]) {
                        continue outer;
                    }
                }
                return i;
            }
            return -1;
        }
    }
}
