package dev.codeexec.langchain4j;

/**
 * Writes the result text of a program run (exit code, time-out, truncation, output, the files it changed) once the
 * run and its change tracking are done; other work answers with its own result.
 */
final class ResultTextStep implements ToolStep {

    @Override
    public ToolResult intercept(ToolChain chain) {
        ToolResult r = chain.proceed();
        return chain.run() == null ? r : chain.run().text(chain.changed());
    }
}
