package dev.codeexec.container;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.spi.ProcessChannel;
import dev.codeexec.tck.ProcessChannelContractTest;
import dev.codeexec.spi.ProgramLaunch;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/**
 * The exec channel as runs use it: each launch is the exact exec a run gets (the wrapper, the run's own group, framed
 * stdin), so stdin must reach end of file, signals must reach the program and a tree kill must end a detached daemon.
 */
class ContainerProcessChannelContractTest extends ProcessChannelContractTest {

    private static ContainerEngine engine;
    private static Workspace ws;
    private PreparedRun prepared;

    @BeforeAll
    static void startEngine() {
        ContainerTesting.requireDocker();
        engine = ContainerTesting.engine().build();
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

    private PreparedRun prepared(String script) {
        prepared = engine.prepare(ws, RunProgramSpec.builder("/bin/sh").args("-c", script)
                .timeout(Duration.ofMinutes(10)).build());
        return prepared;
    }

    private String script;

    @Override
    protected ProcessChannel channel() {
        return (launch, sink) -> prepared(script).channel().start(prepared.launch(), sink);
    }

    @Override
    protected ProgramLaunch shellLaunch(String script) {
        this.script = script;
        return new ProgramLaunch(java.util.List.of("/bin/sh", "-c", script), java.util.Map.of(), "/",
                null, Duration.ofMinutes(10), 1 << 20, null);
    }
}
