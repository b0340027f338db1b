package dev.codeexec.langchain4j;

import dev.codeexec.engine.Engine;
import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import dev.langchain4j.agent.tool.SearchBehavior;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.agent.tool.ToolSpecifications;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.invocation.InvocationParameters;
import dev.langchain4j.service.tool.AiServiceTool;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.service.tool.ToolExecutor;
import dev.langchain4j.service.tool.ToolProvider;
import dev.langchain4j.service.tool.ToolProviderRequest;
import dev.langchain4j.service.tool.ToolProviderResult;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The workspace tools as a {@link ToolProvider}: configurable names, arguments validated here (so a malformed call is
 * a tool result, not a failed invocation), and {@link ToolExecutionResult}s with {@code isError} and attributes. The
 * specifications are derived from the {@code @Tool} methods of {@link WorkspaceTools}, so both faces always offer the
 * same parameters.
 *
 * <p>The artifact tools are offered only when the invocation's engine has an artifact store (the application's, or
 * the engine's own): without one they could only fail, and the other tools' descriptions then do not mention them.
 */
final class WorkspaceToolProvider implements ToolProvider {

    private static final Set<WorkspaceTool> ARTIFACT_TOOLS = EnumSet.of(WorkspaceTool.SAVE_ARTIFACT,
            WorkspaceTool.STAGE_ARTIFACT, WorkspaceTool.SNAPSHOT, WorkspaceTool.RESTORE);

    private final ToolRuntime runtime;
    /**
     * The enabled tools in four descriptions: with or without the artifact tools (engines without an artifact store
     * are offered none, and the other descriptions do not mention them), and for engines whose python blocks keep
     * their state or not ({@code execute_code} says which). Index: artifacts 1, stateful 2.
     */
    private final List<List<AiServiceTool>> variants = new ArrayList<>();

    WorkspaceToolProvider(ToolRuntime runtime, boolean policy) {
        this.runtime = runtime;
        for (int i = 0; i < 4; i++) {
            variants.add(build(runtime, policy, (i & 1) != 0, (i & 2) != 0));
        }
    }

    private static List<AiServiceTool> build(ToolRuntime runtime, boolean policy, boolean artifacts,
                                             boolean stateful) {
        ToolSettings s = runtime.settings();
        Map<WorkspaceTool, ToolSpecification> specs = specifications(s, policy, artifacts, stateful);
        List<AiServiceTool> list = new ArrayList<>();
        for (WorkspaceTool t : WorkspaceTool.values()) {
            if (s.enabled().contains(t) && (artifacts || !ARTIFACT_TOOLS.contains(t))) {
                list.add(AiServiceTool.builder().toolSpecification(specs.get(t))
                        .toolExecutor(new Executor(runtime, t)).build());
            }
        }
        return List.copyOf(list);
    }

    private List<AiServiceTool> variant(Engine engine, boolean artifacts) {
        return variants.get((artifacts ? 1 : 0) + (engine.describe().statefulCells() ? 2 : 0));
    }

    @Override
    public ToolProviderResult provideTools(ToolProviderRequest request) {
        InvocationParameters params = request == null ? null : request.invocationParameters();
        Engine engine = runtime.engineFor(params);
        return new ToolProviderResult(variant(engine, runtime.hasArtifactStore(engine)));
    }

    /** Every enabled tool, artifact tools included, described for the default engine. */
    List<AiServiceTool> tools() {
        return variant(runtime.defaultEngine(), true);
    }

    /**
     * Specifications with configured names and rendered descriptions, marked always visible for tool search.
     *
     * @param artifacts whether the descriptions may point to the artifact tools
     * @param stateful  whether the engine's python blocks keep their state ({@code Capabilities#statefulCells})
     */
    static Map<WorkspaceTool, ToolSpecification> specifications(ToolSettings s, boolean policy, boolean artifacts,
                                                                boolean stateful) {
        Map<WorkspaceTool, ToolSpecification> out = new EnumMap<>(WorkspaceTool.class);
        for (Method m : WorkspaceTools.class.getDeclaredMethods()) {
            Tool ann = m.getAnnotation(Tool.class);
            if (ann == null) {
                continue;
            }
            WorkspaceTool t = byDefaultName(ann.name());
            ToolSpecification spec = ToolSpecifications.toolSpecificationFrom(m);
            out.put(t, spec.toBuilder().name(s.name(t)).description(ToolDescriptions.render(t, s, policy, artifacts,
                            stateful))
                    .addMetadata(ToolSpecification.METADATA_SEARCH_BEHAVIOR, SearchBehavior.ALWAYS_VISIBLE)
                    .build());
        }
        return out;
    }

    private static WorkspaceTool byDefaultName(String name) {
        for (WorkspaceTool t : WorkspaceTool.values()) {
            if (t.defaultName().equals(name)) {
                return t;
            }
        }
        throw new IllegalStateException("no WorkspaceTool named " + name);
    }

    /** Runs one tool through the shared runtime. */
    private static final class Executor implements ToolExecutor {
        private final ToolRuntime runtime;
        private final WorkspaceTool tool;

        Executor(ToolRuntime runtime, WorkspaceTool tool) {
            this.runtime = runtime;
            this.tool = tool;
        }

        @Override
        public String execute(ToolExecutionRequest request, Object memoryId) {
            return executeWithContext(request, InvocationContext.builder().chatMemoryId(memoryId).build())
                    .resultText();
        }

        @Override
        public ToolExecutionResult executeWithContext(ToolExecutionRequest request, InvocationContext context) {
            ToolResult r;
            try {
                long maxWrite = runtime.settings().maxWriteBytes();
                // A JSON escape is at most six characters long: anything longer cannot be a valid write.
                r = runtime.call(tool, ToolArguments.parse(request.arguments(), maxWrite * 6 + (1 << 20), maxWrite),
                        context);
            } catch (InvalidArgument e) {
                r = ToolResult.error(ToolErrorKind.INVALID_ARGUMENT, e.getMessage() + ". Nothing was run or changed.");
            }
            return ToolExecutionResult.builder().isError(r.isError()).resultText(r.text())
                    .attributes(r.attributes()).build();
        }
    }
}
