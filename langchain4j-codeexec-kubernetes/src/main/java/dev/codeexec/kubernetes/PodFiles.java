package dev.codeexec.kubernetes;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.spi.ContainerShellFiles;
import dev.codeexec.workspace.spi.CheckedTar;
import dev.codeexec.workspace.spi.EntryType;
import dev.codeexec.workspace.spi.FileWindow;
import dev.codeexec.workspace.spi.RemoteEntry;
import dev.codeexec.workspace.spi.RemoteWorkspaceFiles;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The file primitives of one workspace pod, as {@code kubectl cp} moves files: {@code tar} over the {@code pods/exec}
 * subresource ({@link PodCommands}). Reading a file streams {@code tar cf - -C <parent> -- <name>} into the core's
 * {@link CheckedTar} reader (each entry checked: no absolute name, no {@code ..}, nothing outside the requested tree;
 * links reported as links, never followed), never holding the archive whole; writes and imports send a tar stream
 * built by {@link CheckedTar.Writer} as the standard input of {@code tar -x} in the target directory. A path's own
 * {@code lstat}, a window of a file ({@code tail -c +N | head -c M}, only the window crosses the wire), a listing
 * ({@code find -printf}, metadata only), an atomic rename and a delete are short commands. Every command is an argv
 * whose scripts are constants given their data as positional arguments ({@code sh -c SCRIPT sh ARG...}); no file
 * name or model input becomes part of a command line. How a write, an import, a new directory and a delete use
 * {@code tar -x} and the short commands is the core's {@link ContainerShellFiles}, shared with the container backend.
 *
 * <p>The path rules and the link-resolving walk are {@link RemoteWorkspaceFiles}'s, over the {@code lstat} script
 * ({@code readlink -f} evaluates a link's target in the pod): a link whose target leaves the workspace or does not
 * exist is refused. {@code tar -x} runs with {@code --no-same-owner} (files belong to the pod's user, whatever the
 * archive says; the archive names that user anyway), {@code -p} (the modes asked, not the umask's) and
 * {@code --no-overwrite-dir} (an existing directory keeps its metadata); without {@code --keep-directory-symlink}
 * GNU tar replaces a link where the archive holds a directory rather than writing through it, and every archive
 * entry is a fresh temporary name in a directory the base has just checked.
 *
 * <p>What remains: between the base's check and a command a program of the same workspace could swap a directory or
 * file for a link. The commands run as the pod's user inside the pod, so such a race reaches only what that user may
 * reach in its own pod (the model's own sandbox), never the node or another workspace.
 *
 * <p>The image must provide {@code sh}, GNU {@code tar}, GNU coreutils ({@code stat}, {@code readlink}, {@code tail},
 * {@code head}, {@code mv -T}, {@code rm}, {@code chmod}) and GNU findutils ({@code find -printf}), as Debian- and
 * Ubuntu-based images do; busybox's applets lack {@code find -printf}, {@code mv -T} and GNU tar's options. An
 * instance is used by one thread at a time (the core's rule for {@link RemoteWorkspaceFiles}); a read's command
 * runs on one of the core's I/O threads meanwhile ({@link PodStreams}).
 */
final class PodFiles extends ContainerShellFiles {

    /**
     * How long commands may take.
     *
     * @param command  a short command: a stat, a window of a file, a rename, a delete
     * @param transfer a command moving a tree: a listing, an export, a write, an import
     */
    record Limits(Duration command, Duration transfer) {

        /** Thirty seconds for short commands, ten minutes for transfers. */
        static final Limits DEFAULT = new Limits(Duration.ofSeconds(30), Duration.ofMinutes(10));

        Limits {
            Objects.requireNonNull(command, "command");
            Objects.requireNonNull(transfer, "transfer");
        }
    }

    /** {@code $1}'s own type, size and time ({@code stat} without {@code -L}); for a link, its target's. Exit 3: missing. */
    static final String LSTAT = ""
            + "if [ ! -e \"$1\" ] && [ ! -L \"$1\" ]; then exit 3; fi\n"
            + "stat -c '%f %s %Y' -- \"$1\" || exit 4\n"
            + "if [ -L \"$1\" ]; then\n"
            + "  t=$(readlink -f -- \"$1\" && echo .) || exit 0\n"
            + "  stat -L -c '%f' -- \"$1\" 2>/dev/null || echo -\n"
            + "  printf '%s' \"${t%?.}\"\n"
            + "fi\n";

    /** The size of regular file {@code $1}, then at most {@code $3} bytes from offset {@code $2}. Exit 3: not a file. */
    static final String WINDOW = ""
            + "if [ ! -f \"$1\" ] || [ -L \"$1\" ]; then exit 3; fi\n"
            + "s=$(stat -c %s -- \"$1\") || exit 4\n"
            + "printf '%s\\n' \"$s\"\n"
            + "if [ \"$3\" -gt 0 ]; then tail -c +\"$(($2 + 1))\" -- \"$1\" | head -c \"$3\"; fi\n";


    /** Lists the tree below {@code $1}, pre-order, one NUL-terminated record per entry, links not followed. */
    static final List<String> LIST = List.of("find", "-P");

    /** The options of every extraction: owned by the pod's user, modes as asked, existing directories kept. */
    static final List<String> EXTRACT = List.of("tar", "-x", "-f", "-", "--no-same-owner", "-p",
            "--no-overwrite-dir", "-C");

    /** What a file window prints before its bytes: a size line. */
    private static final int WINDOW_HEADER = 32;

    private final String pod;
    private final PodCommands commands;
    private final Limits limits;

    /**
     * The files of the workspace at {@link PodLayout#ROOT} in {@code pod}.
     *
     * @param pod      the pod's name, in the engine's namespace
     * @param commands runs the commands
     * @param uid      the pod's user, owner of every entry written
     * @param gid      the pod's group
     * @param limits   how long commands may take
     */
    PodFiles(String pod, PodCommands commands, long uid, long gid, Limits limits) {
        this(pod, commands, PodLayout.ROOT, uid, gid, limits);
    }

    /** As above, with the workspace at {@code root} (absolute, no links, no trailing {@code /}) in the pod. */
    PodFiles(String pod, PodCommands commands, String root, long uid, long gid, Limits limits) {
        super(root, uid, gid);
        this.pod = Objects.requireNonNull(pod, "pod");
        this.commands = Objects.requireNonNull(commands, "commands");
        this.limits = Objects.requireNonNull(limits, "limits");
    }

    @Override
    protected RuntimeException workspaceGone() {
        return new WorkspaceGoneException("the workspace of pod '" + pod + "' is gone");
    }

    // ------------------------------------------------------------------ reads

    @Override
    protected Optional<RemoteEntry> lstat(String rel) {
        PodStreams.Collected c = PodStreams.collect(commands, pod, script(LSTAT, abs(rel)), null, limits.command(),
                64 << 10);
        int status = c.result().exitCode();
        if (status == 3) {
            return Optional.empty();
        }
        if (status != 0) {
            throw failed("look at '" + rel + "'", status);
        }
        return Optional.of(parseLstat(c.stdout(), rel));
    }

    /** Parses what {@link #LSTAT} printed: {@code "hexmode size mtime\n"}, for a link its target's mode and path. */
    static RemoteEntry parseLstat(byte[] out, String rel) {
        String text = new String(out, StandardCharsets.UTF_8);
        int nl = text.indexOf('\n');
        String[] f = (nl < 0 ? text : text.substring(0, nl)).trim().split(" ");
        if (f.length != 3) {
            throw new CodeExecException("the pod sent no file status for '" + rel + "'");
        }
        int mode;
        long size;
        Instant mtime;
        try {
            mode = Integer.parseInt(f[0], 16);
            size = Math.max(0, Long.parseLong(f[1]));
            mtime = Instant.ofEpochSecond(Long.parseLong(f[2]));
        } catch (RuntimeException e) {
            throw new CodeExecException("the pod sent a bad file status for '" + rel + "'");
        }
        EntryType type = typeOfMode(mode);
        if (type != EntryType.LINK) {
            return RemoteEntry.of(type, size, mode & 07777, mtime);
        }
        String rest = nl < 0 ? "" : text.substring(nl + 1);
        int nl2 = rest.indexOf('\n');
        if (nl2 < 0) {
            return new RemoteEntry(type, size, mode & 07777, mtime, null, null); // a target that does not resolve
        }
        String targetMode = rest.substring(0, nl2);
        String target = rest.substring(nl2 + 1);
        EntryType targetType = null;
        if (!targetMode.equals("-")) {
            try {
                targetType = typeOfMode(Integer.parseInt(targetMode, 16));
            } catch (NumberFormatException e) {
                targetType = null;
            }
        }
        return new RemoteEntry(type, size, mode & 07777, mtime, target.startsWith("/") ? target : null, targetType);
    }

    private static EntryType typeOfMode(int mode) {
        return switch (mode & 0170000) {
            case 0040000 -> EntryType.DIRECTORY;
            case 0100000 -> EntryType.FILE;
            case 0120000 -> EntryType.LINK;
            default -> EntryType.OTHER;
        };
    }

    @Override
    protected void list(String dir, ListVisitor visitor) {
        List<String> argv = new ArrayList<>(LIST);
        argv.addAll(List.of(abs(dir), "-mindepth", "1", "-printf", "%y %m %s %T@ %P\\0"));
        boolean[] any = {false};
        PodStreams.Outcome o = PodStreams.run(commands, pod, argv, limits.transfer(),
                in -> PodListing.read(in, (rel, e) -> {
                    any[0] = true;
                    return visitor.entry(rel, e);
                }));
        if (o.readFailure() != null) {
            throw new CodeExecException("could not list '" + dir + "' in the pod ("
                    + o.readFailure().getClass().getSimpleName() + ")", o.readFailure());
        }
        // find ends with status 1 when a directory vanished (nothing to list) or a subdirectory could not be read
        // (the rest is listed); nothing listed from a directory that is there is a failure (a find without -printf).
        if (o.result() != null && o.result().exitCode() != 0 && !any[0]
                && lstat(dir).filter(e -> e.type() == EntryType.DIRECTORY).isPresent()) {
            throw failed("list '" + dir + "'", o.result().exitCode());
        }
    }

    @Override
    protected FileWindow readFile(String path, long offset, int maxBytes) {
        String r = regularFile(path);
        PodStreams.Collected c = PodStreams.collect(commands, pod, script(WINDOW, abs(r), Long.toString(offset),
                Integer.toString(maxBytes)), null, limits.command(), WINDOW_HEADER + maxBytes);
        int status = c.result().exitCode();
        if (status == 3) {
            throw new InvalidSpecException("'" + path + "' is not a regular file");
        }
        if (status != 0) {
            throw failed("read '" + path + "'", status);
        }
        byte[] out = c.stdout();
        int nl = 0;
        while (nl < out.length && out[nl] != '\n') {
            nl++;
        }
        long size;
        try {
            size = Long.parseLong(new String(out, 0, nl, StandardCharsets.US_ASCII).trim());
        } catch (NumberFormatException e) {
            throw new CodeExecException("the pod sent a bad size for '" + path + "'");
        }
        int from = Math.min(out.length, nl + 1);
        int n = Math.min(out.length - from, maxBytes);
        return new FileWindow(Arrays.copyOfRange(out, from, from + n), Math.max(0, size));
    }

    @Override
    protected boolean exportFile(String path, ExportVisitor visitor) {
        String r = regularFile(path);
        CheckedTar.FileExport export = new CheckedTar.FileExport(path, visitor);
        PodStreams.Outcome o = PodStreams.run(commands, pod, tarOf(r), limits.transfer(),
                in -> CheckedTar.read(in, "the pod", export));
        if (!export.seen()) {
            if (o.readFailure() != null) {
                throw new CodeExecException("could not read '" + path + "' from the pod ("
                        + o.readFailure().getClass().getSimpleName() + ")", o.readFailure());
            }
            if (lstat(r).isEmpty()) {
                throw new InvalidSpecException("'" + path + "' does not exist");
            }
            throw new InvalidSpecException("'" + path + "' could not be read");
        }
        return export.goOn();
    }

    /** {@code tar cf - -C <parent> -- <name>}: the archive of one path, named by its last component. */
    private List<String> tarOf(String rel) {
        String a = abs(rel);
        int slash = a.lastIndexOf('/');
        String parent = slash == 0 ? "/" : a.substring(0, slash);
        return List.of("tar", "-c", "-f", "-", "-C", parent, "--", a.substring(slash + 1));
    }

    // ------------------------------------------------------------------ writes (the rules are the core base's)

    /** Extracts an archive into the real directory {@code dir} of the pod: {@link #EXTRACT}, fed on stdin. */
    @Override
    protected void extract(String dir, InputStream archive, String what) {
        List<String> argv = new ArrayList<>(EXTRACT);
        argv.add(abs(dir));
        PodCommands.Result r = commands.run(pod, argv, archive, null, limits.transfer());
        if (r.exitCode() != 0) {
            throw failed(what, r.exitCode());
        }
    }

    // ------------------------------------------------------------------ commands

    /** {@code sh -c SCRIPT sh ARG...}: a constant script, its data as positional arguments. */
    static List<String> script(String script, String... args) {
        List<String> argv = new ArrayList<>(List.of("sh", "-c", script, "sh"));
        argv.addAll(List.of(args));
        return argv;
    }

    /** A short command with an argv; a failure is a {@link CodeExecException} naming {@code what} only. */
    @Override
    protected void command(String what, List<String> argv) {
        PodCommands.Result r = commands.run(pod, argv, null, OutputStream.nullOutputStream(), limits.command());
        if (r.exitCode() != 0) {
            throw failed(what, r.exitCode());
        }
    }

    private CodeExecException failed(String what, int status) {
        return new CodeExecException("could not " + what + " in the pod (status " + status + ")");
    }
}
