package dev.codeexec.sandbox;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.spi.host.HostProcessChannel;
import dev.codeexec.spi.ProcessChannel;
import dev.codeexec.tck.ProcessChannelContractTest;
import dev.codeexec.spi.ProgramLaunch;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The host channel as the sandbox uses it: the launch is the exact command line a run gets (launcher shell,
 * bubblewrap, seccomp), so signals must reach the program inside the namespace and a tree kill must end it.
 */
class SandboxProcessChannelContractTest extends ProcessChannelContractTest {

    private static SandboxEngine engine;
    private static Workspace ws;

    @BeforeAll
    static void startEngine() {
        SandboxTesting.requireSandbox();
        engine = SandboxEngine.create();
        ws = engine.manager().createWorkspace("channel", WorkspacePolicy.DEFAULT);
    }

    @AfterAll
    static void closeEngine() {
        if (engine != null) {
            engine.close();
        }
    }

    @Override
    protected ProcessChannel channel() {
        return HostProcessChannel.wrapped();
    }

    @Override
    protected ProgramLaunch shellLaunch(String script) {
        return engine.plannedLaunch(ws, RunProgramSpec.builder("/bin/sh").args("-c", script)
                .timeout(Duration.ofMinutes(10)).build(), AdditionalPermissions.NONE);
    }
}
