package dev.codeexec.langchain4j;

/**
 * The implementation of one workspace tool, as LangChain4j gives each tool its own
 * {@link dev.langchain4j.service.tool.ToolExecutor}. {@link ToolRuntime} resolves the call's engine and workspace key
 * first and turns whatever a handler throws into an error result ({@link ToolErrors}).
 *
 * <p>Order of work in every handler: validate the arguments (a bad argument changes nothing and creates no
 * workspace), then do the work in the conversation's workspace through {@link ToolWorkspaces}, which takes the
 * workspace's lock and stages the user's attached files first.
 */
interface ToolHandler {

    /**
     * Runs one call.
     *
     * @throws ToolArguments.InvalidArgument      for a bad argument
     * @throws ToolRefusal                        for a refusal the tools decide themselves
     * @throws dev.codeexec.engine.CodeExecException for what the engine could not do
     */
    ToolResult handle(ToolCall call, ToolArguments args);
}
