package dev.codeexec.langchain4j;

/** Refuses a tool the application did not enable, before anything else is looked at. */
final class EnabledStep implements ToolStep {

    private final ToolSettings settings;

    EnabledStep(ToolSettings settings) {
        this.settings = settings;
    }

    @Override
    public ToolResult intercept(ToolChain chain) {
        if (!settings.enabled().contains(chain.tool())) {
            return ToolResult.error(ToolErrorKind.TOOL_DISABLED, "the tool '" + settings.name(chain.tool())
                    + "' is not enabled in this application");
        }
        return chain.proceed();
    }
}
