package dev.codeexec.sandbox;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.EgressContractTest;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import dev.codeexec.network.WorkspaceEgress;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/** The egress contract on real bubblewrap: the proxy's socket bound into each sandbox, its forwarder and filter. */
class SandboxEgressContractIT extends EgressContractTest {

    @TempDir
    Path tmp;

    @BeforeAll
    static void requireSandbox() {
        SandboxTesting.requireSandbox();
    }

    @Override
    protected Engine createEngine(EgressPolicy policy, EgressProxy.Builder proxy) {
        return SandboxEngine.builder().rootDir(tmp.resolve("root")).egress(policy).egressProxy(proxy).build();
    }

    @Override
    protected WorkspaceEgress egressOf(Engine engine) {
        return ((SandboxEngine) engine).egress().orElseThrow();
    }
}
