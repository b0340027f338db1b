package dev.codeexec.sandbox;

import static dev.codeexec.sandbox.SandboxTesting.sh;
import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.policy.CommandPolicy;
import dev.codeexec.testing.Requirements;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A command policy's deny list enforced at run time: with {@code hideDeniedExecutables}, a denied program cannot be
 * started by any route a name-based check misses — the dynamic loader, a wrapper that is not denied, an interpreter,
 * a copy — and the same routes work without it.
 */
class SandboxDeniedExecutablesIT extends AbstractSandboxIT {

    /** Every route to {@code touch}; each leaves a file named after it when it works. */
    private static String routes(String loader) {
        return loader + " /usr/bin/touch loader; touch plain; /bin/sh -c 'touch wrapped';"
                + " cp /usr/bin/touch ./mine && ./mine copy; true";
    }

    private static String loader() {
        for (String l : List.of("/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1")) {
            if (Files.exists(Path.of(l))) {
                return l;
            }
        }
        Requirements.require(false, "the glibc dynamic loader");
        return null;
    }

    @Test
    void should_leave_no_route_to_a_denied_executable_when_its_files_are_hidden() {
        String loader = loader();
        CommandPolicy policy = CommandPolicy.builder().deny("touch").build();
        try (SandboxEngine hidden = SandboxEngine.builder().rootDir(tmp.resolve("hidden"))
                .hideDeniedExecutables(policy).build()) {
            Workspace w = hidden.manager().createWorkspace("h", WorkspacePolicy.DEFAULT);
            RunResult r = sh(hidden, w, routes(loader));

            for (String made : List.of("loader", "plain", "wrapped", "copy")) {
                assertThat(Path.of(w.path(), "work", made)).as(made + "; " + r.stderr()).doesNotExist();
            }
        }
        // Positive control: the same routes on the default engine all run the program.
        RunResult open = sh(engine, ws, routes(loader));
        for (String made : List.of("loader", "plain", "wrapped", "copy")) {
            assertThat(Path.of(ws.path(), "work", made)).as(made + "; " + open.stderr()).exists();
        }
    }
}
