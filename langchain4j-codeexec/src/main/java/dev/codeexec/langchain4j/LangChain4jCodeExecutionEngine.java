package dev.codeexec.langchain4j;

import dev.langchain4j.code.CodeExecutionEngine;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.invocation.InvocationParameters;
import java.util.Map;
import java.util.UUID;

/**
 * {@link CodeExecutionEngine} over the {@code execute_code} tool: code runs in one conversation's workspace, under the
 * same policy and limits, and the answer is the tool's result text (exit code, timed-out and truncation first).
 */
final class LangChain4jCodeExecutionEngine implements CodeExecutionEngine {

    private final ToolRuntime runtime;
    private final String key;
    private final String language;

    LangChain4jCodeExecutionEngine(ToolRuntime runtime, String key, String language) {
        this.runtime = runtime;
        this.key = key;
        this.language = language;
    }

    @Override
    public String execute(String code) {
        InvocationContext ctx = InvocationContext.builder().invocationId(UUID.randomUUID()).chatMemoryId(key)
                .invocationParameters(InvocationParameters.from(Map.of(CodeExecution.WORKSPACE_ID_PARAMETER, key)))
                .timestampNow().build();
        return runtime.call(WorkspaceTool.EXECUTE_CODE,
                new ToolArguments(Map.of("language", language, "code", code == null ? "" : code)), ctx).text();
    }
}
