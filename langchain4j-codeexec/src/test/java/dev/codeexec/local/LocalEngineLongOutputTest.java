package dev.codeexec.local;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.SavedOutput;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.spi.BoundedOutput;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Output far over the cap, end to end on a real program: the result keeps the start and the real end, and the whole
 * stream is saved in the run's folder, up to the engine's cap for saved output.
 */
class LocalEngineLongOutputTest {

    /** {@code seq 1 500000}: 3,388,895 bytes, then a last line that a test run's summary would be. */
    private static final String PROGRAM = "seq 1 500000; echo 'FINAL: 3 passed, 0 failed'; echo 'err-end' >&2";

    @TempDir
    Path tmp;

    @Test
    void should_keep_the_final_line_and_save_the_whole_stream_when_a_program_prints_3_mib() {
        try (LocalEngine engine = LocalEngine.builder().rootDir(tmp.resolve("base")).build()) {
            Workspace ws = engine.manager().createWorkspace("long", WorkspacePolicy.DEFAULT);

            RunResult r = engine.runner().runProgram(ws, spec());

            byte[] expected = expectedStream();
            assertThat(r.exitCode()).isZero();
            assertThat(r.stdoutTruncated()).isTrue();
            assertThat(r.stdout()).startsWith("1\n2\n3\n")
                    .contains(BoundedOutput.middleMarker(expected.length - BoundedOutput.DEFAULT_CAP))
                    .endsWith("499999\n500000\nFINAL: 3 passed, 0 failed\n");
            assertThat(r.stdout().length()).isLessThan(BoundedOutput.DEFAULT_CAP + 200);

            SavedOutput saved = r.stdoutFile();
            assertThat(saved).isNotNull();
            assertThat(saved.complete()).isTrue();
            assertThat(saved.path()).matches("runs/run_[^/]+/stdout");
            assertThat(saved.totalBytes()).isEqualTo(expected.length);
            assertThat(read(engine, ws, saved.path())).isEqualTo(expected);
            // A stream that fit is not saved.
            assertThat(r.stderr()).isEqualTo("err-end\n");
            assertThat(r.stderrFile()).isNull();
        }
    }

    @Test
    void should_stop_the_saved_file_at_the_cap_with_a_marker_when_the_output_is_larger_than_the_cap() {
        long cap = 2 << 20;
        try (LocalEngine engine = LocalEngine.builder().rootDir(tmp.resolve("base")).maxSavedOutputBytes(cap)
                .build()) {
            Workspace ws = engine.manager().createWorkspace("long", WorkspacePolicy.DEFAULT);

            RunResult r = engine.runner().runProgram(ws, spec());

            byte[] expected = expectedStream();
            assertThat(r.stdout()).endsWith("FINAL: 3 passed, 0 failed\n");
            SavedOutput saved = r.stdoutFile();
            assertThat(saved.complete()).isFalse();
            assertThat(saved.savedBytes()).isEqualTo(cap);
            assertThat(saved.totalBytes()).isEqualTo(expected.length);
            assertThat(saved.problem()).contains("cap of " + cap + " bytes");
            String marker = "\n[codeexec: saving stopped at the cap of " + cap + " bytes; the program wrote "
                    + expected.length + " bytes in all]\n";
            byte[] file = read(engine, ws, saved.path());
            assertThat(file).hasSize((int) cap + marker.length());
            assertThat(new String(file, StandardCharsets.UTF_8))
                    .isEqualTo(new String(expected, 0, (int) cap, StandardCharsets.UTF_8) + marker);
        }
    }

    @Test
    void should_save_nothing_when_saving_is_off() {
        try (LocalEngine engine = LocalEngine.builder().rootDir(tmp.resolve("base")).maxSavedOutputBytes(0)
                .build()) {
            Workspace ws = engine.manager().createWorkspace("long", WorkspacePolicy.DEFAULT);

            RunResult r = engine.runner().runProgram(ws, spec());

            assertThat(r.stdout()).endsWith("FINAL: 3 passed, 0 failed\n");
            assertThat(r.stdoutFile()).isNull();
            assertThat(engine.fs().list(ws, "runs/*/stdout")).isEmpty();
        }
    }

    private static RunProgramSpec spec() {
        return RunProgramSpec.builder("sh").args("-c", PROGRAM).timeout(Duration.ofSeconds(120)).build();
    }

    private static byte[] read(LocalEngine engine, Workspace ws, String path) {
        return engine.fs().readFile(ws, path, 0, 8 << 20).content();
    }

    private static byte[] expectedStream() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int i = 1; i <= 500_000; i++) {
            b.writeBytes((i + "\n").getBytes(StandardCharsets.US_ASCII));
        }
        b.writeBytes("FINAL: 3 passed, 0 failed\n".getBytes(StandardCharsets.US_ASCII));
        return b.toByteArray();
    }
}
