package dev.codeexec.container;

import static dev.codeexec.workspace.spi.RelativePaths.check;
import static dev.codeexec.workspace.spi.RelativePaths.join;
import static dev.codeexec.workspace.spi.RelativePaths.nameOf;
import static dev.codeexec.workspace.spi.RelativePaths.parentOf;

import com.github.dockerjava.transport.DockerHttpClient;
import dev.codeexec.container.ContainerArchive.Stat;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.FileEntry;
import dev.codeexec.workspace.spi.FileWindow;
import dev.codeexec.workspace.spi.ImportSource;
import dev.codeexec.workspace.spi.WorkspaceFiles;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The file primitives of one workspace container, over the Engine API's archive endpoints: metadata from
 * {@code HEAD /containers/{id}/archive} (the path's own {@code lstat}, never following a link at it), contents and
 * listings from {@code GET} (one tar archive), writes and imports by {@code PUT} (one tar archive). The few steps
 * the archive API cannot do (an atomic rename, a delete) are helper execs with an argv, never a command line.
 *
 * <p>Links are resolved here, one component at a time, from what the archive API reports; a link whose target
 * (fully evaluated by Docker) leaves the workspace or does not exist is refused. Tar archives from the container are
 * checked entry by entry: absolute names, {@code ..} or a name outside the requested tree are refused, and links in
 * them are reported as links, never followed; the wire format and those checks are {@link ContainerArchive}'s.
 *
 * <p>What remains: between a check and the archive call a program of the same workspace could swap a directory for
 * a link. Docker evaluates links in the container's own root, so such a race can only reach other files of the same
 * container (the model's own sandbox), never the host or another workspace.
 */
final class ContainerFiles implements WorkspaceFiles {

    private static final int MAX_LINKS = 40;

    private final DockerConnection docker;
    private final ContainerArchive archive;
    private final String containerId;
    private final String root;
    private final String helperUser;
    /** Workspace-relative directories already seen to be real directories in this operation. */
    private final Map<String, Boolean> realDirs = new HashMap<>();

    ContainerFiles(DockerConnection docker, DockerHttpClient http, String containerId, String root, String helperUser,
                   int uid, int gid) {
        this.docker = docker;
        this.archive = new ContainerArchive(docker, http, containerId, root, uid, gid);
        this.containerId = containerId;
        this.root = root;
        this.helperUser = helperUser;
    }

    // ------------------------------------------------------------------ paths

    private String abs(String rel) {
        return archive.abs(rel);
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
        Optional<Stat> t = archive.lstat(target);
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
            Optional<Stat> s = archive.lstat(next);
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
                type = isLast ? EntryType.FILE : archive.lstat(next).map(Stat::type).orElse(EntryType.OTHER);
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
            Stat s = archive.lstat(".").orElseThrow(() -> new WorkspaceGoneException("the workspace is gone"));
            return Optional.of(new FileEntry(".", s.type(), s.size(), s.mode(), s.mtime()));
        }
        String parent = resolveFrom(parentOf(path), path, true);
        if (!parent.equals(".")) {
            Optional<Stat> p = archive.lstat(parent);
            if (p.isEmpty() || p.get().type() != EntryType.DIRECTORY) {
                return Optional.empty();
            }
        }
        return archive.lstat(join(parent, nameOf(path)))
                .map(s -> new FileEntry(path, s.type(), s.type() == EntryType.FILE ? s.size() : 0, s.mode(),
                        s.mtime()));
    }

    @Override
    public void walk(String dir, WalkVisitor visitor) {
        String d = resolve(dir);
        Optional<Stat> s = archive.lstat(d);
        if (s.isEmpty() || s.get().type() != EntryType.DIRECTORY) {
            return;
        }
        List<String> skipped = new ArrayList<>();
        archive.readArchive(d, (rel, e, in) -> {
            if (rel.equals(".")) {
                return true;
            }
            for (String sk : skipped) {
                if (rel.startsWith(sk + "/")) {
                    return true;
                }
            }
            EntryType type = ContainerArchive.typeOf(e);
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
            Optional<Stat> p = archive.lstat(parent);
            if (p.isEmpty() || p.get().type() != EntryType.DIRECTORY) {
                throw new InvalidSpecException("'" + path + "' does not exist");
            }
        }
        Optional<Stat> s = archive.lstat(r);
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
        // Docker's archive endpoint stats a file, then opens it by name: a file replaced in between (an atomic
        // overwrite by a program) yields the old header's length of the new bytes, or a stream Docker breaks off.
        // A read whose length no longer matches the file, or that broke off, is taken again.
        for (int attempt = 1; ; attempt++) {
            FileWindow[] out = new FileWindow[1];
            try {
                archive.readArchive(r, (rel, e, in) -> {
                    if (!rel.equals(".") || ContainerArchive.typeOf(e) != EntryType.FILE) {
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
            } catch (CodeExecException e) {
                if (e.getClass() != CodeExecException.class || attempt == READ_ATTEMPTS) {
                    throw e; // a refusal, or a read that kept failing
                }
                continue;
            }
            if (out[0] == null) {
                throw new InvalidSpecException("'" + path + "' could not be read");
            }
            Optional<ContainerArchive.Stat> now = archive.lstat(r);
            if (now.isPresent() && now.get().size() == out[0].size()) {
                return out[0];
            }
            if (attempt == READ_ATTEMPTS) {
                throw new CodeExecException("'" + path + "' kept changing while it was read; try again when the "
                        + "program writing it is done");
            }
        }
    }

    /** How often a read is taken again when the file changed under it. */
    private static final int READ_ATTEMPTS = 5;

    @Override
    public void export(List<String> paths, ExportVisitor visitor) {
        for (String p : paths) {
            check(p);
        }
        for (String path : paths) {
            String r = regularFile(path);
            boolean[] goOn = {true};
            archive.readArchive(r, (rel, e, in) -> {
                if (!rel.equals(".") || ContainerArchive.typeOf(e) != EntryType.FILE) {
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
            Optional<Stat> s = archive.lstat(next);
            if (s.isEmpty()) {
                List<String> missing = new ArrayList<>();
                StringBuilder sb = new StringBuilder();
                for (int j = i; j < segs.length; j++) {
                    sb.append(j == i ? "" : "/").append(segs[j]);
                    missing.add(sb.toString());
                }
                Instant now = Instant.now();
                archive.putArchive(cur, tar -> {
                    for (String m : missing) {
                        tar.putArchiveEntry(archive.entry(m, true, 0, 0755, now));
                        tar.closeArchiveEntry();
                    }
                }, "create directory '" + asked + "'");
                String made = join(cur, sb.toString());
                return made;
            }
            Stat st = s.get();
            if (st.type() == EntryType.LINK) {
                next = follow(next, st, asked);
                st = archive.lstat(next).orElseThrow();
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
        Optional<Stat> existing = archive.lstat(target);
        if (existing.isPresent() && existing.get().type() == EntryType.DIRECTORY) {
            throw new InvalidSpecException("'" + path + "' is a directory");
        }
        String tmp = WRITE_TEMP_PREFIX + UUID.randomUUID();
        Instant now = Instant.now();
        archive.putArchive(parent, tar -> {
            tar.putArchiveEntry(archive.entry(tmp, false, content.length, mode, now));
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
            Optional<Stat> p = archive.lstat(parent);
            if (p.isEmpty() || p.get().type() != EntryType.DIRECTORY) {
                return;
            }
        }
        String target = join(parent, nameOf(path));
        if (archive.lstat(target).isEmpty()) {
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
        archive.putArchive(parent, tar -> {
            try {
                source.forEach(new ImportSource.Visitor() {
                    @Override
                    public void directory(FileEntry d) throws IOException {
                        String name = ContainerArchive.stageName(stage, d.path());
                        tar.putArchiveEntry(archive.entry(name, true, 0, (d.mode() == 0 ? 0755 : d.mode()) & ~strip,
                                d.modifiedTime()));
                        tar.closeArchiveEntry();
                    }

                    @Override
                    public void file(FileEntry f, InputStream content) throws IOException {
                        String name = ContainerArchive.stageName(stage, f.path());
                        tar.putArchiveEntry(archive.entry(name, false, f.size(), (f.mode() == 0 ? 0644 : f.mode()) & ~strip,
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
}
