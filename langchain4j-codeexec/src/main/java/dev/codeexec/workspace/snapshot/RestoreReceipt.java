package dev.codeexec.workspace.snapshot;

import java.util.List;
import java.util.Objects;

/**
 * What a restore did and what the engine now shows: the snapshot restored, the files and bytes written, every
 * difference between the manifest and a fresh listing of the workspace through the engine (missing, changed, extra
 * files; modes where both sides report them), the entries the snapshot skipped, and what a snapshot never carries.
 * {@link #clean()} is true when the workspace holds exactly the snapshot's files, as recorded.
 *
 * @param snapshot      {@code name@version} of the snapshot restored
 * @param filesRestored files written
 * @param bytesRestored bytes written
 * @param differences   what differs now, sorted by path; empty when clean
 * @param complete      false when the check stopped at its bound before comparing everything
 * @param skipped       entries of the manifest that were never captured (links, special files), with the reasons
 */
public record RestoreReceipt(String snapshot, int filesRestored, long bytesRestored,
                             List<ReceiptDifference> differences, boolean complete, List<SnapshotEntry> skipped) {

    /** What no snapshot carries, stated in every receipt and in the tools' results. */
    public static final List<String> NOT_CARRIED = List.of(
            "running processes and background sessions",
            "interpreter or kernel memory (variables, imports, loaded data)",
            "packages installed outside the workspace (system or image packages)",
            "runs/ (the run history) unless the snapshot was asked to include it",
            "symbolic links and special files (skipped, as input staging skips them)",
            "files outside the captured folders and globs");

    public RestoreReceipt {
        Objects.requireNonNull(snapshot, "snapshot");
        differences = List.copyOf(differences);
        skipped = List.copyOf(skipped);
    }

    /** True when the check was complete and found no difference. */
    public boolean clean() {
        return complete && differences.isEmpty();
    }

    /** The differences of one kind. */
    public List<ReceiptDifference> differences(ReceiptDifference.Kind kind) {
        return differences.stream().filter(d -> d.kind() == kind).toList();
    }

    /** What no snapshot carries ({@link #NOT_CARRIED}). */
    public List<String> notCarried() {
        return NOT_CARRIED;
    }

    /** A short text for a model or a log: counts, the first differences, skipped entries and what was not carried. */
    public String summary() {
        StringBuilder sb = new StringBuilder();
        sb.append("restored ").append(snapshot).append(": ").append(filesRestored).append(" files, ")
                .append(bytesRestored).append(" bytes. Receipt: ");
        if (clean()) {
            sb.append("clean (every file matches the manifest in path, size and SHA-256");
            sb.append(", modes where reported).");
        } else {
            sb.append(differences(ReceiptDifference.Kind.MISSING).size()).append(" missing, ")
                    .append(differences(ReceiptDifference.Kind.CHANGED).size()).append(" changed, ")
                    .append(differences(ReceiptDifference.Kind.MODE).size()).append(" mode, ")
                    .append(differences(ReceiptDifference.Kind.EXTRA).size()).append(" extra")
                    .append(complete ? "" : " (check incomplete: stopped at its bound)").append(':');
            differences.stream().limit(20).forEach(d -> sb.append("\n  ").append(d));
            if (differences.size() > 20) {
                sb.append("\n  ... and ").append(differences.size() - 20).append(" more");
            }
        }
        if (!skipped.isEmpty()) {
            sb.append("\nNot captured when the snapshot was taken: ");
            skipped.stream().limit(10).forEach(e -> sb.append("\n  ").append(e.path()).append(" (")
                    .append(e.skipped()).append(')'));
            if (skipped.size() > 10) {
                sb.append("\n  ... and ").append(skipped.size() - 10).append(" more");
            }
        }
        sb.append("\nA snapshot never carries: ").append(String.join("; ", NOT_CARRIED)).append('.');
        return sb.toString();
    }
}
