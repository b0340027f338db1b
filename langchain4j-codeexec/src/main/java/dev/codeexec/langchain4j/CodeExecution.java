package dev.codeexec.langchain4j;

import dev.codeexec.CodeLanguage;
import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.engine.Engine;
import dev.codeexec.governance.ExecutionApprover;
import dev.codeexec.governance.ExecutionListener;
import dev.codeexec.policy.CommandPolicy;
import dev.codeexec.policy.EnvironmentScrubber;
import dev.codeexec.workspace.snapshot.RestoreReceipt;
import dev.codeexec.workspace.snapshot.Snapshot;
import dev.codeexec.workspace.snapshot.SnapshotOptions;
import dev.langchain4j.code.CodeExecutionEngine;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.service.tool.ToolArgumentsErrorHandler;
import dev.langchain4j.service.tool.ToolProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The one entry point that gives a LangChain4j AI service controlled code execution: the workspace tools (as
 * {@code @Tool} methods or as a {@link ToolProvider}), the response processor that runs a lone fenced code block
 * ({@link #wrap(ChatModel)}, {@link #wrap(StreamingChatModel)}), a Java facade on a conversation's workspace for
 * application code ({@link #workspace(Object)}), and an adapter to LangChain4j's {@link CodeExecutionEngine}.
 *
 * <p><b>Warning:</b> everything here runs model-written code with the powers of the configured {@link Engine}. The local
 * engine is not a sandbox. Prefer a sandboxed or container engine, and a command policy, for untrusted input.
 *
 * <pre>{@code
 * CodeExecution codeExec = CodeExecution.builder()
 *         .engine(engine)
 *         .artifactService(artifacts)
 *         .build();
 * Assistant assistant = AiServices.builder(Assistant.class)
 *         .chatModel(codeExec.wrap(model))
 *         .toolProvider(codeExec.toolProvider())
 *         .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(30))
 *         .build();
 * }</pre>
 *
 * <p>Each conversation ({@code @MemoryId}) gets its own workspace, created on first use and kept until
 * {@link #closeWorkspace(Object)} or {@link #close()}, and its own part of the artifact store
 * ({@link Builder#artifactScope}); the invocation parameter {@link #WORKSPACE_ID_PARAMETER} picks
 * another one and {@link #ENGINE_PARAMETER} another engine for one invocation. Calls for one workspace run one at a
 * time (except input to and kills of background sessions, which touch no file). Thread-safe. {@link #close()} removes the workspaces and sessions it created; it does not close the engine.
 */
public final class CodeExecution implements AutoCloseable {

    /**
     * Invocation parameter naming the workspace to use instead of the conversation's memory id: put a string under
     * this key in the {@link dev.langchain4j.invocation.InvocationParameters} passed to the AI service method.
     */
    public static final String WORKSPACE_ID_PARAMETER = "codeexec.workspaceId";

    /**
     * Invocation parameter holding an {@link Engine} to use for this invocation instead of the configured one (a
     * per-run executor override). Its workspaces are separate from the configured engine's.
     */
    public static final String ENGINE_PARAMETER = "codeexec.engine";

    /**
     * User-message attribute holding a {@code List<String>} of file names for the message's file contents (images,
     * PDFs, audio, video), in order; without it names come from the content's URL or MIME type.
     */
    public static final String FILE_NAMES_ATTRIBUTE = AttachmentStager.NAMES_ATTRIBUTE;

    /** {@value}: the {@code PATH} on which policy runs resolve command names, unless configured otherwise. */
    public static final String DEFAULT_POLICY_PATH = dev.codeexec.policy.ShellEnvironmentPolicy.CLEAN_PATH;

    /** {@value} seconds: the time limit of a command when the model gives none. */
    public static final int DEFAULT_TIMEOUT_SECONDS = 60;
    /** {@value} seconds: the longest time limit a model may ask for; also the life of a background session. */
    public static final int DEFAULT_MAX_TIMEOUT_SECONDS = 600;
    /** {@value} bytes: output shown to the model per call; longer output is cut to its head and tail. */
    public static final int DEFAULT_MAX_OUTPUT_BYTES = 16 * 1024;
    /** {@value} bytes: the window {@code workspace_read_file} returns when the model gives none. */
    public static final int DEFAULT_READ_BYTES = 16 * 1024;
    /** {@value} bytes: the largest window {@code workspace_read_file} returns. */
    public static final int DEFAULT_MAX_READ_BYTES = 256 * 1024;
    /** {@value} bytes: the largest file {@code workspace_write_file} writes (after an append, too). */
    public static final long DEFAULT_MAX_WRITE_BYTES = 8L * 1024 * 1024;
    /** {@value} bytes: the largest file saved as or staged from an artifact. */
    public static final long DEFAULT_MAX_ARTIFACT_BYTES = 64L * 1024 * 1024;
    /** {@value} bytes: the largest attached file staged into {@code work/inputs/}. */
    public static final long DEFAULT_MAX_ATTACHMENT_BYTES = 32L * 1024 * 1024;
    /** {@value}: entries {@code workspace_list_files} shows before it says how many more there are. */
    public static final int DEFAULT_MAX_LIST_ENTRIES = 200;
    /** {@value} ms: how long a background-session call waits for output when the model gives no yield. */
    public static final int DEFAULT_SESSION_YIELD_MILLIS = 1000;
    /** {@value} minutes: an exited background session is closed after this long without a call. */
    public static final int DEFAULT_SESSION_TTL_MINUTES = 30;
    /** {@value} minutes: a conversation's workspace unused this long is removed (its files are lost). */
    public static final int DEFAULT_WORKSPACE_IDLE_MINUTES = 60;
    /** {@value}: code blocks run by the response processor per user message before it stops promoting them. */
    public static final int DEFAULT_MAX_CODE_BLOCK_RUNS_PER_TURN = 3;

    /** {@value} seconds: how long a call waits for the approver's answer before it is denied. */
    public static final int DEFAULT_APPROVAL_TIMEOUT_SECONDS = 300;

    private final ToolRuntime runtime;
    private final CodeBlockSettings codeBlocks;
    private final boolean policy;
    private final WorkspaceTools tools;
    private final WorkspaceToolProvider toolProvider;
    private final AtomicBoolean closed = new AtomicBoolean();

    private CodeExecution(Builder b) {
        Engine engine = Objects.requireNonNull(b.engine, "engine must be set: CodeExecution.builder().engine(...)");
        ToolSettings s = b.settings();
        CommandGate gate = CommandGate.of(b.commandPolicy, b.environmentScrubber, b.policyPath);
        this.policy = gate != null;
        Duration approvalTimeout = b.approvalTimeout != null ? b.approvalTimeout
                : Duration.ofSeconds(DEFAULT_APPROVAL_TIMEOUT_SECONDS);
        ToolSettings.Builder.positive(approvalTimeout, "approvalTimeout");
        this.runtime = new ToolRuntime(engine, b.artifactService,
                b.artifactScope != null ? b.artifactScope : ArtifactScope.perConversation(), gate, s, b.approver,
                approvalTimeout, b.listeners, b.snapshotOptions);
        this.codeBlocks = CodeBlockSettings.resolve(b.autoExecute, b.codeBlockMode, b.maxCodeBlockRunsPerTurn,
                b.codeBlockLanguages);
        this.tools = new WorkspaceTools(runtime);
        this.toolProvider = new WorkspaceToolProvider(runtime, policy);
    }

    /** The tools' runtime (for tests in this package). */
    ToolRuntime runtime() {
        return runtime;
    }

    /** A builder; {@link Builder#engine(Engine)} is required. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The tools as {@code @Tool} methods, for {@code AiServices.builder(...).tools(...)}. Prefer
     * {@link #toolProvider()} unless a framework needs {@code @Tool} beans: the provider validates arguments itself,
     * returns {@code isError} and attributes, and honours {@link Builder#toolName}.
     */
    public WorkspaceTools tools() {
        return tools;
    }

    /**
     * The enabled tools as a {@link ToolProvider}, for {@code AiServices.builder(...).toolProvider(...)}: configured
     * names, descriptions with the configured limits, results with {@code isError} and attributes ({@code exit_code},
     * {@code timed_out}, {@code truncated}, {@code duration_ms}, {@code files_changed}, artifact references).
     */
    public ToolProvider toolProvider() {
        return toolProvider;
    }

    /**
     * Wraps a chat model with the response processor: a final answer that is exactly one runnable fenced code block
     * becomes a call of the code-execution tool. Returns {@code model} itself when the processor is off. The service
     * must offer that tool (through {@link #tools()} or {@link #toolProvider()}); requests that do not offer it pass
     * through untouched.
     */
    public ChatModel wrap(ChatModel model) {
        Objects.requireNonNull(model, "model");
        return codeBlocks.mode() == CodeBlockMode.OFF ? model : new CodeBlockPromotingChatModel(model, promotion());
    }

    /** The streaming twin of {@link #wrap(ChatModel)}; works with {@code TokenStream} service methods. */
    public StreamingChatModel wrap(StreamingChatModel model) {
        Objects.requireNonNull(model, "model");
        return codeBlocks.mode() == CodeBlockMode.OFF ? model
                : new CodeBlockPromotingStreamingChatModel(model, promotion());
    }

    private CodeBlockPromotion promotion() {
        return codeBlocks.promotion(runtime.settings().name(WorkspaceTool.EXECUTE_CODE));
    }

    /** What the response processor does; {@link CodeBlockMode#OFF} after {@code autoExecuteCodeBlocks(false)}. */
    public CodeBlockMode codeBlockMode() {
        return codeBlocks.mode();
    }

    /**
     * Application access to a conversation's workspace (the same one its tools use), on the configured engine.
     *
     * @param conversationId the AI service's memory id (any object; its {@code toString()} is the key)
     */
    public WorkspaceIO workspace(Object conversationId) {
        return new WorkspaceIO(runtime, runtime.defaultEngine(), key(conversationId));
    }

    /**
     * Like {@link #workspace(Object)}, on another engine (the one an invocation passes in {@link #ENGINE_PARAMETER}).
     */
    public WorkspaceIO workspace(Object conversationId, Engine engine) {
        return new WorkspaceIO(runtime, Objects.requireNonNull(engine, "engine"), key(conversationId));
    }

    /**
     * An adapter to LangChain4j's {@link CodeExecutionEngine}: {@code execute(code)} runs Python in the conversation's
     * workspace through the {@code execute_code} tool (same policy, limits and result text).
     */
    public CodeExecutionEngine codeExecutionEngine(Object conversationId) {
        return new LangChain4jCodeExecutionEngine(runtime, key(conversationId), "python");
    }

    /**
     * A {@link ToolArgumentsErrorHandler} for {@code AiServices.builder(...).toolArgumentsErrorHandler(...)}: a tool
     * call whose arguments LangChain4j cannot convert (a string where a number is expected, for example) comes back
     * to the model as a readable error instead of failing the whole call. Needed only with {@link #tools()}.
     */
    public ToolArgumentsErrorHandler toolArgumentsErrorHandler() {
        return ToolErrors.ARGUMENTS_ERROR_HANDLER;
    }

    /**
     * A paragraph for a system message that teaches the model the workspace conventions and the tool names. Optional:
     * the tool descriptions already carry the essentials.
     */
    public String workspaceGuidance() {
        ToolSettings s = runtime.settings();
        return ToolDescriptions.guidance(s, s.enabled().contains(WorkspaceTool.SAVE_ARTIFACT)
                && runtime.hasArtifactStore(runtime.defaultEngine()));
    }

    /**
     * Forks a conversation: takes a snapshot of {@code from}'s workspace (the next version of snapshot
     * {@value #FORK_SNAPSHOT} in {@code from}'s scope) and restores it into {@code to}'s workspace, created when it
     * does not exist yet. Each workspace is locked only while it is read or written, never both at once. The new
     * conversation starts with the files, not with the programs or interpreter state (see
     * {@link RestoreReceipt#NOT_CARRIED}).
     *
     * @return the receipt of the restore into {@code to}
     * @throws dev.codeexec.engine.UnsupportedCapabilityException when no artifact store is configured
     */
    public RestoreReceipt fork(Object from, Object to) {
        Snapshot s = workspace(from).snapshot(FORK_SNAPSHOT, runtime.snapshotOptions());
        return workspace(to).restoreFrom(from, s.name(), s.version());
    }

    /** {@value}: the snapshot name {@link #fork(Object, Object)} captures under. */
    public static final String FORK_SNAPSHOT = "fork";

    /** Removes a conversation's workspace and background sessions (on every engine it used). */
    public void closeWorkspace(Object conversationId) {
        runtime.closeWorkspace(key(conversationId));
    }

    /** Removes every workspace and session this instance created. Idempotent; the engine itself stays open. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            runtime.close();
        }
    }

    private static String key(Object conversationId) {
        Objects.requireNonNull(conversationId, "conversationId");
        String k = conversationId.toString();
        if (k.isBlank()) {
            throw new IllegalArgumentException("conversationId must not be blank");
        }
        return k;
    }

    /** Builder of {@link CodeExecution}. Unset values take the documented defaults when {@link #build()} runs. */
    public static final class Builder extends ToolOptions {

        private Engine engine;
        private ArtifactService artifactService;
        private ArtifactScope artifactScope;
        private CommandPolicy commandPolicy;
        private EnvironmentScrubber environmentScrubber;
        private String policyPath;
        private Boolean autoExecute;
        private CodeBlockMode codeBlockMode;
        private Integer maxCodeBlockRunsPerTurn;
        private Set<String> codeBlockLanguages;
        private ExecutionApprover approver;
        private Duration approvalTimeout;
        private final List<ExecutionListener> listeners = new ArrayList<>();
        private SnapshotOptions snapshotOptions;

        private Builder() {
        }

        /** The engine that runs everything (required). {@link CodeExecution#close()} does not close it. */
        public Builder engine(Engine engine) {
            this.engine = engine;
            return this;
        }

        /**
         * Where {@code workspace_save_artifact} saves and {@code workspace_stage_artifact} loads. Default: the
         * engine's own (an engine that is a {@link dev.codeexec.artifact.ArtifactSource}). When neither exists, the
         * {@link CodeExecution#toolProvider()} face does not offer the two artifact tools (nobody could read what they
         * saved), and the {@code @Tool} methods of {@link CodeExecution#tools()}, which cannot be hidden, answer that
         * no store is configured.
         */
        public Builder artifactService(ArtifactService artifactService) {
            this.artifactService = artifactService;
            return this;
        }

        /**
         * Which artifacts a conversation's tools see. Default {@link ArtifactScope#perConversation()}: each
         * conversation saves and stages only under its own prefix ({@code conversations/<key>/}), and the model sees
         * names without it. {@link ArtifactScope#shared()} lets all conversations share one namespace (they can read
         * and overwrite each other's artifacts); {@link ArtifactScope#prefixed} takes a rule of your own. Application
         * code ({@link WorkspaceIO}) uses the store's full names.
         */
        public Builder artifactScope(ArtifactScope scope) {
            this.artifactScope = Objects.requireNonNull(scope, "scope");
            return this;
        }

        /**
         * Checks every {@code workspace_exec} command (and the interpreter of every {@code execute_code} snippet)
         * against a command policy. Policy runs start from a clean environment with the model's variables scrubbed,
         * and are refused on engines that cannot provide a clean environment. Default: none ({@code null} or
         * {@link CommandPolicy#permissive()}), commands run with a full shell. A policy is not a sandbox: see
         * {@link CommandPolicy}.
         */
        public Builder commandPolicy(CommandPolicy policy) {
            this.commandPolicy = policy;
            return this;
        }

        /**
         * Which variables a policy run keeps from the model's {@code env}; default
         * {@link EnvironmentScrubber#defaults()}.
         */
        public Builder environmentScrubber(EnvironmentScrubber scrubber) {
            this.environmentScrubber = Objects.requireNonNull(scrubber, "scrubber");
            return this;
        }

        /**
         * The {@code PATH} on which policy runs resolve command names to absolute paths (on engines that run programs
         * on this host's file system); default {@value CodeExecution#DEFAULT_POLICY_PATH}, the clean {@code PATH} of the
         * local engine.
         */
        public Builder policyPath(String path) {
            if (path == null || path.isBlank()) {
                throw new IllegalArgumentException("policyPath must not be blank");
            }
            this.policyPath = path;
            return this;
        }

        /**
         * Switches the response processor: {@code false} is {@link CodeBlockMode#OFF}; {@code true} (the default)
         * keeps the configured mode, {@link CodeBlockMode#RESULT_TO_MODEL} unless {@link #codeBlockMode} set another.
         */
        public Builder autoExecuteCodeBlocks(boolean enabled) {
            this.autoExecute = enabled;
            return this;
        }

        /** What the response processor does; default {@link CodeBlockMode#RESULT_TO_MODEL}. */
        public Builder codeBlockMode(CodeBlockMode mode) {
            this.codeBlockMode = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /**
         * Most code blocks the processor runs for one user message; then answers pass through as text. Default
         * {@value CodeExecution#DEFAULT_MAX_CODE_BLOCK_RUNS_PER_TURN}.
         */
        public Builder maxCodeBlockRunsPerTurn(int runs) {
            this.maxCodeBlockRunsPerTurn = runs;
            return this;
        }

        /**
         * The fence tags whose lone blocks the processor runs (case-insensitive). Default: the tags of
         * {@link CodeLanguage} ({@code python py python3 bash sh shell}); add more for engines that run other
         * languages. A lone block in any other language is returned as text.
         */
        public Builder codeBlockLanguages(String... tags) {
            if (tags.length == 0) {
                throw new IllegalArgumentException("codeBlockLanguages: give at least one tag, or switch the processor "
                        + "off with autoExecuteCodeBlocks(false)");
            }
            this.codeBlockLanguages = Set.of(tags);
            return this;
        }

        /**
         * Asks {@code approver} before every command, code snippet, file write, artifact stage and artifact save of
         * the tools and the response processor, after the arguments were validated and the command policy accepted
         * them; a denied call runs nothing and the model reads why. Default none: everything the policy and the
         * engine allow runs. See {@link ExecutionApprover} and {@code docs/approval.md}.
         */
        public Builder approver(ExecutionApprover approver) {
            this.approver = approver;
            return this;
        }

        /**
         * How long a call waits for the approver's answer; then it is denied. Default
         * {@value CodeExecution#DEFAULT_APPROVAL_TIMEOUT_SECONDS} seconds.
         */
        public Builder approvalTimeout(Duration timeout) {
            this.approvalTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * Adds a listener for the tools' {@link dev.codeexec.governance.ExecutionEvent}s (workspaces, runs, sessions,
         * files, artifacts, refusals), for example {@link dev.codeexec.governance.AuditLogListener}. Listeners are
         * called in the order added; one that throws never breaks a run. See {@code docs/events.md}.
         */
        public Builder listener(ExecutionListener listener) {
            this.listeners.add(Objects.requireNonNull(listener, "listener"));
            return this;
        }

        /**
         * What {@code workspace_snapshot} (and {@link WorkspaceIO#snapshot}) captures and the bounds of snapshots and
         * restores. Default {@link SnapshotOptions#DEFAULT}: {@code work/}, {@code out/}, {@code home/}, at most
         * {@value SnapshotOptions#DEFAULT_MAX_FILES} files and {@value SnapshotOptions#DEFAULT_MAX_TOTAL_BYTES} bytes.
         * The snapshot tools are offered only where an artifact store is configured (see {@link #artifactService}).
         */
        public Builder snapshotOptions(SnapshotOptions options) {
            this.snapshotOptions = Objects.requireNonNull(options, "options");
            return this;
        }

        /** Adds each of these listeners, as {@link #listener(ExecutionListener)} does. */
        public Builder listeners(Collection<? extends ExecutionListener> listeners) {
            listeners.forEach(this::listener);
            return this;
        }

        /**
         * Builds it.
         *
         * @throws NullPointerException     when no engine was set
         * @throws IllegalArgumentException when a limit or the approval timeout is not positive, or tool names
         *                                  collide
         */
        @Override
        Builder self() {
            return this;
        }

        public CodeExecution build() {
            return new CodeExecution(this);
        }
    }
}
