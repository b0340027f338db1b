package dev.codeexec.testing;

import dev.codeexec.engine.Engine;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import java.time.Duration;

/**
 * A child JVM for lifetime tests: builds an engine ({@code <engine class>.create()}), starts a background session
 * running {@code sleep <session marker>} from a short-lived thread, and a run of {@code sleep <run marker>} on another
 * thread in a second workspace, prints {@code ready} and waits to be killed. The test kills it with SIGKILL and checks that both programs
 * die with it.
 *
 * <p>Usage: {@code EngineChild <engine class> <session marker> <run marker>}.
 */
public final class EngineChild {

    private EngineChild() {
    }

    public static void main(String[] args) throws Exception {
        Engine engine = (Engine) Class.forName(args[0]).getMethod("create").invoke(null);
        Workspace ws = engine.manager().createWorkspace("child-session", WorkspacePolicy.DEFAULT);
        // A workspace of its own: the sandbox runs nothing else in a workspace while one of its sessions runs.
        Workspace runs = engine.manager().createWorkspace("child-run", WorkspacePolicy.DEFAULT);
        RunProgramSpec session = RunProgramSpec.builder("sleep").args(args[1]).timeout(Duration.ofMinutes(10)).build();
        // Started from a thread that ends at once: the session must not depend on its caller's thread.
        Thread starter = new Thread(() -> engine.interactive().orElseThrow().startProgram(ws, session),
                "session-starter");
        starter.start();
        starter.join();
        Thread runner = new Thread(() -> engine.runner().runProgram(runs, RunProgramSpec.builder("sleep").args(args[2])
                .timeout(Duration.ofMinutes(10)).build()), "runner");
        runner.setDaemon(true);
        runner.start();
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Duration.ofMinutes(10).toMillis());
    }
}
