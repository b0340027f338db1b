package dev.codeexec.jupyter;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;

/**
 * A JVM that starts a kernel and then waits to be killed, for the test that no kernel outlives its JVM. Prints
 * {@code READY <state directory>} once its kernel answered: the kernel's command line contains that directory.
 * Argument: the directory for its workspaces.
 */
public final class JupyterKernelHolder {

    private JupyterKernelHolder() {
    }

    public static void main(String[] args) throws Exception {
        JupyterEngine engine = JupyterEngine.builder().rootDir(java.nio.file.Path.of(args[0])).build();
        Workspace ws = engine.manager().createWorkspace("holder", WorkspacePolicy.DEFAULT);
        engine.executeCode(ws, CodeExecutionInput.of(CodeBlock.of("python", "x = 1")));
        System.out.println("READY " + engine.stateDir());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
