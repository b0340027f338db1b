package dev.codeexec.sandbox;

import dev.codeexec.engine.Engine;
import dev.codeexec.tck.EngineContractTest;
import dev.codeexec.testing.Requirements;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;

/** The shared engine contract, run against a real bubblewrap sandbox with the default profile. */
class SandboxEngineContractTest extends EngineContractTest {

    @BeforeAll
    static void requireBubblewrap() {
        Requirements.requireCommand("bwrap");
        Requirements.requireCommand("python3");
    }

    @Override
    protected Engine createEngine() {
        return SandboxEngine.create();
    }

    /**
     * Plus {@code USER} and {@code LOGNAME}: a root JVM's programs run as the sandbox user, whose name the engine sets
     * in every run (its own, not the host's; see {@link SandboxAccounts}).
     */
    @Override
    protected Set<String> cleanEnvAllowedNames() {
        Set<String> names = new HashSet<>(super.cleanEnvAllowedNames());
        names.add("USER");
        names.add("LOGNAME");
        return Set.copyOf(names);
    }
}
