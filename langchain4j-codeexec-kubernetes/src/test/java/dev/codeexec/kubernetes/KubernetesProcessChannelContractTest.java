package dev.codeexec.kubernetes;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.spi.ProcessChannel;
import dev.codeexec.spi.ProgramLaunch;
import dev.codeexec.tck.ProcessChannelContractTest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/**
 * The pod exec channel as runs use it: each launch is the exact exec a run gets (the wrapper behind the pod's
 * launcher, protocol v5), so stdin must reach end of file, signals must reach the program and a tree kill must end a
 * detached daemon.
 */
class KubernetesProcessChannelContractTest extends ProcessChannelContractTest {

    private static KubernetesEngine engine;
    private static Workspace ws;
    private PreparedRun prepared;
    private String script;

    @BeforeAll
    static void startEngine() {
        engine = KubernetesTesting.engine().build();
        ws = engine.manager().createWorkspace("channel", WorkspacePolicy.DEFAULT);
    }

    @AfterAll
    static void closeEngine() {
        if (engine != null) {
            engine.close();
        }
    }

    @AfterEach
    void release() {
        if (prepared != null) {
            prepared.release();
        }
    }

    @Override
    protected ProcessChannel channel() {
        return (launch, sink) -> {
            prepared = engine.prepare(ws, RunProgramSpec.builder("/bin/sh").args("-c", script)
                    .timeout(Duration.ofMinutes(10)).build());
            return prepared.channel().start(prepared.launch(), sink);
        };
    }

    @Override
    protected ProgramLaunch shellLaunch(String script) {
        this.script = script;
        return new ProgramLaunch(List.of("/bin/sh", "-c", script), Map.of(), "/", null, Duration.ofMinutes(10),
                1 << 20, null);
    }
}
