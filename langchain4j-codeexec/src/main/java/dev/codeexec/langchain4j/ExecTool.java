package dev.codeexec.langchain4j;

import dev.codeexec.engine.InteractiveProgramRunner;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * {@code workspace_exec}: runs a shell command line in the workspace and reports exit code, time-out, truncation,
 * output and changed files; with {@code background=true} starts a background session instead.
 */
final class ExecTool implements ToolHandler {

    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final int MAX_ENV_ENTRIES = 64;
    private static final int MAX_COMMAND_CHARS = 64 * 1024;

    private final ToolSettings settings;
    private final CommandSpecs commands;
    private final SessionCalls sessions;

    ExecTool(ToolSettings settings, CommandSpecs commands, SessionCalls sessions) {
        this.settings = settings;
        this.commands = commands;
        this.sessions = sessions;
    }

    @Override
    public ToolWork prepare(ToolCall call, ToolArguments args) {
        String command = args.requiredString("command", "cmd");
        if (command.length() > MAX_COMMAND_CHARS) {
            throw new InvalidArgument("'command' is " + command.length() + " characters; the limit is "
                    + MAX_COMMAND_CHARS + ". Write a script with " + settings.name(WorkspaceTool.WRITE_FILE)
                    + " and run it");
        }
        String cwd = ToolPaths.normalize(args.string("cwd", "workdir"), "cwd");
        Map<String, String> env = env(args.stringMap("env"));
        String stdin = args.string("stdin");
        if (stdin != null && stdin.length() > RunArguments.MAX_STDIN_CHARS) {
            throw new InvalidArgument("'stdin' is " + stdin.length() + " characters; the limit is "
                    + RunArguments.MAX_STDIN_CHARS + ". Write it to a file and redirect from it");
        }
        boolean background = Boolean.TRUE.equals(args.bool("background"));
        Duration timeout = RunArguments.timeout(args, settings, background);
        Duration yield = RunArguments.yield(args, settings);

        if (background) {
            InteractiveProgramRunner runner = call.engine().interactive().orElseThrow(() -> new ToolRefusal(
                    ToolErrorKind.UNSUPPORTED, "background sessions need an engine with interactive sessions, and the '"
                    + call.engine().name() + "' engine has none. Nothing was started; run the command without "
                    + "background=true (it may run up to " + settings.maxTimeout().toSeconds() + " seconds)."));
            return ToolWork.changing(ws -> sessions.start(call, ws, runner,
                    commands.command(call.engine(), ws, command, env, cwd, stdin, timeout), yield));
        }
        return ToolWork.running(ws -> {
            // decided per call, in the workspace, on the files the command will execute there
            RunProgramSpec spec = commands.command(call.engine(), ws, command, env, cwd, stdin, timeout);
            return new ToolWork.Run<>(() -> call.runProgram(ws, spec), this::result);
        });
    }

    private ToolResult result(RunResult r, ChangedFiles changed) {
        return ToolResult.ofRun(ResultText.run(r, settings.maxOutputBytes(), changed), r.exitCode(), r.timedOut(),
                r.truncated(), r.duration(), changed);
    }

    private static Map<String, String> env(Map<String, String> env) {
        if (env.size() > MAX_ENV_ENTRIES) {
            throw new InvalidArgument("'env' has " + env.size() + " entries; the limit is " + MAX_ENV_ENTRIES);
        }
        for (Map.Entry<String, String> e : env.entrySet()) {
            if (!ENV_NAME.matcher(e.getKey()).matches()) {
                throw new InvalidArgument("'env' name " + ToolArguments.echo(e.getKey())
                        + " is not a valid variable name (letters, digits and _; not starting with a digit)");
            }
            if (e.getValue().indexOf('\0') >= 0) {
                throw new InvalidArgument("'env." + e.getKey() + "' must not contain a NUL character");
            }
        }
        return env;
    }
}
