package dev.codeexec.langchain4j;

import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.Workspace;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which files under {@code work/} and {@code out/} a run created, deleted or resized, from a listing before and after.
 * Only those two folders are listed: they are where the tools tell the model to put files, and walking
 * {@code runs/} (one folder per run) would make every call slower as a conversation goes on. A file rewritten with
 * the same size is not seen: listings carry sizes, not modification times.
 */
final class ChangedFiles {

    /** Above this many files the snapshot is skipped, so a huge workspace does not slow every call. */
    static final int MAX_SNAPSHOT = 5_000;

    private static final int MAX_SHOWN = 20;

    private static final List<String> FOLDERS = List.of("work", "out");

    private final List<String> created = new ArrayList<>();
    private final List<String> deleted = new ArrayList<>();
    private final List<String> resized = new ArrayList<>();
    private final Map<String, Long> sizes;

    private ChangedFiles(Map<String, Long> after) {
        this.sizes = after;
    }

    /** The workspace's files and sizes, or null when it is too big or cannot be listed. */
    static Map<String, Long> snapshot(Engine engine, Workspace ws) {
        Map<String, Long> m = new TreeMap<>();
        for (String dir : FOLDERS) {
            List<FileInfo> all;
            try {
                all = engine.fs().list(ws, dir);
            } catch (CodeExecException e) {
                continue; // the folder was removed: nothing in it
            }
            for (FileInfo f : all) {
                if (!f.directory()) {
                    m.put(f.path(), f.sizeBytes());
                }
            }
            if (m.size() > MAX_SNAPSHOT) {
                return null;
            }
        }
        return m;
    }

    /** The difference, or null when either snapshot is missing. */
    static ChangedFiles between(Map<String, Long> before, Map<String, Long> after) {
        if (before == null || after == null) {
            return null;
        }
        ChangedFiles c = new ChangedFiles(after);
        for (Map.Entry<String, Long> e : after.entrySet()) {
            Long old = before.get(e.getKey());
            if (old == null) {
                c.created.add(e.getKey());
            } else if (!old.equals(e.getValue())) {
                c.resized.add(e.getKey());
            }
        }
        for (String p : before.keySet()) {
            if (!after.containsKey(p)) {
                c.deleted.add(p);
            }
        }
        return c;
    }

    boolean isEmpty() {
        return created.isEmpty() && deleted.isEmpty() && resized.isEmpty();
    }

    /** Every changed path, for the tool result's attributes. */
    List<String> paths() {
        List<String> all = new ArrayList<>(created);
        all.addAll(resized);
        all.addAll(deleted);
        return all;
    }

    String describe() {
        if (isEmpty()) {
            return "";
        }
        StringBuilder sb = new StringBuilder("\n--- files changed ---");
        int shown = 0;
        for (String p : created) {
            if (shown++ < MAX_SHOWN) {
                sb.append("\n+ ").append(p).append(" (").append(sizes.get(p)).append(" bytes)");
            }
        }
        for (String p : resized) {
            if (shown++ < MAX_SHOWN) {
                sb.append("\n~ ").append(p).append(" (").append(sizes.get(p)).append(" bytes)");
            }
        }
        for (String p : deleted) {
            if (shown++ < MAX_SHOWN) {
                sb.append("\n- ").append(p);
            }
        }
        if (shown > MAX_SHOWN) {
            sb.append("\n... and ").append(shown - MAX_SHOWN).append(" more");
        }
        return sb.toString();
    }
}
