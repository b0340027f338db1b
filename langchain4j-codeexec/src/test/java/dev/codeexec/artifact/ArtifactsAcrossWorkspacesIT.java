package dev.codeexec.artifact;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.FileRef;
import dev.codeexec.engine.InputSpec;
import dev.codeexec.engine.OutputManifest;
import dev.codeexec.engine.OutputSpec;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.StagedInput;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.local.LocalEngine;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Artifacts do what they are for: carry a file out of one workspace and into another, across a restart. */
class ArtifactsAcrossWorkspacesIT {

    @TempDir
    Path tmp;

    @Test
    void should_stage_a_saved_output_into_a_new_workspace_when_the_engine_was_restarted() {
        Path store = tmp.resolve("artifacts");
        byte[] report = "# Q1\nrevenue: 42\n".getBytes(StandardCharsets.UTF_8);

        String savedAs;
        try (LocalEngine first = LocalEngine.builder().baseDir(tmp.resolve("ws1"))
                .artifactService(FileSystemArtifactService.at(store)).build()) {
            Workspace ws = first.manager().createWorkspace("conversation-1", WorkspacePolicy.DEFAULT);
            first.fs().putFiles(ws, List.of(PutFile.of("out/report.md", report)));
            OutputManifest manifest = first.fs().collectOutputs(ws, OutputSpec.builder().save(true).build());
            savedAs = manifest.files().stream().map(FileRef::savedAs).findFirst().orElseThrow();
            first.manager().cleanup(ws); // the workspace is gone; the artifact is not
        }
        assertThat(savedAs).isEqualTo("artifact://out/report.md@1");

        try (LocalEngine second = LocalEngine.builder().baseDir(tmp.resolve("ws2"))
                .artifactService(FileSystemArtifactService.at(store)).build()) {
            Workspace ws = second.manager().createWorkspace("conversation-2", WorkspacePolicy.DEFAULT);
            List<StagedInput> staged = second.fs().stageInputs(ws, List.of(InputSpec.of(savedAs)));

            assertThat(staged).singleElement().satisfies(s -> assertThat(s.version()).isEqualTo(1));
            FileRef read = second.fs().readFile(ws, staged.get(0).to(), 0, 1 << 20);
            assertThat(read.content()).isEqualTo(report);
        }
    }
}
