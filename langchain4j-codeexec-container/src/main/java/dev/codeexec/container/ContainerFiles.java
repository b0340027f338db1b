package dev.codeexec.container;

import com.github.dockerjava.transport.DockerHttpClient;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.spi.ContainerShellFiles;
import dev.codeexec.workspace.spi.CheckedTar;
import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.FileWindow;
import dev.codeexec.workspace.spi.RemoteEntry;
import dev.codeexec.workspace.spi.RemoteWorkspaceFiles;
import java.io.InputStream;
import java.util.List;
import java.util.Optional;

/**
 * The file primitives of one workspace container, over the Engine API's archive endpoints: metadata from
 * {@code HEAD /containers/{id}/archive} (the path's own {@code lstat}, never following a link at it), contents and
 * listings from {@code GET} (one tar archive), writes and imports by {@code PUT} (one tar archive). The few steps
 * the archive API cannot do (an atomic rename, a delete) are helper execs with an argv, never a command line. How a
 * write, an import, a new directory and a delete use those two transports is the core's
 * {@link ContainerShellFiles}, shared with the Kubernetes backend.
 *
 * <p>The path rules and the link-resolving walk are {@link RemoteWorkspaceFiles}'s, over the archive API's
 * {@code lstat}: a link whose target (fully evaluated by Docker) leaves the workspace or does not exist is refused.
 * Tar archives from the container are checked entry by entry: absolute names, {@code ..} or a name outside the
 * requested tree are refused, and links in them are reported as links, never followed; the wire format and those
 * checks are the core's {@link CheckedTar}, over {@link ContainerArchive}'s transport.
 *
 * <p>What remains: between a check and the archive call a program of the same workspace could swap a directory for
 * a link. Docker evaluates links in the container's own root, so such a race can only reach other files of the same
 * container (the model's own sandbox), never the host or another workspace.
 */
final class ContainerFiles extends ContainerShellFiles {

    private final DockerConnection docker;
    private final ContainerArchive archive;
    private final String containerId;
    private final String helperUser;

    ContainerFiles(DockerConnection docker, DockerHttpClient http, String containerId, String root, String helperUser,
                   int uid, int gid) {
        super(root, uid, gid);
        this.docker = docker;
        this.archive = new ContainerArchive(docker, http, containerId, root);
        this.containerId = containerId;
        this.helperUser = helperUser;
    }

    // ------------------------------------------------------------------ the remote side

    @Override
    protected Optional<RemoteEntry> lstat(String rel) {
        return archive.lstat(rel).map(s -> new RemoteEntry(s.type(), s.size(), s.mode(), s.mtime(),
                s.type() == EntryType.LINK ? s.linkTarget() : null, null));
    }

    @Override
    protected void list(String dir, ListVisitor visitor) {
        archive.readArchive(dir, (e, in) -> e.rel().equals(".") || visitor.entry(e.rel(),
                RemoteEntry.of(e.type(), e.size(), e.mode(), e.mtime())));
    }

    @Override
    protected FileWindow readFile(String path, long offset, int maxBytes) {
        String r = regularFile(path);
        // Docker's archive endpoint stats a file, then opens it by name: a file replaced in between (an atomic
        // overwrite by a program) yields the old header's length of the new bytes, or a stream Docker breaks off.
        // A read whose length no longer matches the file, or that broke off, is taken again.
        for (int attempt = 1; ; attempt++) {
            FileWindow[] out = new FileWindow[1];
            try {
                archive.readArchive(r, (e, in) -> {
                    if (!e.rel().equals(".") || e.type() != EntryType.FILE) {
                        throw new InvalidSpecException("'" + path + "' is not a regular file");
                    }
                    long size = e.size();
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
    protected boolean exportFile(String path, ExportVisitor visitor) {
        CheckedTar.FileExport export = new CheckedTar.FileExport(path, visitor);
        archive.readArchive(regularFile(path), export);
        return export.goOn();
    }

    // ------------------------------------------------------------------ writes (the rules are the core base's)

    @Override
    protected void extract(String dir, InputStream archive, String what) {
        this.archive.putArchive(dir, archive, what);
    }

    /** A helper exec with an argv; a failure is a {@link CodeExecException} naming {@code what} only. */
    @Override
    protected void command(String what, List<String> argv) {
        Execs.Result r = Execs.run(docker, containerId, helperUser, argv);
        if (!r.ok()) {
            throw new CodeExecException("could not " + what + " in the container (status " + r.exitCode() + ")");
        }
    }
}
