package dev.codeexec.workspace;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WorkspaceLayoutTest {

    @Test
    void should_point_variables_into_workspace_when_root_has_trailing_slash() {
        Map<String, String> vars = WorkspaceLayout.variables("/ws/", "runs/run_1");

        assertThat(vars).containsExactlyInAnyOrderEntriesOf(Map.of("WORKSPACE_DIR", "/ws", "WORK_DIR", "/ws/work",
                "OUTPUT_DIR", "/ws/out", "RUN_DIR", "/ws/runs/run_1", "SKILLS_DIR", "/ws/skills"));
    }

    @Test
    void should_make_unique_run_directories_when_called_twice() {
        String a = WorkspaceLayout.newRunDir();
        String b = WorkspaceLayout.newRunDir();

        assertThat(a).startsWith("runs/run_").isNotEqualTo(b);
    }

    @Test
    void should_leave_path_unchanged_when_variable_is_unknown_or_not_leading() {
        assertThat(WorkspaceLayout.expandVariables("$RUN_DIR/x")).isEqualTo("$RUN_DIR/x");
        assertThat(WorkspaceLayout.expandVariables("${OUTPUT_DIR")).isEqualTo("${OUTPUT_DIR");
        assertThat(WorkspaceLayout.expandVariables("out/$OUTPUT_DIR")).isEqualTo("out/$OUTPUT_DIR");
        assertThat(WorkspaceLayout.expandVariables(null)).isNull();
    }

    @Test
    void should_guess_mime_type_from_content_when_extension_is_unknown() {
        assertThat(MimeTypes.guess("out/r.MD", null)).isEqualTo("text/markdown");
        assertThat(MimeTypes.guess("out/x", "héllo\n".getBytes(StandardCharsets.UTF_8))).isEqualTo("text/plain");
        assertThat(MimeTypes.guess("out/x", new byte[] {0, 1})).isEqualTo("application/octet-stream");
        assertThat(MimeTypes.guess("out.d/x", null)).isEqualTo("application/octet-stream");
        // A window that cuts a multi-byte character at its end is still text.
        byte[] cut = "aé".getBytes(StandardCharsets.UTF_8);
        assertThat(MimeTypes.isText(java.util.Arrays.copyOf(cut, 2))).isTrue();
    }
}
