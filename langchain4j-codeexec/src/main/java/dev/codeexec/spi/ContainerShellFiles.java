package dev.codeexec.spi;

import static dev.codeexec.workspace.spi.RelativePaths.join;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.workspace.spi.CheckedTar;
import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.ImportSource;
import dev.codeexec.workspace.spi.RemoteEntry;
import dev.codeexec.workspace.spi.RemoteWorkspaceFiles;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The writes of a {@link RemoteWorkspaceFiles} whose workspace is a Linux container reached by tar archives and
 * short commands (a Docker container through its archive endpoint and helper execs, a Kubernetes pod through
 * {@code tar -x} and commands over exec): one copy of how a write, an import, a new directory and a delete reach such
 * a container, so that a fix reaches every backend of the kind.
 *
 * <ul>
 *   <li>{@link #makeDirs}: one archive of the directories, extracted into the real parent.</li>
 *   <li>{@link #writeFiles}: for each target, refused with {@link InvalidSpecException} when a directory stands
 *       there; otherwise the content is extracted under a fresh temporary name ({@link #WRITE_TEMP_PREFIX}) in the
 *       real parent and renamed onto the target with {@code mv -f -T} (a link at the target is replaced, never
 *       written through). When either step fails the temporary name is removed ({@code rm -f}), the clean-up's own
 *       failure added to the first as suppressed; nothing is cleaned up in a workspace that is gone.</li>
 *   <li>{@link #importInto}: the source staged under a fresh {@link #IMPORT_TEMP_PREFIX} sibling, then moved onto
 *       the target by {@link ContainerShell#REPLACE}; on failure the stage is deleted by
 *       {@link ContainerShell#DELETE}, as above.</li>
 *   <li>{@link #remove}: {@link ContainerShell#DELETE}, which never follows links.</li>
 * </ul>
 *
 * <p>Every archive is built by {@link CheckedTar.Writer} (each entry owned by the workspace's user) in a temporary
 * host file first, so that a source that fails half way never leaves half an archive in the container. Every command
 * is an argv whose scripts are constants, data only as positional arguments ({@code sh -c SCRIPT sh ARG...}).
 *
 * <p>A backend supplies {@link #extract} (unpack an archive into a real directory) and {@link #command} (run a short
 * command, a failure typed and naming only what was asked); the rest of {@link RemoteWorkspaceFiles} (the reads,
 * {@code lstat} and the listing) stays its own. The container needs {@code sh}, {@code mv -T}, {@code rm},
 * {@code find} and {@code chmod} (GNU coreutils and findutils). An instance is used by one thread at a time, as its
 * base.
 */
public abstract class ContainerShellFiles extends RemoteWorkspaceFiles {

    private final long uid;
    private final long gid;

    /**
     * @param root the workspace's absolute path in the container (see {@link RemoteWorkspaceFiles})
     * @param uid  the workspace's user, owner of every archive entry
     * @param gid  the workspace's group
     */
    protected ContainerShellFiles(String root, long uid, long gid) {
        super(root);
        this.uid = uid;
        this.gid = gid;
    }

    // ------------------------------------------------------------------ what a backend supplies

    /**
     * Unpacks the tar archive {@code archive} (built by {@link CheckedTar.Writer}) into the real directory
     * {@code dir}, keeping an existing directory's metadata and giving the entries to the workspace's user.
     *
     * @param what what was asked, for messages ({@code "write 'a.txt'"})
     * @throws IOException as reading {@code archive} threw it
     */
    protected abstract void extract(String dir, InputStream archive, String what) throws IOException;

    /**
     * Runs a short command in the container and waits for it.
     *
     * @param what what was asked, for messages
     * @throws CodeExecException (or a subtype, {@link WorkspaceGoneException} when the container is gone) when it
     *                           cannot run or ends with a status other than 0, naming {@code what} only
     */
    protected abstract void command(String what, List<String> argv);

    // ------------------------------------------------------------------ the writes

    /** Writes the entries of an archive for the container. */
    @FunctionalInterface
    public interface TarWriter {

        /** Adds the entries to {@code tar}. */
        void write(CheckedTar.Writer tar) throws IOException;
    }

    /**
     * Builds an archive in a temporary host file, then {@linkplain #extract extracts} it into the real directory
     * {@code dir}; the host file is deleted in every case.
     *
     * @throws CodeExecException naming {@code what} when the archive cannot be built or sent
     */
    protected final void putArchive(String dir, TarWriter writer, String what) {
        Path tmp = null;
        try {
            tmp = Files.createTempFile("codeexec-put-", ".tar");
            try (CheckedTar.Writer tar = new CheckedTar.Writer(
                    new BufferedOutputStream(Files.newOutputStream(tmp)), uid, gid)) {
                writer.write(tar);
            }
            try (InputStream in = Files.newInputStream(tmp)) {
                extract(dir, in, what);
            }
        } catch (IOException e) {
            throw new CodeExecException("could not " + what + " (" + e.getClass().getSimpleName() + ")", e);
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

    @Override
    protected final void makeDirs(String dir, List<String> names, String asked) {
        Instant now = Instant.now();
        putArchive(dir, tar -> {
            for (String n : names) {
                tar.directory(n, 0755, now);
            }
        }, "create directory '" + asked + "'");
    }

    @Override
    protected final void writeFiles(List<WriteTarget> targets) {
        for (WriteTarget t : targets) {
            write(t);
        }
    }

    private void write(WriteTarget t) {
        String path = t.file().path();
        Optional<RemoteEntry> existing = lstat(t.target());
        if (existing.isPresent() && existing.get().type() == EntryType.DIRECTORY) {
            throw new InvalidSpecException("'" + path + "' is a directory");
        }
        String name = WRITE_TEMP_PREFIX + UUID.randomUUID();
        String tmp = abs(join(t.parent(), name));
        byte[] content = t.file().content();
        Instant now = Instant.now();
        String what = "write '" + path + "'";
        try {
            putArchive(t.parent(), tar -> tar.file(name, content, t.file().mode(), now), what);
            command(what, List.of("mv", "-f", "-T", "--", tmp, abs(t.target())));
        } catch (RuntimeException e) {
            cleanUp(e, "remove a temporary file", List.of("rm", "-f", "--", tmp));
            throw e;
        }
    }

    @Override
    protected final void remove(String target, String asked) {
        command("delete '" + asked + "'", script(ContainerShell.DELETE, abs(target)));
    }

    @Override
    protected final void importInto(ImportSource source, String parent, String target, String to,
                                    boolean readOnly) {
        String stage = IMPORT_TEMP_PREFIX + UUID.randomUUID();
        String staged = abs(join(parent, stage));
        String what = "import into '" + to + "'";
        try {
            putArchive(parent, tar -> tar.stage(source, stage, readOnly, to), what);
            command(what, script(ContainerShell.REPLACE, staged, abs(target)));
        } catch (RuntimeException e) {
            cleanUp(e, "remove a staged import", script(ContainerShell.DELETE, staged));
            throw e;
        }
    }

    /** Runs a clean-up after a failure; its own failure is added to {@code e}, never thrown instead of it. */
    private void cleanUp(RuntimeException e, String what, List<String> argv) {
        if (e instanceof WorkspaceGoneException) {
            return;
        }
        try {
            command(what, argv);
        } catch (RuntimeException suppressed) {
            e.addSuppressed(suppressed);
        }
    }

    /** {@code sh -c SCRIPT sh ARG...}: a constant script, its data as positional arguments. */
    private static List<String> script(String script, String... args) {
        List<String> argv = new ArrayList<>(List.of("sh", "-c", script, "sh"));
        argv.addAll(List.of(args));
        return List.copyOf(argv);
    }
}
