package dev.codeexec.langchain4j;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.CodeLanguage;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * {@code execute_code}: runs a snippet (language + code), the tool the response processor calls. Without a command
 * policy the engine's own code executor runs it; with one, the snippet's interpreter runs as a command through the
 * same policy.
 */
final class ExecuteCodeTool implements ToolHandler {

    private final ToolSettings settings;
    private final CommandGate gate;

    /** @param gate the command policy's gate, or null without a policy */
    ExecuteCodeTool(ToolSettings settings, CommandGate gate) {
        this.settings = settings;
        this.gate = gate;
    }

    @Override
    public ToolWork prepare(ToolCall call, ToolArguments args) {
        String language = args.requiredString("language", "lang");
        String code = args.requiredString("code", "source");
        if (code.length() > settings.maxWriteBytes()) {
            throw new InvalidArgument("'code' is " + code.length() + " characters; the limit is "
                    + settings.maxWriteBytes());
        }
        Duration timeout = RunArguments.timeout(args, settings, false);
        CodeBlock block = CodeBlock.of(language, code);
        if (gate != null) {
            gate.requireCleanEnv(call.engine());
            CodeLanguage lang = CodeLanguage.forTag(language).orElseThrow(() -> new ToolRefusal(ToolErrorKind.POLICY,
                    "refused by policy: with a command policy only python and bash code can run, not "
                            + ToolArguments.echo(language) + ". Nothing was run."));
            // The snippet runs as a command would, through the same policy: bash never passes (built-in deny),
            // python only where the policy allows it.
            String script = gate.check(call.engine(), lang.interpreter() + " ../runs/" + scriptName(lang));
            return ToolWork.running(ws -> runScript(call, ws, lang, code, timeout, script));
        }
        // The engine runs the snippet; its default block runner uses a clean environment where it can.
        return ToolWork.running(ws -> {
            long start = System.nanoTime();
            return new ToolWork.Run<CodeExecutionResult>(() -> call.executeCode(ws,
                    new CodeExecutionInput(List.of(block), call.key(), timeout)), (r, changed) -> {
                Duration took = Duration.ofNanos(System.nanoTime() - start);
                return ToolResult.ofRun(ResultText.code(r, took, settings.maxOutputBytes(), changed), r.exitCode(),
                        r.timedOut(), r.truncated(), took, changed);
            });
        }).changingFiles();
    }

    private static String scriptName(CodeLanguage lang) {
        return "code_snippet." + lang.fileExtension();
    }

    /**
     * Runs a snippet with the language's interpreter and a clean environment, from {@code work/} as the current
     * folder, through the command policy's checked command line. The script file goes to {@code runs/}, the folder
     * for per-run helper files, so it neither clutters {@code work/} nor shows up as a changed file.
     */
    private ToolWork.Run<RunResult> runScript(ToolCall call, Workspace ws, CodeLanguage lang, String code,
                                              Duration timeout, String policyScript) {
        String file = scriptName(lang);
        RunProgramSpec.Builder spec = policyScript != null ? RunProgramSpec.builder("sh").args("-c", policyScript)
                : RunProgramSpec.builder(lang.interpreter()).args("../runs/" + file);
        return new ToolWork.Run<>(() -> {
            call.engine().fs().putFiles(ws, List.of(PutFile.of("runs/" + file,
                    code.getBytes(StandardCharsets.UTF_8), lang.fileMode())));
            return call.runProgram(ws, spec.cwd("work").cleanEnv(true).timeout(timeout).build());
        }, (r, changed) -> ToolResult.ofRun(ResultText.run(r, settings.maxOutputBytes(), changed), r.exitCode(),
                r.timedOut(), r.truncated(), r.duration(), changed));
    }
}
