package dev.codeexec.langchain4j;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.InputSpec;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceBusyException;
import dev.codeexec.workspace.SafeNames;
import dev.langchain4j.data.message.AudioContent;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.data.message.PdfFileContent;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.data.message.VideoContent;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stages the files attached to a user message (image, PDF, audio and video contents) into {@code work/inputs/} of the
 * conversation's workspace, under sanitised names that never collide (case-insensitively) with what is there.
 *
 * <p>Where the bytes come from: inline base64 data and {@code data:} URLs are written as they are; {@code file:} URLs are
 * staged through the engine as {@code host://} inputs, which the engine refuses unless the file is under one of the
 * input roots the application configured on it; {@code http(s):} URLs are not fetched (the library makes no network
 * requests of its own) and are reported as not staged. Text contents are the prompt, not files, and are left alone.
 *
 * <p>Staging is idempotent: the same bytes (or the same host file) attached again, in the same invocation or a later
 * turn, are not copied twice; the earlier name is reported.
 */
final class AttachmentStager {

    private static final Logger log = LoggerFactory.getLogger(AttachmentStager.class);

    /** Directory of staged inputs, workspace-relative. */
    static final String INPUTS = "work/inputs";

    /**
     * User-message attribute: a {@code List<String>} of file names, one per file content in order, used instead of
     * the names derived from URLs or MIME types.
     */
    static final String NAMES_ATTRIBUTE = "codeexec.fileNames";

    private static final int MAX_NAME = 100;
    private static final int MAX_WORKSPACES_REMEMBERED = 4096;

    /** One attachment and where it went (or why not). */
    record Staged(String name, String path, long sizeBytes, String notStagedReason) {
        boolean staged() {
            return path != null;
        }
    }

    private final long maxBytes;
    /** Per workspace id: content key -> staged path. Keyed by workspace id so a recreated workspace starts empty. */
    private final Map<String, Map<String, String>> stagedByWorkspace = Collections.synchronizedMap(
            new java.util.LinkedHashMap<>(16, 0.75f, true) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Map<String, String>> eldest) {
                    // Reaped workspaces leave no callback; forgetting the least recently used bounds the memory.
                    return size() > MAX_WORKSPACES_REMEMBERED;
                }
            });

    AttachmentStager(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    /** True when the message carries anything this class would stage. */
    static boolean hasFiles(UserMessage message) {
        if (message == null) {
            return false;
        }
        for (Content c : message.contents()) {
            if (isFile(c)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Stages the message's files; the caller holds the workspace's lock.
     *
     * @throws WorkspaceBusyException when a background session holds the workspace: nothing can be staged now
     */
    List<Staged> stage(Engine engine, Workspace ws, UserMessage message) {
        List<Staged> result = new ArrayList<>();
        if (!hasFiles(message)) {
            return result;
        }
        List<String> givenNames = givenNames(message);
        Map<String, String> known = stagedByWorkspace.computeIfAbsent(ws.id(), k -> new ConcurrentHashMap<>());
        Set<String> taken = existingNames(engine, ws);
        Map<String, Integer> kindCounters = new HashMap<>();
        int fileIndex = 0;
        for (Content c : message.contents()) {
            if (!isFile(c)) {
                continue;
            }
            Source src = source(c);
            String given = fileIndex < givenNames.size() ? givenNames.get(fileIndex) : null;
            fileIndex++;
            String name = sanitize(given != null ? given : nameFor(src, kindCounters));
            result.add(stageOne(engine, ws, src, name, known, taken));
        }
        return result;
    }

    /** Forgets what was staged in a workspace that is gone. */
    void forget(Workspace ws) {
        stagedByWorkspace.remove(ws.id());
    }

    private Staged stageOne(Engine engine, Workspace ws, Source src, String name, Map<String, String> known,
                            Set<String> taken) {
        URI url = src.url;
        String scheme = url == null || url.getScheme() == null ? null : url.getScheme().toLowerCase(Locale.ROOT);
        try {
            if (url != null && "file".equals(scheme)) {
                String key = "host:" + url;
                String done = known.get(key);
                if (done != null) {
                    return new Staged(name, done, -1, null);
                }
                String target = INPUTS + "/" + unique(name, taken);
                Path host = Path.of(url);
                var staged = engine.fs().stageInputs(ws, List.of(InputSpec.of("host://" + host, target)));
                long size = staged.isEmpty() ? -1 : staged.get(0).sizeBytes();
                known.put(key, target);
                return new Staged(name, target, size, null);
            }
            byte[] bytes;
            if (url == null) {
                bytes = decodeBase64(src.base64);
            } else if ("data".equals(scheme)) {
                bytes = decodeDataUrl(url.toString());
            } else {
                return new Staged(name, null, -1, "it is a " + (scheme == null ? "relative" : scheme)
                        + " URL and this library does not download files");
            }
            if (bytes == null) {
                return new Staged(name, null, -1, "its content could not be decoded");
            }
            String key = "sha256:" + sha256(bytes);
            String done = known.get(key);
            if (done != null) {
                return new Staged(name, done, bytes.length, null);
            }
            String target = INPUTS + "/" + unique(name, taken);
            engine.fs().putFiles(ws, List.of(PutFile.of(target, bytes)));
            known.put(key, target);
            return new Staged(name, target, bytes.length, null);
        } catch (TooLarge e) {
            return new Staged(name, null, -1, "it is larger than the limit of " + maxBytes + " bytes");
        } catch (WorkspaceBusyException e) {
            throw e; // nothing can be staged now; the call answers busy, and a later one stages the file
        } catch (PolicyViolationException e) {
            // The engine's message may name the host path; the model only learns the rule.
            log.info("attachment {} not staged: {}", name, e.getMessage());
            return new Staged(name, null, -1, "it is a host file outside the input roots the application allowed");
        } catch (CodeExecException e) {
            log.info("attachment {} not staged: {}", name, e.getMessage());
            return new Staged(name, null, -1, "the engine could not stage it");
        } catch (RuntimeException e) {
            log.warn("attachment {} could not be staged", name, e);
            return new Staged(name, null, -1, "it could not be read");
        }
    }

    private static final class TooLarge extends RuntimeException {
        TooLarge() {
            super(null, null, false, false);
        }
    }

    private byte[] decodeBase64(String b64) {
        if (b64 == null) {
            return null;
        }
        if ((long) b64.length() / 4 * 3 > maxBytes + 3) {
            throw new TooLarge();
        }
        try {
            byte[] b = Base64.getMimeDecoder().decode(b64);
            if (b.length > maxBytes) {
                throw new TooLarge();
            }
            return b;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private byte[] decodeDataUrl(String url) {
        int comma = url.indexOf(',');
        if (comma < 0) {
            return null;
        }
        String meta = url.substring(5, comma);
        String data = url.substring(comma + 1);
        if (meta.endsWith(";base64")) {
            return decodeBase64(data);
        }
        byte[] b = URLDecoder.decode(data, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8);
        if (b.length > maxBytes) {
            throw new TooLarge();
        }
        return b;
    }

    private Set<String> existingNames(Engine engine, Workspace ws) {
        Set<String> names = new HashSet<>();
        if (engine.fs().stat(ws, INPUTS).filter(FileInfo::directory).isEmpty()) {
            return names; // no work/inputs yet: nothing is taken
        }
        for (FileInfo f : engine.fs().list(ws, INPUTS)) {
            String p = f.path();
            int slash = p.lastIndexOf('/');
            String parent = slash < 0 ? "" : p.substring(0, slash);
            if (parent.equals(INPUTS)) {
                names.add(p.substring(slash + 1).toLowerCase(Locale.ROOT));
            }
        }
        return names;
    }

    /** {@code name}, or {@code stem_2.ext}, {@code stem_3.ext}... whichever is free, compared case-insensitively. */
    static String unique(String name, Set<String> takenLowerCase) {
        String candidate = name;
        int dot = name.lastIndexOf('.');
        String stem = dot > 0 ? name.substring(0, dot) : name;
        String ext = dot > 0 ? name.substring(dot) : "";
        for (int n = 2; takenLowerCase.contains(candidate.toLowerCase(Locale.ROOT)); n++) {
            candidate = stem + "_" + n + ext;
        }
        takenLowerCase.add(candidate.toLowerCase(Locale.ROOT));
        return candidate;
    }

    /**
     * A safe file name for an upload: {@link SafeNames#fileName} (the last path segment, unsafe characters replaced by
     * {@code _}, no leading dots, at most {@value #MAX_NAME} characters keeping the extension); {@code upload} when
     * nothing is left.
     */
    static String sanitize(String raw) {
        return SafeNames.fileName(raw, "upload", MAX_NAME);
    }

    private record Source(String kind, URI url, String base64, String mimeType) {
    }

    private static boolean isFile(Content c) {
        return c instanceof ImageContent || c instanceof PdfFileContent || c instanceof AudioContent
                || c instanceof VideoContent;
    }

    private static Source source(Content c) {
        if (c instanceof ImageContent i) {
            return new Source("image", i.image().url(), i.image().base64Data(), i.image().mimeType());
        }
        if (c instanceof PdfFileContent p) {
            return new Source("document", p.pdfFile().url(), p.pdfFile().base64Data(),
                    p.pdfFile().mimeType() == null ? "application/pdf" : p.pdfFile().mimeType());
        }
        if (c instanceof AudioContent a) {
            String b64 = a.audio().base64Data();
            if (b64 == null && a.audio().binaryData() != null) {
                b64 = Base64.getEncoder().encodeToString(a.audio().binaryData());
            }
            return new Source("audio", a.audio().url(), b64, a.audio().mimeType());
        }
        VideoContent v = (VideoContent) c;
        return new Source("video", v.video().url(), v.video().base64Data(), v.video().mimeType());
    }

    private static String nameFor(Source src, Map<String, Integer> counters) {
        if (src.url != null && !"data".equalsIgnoreCase(src.url.getScheme())) {
            String path = src.url.getPath();
            if (path != null && !path.isBlank() && !path.endsWith("/")) {
                return path.substring(path.lastIndexOf('/') + 1);
            }
        }
        String mime = src.mimeType;
        if (src.url != null && "data".equalsIgnoreCase(src.url.getScheme())) {
            String u = src.url.toString();
            int end = u.indexOf(',');
            String meta = end < 0 ? "" : u.substring(5, end);
            int semi = meta.indexOf(';');
            mime = semi < 0 ? meta : meta.substring(0, semi);
        }
        int n = counters.merge(src.kind, 1, Integer::sum);
        return src.kind + (n == 1 ? "" : "_" + n) + "." + extension(mime, src.kind);
    }

    private static final Map<String, String> EXTENSIONS;

    static {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("image/jpeg", "jpg");
        m.put("image/png", "png");
        m.put("image/gif", "gif");
        m.put("image/webp", "webp");
        m.put("image/svg+xml", "svg");
        m.put("application/pdf", "pdf");
        m.put("audio/mpeg", "mp3");
        m.put("audio/wav", "wav");
        m.put("audio/x-wav", "wav");
        m.put("video/mp4", "mp4");
        m.put("text/plain", "txt");
        m.put("text/csv", "csv");
        m.put("application/json", "json");
        EXTENSIONS = Collections.unmodifiableMap(m);
    }

    private static String extension(String mime, String kind) {
        if (mime != null) {
            String m = mime.toLowerCase(Locale.ROOT).strip();
            String known = EXTENSIONS.get(m);
            if (known != null) {
                return known;
            }
            int slash = m.indexOf('/');
            String sub = slash < 0 ? "" : m.substring(slash + 1).replaceAll("[^a-z0-9]", "");
            if (!sub.isEmpty() && sub.length() <= 8) {
                return sub;
            }
        }
        return switch (kind) {
            case "document" -> "pdf";
            default -> "bin";
        };
    }

    private static List<String> givenNames(UserMessage message) {
        Object v = message.attributes() == null ? null : message.attributes().get(NAMES_ATTRIBUTE);
        if (v instanceof List<?> l) {
            List<String> names = new ArrayList<>();
            for (Object o : l) {
                names.add(o == null ? null : o.toString());
            }
            return names;
        }
        return List.of();
    }

    private static String sha256(byte[] b) {
        try {
            return java.util.HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
