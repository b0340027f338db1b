package dev.codeexec.langchain4j;

/**
 * The implementation of one workspace tool, as LangChain4j gives each tool its own
 * {@link dev.langchain4j.service.tool.ToolExecutor}: it validates the call's arguments and declares its work
 * ({@link ToolWork}: alone, reading, changing or running). The {@link ToolPipeline} does everything around it:
 * resolving the call, the approval, the workspace lock, attachments, change tracking, events, and turning what a
 * handler throws into an error result ({@link ToolErrors}).
 *
 * <p>A bad argument is thrown from {@link #prepare} itself, so that it changes nothing and creates no workspace.
 */
interface ToolHandler {

    /**
     * Validates one call's arguments and returns its work.
     *
     * @throws ToolArguments.InvalidArgument      for a bad argument (from here or from the work)
     * @throws ToolRefusal                        for a refusal the tools decide themselves
     * @throws dev.codeexec.engine.CodeExecException for what the engine could not do
     */
    ToolWork prepare(ToolCall call, ToolArguments args);
}
