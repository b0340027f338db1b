package dev.codeexec.workspace.snapshot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The versioned description of a snapshot, stored as a JSON artifact: format version, when and from which engine it
 * was taken, what was captured (roots, globs, whether {@code runs/} was), which version of the snapshot's pack holds
 * the files' bytes, and one {@link SnapshotEntry} per file, directory and skipped entry. The pack is the files'
 * contents one after another, each file's range given by its entry's offset and size and checked by its SHA-256.
 *
 * <p>The format is {@value #FORMAT_VERSION}; a reader refuses a manifest of another format rather than guess at it.
 *
 * @param formatVersion {@value #FORMAT_VERSION}
 * @param createdAt     when the capture finished reading
 * @param sourceEngine  the name of the engine captured from
 * @param roots         the roots walked
 * @param globs         the extra globs
 * @param includesRuns  whether {@code runs/} was captured
 * @param packVersion   the version of the snapshot's pack artifact holding the files' bytes
 * @param packSize      the pack's size in bytes
 * @param entries       the files, directories and skipped entries
 */
public record SnapshotManifest(int formatVersion, Instant createdAt, String sourceEngine, List<String> roots,
                               List<String> globs, boolean includesRuns, int packVersion, long packSize,
                               List<SnapshotEntry> entries) {

    /** {@value}: the format this library writes and reads. */
    public static final int FORMAT_VERSION = 2;

    private static final ObjectMapper JSON = new ObjectMapper();

    public SnapshotManifest {
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(sourceEngine, "sourceEngine");
        roots = List.copyOf(roots);
        globs = List.copyOf(globs);
        entries = List.copyOf(entries);
        if (packVersion < 1 || packSize < 0) {
            throw new IllegalArgumentException("the pack's version (" + packVersion + ") must be at least 1 and its "
                    + "size (" + packSize + ") not negative");
        }
        checkRanges(entries, packSize);
    }

    /** Every file's range lies inside the pack, and no two overlap (so the pack can be read once, in order). */
    private static void checkRanges(List<SnapshotEntry> entries, long packSize) {
        List<SnapshotEntry> files = entries.stream().filter(e -> e.type() == SnapshotEntry.Type.FILE)
                .sorted(java.util.Comparator.comparingLong(SnapshotEntry::offset)).toList();
        long end = 0;
        for (SnapshotEntry f : files) {
            if (f.offset() < end || f.size() > packSize - f.offset()) {
                throw new IllegalArgumentException("the range of '" + f.path() + "' (" + f.size() + " bytes at "
                        + f.offset() + ") overlaps another file's or lies outside the pack of " + packSize + " bytes");
            }
            end = f.offset() + f.size();
        }
    }

    /** The captured regular files in the order of their bytes in the pack. */
    public List<SnapshotEntry> filesInPackOrder() {
        return entries.stream().filter(e -> e.type() == SnapshotEntry.Type.FILE)
                .sorted(java.util.Comparator.comparingLong(SnapshotEntry::offset)).toList();
    }

    /** The captured regular files. */
    public List<SnapshotEntry> files() {
        return entries.stream().filter(e -> e.type() == SnapshotEntry.Type.FILE).toList();
    }

    /** The entries left out, each with its reason. */
    public List<SnapshotEntry> skipped() {
        return entries.stream().filter(SnapshotEntry::isSkipped).toList();
    }

    /** The number of captured files. */
    public int fileCount() {
        return files().size();
    }

    /** The bytes of all captured files. */
    public long totalBytes() {
        return files().stream().mapToLong(SnapshotEntry::size).sum();
    }

    /** The manifest as UTF-8 JSON. */
    public byte[] toJson() {
        ObjectNode root = JSON.createObjectNode();
        root.put("format", formatVersion);
        root.put("createdAt", createdAt.toString());
        root.put("sourceEngine", sourceEngine);
        roots.forEach(root.putArray("roots")::add);
        globs.forEach(root.putArray("globs")::add);
        root.put("includesRuns", includesRuns);
        ObjectNode pack = root.putObject("pack");
        pack.put("version", packVersion);
        pack.put("size", packSize);
        ArrayNode list = root.putArray("entries");
        for (SnapshotEntry e : entries) {
            ObjectNode n = list.addObject();
            n.put("path", e.path());
            n.put("type", e.type().name());
            if (e.type() == SnapshotEntry.Type.FILE) {
                n.put("size", e.size());
                n.put("sha256", e.sha256());
                n.put("offset", e.offset());
            }
            if (e.hasMode()) {
                n.put("mode", Integer.toOctalString(e.mode()));
            }
            if (e.modified() != null) {
                n.put("modified", e.modified().toString());
            }
            if (e.skipped() != null) {
                n.put("skipped", e.skipped());
            }
        }
        try {
            return JSON.writeValueAsBytes(root);
        } catch (IOException e) {
            throw new IllegalStateException("a manifest always serialises", e);
        }
    }

    /**
     * Parses a manifest.
     *
     * @throws IllegalArgumentException when the bytes are not a manifest of a format this library reads; the message
     *                                  says what is wrong
     */
    public static SnapshotManifest fromJson(byte[] json) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (IOException e) {
            throw new IllegalArgumentException("the manifest is not valid JSON");
        }
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException("the manifest is not a JSON object");
        }
        int format = root.path("format").asInt(-1);
        if (format != FORMAT_VERSION) {
            throw new IllegalArgumentException("the manifest has format " + root.path("format")
                    + "; this library reads format " + FORMAT_VERSION
                    + (format == 1 ? " (format 1 kept one artifact per file; capture the workspace again)" : ""));
        }
        try {
            List<SnapshotEntry> entries = new ArrayList<>();
            for (JsonNode n : root.path("entries")) {
                SnapshotEntry.Type type = SnapshotEntry.Type.valueOf(n.path("type").asText());
                int mode = n.has("mode") ? Integer.parseInt(n.path("mode").asText(), 8) : -1;
                Instant modified = n.has("modified") ? Instant.parse(n.path("modified").asText()) : null;
                String skipped = n.has("skipped") ? n.path("skipped").asText() : null;
                entries.add(new SnapshotEntry(n.path("path").asText(), type, n.path("size").asLong(0),
                        n.has("sha256") ? n.path("sha256").asText() : null, n.path("offset").asLong(-1), mode,
                        modified, skipped));
            }
            return new SnapshotManifest(format, Instant.parse(root.path("createdAt").asText()),
                    root.path("sourceEngine").asText(), strings(root.path("roots")), strings(root.path("globs")),
                    root.path("includesRuns").asBoolean(false), root.path("pack").path("version").asInt(0),
                    root.path("pack").path("size").asLong(-1), entries);
        } catch (DateTimeParseException | IllegalArgumentException e) {
            throw new IllegalArgumentException("the manifest has a malformed entry: " + e.getMessage());
        }
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }
}
