package dev.codeexec.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.invocation.InvocationParameters;
import dev.langchain4j.service.tool.AiServiceTool;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.service.tool.ToolProviderRequest;
import java.util.UUID;

/** Calls one tool of a {@link CodeExecution} the way AiServices does, through its tool provider. */
public final class ToolCalls {

    private ToolCalls() {
    }

    /** Calls {@code tool} with the JSON {@code arguments} in conversation {@code conversation}. */
    public static ToolExecutionResult call(CodeExecution codeExec, String conversation, String tool, String arguments) {
        InvocationContext ctx = InvocationContext.builder().invocationId(UUID.randomUUID()).chatMemoryId(conversation)
                .invocationParameters(new InvocationParameters()).timestampNow().build();
        AiServiceTool t = codeExec.toolProvider().provideTools(ToolProviderRequest.builder().invocationContext(ctx)
                .userMessage(UserMessage.from("x")).build()).aiServiceTools().stream()
                .filter(x -> x.name().equals(tool)).findFirst().orElseThrow();
        return t.toolExecutor().executeWithContext(ToolExecutionRequest.builder().id("call-1").name(tool)
                .arguments(arguments).build(), ctx);
    }
}
