package dev.codeexec.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.workspace.snapshot.RestoreReceipt;
import dev.codeexec.workspace.snapshot.Snapshot;
import dev.codeexec.workspace.snapshot.SnapshotEntry;
import dev.codeexec.workspace.snapshot.SnapshotManifest;
import dev.codeexec.workspace.snapshot.SnapshotOptions;
import dev.codeexec.workspace.snapshot.WorkspaceSnapshots;
import java.nio.file.Path;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A workspace that travels from the local engine into a pod of the fake cluster and back, through one artifact store:
 * written by programs on this host, restored into the pod (over the real exec protocol, tar on the pod's stdin), run
 * and changed there by a program, captured from the pod and restored into a fresh local workspace. Each hop's receipt
 * must be clean, and the programs on the far side must find the bytes, modes and empty directories the near side
 * made. The contract test's own round trip starts on the pod; this one starts where the snapshot was not made by the
 * Kubernetes engine.
 */
class KubernetesCrossBackendSnapshotTest {

    private final WorkspaceSnapshots snapshots = new WorkspaceSnapshots(new InMemoryArtifactService());
    private LocalEngine local;
    private KubernetesEngine pods;

    @BeforeAll
    static void requireCluster() {
        KubernetesTesting.requireCluster();
    }

    @BeforeEach
    void engines(@TempDir Path localRoot) {
        local = LocalEngine.builder().rootDir(localRoot).build();
        pods = KubernetesTesting.engine().build();
    }

    @AfterEach
    void close() {
        try {
            if (pods != null) {
                pods.close();
            }
        } finally {
            local.close();
        }
    }

    @Test
    void should_carry_a_workspace_from_the_local_engine_into_a_pod_and_back_with_clean_receipts() {
        Workspace onHost = local.manager().createWorkspace("travel", WorkspacePolicy.DEFAULT);
        // numbers.txt (about 169 KB) and blob.bin (200 KB) each take several exec messages into the pod.
        run(local, onHost, "mkdir -p data empty/inner && seq 1 30000 > data/numbers.txt"
                + " && head -c 200000 /dev/urandom > data/blob.bin"
                + " && printf '#!/bin/sh\\necho ok\\n' > tool.sh && chmod 755 tool.sh"
                + " && echo key > key.txt && chmod 600 key.txt && echo report > ../out/report.md");
        Snapshot fromHost = snapshots.capture(local, onHost, "travel", SnapshotOptions.DEFAULT);

        Workspace inPod = pods.manager().createWorkspace("travel", WorkspacePolicy.DEFAULT);
        RestoreReceipt intoPod = snapshots.restore(pods, inPod, "travel", fromHost.version());
        assertThat(intoPod.clean()).as(intoPod.summary()).isTrue();
        assertThat(run(pods, inPod, "./tool.sh && wc -l < data/numbers.txt && stat -c %a key.txt tool.sh"
                + " && test -d empty/inner && sha256sum data/blob.bin").stdout())
                .isEqualTo("ok\n30000\n600\n755\n" + sha256(fromHost.manifest(), "work/data/blob.bin")
                        + "  data/blob.bin\n");
        run(pods, inPod, "echo 'changed in the pod' >> ../out/report.md && rm key.txt");
        Snapshot fromPod = snapshots.capture(pods, inPod, "travel", SnapshotOptions.DEFAULT);

        Workspace back = local.manager().createWorkspace("back", WorkspacePolicy.DEFAULT);
        RestoreReceipt home = snapshots.restore(local, back, "travel", fromPod.version());
        assertThat(home.clean()).as(home.summary()).isTrue();
        assertThat(run(local, back, "cat ../out/report.md && ./tool.sh && test ! -e key.txt && test -d empty/inner")
                .stdout()).isEqualTo("report\nchanged in the pod\nok\n");
        assertThat(fromPod.manifest().sourceEngine()).isEqualTo(pods.name());
        assertThat(entry(fromPod.manifest(), "work/tool.sh").mode()).isEqualTo(0755);
        // A file the pod left alone keeps its time to the millisecond, the resolution of the tar entry (a PAX header)
        // that carries it into the pod.
        assertThat(entry(fromPod.manifest(), "work/data/numbers.txt").modified())
                .isEqualTo(entry(fromHost.manifest(), "work/data/numbers.txt").modified()
                        .truncatedTo(ChronoUnit.MILLIS));
    }

    private static SnapshotEntry entry(SnapshotManifest m, String path) {
        return m.entries().stream().filter(e -> e.path().equals(path)).findFirst().orElseThrow();
    }

    private static String sha256(SnapshotManifest m, String path) {
        return entry(m, path).sha256();
    }

    private static RunResult run(Engine engine, Workspace ws, String script) {
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args(List.of("-c", script))
                .cwd("work").build());
        assertThat(r.exitCode()).as(r.stderr()).isZero();
        return r;
    }
}
