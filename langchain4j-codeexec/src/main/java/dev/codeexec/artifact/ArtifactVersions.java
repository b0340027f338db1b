package dev.codeexec.artifact;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.codeexec.engine.BackendUnavailableException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The on-disk format of one name's versions in a {@link FileSystemArtifactService}: {@code v<n>.bin} holds the
 * content, {@code v<n>.json} its metadata (format, MIME type, size, SHA-256, creation time); a version is visible
 * once both exist. Reads never follow links and verify size and checksum.
 */
final class ArtifactVersions {

    private static final Pattern CONTENT_FILE = Pattern.compile("v([1-9][0-9]{0,9})\\.bin");
    private static final Pattern META_FILE = Pattern.compile("v([1-9][0-9]{0,9})\\.json");
    private static final int META_FORMAT = 1;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final LinkOption[] NO_FOLLOW = {LinkOption.NOFOLLOW_LINKS};

    private ArtifactVersions() {
    }

    /** A path's own attributes (a link is not followed), or null when it does not exist. */
    static BasicFileAttributes attributes(Path p) throws IOException {
        try {
            return Files.readAttributes(p, BasicFileAttributes.class, NO_FOLLOW);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /**
     * The visible versions in a version directory, ascending: a version is visible when its content file is a
     * regular file (not a link, not a temp file) and its metadata file exists.
     */
    static List<Integer> listVersions(Path dir) throws IOException {
        Set<Integer> contents = new HashSet<>();
        Set<Integer> metas = new HashSet<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path p : entries) {
                String file = p.getFileName().toString();
                Integer n = number(CONTENT_FILE, file);
                if (n != null) {
                    BasicFileAttributes attrs = attributes(p);
                    if (attrs != null && attrs.isRegularFile()) {
                        contents.add(n);
                    }
                } else if ((n = number(META_FILE, file)) != null) {
                    metas.add(n);
                }
            }
        } catch (NoSuchFileException e) {
            return List.of(); // deleted meanwhile
        }
        contents.retainAll(metas);
        List<Integer> versions = new ArrayList<>(contents);
        versions.sort(null);
        return List.copyOf(versions);
    }

    /** The highest number used by any version or claim in the directory, or 0. */
    static int highestNumber(Path dir) throws IOException {
        int max = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path p : entries) {
                String file = p.getFileName().toString();
                Integer n = number(CONTENT_FILE, file);
                if (n == null) {
                    n = number(META_FILE, file);
                }
                if (n != null && n > max) {
                    max = n;
                }
            }
        }
        return max;
    }

    private static Integer number(Pattern pattern, String file) {
        Matcher m = pattern.matcher(file);
        if (!m.matches()) {
            return null;
        }
        long n = Long.parseLong(m.group(1));
        return n > Integer.MAX_VALUE ? null : (int) n;
    }

    /** Reads one version, or null when it is not (or no longer) visible. Links are never followed. */
    static Artifact read(Path dir, String name, int version) throws IOException {
        Path content = dir.resolve(contentFile(version));
        Path meta = dir.resolve(metaFile(version));
        BasicFileAttributes contentAttrs = attributes(content);
        BasicFileAttributes metaAttrs = attributes(meta);
        if (contentAttrs == null || !contentAttrs.isRegularFile() || metaAttrs == null || !metaAttrs.isRegularFile()) {
            return null;
        }
        byte[] bytes;
        JsonNode node;
        try {
            bytes = readNoFollow(content);
            node = JSON.readTree(readNoFollow(meta));
        } catch (NoSuchFileException e) {
            return null; // deleted between the check and the read
        }
        String mime = node.path("mimeType").asText(ArtifactNames.DEFAULT_MIME_TYPE);
        long size = node.path("size").asLong(-1);
        String sha = node.path("sha256").asText("");
        if (size != bytes.length || !sha.equals(sha256(bytes))) {
            throw new BackendUnavailableException("artifact '" + name + "' version " + version
                    + " is damaged in the store (size or checksum differs from what was saved); restore it from a"
                    + " backup or delete it");
        }
        return new Artifact(new ArtifactRef(name, version), bytes, mime);
    }

    /** The recorded size and SHA-256 of a version, from its metadata file (opened without following a link). */
    static JsonNode readMetadata(Path dir, int version) throws IOException {
        return JSON.readTree(readNoFollow(dir.resolve(metaFile(version))));
    }

    private static byte[] readNoFollow(Path p) throws IOException {
        // NOFOLLOW_LINKS makes the open itself fail on a link (O_NOFOLLOW), closing the check-then-open gap.
        try (InputStream in = Files.newInputStream(p, LinkOption.NOFOLLOW_LINKS)) {
            return in.readAllBytes();
        }
    }

    static byte[] metadata(byte[] content, String mime) throws IOException {
        return metadata(content.length, sha256(content), mime);
    }

    /** The metadata of a version of {@code size} bytes whose SHA-256 (lower-case hex) is {@code sha256}. */
    static byte[] metadata(long size, String sha256, String mime) throws IOException {
        ObjectNode node = JSON.createObjectNode();
        node.put("format", META_FORMAT);
        node.put("mimeType", mime);
        node.put("size", size);
        node.put("sha256", sha256);
        node.put("createdAt", Instant.now().toString());
        return JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(node);
    }

    private static String sha256(byte[] bytes) {
        MessageDigest sha = DigestCheckingStream.sha256();
        sha.update(bytes);
        return DigestCheckingStream.hex(sha);
    }

    /** True for a content file's name ({@code v<n>.bin}). */
    static boolean isContentFile(String fileName) {
        return CONTENT_FILE.matcher(fileName).matches();
    }

    static String contentFile(int version) {
        return "v" + version + ".bin";
    }

    static String metaFile(int version) {
        return "v" + version + ".json";
    }
}
