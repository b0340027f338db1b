package dev.codeexec.e2b;

import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.spi.BytePipe;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.ImportSource;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The writing half of {@link EnvdFiles}: writes and imports as one multipart upload into the engine's root-only
 * staging directory plus one helper that gives the files their owner, mode and time and renames them into place
 * ({@link SandboxScripts#FINISH_WRITES}, {@link SandboxScripts#FINISH_IMPORT}), and deletes by envd's
 * {@code Remove}. Its targets are absolute sandbox paths that {@link EnvdFiles} checked and resolved; messages name
 * workspace-relative paths only.
 */
final class EnvdUploads {

    private static final AtomicInteger UPLOAD_THREADS = new AtomicInteger();

    /** Streams to upload imports from, one per import at a time. */
    private static final ExecutorService UPLOADS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "codeexec-e2b-upload-" + UPLOAD_THREADS.incrementAndGet());
        t.setDaemon(true);
        return t;
    });

    private final Sandbox sandbox;
    private final String staging;
    private final String root;

    /**
     * @param staging the engine's root-only staging directory in the sandbox, on the workspace's file system
     * @param root    the workspace's real path in the sandbox
     */
    EnvdUploads(Sandbox sandbox, String staging, String root) {
        this.sandbox = sandbox;
        this.staging = staging;
        this.root = root;
    }

    /** Remove is {@code os.RemoveAll} as root: links are removed, never followed; read-only trees go too. */
    void remove(String absolute, String what) {
        ObjectNode req = Json.object();
        req.put("path", absolute);
        try {
            sandbox.envd.call("filesystem.Filesystem/Remove", req, Envd.ROOT, E2bHttp.Retry.TRANSIENT, what);
        } catch (RuntimeException e) {
            if (!EnvdFiles.code(e, "not_found")) {
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

    /**
     * Writes {@code files} to the absolute {@code targets} below the workspace root, in that order: one upload of
     * every file into a fresh staging directory, then one helper that checks every target's parent in the sandbox
     * (links resolved inside the workspace only, every component a directory, no target a directory), creates the
     * missing parents and moves each file into place ({@link SandboxScripts#FINISH_WRITES}): two requests for the
     * batch, nothing written when a target is refused.
     *
     * @throws dev.codeexec.engine.PathEscapeException when a target's parent goes through a link that leaves the
     *                                                 workspace or does not resolve
     * @throws InvalidSpecException                    when a target is a directory or a parent is not one
     */
    void writeAll(List<PutFile> files, List<String> targets) {
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
                    Integer.toString(sandbox.uid()), Integer.toString(sandbox.gid()), stage, root), what);
        } catch (RuntimeException e) {
            RuntimeException f = writeFailure(e, what);
            removeQuietly(stage, f);
            throw f;
        }
        refused(r, files);
        if (r.exitCode() != 0) {
            String failedAt = r.line("codeexec-failed");
            String which = failedAt == null ? what
                    : "write '" + files.get(index(failedAt, files.size())).path() + "'";
            throw new CodeExecException("could not " + which + " in sandbox " + sandbox.id() + " (status "
                    + r.exitCode() + ")");
        }
    }

    /** The typed exception of a target {@link SandboxScripts#FINISH_WRITES} refused before it wrote anything. */
    private void refused(Sandbox.HelperResult r, List<PutFile> files) {
        int code = r.exitCode();
        if (code == 25) {
            throw EnvdFiles.workspaceGone(sandbox);
        }
        if (code != 3 && code != 5 && code != 20 && code != 21) {
            return;
        }
        String path = files.get(index(r.line(code == 3 ? "codeexec-isdir" : "codeexec-refused"), files.size()))
                .path();
        throw switch (code) {
            case 3 -> new InvalidSpecException("'" + path + "' is a directory");
            case 5 -> new InvalidSpecException("'" + path + "': a component is not a directory");
            case 20 -> new PathEscapeException("path '" + path + "' leads outside the workspace through a link");
            default -> new PathEscapeException("path '" + path + "' goes through a link that does not resolve");
        };
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
        RuntimeException f = EnvdFiles.failed(sandbox, e, what);
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

    /** Imports a tree at the absolute {@code dest}; {@code to} is the workspace path, for messages. */
    void importTree(ImportSource source, String dest, String to, boolean readOnly) {
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
