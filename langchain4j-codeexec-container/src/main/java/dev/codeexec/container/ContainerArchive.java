package dev.codeexec.container;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.transport.DockerHttpClient;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.workspace.spi.CheckedTar;
import dev.codeexec.workspace.spi.EntryType;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.Optional;

/**
 * One workspace container's archive endpoints of the Engine API, and the tar handling they need: a path's own
 * {@code lstat} from {@code HEAD /containers/{id}/archive}, a tree's contents from {@code GET} (checked entry by
 * entry by the core's {@link CheckedTar}: no absolute name, no {@code ..}, nothing outside the requested tree), and
 * writes by {@code PUT} of a tar archive (built by the core's {@link dev.codeexec.spi.ContainerShellFiles}, every
 * entry owned by the workspace's user). {@link ContainerFiles} builds the file operations and link resolution on top;
 * keeping the wire format here keeps that class about paths and the provider contract.
 */
final class ContainerArchive {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final DockerConnection docker;
    private final DockerHttpClient http;
    private final String containerId;
    private final String root;

    ContainerArchive(DockerConnection docker, DockerHttpClient http, String containerId, String root) {
        this.docker = docker;
        this.http = http;
        this.containerId = containerId;
        this.root = root;
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

    /**
     * Reads the archive of {@code rel}, checked entry by entry by {@link CheckedTar#read} (no absolute name, no
     * {@code ..}, nothing outside the requested tree; links reported, never followed), each entry relative to it
     * ({@code "."} for the path itself).
     */
    void readArchive(String rel, CheckedTar.EntryVisitor visitor) {
        InputStream raw;
        try {
            raw = docker.control().copyArchiveFromContainerCmd(containerId, abs(rel)).exec();
        } catch (NotFoundException e) {
            requireContainer();
            throw new InvalidSpecException("'" + rel + "' does not exist");
        } catch (RuntimeException e) {
            throw docker.translate(e, "read files");
        }
        try {
            CheckedTar.read(raw, "the container", visitor);
        } catch (IOException x) {
            throw new CodeExecException("could not read files of '" + rel + "' from the container ("
                    + x.getClass().getSimpleName() + ")", x);
        } finally {
            Execs.closeQuietly(raw);
        }
    }

    /**
     * Puts the tar archive {@code tar} (built by the core's {@link CheckedTar.Writer}, every entry owned by the
     * workspace's user) into the container directory {@code dirRel}.
     */
    void putArchive(String dirRel, InputStream tar, String what) {
        try {
            docker.control().copyArchiveToContainerCmd(containerId).withRemotePath(abs(dirRel))
                    .withTarInputStream(tar).withNoOverwriteDirNonDir(false).exec();
        } catch (NotFoundException e) {
            requireContainer();
            throw new InvalidSpecException("could not " + what + ": a directory on the way is missing");
        } catch (RuntimeException e) {
            throw docker.translate(e, what);
        }
    }
}
