package dev.codeexec.spi;

import dev.codeexec.engine.RunResult;
import dev.codeexec.workspace.RunHistory;
import dev.codeexec.workspace.WorkspaceLayout;
import java.util.Objects;

/**
 * A run a backend has planned: the channel and launch to start, and what to do with the result and afterwards.
 * {@link AbstractEngine} starts it through {@link ProgramRuns} and always calls {@link #release()} once: after a run,
 * when a session is closed, or when the start failed.
 *
 * <p>Backends with per-run state (a control group, private files, a status channel that tells a failed setup from
 * the program's own result) subclass it.
 */
public class PreparedRun {

    private final ProcessChannel channel;
    private final ProgramLaunch launch;

    public PreparedRun(ProcessChannel channel, ProgramLaunch launch) {
        this.channel = Objects.requireNonNull(channel, "channel");
        this.launch = Objects.requireNonNull(launch, "launch");
    }

    public final ProcessChannel channel() {
        return channel;
    }

    public final ProgramLaunch launch() {
        return launch;
    }

    /**
     * The name of the run's folder under {@code runs/} (for example {@code run_20260105T101502.113_7}), or null when it
     * has none: the run history never deletes it while the run goes on, and a long output stream is saved in it. The
     * default reads it from the launch's {@code RUN_DIR}; a backend whose launch carries no environment (the program's
     * travels another way, as bubblewrap's {@code --setenv}) overrides it.
     */
    public String runFolder() {
        return RunHistory.folderName(launch.environment().get(WorkspaceLayout.ENV_RUN_DIR));
    }

    /**
     * Checks a finished run's result before it is returned, and may replace it or throw a typed exception (for
     * example when the backend's own setup failed and nothing ran). The default returns it unchanged.
     */
    public RunResult check(RunResult result) {
        return result;
    }

    /** Releases per-run resources; called exactly once, after the program is gone. The default does nothing. */
    public void release() {
    }
}
