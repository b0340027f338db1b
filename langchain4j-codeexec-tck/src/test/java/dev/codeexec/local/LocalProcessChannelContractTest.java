package dev.codeexec.local;

import dev.codeexec.spi.host.HostProcessChannel;
import dev.codeexec.spi.host.PidNamespace;
import dev.codeexec.policy.ShellEnvironmentPolicy;
import dev.codeexec.spi.ProcessChannel;
import dev.codeexec.tck.ProcessChannelContractTest;
import dev.codeexec.spi.ProgramLaunch;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;

/** The host channel as the local engine uses it: each program in its own PID namespace. */
class LocalProcessChannelContractTest extends ProcessChannelContractTest {

    @TempDir
    Path dir;

    @Override
    protected ProcessChannel channel() {
        return HostProcessChannel.of(!PidNamespace.wrapper().isEmpty());
    }

    @Override
    protected ProgramLaunch shellLaunch(String script) {
        List<String> argv = new ArrayList<>(PidNamespace.wrapper());
        argv.addAll(List.of("/bin/sh", "-c", script));
        return new ProgramLaunch(argv, Map.of("PATH", ShellEnvironmentPolicy.CLEAN_PATH), dir.toString(), null,
                Duration.ofMinutes(10), 1 << 20, null);
    }
}
