package dev.codeexec.container;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.transport.DockerHttpClient;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.FileWindow;
import dev.codeexec.workspace.spi.ImportSource;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import java.io.BufferedOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;

/**
 * The file primitives of one workspace container, over the Engine API's archive endpoints: metadata from
 * {@code HEAD /containers/{id}/archive} (the path's own {@code lstat}, never following a link at it), contents and
 * listings from {@code GET} (one tar archive), writes and imports by {@code PUT} (one tar archive). The few steps
 * the archive API cannot do (an atomic rename, a delete) are helper execs with an argv, never a command line.
 *
 * <p>Links are resolved here, one component at a time, from what the archive API reports; a link whose target
 * (fully evaluated by Docker) leaves the workspace or does not exist is refused. Tar archives from the container are
 * checked entry by entry: absolute names, {@code ..} or a name outside the requested tree are refused, and links in
 * them are reported as links, never followed.
 *
 * <p>What remains: between a check and the archive call a program of the same workspace could swap a directory for
 * a link. Docker evaluates links in the container's own root, so such a race can only reach other files of the same
 * container (the model's own sandbox), never the host or another workspace.
 */
final class ContainerFiles implements WorkspaceFiles {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_LINKS = 40;

    private final DockerConnection docker;
    private final DockerHttpClient http;
    private final String containerId;
    private final String root;
    private final String helperUser;
    private final int uid;
    private final int gid;
    /** Workspace-relative directories already seen to be real directories in this operation. */
    private final Map<String, Boolean> realDirs = new HashMap<>();

    ContainerFiles(DockerConnection docker, DockerHttpClient http, String containerId, String root, String helperUser,
                   int uid, int gid) {
        this.docker = docker;
        this.http = http;
        this.containerId = containerId;
        this.root = root;
        this.helperUser = helperUser;
        this.uid = uid;
        this.gid = gid;
    }

    // ------------------------------------------------------------------ paths

    private static String check(String path) {
        if (path == null || path.startsWith("/") || path.contains("\\")) {
            throw new PathEscapeException("path '" + path + "' is absolute or malformed");
        }
        if (path.equals(".")) {
            return ".";
        }
        for (String seg : path.split("/", -1)) {
            if (seg.equals("..")) {
                throw new PathEscapeException("path '" + path + "' leaves the workspace");
            }
            if (seg.isEmpty() || seg.equals(".")) {
                throw new PathEscapeException("path '" + path + "' is not normalised");
            }
        }
        return path;
    }

    private String abs(String rel) {
        return rel.equals(".") ? root : root + "/" + rel;
    }

    private static String parentOf(String rel) {
        int i = rel.lastIndexOf('/');
        return i < 0 ? "." : rel.substring(0, i);
    }

    private static String nameOf(String rel) {
        return rel.substring(rel.lastIndexOf('/') + 1);
    }

    private static String join(String dir, String name) {
        return dir.equals(".") ? name : dir + "/" + name;
    }

    // ------------------------------------------------------------------ stat through the archive API

    /** What {@code HEAD archive} says about a container path. */
    private record Stat(EntryType type, long size, int mode, Instant mtime, String linkTarget) {
    }

    /** The lstat of a workspace-relative path whose parents hold no links; empty when missing. */
    private Optional<Stat> lstat(String rel) {
        String path = "/containers/" + containerId + "/archive?path="
                + URLEncoder.encode(abs(rel), StandardCharsets.UTF_8);
        DockerHttpClient.Request req = DockerHttpClient.Request.builder()
                .method("HEAD").path(path).build();
        try (DockerHttpClient.Response r = http.execute(req)) {
            int status = r.getStatusCode();
            if (status == 404) {
                requireContainer();
                return Optional.empty();
            }
            if (status == 409) {
                throw new WorkspaceGoneException("the workspace's container is not running");
            }
            if (status != 200) {
                throw new CodeExecException("the Docker engine could not look at '" + rel + "' (HTTP " + status + ")");
            }
            String header = r.getHeader("X-Docker-Container-Path-Stat");
            if (header == null) {
                throw new CodeExecException("the Docker engine sent no file status for '" + rel + "'");
            }
            JsonNode j = JSON.readTree(Base64.getDecoder().decode(header));
            long goMode = j.path("mode").asLong();
            EntryType type;
            if ((goMode & (1L << 31)) != 0) {
                type = EntryType.DIRECTORY;
            } else if ((goMode & (1L << 27)) != 0) {
                type = EntryType.LINK;
            } else if ((goMode & ((1L << 26) | (1L << 25) | (1L << 24) | (1L << 21) | (1L << 19))) != 0) {
                type = EntryType.OTHER;
            } else {
                type = EntryType.FILE;
            }
            Instant mtime;
            try {
                mtime = Instant.parse(j.path("mtime").asText());
            } catch (RuntimeException e) {
                mtime = Instant.EPOCH;
            }
            return Optional.of(new Stat(type, Math.max(0, j.path("size").asLong()), (int) (goMode & 0777), mtime,
                    j.path("linkTarget").asText("")));
        } catch (IOException e) {
            throw docker.translate(new java.io.UncheckedIOException(e), "look at a file");
        } catch (RuntimeException e) {
            throw docker.translate(e, "look at a file");
        }
    }

    /** Throws {@link WorkspaceGoneException} when the container is no longer there or not running. */
    private void requireContainer() {
        try {
            Boolean running = docker.control().inspectContainerCmd(containerId).exec().getState().getRunning();
            if (!Boolean.TRUE.equals(running)) {
                throw new WorkspaceGoneException("the workspace's container is not running");
            }
        } catch (NotFoundException e) {
            throw new WorkspaceGoneException("the workspace's container is gone");
        } catch (RuntimeException e) {
            throw docker.translate(e, "look at the workspace's container");
        }
    }

    /** The workspace-relative path of an absolute container path inside the workspace, or null outside it. */
    private String inside(String absolute) {
        if (absolute.equals(root)) {
            return ".";
        }
        if (absolute.startsWith(root + "/")) {
            String rel = absolute.substring(root.length() + 1);
            while (rel.endsWith("/")) {
                rel = rel.substring(0, rel.length() - 1);
            }
            return rel.isEmpty() ? "." : rel;
        }
        return null;
    }

    /** Follows a link at {@code rel} (whose parents hold no links) to a real, existing path inside the workspace. */
    private String follow(String rel, Stat link, String asked) {
        String target = inside(link.linkTarget());
        if (target == null) {
            throw new PathEscapeException("path '" + asked + "' leads outside the workspace through a link");
        }
        Optional<Stat> t = lstat(target);
        if (t.isEmpty() || t.get().type() == EntryType.LINK) {
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
            if (!isLast && Boolean.TRUE.equals(realDirs.get(next))) {
                cur = next;
                continue;
            }
            Optional<Stat> s = lstat(next);
            if (s.isEmpty()) {
                StringBuilder rest = new StringBuilder(next);
                for (int j = i + 1; j < segs.length; j++) {
                    rest.append('/').append(segs[j]);
                }
                return rest.toString();
            }
            EntryType type = s.get().type();
            if (type == EntryType.LINK) {
                next = follow(next, s.get(), asked);
                type = isLast ? EntryType.FILE : lstat(next).map(Stat::type).orElse(EntryType.OTHER);
            }
            if (type == EntryType.DIRECTORY) {
                realDirs.put(next, true);
            } else if (!isLast) {
                // Nothing exists below a file: keep the rest as given (every lookup of it finds nothing).
                StringBuilder rest = new StringBuilder(next);
                for (int j = i + 1; j < segs.length; j++) {
                    rest.append('/').append(segs[j]);
                }
                return rest.toString();
            }
            cur = next;
        }
        return cur;
    }

    @Override
    public Optional<FileEntry> stat(String path) {
        check(path);
        if (path.equals(".")) {
            Stat s = lstat(".").orElseThrow(() -> new WorkspaceGoneException("the workspace is gone"));
            return Optional.of(new FileEntry(".", s.type(), s.size(), s.mode(), s.mtime()));
        }
        String parent = resolveFrom(parentOf(path), path, true);
        if (!parent.equals(".")) {
            Optional<Stat> p = lstat(parent);
            if (p.isEmpty() || p.get().type() != EntryType.DIRECTORY) {
                return Optional.empty();
            }
        }
        return lstat(join(parent, nameOf(path)))
                .map(s -> new FileEntry(path, s.type(), s.type() == EntryType.FILE ? s.size() : 0, s.mode(),
                        s.mtime()));
    }

    // ------------------------------------------------------------------ archives from the container

    /** Receives the entries of a tar archive from the container, relative to the requested path. */
    private interface TarVisitor {
        /** @return false to stop reading */
        boolean entry(String rel, TarArchiveEntry e, InputStream content) throws IOException;
    }

    /**
     * Reads the archive of {@code rel}: each entry name is checked (no absolute name, no {@code ..}, nothing outside
     * the requested tree) and passed relative to it ({@code "."} for the path itself).
     */
    private void readArchive(String rel, TarVisitor visitor) {
        InputStream raw;
        try {
            raw = docker.control().copyArchiveFromContainerCmd(containerId, abs(rel)).exec();
        } catch (NotFoundException e) {
            requireContainer();
            throw new InvalidSpecException("'" + rel + "' does not exist");
        } catch (RuntimeException e) {
            throw docker.translate(e, "read files");
        }
        try (TarArchiveInputStream tar = new TarArchiveInputStream(raw)) {
            String top = null;
            TarArchiveEntry e;
            while ((e = tar.getNextEntry()) != null) {
                String name = e.getName();
                while (name.endsWith("/")) {
                    name = name.substring(0, name.length() - 1);
                }
                if (name.startsWith("/") || name.isEmpty()) {
                    throw new PathEscapeException("the container sent an archive entry with an absolute name");
                }
                for (String seg : name.split("/")) {
                    if (seg.equals("..")) {
                        throw new PathEscapeException("the container sent an archive entry with '..'");
                    }
                }
                String first = name.contains("/") ? name.substring(0, name.indexOf('/')) : name;
                if (top == null) {
                    top = first;
                }
                if (!first.equals(top)) {
                    throw new PathEscapeException("the container sent an archive entry outside the requested tree");
                }
                String entryRel = name.equals(top) ? "." : name.substring(top.length() + 1);
                if (!visitor.entry(entryRel, e, tar)) {
                    return;
                }
            }
        } catch (IOException x) {
            throw new CodeExecException("could not read files of '" + rel + "' from the container ("
                    + x.getClass().getSimpleName() + ")", x);
        } finally {
            Execs.closeQuietly(raw);
        }
    }

    private static EntryType typeOf(TarArchiveEntry e) {
        if (e.isSymbolicLink()) {
            return EntryType.LINK;
        }
        if (e.isFIFO() || e.isCharacterDevice() || e.isBlockDevice() || e.isLink()) {
            // A hard link entry is left as OTHER: its bytes are under another name of the archive.
            return EntryType.OTHER;
        }
        if (e.isDirectory()) {
            return EntryType.DIRECTORY;
        }
        if (e.isFile() && !e.isLink()) {
            return EntryType.FILE;
        }
        return EntryType.OTHER;
    }

    @Override
    public void walk(String dir, WalkVisitor visitor) {
        String d = resolve(dir);
        Optional<Stat> s = lstat(d);
        if (s.isEmpty() || s.get().type() != EntryType.DIRECTORY) {
            return;
        }
        List<String> skipped = new ArrayList<>();
        readArchive(d, (rel, e, in) -> {
            if (rel.equals(".")) {
                return true;
            }
            for (String sk : skipped) {
                if (rel.startsWith(sk + "/")) {
                    return true;
                }
            }
            EntryType type = typeOf(e);
            FileEntry fe = new FileEntry(join(dir, rel), type, type == EntryType.FILE ? e.getSize() : 0,
                    e.getMode() & 07777, e.getLastModifiedDate().toInstant());
            WalkAction a = visitor.visit(fe);
            if (a == WalkAction.STOP) {
                return false;
            }
            if (a == WalkAction.SKIP_SUBTREE && type == EntryType.DIRECTORY) {
                skipped.add(rel);
            }
            return true;
        });
    }

    /** Resolves a path to an existing regular file, following links inside the workspace. */
    private String regularFile(String path) {
        String r = resolve(path);
        String parent = parentOf(r);
        if (!parent.equals(".")) {
            Optional<Stat> p = lstat(parent);
            if (p.isEmpty() || p.get().type() != EntryType.DIRECTORY) {
                throw new InvalidSpecException("'" + path + "' does not exist");
            }
        }
        Optional<Stat> s = lstat(r);
        if (s.isEmpty()) {
            throw new InvalidSpecException("'" + path + "' does not exist");
        }
        if (s.get().type() != EntryType.FILE) {
            throw new InvalidSpecException("'" + path + "' is not a regular file");
        }
        return r;
    }

    @Override
    public FileWindow read(String path, long offset, int maxBytes) {
        check(path);
        if (offset < 0 || maxBytes < 0) {
            throw new InvalidSpecException("offset (" + offset + ") and maxBytes (" + maxBytes
                    + ") must not be negative");
        }
        String r = regularFile(path);
        FileWindow[] out = new FileWindow[1];
        readArchive(r, (rel, e, in) -> {
            if (!rel.equals(".") || typeOf(e) != EntryType.FILE) {
                throw new InvalidSpecException("'" + path + "' is not a regular file");
            }
            long size = e.getSize();
            byte[] bytes = new byte[0];
            if (offset < size && maxBytes > 0) {
                in.skipNBytes(offset);
                bytes = in.readNBytes((int) Math.min(maxBytes, size - offset));
            }
            out[0] = new FileWindow(bytes, size);
            return false;
        });
        if (out[0] == null) {
            throw new InvalidSpecException("'" + path + "' could not be read");
        }
        return out[0];
    }

    @Override
    public void export(List<String> paths, ExportVisitor visitor) {
        for (String p : paths) {
            check(p);
        }
        for (String path : paths) {
            String r = regularFile(path);
            boolean[] goOn = {true};
            readArchive(r, (rel, e, in) -> {
                if (!rel.equals(".") || typeOf(e) != EntryType.FILE) {
                    throw new InvalidSpecException("'" + path + "' is not a regular file");
                }
                InputStream lent = new FilterInputStream(in) {
                    @Override
                    public void close() {
                        // The provider closes the archive.
                    }
                };
                try {
                    goOn[0] = visitor.file(path, e.getSize(), lent);
                } catch (IOException x) {
                    throw new InvalidSpecException("'" + path + "' could not be read", x);
                }
                return false;
            });
            if (!goOn[0]) {
                return;
            }
        }
    }

    // ------------------------------------------------------------------ writes

    /** Writes a tar archive to a temporary host file, then puts it into the container directory {@code dirRel}. */
    private interface TarWriter {
        void write(TarArchiveOutputStream tar) throws IOException;
    }

    private void putArchive(String dirRel, TarWriter writer, String what) {
        Path tmp = null;
        try {
            tmp = Files.createTempFile("codeexec-put-", ".tar");
            try (OutputStream os = new BufferedOutputStream(Files.newOutputStream(tmp));
                 TarArchiveOutputStream tar = new TarArchiveOutputStream(os)) {
                tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
                tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
                writer.write(tar);
                tar.finish();
            }
            try (InputStream in = Files.newInputStream(tmp)) {
                docker.control().copyArchiveToContainerCmd(containerId).withRemotePath(abs(dirRel))
                        .withTarInputStream(in).withNoOverwriteDirNonDir(false).exec();
            }
        } catch (CodeExecException e) {
            throw e;
        } catch (IOException e) {
            throw new CodeExecException("could not " + what + " (" + e.getClass().getSimpleName() + ")", e);
        } catch (NotFoundException e) {
            requireContainer();
            throw new InvalidSpecException("could not " + what + ": a directory on the way is missing");
        } catch (RuntimeException e) {
            throw docker.translate(e, what);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // A temporary file of this JVM.
                }
            }
        }
    }

    private TarArchiveEntry entry(String name, boolean dir, long size, int mode, Instant mtime) {
        TarArchiveEntry e = new TarArchiveEntry(dir ? name + "/" : name,
                dir ? TarArchiveEntry.LF_DIR : TarArchiveEntry.LF_NORMAL);
        e.setSize(dir ? 0 : size);
        e.setMode((dir ? 040000 : 0100000) | (mode & 07777));
        e.setIds(uid, gid);
        e.setModTime(mtime.toEpochMilli());
        return e;
    }

    /** A helper exec with an argv; a failure is a {@link CodeExecException} naming {@code what} only. */
    private void helper(String what, String... argv) {
        Execs.Result r = Execs.run(docker, containerId, helperUser, List.of(argv));
        if (!r.ok()) {
            throw new CodeExecException("could not " + what + " in the container (status " + r.exitCode() + ")");
        }
    }

    /** Deletes {@code $1} without following links, making read-only directories inside it writable first. */
    private static final String DELETE = ""
            + "if [ -d \"$1\" ] && [ ! -L \"$1\" ]; then\n"
            + "  find \"$1\" -type d ! -perm -u+w -exec chmod u+w {} + 2>/dev/null\n"
            + "fi\n"
            + "rm -rf -- \"$1\"\n";

    /** Replaces {@code $2} by {@code $1} (a sibling): deletes what was at {@code $2}, then renames. */
    private static final String REPLACE = DELETE.replace("$1", "$2")
            + "mv -f -T -- \"$1\" \"$2\"\n";

    /** Creates the missing directories of {@code rel} (resolved and checked); returns the resolved directory. */
    private String ensureDir(String rel, String asked) {
        if (rel.equals(".")) {
            return ".";
        }
        String[] segs = rel.split("/");
        String cur = ".";
        for (int i = 0; i < segs.length; i++) {
            String next = join(cur, segs[i]);
            if (Boolean.TRUE.equals(realDirs.get(next))) {
                cur = next;
                continue;
            }
            Optional<Stat> s = lstat(next);
            if (s.isEmpty()) {
                List<String> missing = new ArrayList<>();
                StringBuilder sb = new StringBuilder();
                for (int j = i; j < segs.length; j++) {
                    sb.append(j == i ? "" : "/").append(segs[j]);
                    missing.add(sb.toString());
                }
                Instant now = Instant.now();
                putArchive(cur, tar -> {
                    for (String m : missing) {
                        tar.putArchiveEntry(entry(m, true, 0, 0755, now));
                        tar.closeArchiveEntry();
                    }
                }, "create directory '" + asked + "'");
                String made = join(cur, sb.toString());
                return made;
            }
            Stat st = s.get();
            if (st.type() == EntryType.LINK) {
                next = follow(next, st, asked);
                st = lstat(next).orElseThrow();
            }
            if (st.type() != EntryType.DIRECTORY) {
                throw new InvalidSpecException("'" + asked + "': a component is not a directory");
            }
            realDirs.put(next, true);
            cur = next;
        }
        return cur;
    }

    @Override
    public void mkdirs(String path) {
        ensureDir(check(path), path);
    }

    @Override
    public void write(String path, byte[] content, int mode) {
        check(path);
        if (path.equals(".")) {
            throw new InvalidSpecException("cannot write the workspace root");
        }
        String parent = ensureDir(parentOf(path), path);
        String target = join(parent, nameOf(path));
        Optional<Stat> existing = lstat(target);
        if (existing.isPresent() && existing.get().type() == EntryType.DIRECTORY) {
            throw new InvalidSpecException("'" + path + "' is a directory");
        }
        String tmp = WRITE_TEMP_PREFIX + UUID.randomUUID();
        Instant now = Instant.now();
        putArchive(parent, tar -> {
            tar.putArchiveEntry(entry(tmp, false, content.length, mode, now));
            tar.write(content);
            tar.closeArchiveEntry();
        }, "write '" + path + "'");
        try {
            helper("write '" + path + "'", "mv", "-f", "-T", "--", abs(join(parent, tmp)), abs(target));
        } catch (RuntimeException e) {
            try {
                helper("remove a temporary file", "rm", "-f", "--", abs(join(parent, tmp)));
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    @Override
    public void delete(String path) {
        check(path);
        if (path.equals(".")) {
            throw new InvalidSpecException("cannot delete the workspace root");
        }
        String parent = resolveFrom(parentOf(path), path, true);
        if (!parent.equals(".")) {
            Optional<Stat> p = lstat(parent);
            if (p.isEmpty() || p.get().type() != EntryType.DIRECTORY) {
                return;
            }
        }
        String target = join(parent, nameOf(path));
        if (lstat(target).isEmpty()) {
            return;
        }
        helper("delete '" + path + "'", "sh", "-c", DELETE, "sh", abs(target));
    }

    @Override
    public void importTree(ImportSource source, String to, boolean readOnly) {
        check(to);
        if (to.equals(".")) {
            throw new InvalidSpecException("cannot import over the workspace root");
        }
        String parent = ensureDir(parentOf(to), to);
        String stage = IMPORT_TEMP_PREFIX + UUID.randomUUID();
        int strip = readOnly ? 0222 : 0;
        putArchive(parent, tar -> {
            try {
                source.forEach(new ImportSource.Visitor() {
                    @Override
                    public void directory(FileEntry d) throws IOException {
                        String name = stageName(stage, d.path());
                        tar.putArchiveEntry(entry(name, true, 0, (d.mode() == 0 ? 0755 : d.mode()) & ~strip,
                                d.modifiedTime()));
                        tar.closeArchiveEntry();
                    }

                    @Override
                    public void file(FileEntry f, InputStream content) throws IOException {
                        String name = stageName(stage, f.path());
                        tar.putArchiveEntry(entry(name, false, f.size(), (f.mode() == 0 ? 0644 : f.mode()) & ~strip,
                                f.modifiedTime()));
                        long copied = content.transferTo(new OutputStream() {
                            long left = f.size();

                            @Override
                            public void write(int b) throws IOException {
                                write(new byte[] {(byte) b}, 0, 1);
                            }

                            @Override
                            public void write(byte[] b, int off, int len) throws IOException {
                                int n = (int) Math.min(len, left);
                                tar.write(b, off, n);
                                left -= n;
                            }
                        });
                        if (copied < f.size()) {
                            tar.write(new byte[(int) (f.size() - copied)]);
                        }
                        tar.closeArchiveEntry();
                    }
                });
            } catch (InvalidSpecException e) {
                throw e;
            } catch (IOException | RuntimeException e) {
                throw new CodeExecException("could not import into '" + to + "': the source failed ("
                        + e.getClass().getSimpleName() + ")", e);
            }
        }, "import into '" + to + "'");
        try {
            helper("import into '" + to + "'", "sh", "-c", REPLACE, "sh", abs(join(parent, stage)),
                    abs(join(parent, nameOf(to))));
        } catch (RuntimeException e) {
            try {
                helper("remove a staged import", "sh", "-c", DELETE, "sh", abs(join(parent, stage)));
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** The tar name of a source entry under the staging directory; refuses names that could leave it. */
    private static String stageName(String stage, String rel) {
        if (rel.equals(".")) {
            return stage;
        }
        if (rel.startsWith("/") || rel.contains("\\")) {
            throw new PathEscapeException("an import source entry has an absolute name");
        }
        for (String seg : rel.split("/", -1)) {
            if (seg.equals("..") || seg.isEmpty() || seg.equals(".")) {
                throw new PathEscapeException("an import source entry leaves its tree");
            }
        }
        return stage + "/" + rel;
    }
}
