package dev.codeexec.langchain4j;

import dev.codeexec.engine.Engine;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.invocation.InvocationParameters;
import dev.langchain4j.service.memory.ChatMemoryService;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides where a tool call runs, from its {@link InvocationContext}: the engine
 * ({@link CodeExecution#ENGINE_PARAMETER} or the configured one) and the workspace key
 * ({@link CodeExecution#WORKSPACE_ID_PARAMETER}, else the chat memory id). A call without either key lands in the
 * shared {@code "default"} workspace: logged once, or refused when the application requires a memory id.
 */
final class ToolCallResolver {

    private static final Logger log = LoggerFactory.getLogger(ToolCallResolver.class);

    private final Engine defaultEngine;
    private final boolean requireMemoryId;
    private final ToolGovernance governance;
    private final AtomicBoolean warnedSharedWorkspace = new AtomicBoolean();

    ToolCallResolver(Engine defaultEngine, boolean requireMemoryId, ToolGovernance governance) {
        this.defaultEngine = defaultEngine;
        this.requireMemoryId = requireMemoryId;
        this.governance = governance;
    }

    /** The engine a call with this context runs on: the invocation's override, else the configured one. */
    Engine engine(InvocationContext ctx) {
        InvocationParameters params = ctx == null ? null : ctx.invocationParameters();
        Object e = params == null ? null : params.get(CodeExecution.ENGINE_PARAMETER);
        return e instanceof Engine override ? override : defaultEngine;
    }

    /**
     * @throws ToolRefusal {@code memory_id_required} when the call has no conversation and the application forbids
     *                     the shared workspace
     */
    ToolCall resolve(InvocationContext ctx, WorkspaceTool tool, ToolArguments args) {
        InvocationParameters params = ctx == null ? null : ctx.invocationParameters();
        Engine engine = engine(params);
        String key = null;
        if (params != null) {
            Object w = params.get(CodeExecution.WORKSPACE_ID_PARAMETER);
            if (w != null && !w.toString().isBlank()) {
                key = w.toString();
            }
        }
        if (key == null) {
            key = memoryKey(ctx);
        }
        UserMessage user = null;
        String invocation = null;
        if (ctx != null) {
            try {
                user = ctx.userMessage();
            } catch (RuntimeException ignored) {
                // contexts built by hand may not carry one
            }
            UUID id = ctx.invocationId();
            invocation = id == null ? null : id.toString();
        }
        return new ToolCall(engine, key, user, invocation, tool, args, governance);
    }

    /** The engine of an invocation: {@link CodeExecution#ENGINE_PARAMETER} when it holds one, else the configured. */
    Engine engine(InvocationParameters params) {
        Object e = params == null ? null : params.get(CodeExecution.ENGINE_PARAMETER);
        if (e instanceof Engine override) {
            return override;
        }
        if (e != null) {
            log.warn("invocation parameter {} is a {}, not an Engine; using the configured engine",
                    CodeExecution.ENGINE_PARAMETER, e.getClass().getName());
        }
        return defaultEngine;
    }

    private String memoryKey(InvocationContext ctx) {
        Object memoryId = ctx == null ? null : ctx.chatMemoryId();
        String key = memoryId == null ? ChatMemoryService.DEFAULT : memoryId.toString();
        if (ChatMemoryService.DEFAULT.equals(key)) {
            if (requireMemoryId) {
                throw new ToolRefusal(ToolErrorKind.MEMORY_ID_REQUIRED, "this assistant has no conversation id, so "
                        + "all its users would share one workspace, and the application forbids that. Nothing was run. "
                        + "Answer without the workspace tools.");
            }
            if (warnedSharedWorkspace.compareAndSet(false, true)) {
                log.warn("Workspace tools called without a @MemoryId: every caller of this AI service shares the "
                        + "workspace '{}'. Add a @MemoryId parameter, pass the '{}' invocation parameter, or set "
                        + "CodeExecution.builder().requireMemoryId(true) to refuse.", key,
                        CodeExecution.WORKSPACE_ID_PARAMETER);
            }
        }
        return key;
    }
}
