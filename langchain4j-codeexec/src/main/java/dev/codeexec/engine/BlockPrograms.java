package dev.codeexec.engine;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.CodeLanguage;
import java.util.ArrayList;
import java.util.List;

/** Runs code blocks as script files with the language's interpreter: the default of {@link Engine#executeCode}. */
final class BlockPrograms {

    private BlockPrograms() {
    }

    static CodeExecutionResult execute(Engine engine, Workspace ws, CodeExecutionInput input) {
        List<CodeLanguage> languages = new ArrayList<>();
        for (CodeBlock b : input.codeBlocks()) {
            languages.add(CodeLanguage.forTag(b.language()).orElseThrow(() -> new InvalidSpecException(
                    "unsupported language '" + b.language() + "'; this engine runs python (python, py, python3) "
                            + "and bash (bash, sh, shell) blocks")));
        }
        StringBuilder output = new StringBuilder();
        int exitCode = 0;
        boolean timedOut = false;
        boolean truncated = false;
        for (int i = 0; i < input.codeBlocks().size(); i++) {
            CodeLanguage lang = languages.get(i);
            // Scripts are helper files of the run: runs/ keeps them out of work/ and out/, which hold the model's data.
            String file = "code_" + i + "." + lang.fileExtension();
            engine.fs().putFiles(ws, List.of(PutFile.of("runs/" + file,
                    input.codeBlocks().get(i).code().getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    lang.fileMode())));
            // Model-written snippets never see the host's environment where the engine can prevent it.
            RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder(lang.interpreter()).args("../runs/" + file)
                    .cwd("work").cleanEnv(engine.describe().supportsCleanEnv()).timeout(input.timeout()).build());
            output.append(r.stdout());
            if (!r.stderr().isEmpty()) {
                if (output.length() > 0 && output.charAt(output.length() - 1) != '\n') {
                    output.append('\n');
                }
                output.append(r.stderr());
            }
            exitCode = r.exitCode();
            timedOut = r.timedOut();
            truncated |= r.truncated();
            if (!r.succeeded()) {
                break;
            }
        }
        OutputManifest files = engine.fs().collectOutputs(ws, OutputSpec.DEFAULT);
        return new CodeExecutionResult(output.toString(), files.files(), exitCode, timedOut,
                truncated || files.anyLimitHit());
    }
}
