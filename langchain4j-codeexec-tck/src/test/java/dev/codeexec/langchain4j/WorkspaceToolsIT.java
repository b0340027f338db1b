package dev.codeexec.langchain4j;

import dev.codeexec.tck.AbstractWorkspaceToolsIT;
import dev.codeexec.engine.Engine;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.testing.Requirements;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;

/** The workspace tools end to end on the local engine, with python from the engine's clean PATH. */
class WorkspaceToolsIT extends AbstractWorkspaceToolsIT {

    @BeforeAll
    static void requirePython() {
        Requirements.requireCommand("python3");
    }

    @Override
    protected Engine createEngine() {
        return LocalEngine.builder().rootDir(base).inputRoots(List.of(inputRoot)).artifactService(artifacts).build();
    }
}
