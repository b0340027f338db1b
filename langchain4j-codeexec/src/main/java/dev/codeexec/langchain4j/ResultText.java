package dev.codeexec.langchain4j;

import dev.codeexec.CodeExecutionResult;
import dev.codeexec.FileRef;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.SavedOutput;
import java.time.Duration;
import java.util.List;

/**
 * The compact text a model reads after a run. The first line always states the exit code, whether the run timed out
 * and whether output was truncated (by the engine's cap or by the window), so a model never mistakes a cut or killed
 * run for a clean one:
 *
 * <pre>
 * exit_code: 0 | timed_out: false | truncated: false | duration: 0.04s
 * --- stdout ---
 * ...
 * --- stderr ---
 * ...
 * --- files changed ---
 * + out/result.csv (120 bytes)
 * </pre>
 */
final class ResultText {

    private ResultText() {
    }

    static String run(RunResult r, int windowBytes, ChangedFiles changed) {
        String[] shown = windowPair(r.stdout(), r.stderr(), windowBytes);
        boolean windowed = shown[2] != null;
        boolean truncated = r.truncated() || windowed;
        StringBuilder sb = new StringBuilder();
        sb.append("exit_code: ").append(r.timedOut() ? "none (killed)" : String.valueOf(r.exitCode()))
                .append(" | timed_out: ").append(r.timedOut())
                .append(" | truncated: ").append(truncated)
                .append(" | duration: ").append(seconds(r.duration()));
        if (r.timedOut()) {
            sb.append("\nThe command hit its time limit and was killed with all its child processes; "
                    + "output below is what it printed before that.");
        }
        if (r.truncated()) {
            sb.append("\nThe engine kept the start and the end of ")
                    .append(r.stdoutTruncated() && r.stderrTruncated() ? "stdout and stderr"
                            : r.stdoutTruncated() ? "stdout" : "stderr")
                    .append(" and dropped the middle.");
            boolean saved = saved(sb, "stdout", r.stdoutFile()) | saved(sb, "stderr", r.stderrFile());
            if (!saved) {
                sb.append(" Write large output to a file under out/ and read it in windows instead.");
            }
        }
        appendStreams(sb, shown[0], shown[1]);
        if (changed != null) {
            sb.append(changed.describe());
        }
        return sb.toString();
    }

    /** Says where a stream's whole output was saved, if anywhere; true when a file holds at least a part of it. */
    private static boolean saved(StringBuilder sb, String stream, SavedOutput f) {
        if (f == null) {
            return false;
        }
        if (f.path() == null) {
            sb.append("\nThe whole ").append(stream).append(" (").append(f.totalBytes()).append(" bytes) was not saved: ")
                    .append(f.problem()).append('.');
            return false;
        }
        if (f.complete()) {
            sb.append("\nThe whole ").append(stream).append(" (").append(f.totalBytes()).append(" bytes) is saved in ")
                    .append(f.path());
        } else {
            sb.append("\nThe first ").append(f.savedBytes()).append(" of ").append(f.totalBytes()).append(" bytes of ")
                    .append(stream).append(" are saved in ").append(f.path()).append(" (").append(f.problem())
                    .append(')');
        }
        sb.append(": read it in windows with workspace_read_file (offset), or search it with a command.");
        return true;
    }

    static String code(CodeExecutionResult r, Duration duration, int windowBytes, ChangedFiles changed) {
        OutputWindow.Window w = OutputWindow.window(r.output(), windowBytes);
        boolean truncated = r.truncated() || w.cut();
        StringBuilder sb = new StringBuilder();
        sb.append("exit_code: ").append(r.timedOut() ? "none (killed)" : String.valueOf(r.exitCode()))
                .append(" | timed_out: ").append(r.timedOut())
                .append(" | truncated: ").append(truncated)
                .append(" | duration: ").append(seconds(duration));
        if (r.timedOut()) {
            sb.append("\nThe code hit its time limit and was killed.");
        }
        if (r.output().isEmpty()) {
            sb.append("\n(no output)");
        } else {
            sb.append("\n--- output ---\n").append(stripFinalNewline(w.text()));
        }
        List<FileRef> files = r.outputFiles();
        if (!files.isEmpty()) {
            sb.append("\n--- files in out/ ---");
            for (FileRef f : files) {
                sb.append("\n").append(f.name()).append(" (").append(f.sizeBytes()).append(" bytes)");
            }
        }
        if (changed != null) {
            sb.append(changed.describe());
        }
        return sb.toString();
    }

    static String poll(String sessionId, ProgramPoll p, int windowBytes, boolean maybeMore, String status) {
        OutputWindow.Window w = OutputWindow.window(p.output(), windowBytes);
        StringBuilder sb = new StringBuilder();
        sb.append("session_id: ").append(sessionId)
                .append(" | status: ").append(status != null ? status : p.running() ? "running" : "exited")
                .append(" | exit_code: ").append(p.exitCode() == null ? "none" : p.exitCode())
                .append(" | timed_out: ").append(p.timedOut())
                .append(" | truncated: ").append(w.cut() || p.droppedBytes() > 0);
        if (p.droppedBytes() > 0) {
            sb.append("\n").append(p.droppedBytes()).append(" bytes of older output were dropped by the session "
                    + "buffer before they were read.");
        }
        if (p.output().isEmpty()) {
            sb.append("\n(no new output)");
        } else {
            sb.append("\n--- output ---\n").append(stripFinalNewline(w.text()));
        }
        if (maybeMore) {
            sb.append("\n(more output is waiting: call again with empty chars to read it)");
        }
        return sb.toString();
    }

    private static void appendStreams(StringBuilder sb, String out, String err) {
        if (out.isEmpty() && err.isEmpty()) {
            sb.append("\n(no output)");
            return;
        }
        if (!out.isEmpty()) {
            sb.append("\n--- stdout ---\n").append(stripFinalNewline(out));
        }
        if (!err.isEmpty()) {
            sb.append("\n--- stderr ---\n").append(stripFinalNewline(err));
        }
    }

    /** Windows two streams under one budget; index 2 is non-null when anything was cut. */
    private static String[] windowPair(String out, String err, int maxBytes) {
        int lo = OutputWindow.utf8Length(out);
        int le = OutputWindow.utf8Length(err);
        if ((long) lo + le <= maxBytes) {
            return new String[] {out, err, null};
        }
        int[] budget = OutputWindow.split(lo, le, maxBytes);
        OutputWindow.Window wo = OutputWindow.window(out, budget[0]);
        OutputWindow.Window we = OutputWindow.window(err, budget[1]);
        return new String[] {wo.text(), we.text(), wo.cut() || we.cut() ? "cut" : null};
    }

    /** {@code 1.23s}; rounded to hundredths (no Formatter: this runs on every call). */
    static String seconds(Duration d) {
        long centis = (d.toNanos() + 5_000_000L) / 10_000_000L;
        long frac = centis % 100;
        return (centis / 100) + "." + (frac < 10 ? "0" : "") + frac + "s";
    }

    private static String stripFinalNewline(String s) {
        return s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
    }
}
