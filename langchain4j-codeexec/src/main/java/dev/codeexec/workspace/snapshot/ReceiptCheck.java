package dev.codeexec.workspace.snapshot;

import dev.codeexec.artifact.DigestCheckingStream;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceEntry;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;

/**
 * The check behind a {@link RestoreReceipt}: the engine lists the snapshot's folders and globs afresh and reads every
 * file it shows (streamed, hashed), and the result is compared with the manifest: files missing, changed (size or
 * SHA-256), with another mode (only where both the manifest and the engine report modes), and files the snapshot
 * does not hold. It trusts nothing the restore itself did: what it reports is what a program in the workspace would
 * find.
 */
final class ReceiptCheck {

    private ReceiptCheck() {
    }

    static RestoreReceipt check(Engine engine, Workspace ws, SnapshotManifest m, String label, int files, long bytes,
                                SnapshotOptions bounds) {
        // Room for the snapshot's files and as many again, so that extras are found without an unbounded walk.
        int maxFiles = (int) Math.min(Integer.MAX_VALUE, 2L * Math.max(m.fileCount(), bounds.maxFiles()));
        long maxBytes = Math.max(m.totalBytes(), bounds.maxTotalBytes()) * 2;
        List<String> roots = new ArrayList<>(m.roots());
        if (m.includesRuns() && !roots.contains("runs")) {
            roots.add("runs");
        }
        SnapshotSelection now = SnapshotSelection.select(engine.fs(), ws, roots, m.globs(), m.includesRuns(),
                maxFiles, maxBytes, false);
        SortedMap<String, WorkspaceEntry> seen = now.entries();
        Map<String, String> digests = new HashMap<>();
        byte[] buf = new byte[64 * 1024];
        engine.fs().readFiles(ws, now.filePaths(), (path, size, in) -> {
            MessageDigest sha = DigestCheckingStream.sha256();
            for (int r; (r = in.read(buf)) >= 0; ) {
                sha.update(buf, 0, r);
            }
            digests.put(path, DigestCheckingStream.hex(sha) + "/" + size);
            return true;
        });
        List<ReceiptDifference> diffs = new ArrayList<>();
        Map<String, SnapshotEntry> expected = new HashMap<>();
        for (SnapshotEntry f : m.files()) {
            expected.put(f.path(), f);
            WorkspaceEntry e = seen.get(f.path());
            String want = f.size() + " bytes, SHA-256 " + f.sha256();
            if (e == null || e.kind() != WorkspaceEntry.Kind.FILE || !digests.containsKey(f.path())) {
                diffs.add(new ReceiptDifference(ReceiptDifference.Kind.MISSING, f.path(), want, null));
                continue;
            }
            String[] got = digests.get(f.path()).split("/");
            if (!got[0].equals(f.sha256()) || Long.parseLong(got[1]) != f.size()) {
                diffs.add(new ReceiptDifference(ReceiptDifference.Kind.CHANGED, f.path(), want,
                        got[1] + " bytes, SHA-256 " + got[0]));
            } else if (f.hasMode() && e.hasMode() && (f.mode() & 0777) != (e.mode() & 0777)) {
                diffs.add(new ReceiptDifference(ReceiptDifference.Kind.MODE, f.path(), octal(f.mode()),
                        octal(e.mode())));
            }
        }
        for (WorkspaceEntry e : seen.values()) {
            if (e.kind() == WorkspaceEntry.Kind.FILE && !expected.containsKey(e.path())) {
                diffs.add(new ReceiptDifference(ReceiptDifference.Kind.EXTRA, e.path(), null,
                        e.sizeBytes() + " bytes"));
            }
        }
        diffs.sort(Comparator.comparing(ReceiptDifference::path));
        return new RestoreReceipt(label, files, bytes, diffs, now.complete(), m.skipped());
    }

    private static String octal(int mode) {
        return "0" + Integer.toOctalString(mode & 0777);
    }
}
