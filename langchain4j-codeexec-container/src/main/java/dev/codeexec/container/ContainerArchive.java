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
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Base64;
import java.util.Optional;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;

/**
 * One workspace container's archive endpoints of the Engine API, and the tar handling they need: a path's own
 * {@code lstat} from {@code HEAD /containers/{id}/archive}, a tree's contents from {@code GET} (checked entry by
 * entry: no absolute name, no {@code ..}, nothing outside the requested tree), and writes by {@code PUT} of a tar
 * archive built with the workspace's owner. {@link ContainerFiles} builds the file operations and link resolution on
 * top; keeping the wire format and its checks here keeps that class about paths and the provider contract.
 */
final class ContainerArchive {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final DockerConnection docker;
    private final DockerHttpClient http;
    private final String containerId;
    private final String root;
    private final int uid;
    private final int gid;

    ContainerArchive(DockerConnection docker, DockerHttpClient http, String containerId, String root, int uid,
                     int gid) {
        this.docker = docker;
        this.http = http;
        this.containerId = containerId;
        this.root = root;
        this.uid = uid;
        this.gid = gid;
    }

    /** The absolute container path of a workspace-relative path. */
    String abs(String rel) {
        return rel.equals(".") ? root : root + "/" + rel;
    }

    // ------------------------------------------------------------------ stat through the archive API

    /** What {@code HEAD archive} says about a container path. */
    record Stat(EntryType type, long size, int mode, Instant mtime, String linkTarget) {
    }

    /** The lstat of a workspace-relative path whose parents hold no links; empty when missing. */
    Optional<Stat> lstat(String rel) {
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

    // ------------------------------------------------------------------ archives from the container

    /** Receives the entries of a tar archive from the container, relative to the requested path. */
    interface TarVisitor {
        /** @return false to stop reading */
        boolean entry(String rel, TarArchiveEntry e, InputStream content) throws IOException;
    }

    /**
     * Reads the archive of {@code rel}: each entry name is checked (no absolute name, no {@code ..}, nothing outside
     * the requested tree) and passed relative to it ({@code "."} for the path itself).
     */
    void readArchive(String rel, TarVisitor visitor) {
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

    static EntryType typeOf(TarArchiveEntry e) {
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

    /** Writes a tar archive to a temporary host file, then puts it into the container directory {@code dirRel}. */
    interface TarWriter {
        void write(TarArchiveOutputStream tar) throws IOException;
    }

    void putArchive(String dirRel, TarWriter writer, String what) {
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

    TarArchiveEntry entry(String name, boolean dir, long size, int mode, Instant mtime) {
        TarArchiveEntry e = new TarArchiveEntry(dir ? name + "/" : name,
                dir ? TarArchiveEntry.LF_DIR : TarArchiveEntry.LF_NORMAL);
        e.setSize(dir ? 0 : size);
        e.setMode((dir ? 040000 : 0100000) | (mode & 07777));
        e.setIds(uid, gid);
        e.setModTime(mtime.toEpochMilli());
        return e;
    }

    /** The tar name of a source entry under the staging directory; refuses names that could leave it. */
    static String stageName(String stage, String rel) {
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
