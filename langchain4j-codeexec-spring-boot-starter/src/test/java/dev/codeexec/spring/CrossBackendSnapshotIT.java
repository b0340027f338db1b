package dev.codeexec.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.container.ContainerEngine;
import dev.codeexec.e2b.E2bEngine;
import dev.codeexec.e2b.FakeE2b;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.sandbox.SandboxEngine;
import dev.codeexec.testing.Requirements;
import dev.codeexec.workspace.snapshot.RestoreReceipt;
import dev.codeexec.workspace.snapshot.Snapshot;
import dev.codeexec.workspace.snapshot.SnapshotOptions;
import dev.codeexec.workspace.snapshot.WorkspaceSnapshots;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A workspace that travels between backends through one artifact store: written by programs in a bubblewrap sandbox,
 * restored into a Docker container, changed there by a program, restored into (the fake) E2B. Each hop's receipt must
 * be clean and the files must be the programs' bytes. This module's tests are the ones that see every backend.
 */
class CrossBackendSnapshotIT {

    private final InMemoryArtifactService artifacts = new InMemoryArtifactService();
    private final WorkspaceSnapshots snapshots = new WorkspaceSnapshots(artifacts);
    private SandboxEngine sandbox;
    private ContainerEngine container;
    private FakeE2b fake;
    private E2bEngine e2b;

    @BeforeEach
    void engines(@TempDir Path e2bBase) throws Exception {
        Requirements.requireCommand("bwrap");
        Requirements.require(BackendPropertiesIT.imagePresent(), "a Docker engine with the image "
                + BackendPropertiesIT.IMAGE + " (./scripts/test builds it)");
        sandbox = SandboxEngine.create();
        container = ContainerEngine.builder().image(BackendPropertiesIT.IMAGE).build();
        fake = new FakeE2b(Files.createDirectories(e2bBase.resolve("e2b")));
        e2b = fake.engine().build();
    }

    @AfterEach
    void close() {
        for (AutoCloseable c : new AutoCloseable[] {e2b, fake, container, sandbox}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception ignored) {
                // the next engine is still closed
            }
        }
    }

    @Test
    void should_carry_a_workspace_from_the_sandbox_to_the_container_to_e2b_with_clean_receipts() {
        Workspace inSandbox = sandbox.manager().createWorkspace("travel", WorkspacePolicy.DEFAULT);
        run(sandbox, inSandbox, "mkdir -p data && seq 1 5000 > data/numbers.txt && printf '#!/bin/sh\\necho ok\\n' "
                + "> tool.sh && chmod 755 tool.sh && echo report > ../out/report.md");
        Snapshot fromSandbox = snapshots.capture(sandbox, inSandbox, "travel", SnapshotOptions.DEFAULT);

        Workspace inContainer = container.manager().createWorkspace("travel", WorkspacePolicy.DEFAULT);
        RestoreReceipt intoContainer = snapshots.restore(container, inContainer, "travel", fromSandbox.version());
        assertThat(intoContainer.clean()).as(intoContainer.summary()).isTrue();
        assertThat(run(container, inContainer, "./tool.sh && wc -l < data/numbers.txt").stdout())
                .isEqualTo("ok\n5000\n");
        run(container, inContainer, "echo 'changed in the container' >> ../out/report.md");
        Snapshot fromContainer = snapshots.capture(container, inContainer, "travel", SnapshotOptions.DEFAULT);

        Workspace inE2b = e2b.manager().createWorkspace("travel", WorkspacePolicy.DEFAULT);
        RestoreReceipt intoE2b = snapshots.restore(e2b, inE2b, "travel", fromContainer.version());
        assertThat(intoE2b.clean()).as(intoE2b.summary()).isTrue();
        assertThat(e2b.fs().readFile(inE2b, "out/report.md", 0, 4096).contentAsString())
                .isEqualTo("report\nchanged in the container\n");
        assertThat(e2b.fs().stat(inE2b, "work/tool.sh")).map(FileInfo::sizeBytes).contains(18L);
        assertThat(fromContainer.version()).isGreaterThan(fromSandbox.version());
    }

    private static RunResult run(Engine engine, Workspace ws, String script) {
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args(List.of("-c", script)).cwd("work")
                .build());
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        return r;
    }
}
