package dev.codeexec.jupyter;

import dev.codeexec.CodeExecutionInput;
import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.ProgramRunner;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceManager;

/**
 * An engine without its kernel: {@link Engine#executeCode(Workspace, CodeExecutionInput)}'s default (blocks run as
 * scripts through {@link #runner()}) over the engine's own workspaces, files and runner. {@link JupyterEngine} runs
 * its non-python blocks through it, since the default cannot be called as a super method there (AbstractEngine
 * already implements Engine) and the core's block runner is not public.
 */
final class ScriptsView implements Engine {

    private final Engine engine;

    ScriptsView(Engine engine) {
        this.engine = engine;
    }

    @Override
    public String name() {
        return engine.name();
    }

    @Override
    public WorkspaceManager manager() {
        return engine.manager();
    }

    @Override
    public WorkspaceFS fs() {
        return engine.fs();
    }

    @Override
    public ProgramRunner runner() {
        return engine.runner();
    }

    @Override
    public Capabilities describe() {
        return engine.describe();
    }

    @Override
    public void close() {
        // A view: the engine closes itself.
    }
}
