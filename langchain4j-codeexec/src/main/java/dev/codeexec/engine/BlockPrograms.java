package dev.codeexec.engine;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.CodeLanguage;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

/**
 * The one code-block loop of the library: {@link Engine#executeCode}'s default, which runs every block as a script
 * file with the language's interpreter, and, through {@link #execute(Engine, Workspace, CodeExecutionInput, Cells)},
 * the loop of engines with a stateful interpreter (the SPI's {@code InterpreterEngine}), which run some blocks as
 * cells of it.
 *
 * <p>The blocks run in order; the first that fails (a non-zero exit code, or a timeout) ends the loop, and its exit
 * code and timeout are the result's. The output is the blocks' outputs joined; the files are everything under
 * {@code out/} once the loop is over. A script block is written to {@code runs/code_<n>.<ext>} ({@code n} its index
 * among the input's blocks) and run from {@code work/}, with a clean environment where the engine supports one.
 *
 * <p>Part of the backend SPI although it lives here: applications call {@link Engine#executeCode}, not this class.
 * It is public so that the SPI's interpreter base can run the same loop, and it stays in this package because the
 * engine API's default method uses it (the API may not depend on the SPI).
 */
public final class BlockPrograms {

    /** The languages the default runs, in a refusal: {@value}. */
    static final String SCRIPT_LANGUAGES = "python (python, py, python3) and bash (bash, sh, shell) blocks";

    private BlockPrograms() {
    }

    /** What one block left: its text, exit code, whether it timed out and whether its text was cut. */
    public record Outcome(String text, int exitCode, boolean timedOut, boolean truncated) {

        /** True when the block neither failed nor timed out: the loop goes on. */
        public boolean succeeded() {
            return exitCode == 0 && !timedOut;
        }
    }

    /** The cells of an engine's interpreter in one workspace, for the blocks it runs itself. */
    public interface Cells {

        /** True when blocks of this language run as cells; the others run as scripts. */
        boolean runs(CodeLanguage language);

        /** Runs one block as a cell. */
        Outcome run(String code);
    }

    /**
     * Runs the script of one block: by default {@code engine.runner().runProgram(ws, spec)}; an engine may run it
     * another way with the same result (the SPI's warm python path, {@code EngineBuilder#warmPython}).
     */
    @FunctionalInterface
    public interface ScriptRunner {

        /** Runs {@code spec}, the fresh run of a block in {@code language}, or its exact equivalent. */
        RunResult run(CodeLanguage language, Workspace ws, RunProgramSpec spec);
    }

    /**
     * Runs every block as a script: the default of {@link Engine#executeCode}. A block's standard output follows
     * the previous block's output as it is; its standard error starts on a line of its own.
     *
     * @throws InvalidSpecException for a block in a language no interpreter is known for (nothing runs then)
     */
    public static CodeExecutionResult execute(Engine engine, Workspace ws, CodeExecutionInput input) {
        return execute(engine, ws, input, (lang, w, spec) -> engine.runner().runProgram(w, spec));
    }

    /** Like {@link #execute(Engine, Workspace, CodeExecutionInput)}, each script run by {@code scripts}. */
    public static CodeExecutionResult execute(Engine engine, Workspace ws, CodeExecutionInput input,
                                              ScriptRunner scripts) {
        requireLanguages(input, SCRIPT_LANGUAGES);
        return run(engine, ws, input, null, Objects.requireNonNull(scripts, "scripts"));
    }

    /**
     * Runs the blocks that {@code cells} runs as its cells and the others as scripts. Each block's output starts on a
     * line of its own. The blocks' languages must have been checked ({@link #requireLanguages}).
     */
    public static CodeExecutionResult execute(Engine engine, Workspace ws, CodeExecutionInput input, Cells cells) {
        return run(engine, ws, input, Objects.requireNonNull(cells, "cells"),
                (lang, w, spec) -> engine.runner().runProgram(w, spec));
    }

    /**
     * Checks that every block's language is one the library knows ({@link CodeLanguage#forTag}).
     *
     * @param runs what the engine runs, for the refusal: {@code unsupported language 'x'; this engine runs <runs>}
     * @throws InvalidSpecException naming the first block in an unknown language
     */
    public static void requireLanguages(CodeExecutionInput input, String runs) {
        for (CodeBlock b : input.codeBlocks()) {
            if (CodeLanguage.forTag(b.language()).isEmpty()) {
                throw new InvalidSpecException("unsupported language '" + b.language() + "'; this engine runs " + runs);
            }
        }
    }

    private static CodeExecutionResult run(Engine engine, Workspace ws, CodeExecutionInput input, Cells cells,
                                           ScriptRunner scripts) {
        StringBuilder output = new StringBuilder();
        int exitCode = 0;
        boolean timedOut = false;
        boolean truncated = false;
        for (int i = 0; i < input.codeBlocks().size(); i++) {
            CodeBlock block = input.codeBlocks().get(i);
            CodeLanguage lang = CodeLanguage.forTag(block.language()).orElseThrow();
            Outcome o;
            if (cells != null && cells.runs(lang)) {
                o = cells.run(block.code());
                onLineOfItsOwn(output, o.text());
            } else {
                RunResult r = script(engine, ws, input, i, lang, scripts);
                if (cells == null) {
                    output.append(r.stdout());
                } else {
                    onLineOfItsOwn(output, r.stdout());
                }
                onLineOfItsOwn(output, r.stderr());
                o = new Outcome("", r.exitCode(), r.timedOut(), r.truncated());
            }
            exitCode = o.exitCode();
            timedOut = o.timedOut();
            truncated |= o.truncated();
            if (!o.succeeded()) {
                break;
            }
        }
        OutputManifest files = engine.fs().collectOutputs(ws, OutputSpec.DEFAULT);
        return new CodeExecutionResult(output.toString(), files.files(), exitCode, timedOut,
                truncated || files.anyLimitHit());
    }

    /** Writes block {@code i} to {@code runs/} and runs it from {@code work/} with its language's interpreter. */
    private static RunResult script(Engine engine, Workspace ws, CodeExecutionInput input, int i, CodeLanguage lang,
                                    ScriptRunner scripts) {
        // Scripts are helper files of the run: runs/ keeps them out of work/ and out/, which hold the model's data.
        String file = "code_" + i + "." + lang.fileExtension();
        engine.fs().putFiles(ws, List.of(PutFile.of("runs/" + file,
                input.codeBlocks().get(i).code().getBytes(StandardCharsets.UTF_8), lang.fileMode())));
        // Model-written snippets never see the host's environment where the engine can prevent it.
        return scripts.run(lang, ws, RunProgramSpec.builder(lang.interpreter()).args("../runs/" + file)
                .cwd("work").cleanEnv(engine.describe().supportsCleanEnv()).timeout(input.timeout()).build());
    }

    /** Appends non-empty text, after a line break when the output so far does not end with one. */
    private static void onLineOfItsOwn(StringBuilder output, String text) {
        if (text.isEmpty()) {
            return;
        }
        if (output.length() > 0 && output.charAt(output.length() - 1) != '\n') {
            output.append('\n');
        }
        output.append(text);
    }
}
