package dev.codeexec.e2b;

import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.spi.PreparedRun;
import dev.codeexec.spi.ProcessChannel;
import dev.codeexec.tck.ProcessChannelContractTest;
import dev.codeexec.spi.ProgramLaunch;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The envd process channel as runs use it, against the fake E2B whose envd really starts them: each launch is the
 * exact Start a session gets (the PID namespace, setpriv, the signal-forwarding PID 1, env -i), so stdin must reach
 * end of file through SendInput/CloseStdin, TERM must reach the program through the helper, and SendSignal's kill
 * must end a detached daemon that holds the output.
 */
class E2bProcessChannelContractTest extends ProcessChannelContractTest {

    @RegisterExtension
    static final FakeE2bExtension FAKE = FakeE2bExtension.host("e2b-channel");
    private static E2bEngine engine;
    private static Workspace ws;
    private PreparedRun prepared;
    private String script;

    @BeforeAll
    static void startEngine() throws Exception {
        engine = FAKE.closing(FAKE.engine().build());
        ws = engine.manager().createWorkspace("channel", WorkspacePolicy.DEFAULT);
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
                    .timeout(Duration.ofMinutes(10)).build(), true);
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
