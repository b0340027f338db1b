package dev.codeexec.governance;

import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.Workspace;
import dev.codeexec.policy.ParsedCommand;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;

/**
 * What an {@link ExecutionApprover} is asked to approve: one tool call, after its arguments were validated and the
 * command policy (when one is set) accepted it, before anything ran or changed. Which fields are present depends on
 * the {@link #action()}; each accessor says for which.
 *
 * <p>Built by the tools; the public {@link #builder(ExecutionAction, String, String, Engine)} is for tests of
 * approvers. Immutable; the {@link #engine()} and {@link #workspace()} are live objects, to be read, not changed.
 */
public final class ApprovalRequest {

    private final ExecutionAction action;
    private final String toolName;
    private final String conversationId;
    private final Engine engine;
    private final Capabilities capabilities;
    private final Workspace workspace;
    private final String commandLine;
    private final ParsedCommand parsedCommand;
    private final String cwd;
    private final Set<String> environmentNames;
    private final long stdinChars;
    private final boolean background;
    private final Duration timeout;
    private final String language;
    private final String code;
    private final String path;
    private final String artifact;
    private final Long contentBytes;

    private ApprovalRequest(Builder b) {
        this.action = b.action;
        this.toolName = b.toolName;
        this.conversationId = b.conversationId;
        this.engine = b.engine;
        this.capabilities = b.engine.describe();
        this.workspace = b.workspace;
        this.commandLine = b.commandLine;
        this.parsedCommand = b.parsedCommand;
        this.cwd = b.cwd;
        this.environmentNames = b.environmentNames == null ? Set.of()
                : Set.copyOf(new TreeSet<>(b.environmentNames));
        this.stdinChars = b.stdinChars;
        this.background = b.background;
        this.timeout = b.timeout;
        this.language = b.language;
        this.code = b.code;
        this.path = b.path;
        this.artifact = b.artifact;
        this.contentBytes = b.contentBytes;
    }

    /**
     * A builder for the required parts.
     *
     * @param toolName       the tool's name as the model sees it, for example {@code workspace_exec}
     * @param conversationId the conversation (workspace key) the call belongs to
     */
    public static Builder builder(ExecutionAction action, String toolName, String conversationId, Engine engine) {
        return new Builder(action, toolName, conversationId, engine);
    }

    /** What the call does. */
    public ExecutionAction action() {
        return action;
    }

    /** The tool's name as the model sees it (configured names included), for example {@code workspace_exec}. */
    public String toolName() {
        return toolName;
    }

    /** The conversation the call belongs to: its memory id, or the workspace-id invocation parameter. */
    public String conversationId() {
        return conversationId;
    }

    /** The engine that will run it. */
    public Engine engine() {
        return engine;
    }

    /** What the engine enforces and offers ({@code engine().describe()}), for example whether it has a network. */
    public Capabilities capabilities() {
        return capabilities;
    }

    /**
     * The conversation's workspace, when it exists already (a first call creates it after approval). An approver may
     * read files through {@code engine().fs()}, for example the script a command is about to run; other calls of the
     * same conversation may change them until this one runs.
     */
    public Optional<Workspace> workspace() {
        return Optional.ofNullable(workspace);
    }

    /** {@link ExecutionAction#RUN_COMMAND}: the command line as the model wrote it. */
    public Optional<String> commandLine() {
        return Optional.ofNullable(commandLine);
    }

    /**
     * {@link ExecutionAction#RUN_COMMAND} with a command policy: the parsed command the policy accepted (its
     * segments and command names). Empty without a policy, where the line runs with a full shell.
     */
    public Optional<ParsedCommand> parsedCommand() {
        return Optional.ofNullable(parsedCommand);
    }

    /** {@link ExecutionAction#RUN_COMMAND}: the working folder, workspace-relative; empty for the workspace root. */
    public Optional<String> cwd() {
        return Optional.ofNullable(cwd);
    }

    /** {@link ExecutionAction#RUN_COMMAND}: the names of the variables the model passed (values are not shown). */
    public Set<String> environmentNames() {
        return environmentNames;
    }

    /** {@link ExecutionAction#RUN_COMMAND}: characters of standard input the model passed; 0 for none. */
    public long stdinChars() {
        return stdinChars;
    }

    /** {@link ExecutionAction#RUN_COMMAND}: true when the command starts a background session. */
    public boolean background() {
        return background;
    }

    /**
     * Runs: the time limit the call will run with (the model's, else the configured default; for a background
     * session its life). {@link RunChanges#shorterTimeout} may shorten it, never lengthen it.
     */
    public Optional<Duration> timeout() {
        return Optional.ofNullable(timeout);
    }

    /** {@link ExecutionAction#EXECUTE_CODE}: the snippet's language, for example {@code python}. */
    public Optional<String> language() {
        return Optional.ofNullable(language);
    }

    /** {@link ExecutionAction#EXECUTE_CODE}: the snippet. */
    public Optional<String> code() {
        return Optional.ofNullable(code);
    }

    /**
     * Files: the workspace-relative path written ({@link ExecutionAction#WRITE_FILE}, the target of
     * {@link ExecutionAction#STAGE_ARTIFACT}) or saved ({@link ExecutionAction#SAVE_ARTIFACT}); {@code "."} for
     * {@link ExecutionAction#RESTORE_WORKSPACE}, which writes across the workspace.
     */
    public Optional<String> path() {
        return Optional.ofNullable(path);
    }

    /**
     * Artifacts: the name to save as ({@link ExecutionAction#SAVE_ARTIFACT}) or the reference to stage
     * ({@link ExecutionAction#STAGE_ARTIFACT}), as the model sees them (without the conversation's scope prefix); the
     * snapshot's name ({@link ExecutionAction#SNAPSHOT_WORKSPACE}) or {@code name} / {@code name@version}
     * ({@link ExecutionAction#RESTORE_WORKSPACE}).
     */
    public Optional<String> artifact() {
        return Optional.ofNullable(artifact);
    }

    /** {@link ExecutionAction#WRITE_FILE}: the bytes the model sends (UTF-8). */
    public OptionalLong contentBytes() {
        return contentBytes == null ? OptionalLong.empty() : OptionalLong.of(contentBytes);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("ApprovalRequest[").append(action).append(", tool=").append(toolName)
                .append(", conversation=").append(conversationId).append(", engine=").append(engine.name());
        if (commandLine != null) {
            sb.append(", command=").append(commandLine);
        }
        if (language != null) {
            sb.append(", language=").append(language);
        }
        if (path != null) {
            sb.append(", path=").append(path);
        }
        if (timeout != null) {
            sb.append(", timeout=").append(timeout);
        }
        return sb.append(']').toString();
    }

    /** Builder of {@link ApprovalRequest}; unset optional parts stay empty. */
    public static final class Builder {
        private final ExecutionAction action;
        private final String toolName;
        private final String conversationId;
        private final Engine engine;
        private Workspace workspace;
        private String commandLine;
        private ParsedCommand parsedCommand;
        private String cwd;
        private Set<String> environmentNames;
        private long stdinChars;
        private boolean background;
        private Duration timeout;
        private String language;
        private String code;
        private String path;
        private String artifact;
        private Long contentBytes;

        private Builder(ExecutionAction action, String toolName, String conversationId, Engine engine) {
            this.action = Objects.requireNonNull(action, "action");
            this.toolName = Objects.requireNonNull(toolName, "toolName");
            this.conversationId = Objects.requireNonNull(conversationId, "conversationId");
            this.engine = Objects.requireNonNull(engine, "engine");
        }

        public Builder workspace(Workspace workspace) {
            this.workspace = workspace;
            return this;
        }

        public Builder commandLine(String commandLine) {
            this.commandLine = commandLine;
            return this;
        }

        public Builder parsedCommand(ParsedCommand parsedCommand) {
            this.parsedCommand = parsedCommand;
            return this;
        }

        public Builder cwd(String cwd) {
            this.cwd = cwd;
            return this;
        }

        public Builder environmentNames(Set<String> names) {
            this.environmentNames = names;
            return this;
        }

        public Builder stdinChars(long chars) {
            this.stdinChars = chars;
            return this;
        }

        public Builder background(boolean background) {
            this.background = background;
            return this;
        }

        public Builder timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        public Builder language(String language) {
            this.language = language;
            return this;
        }

        public Builder code(String code) {
            this.code = code;
            return this;
        }

        public Builder path(String path) {
            this.path = path;
            return this;
        }

        public Builder artifact(String artifact) {
            this.artifact = artifact;
            return this;
        }

        public Builder contentBytes(long bytes) {
            this.contentBytes = bytes;
            return this;
        }

        public ApprovalRequest build() {
            return new ApprovalRequest(this);
        }
    }
}
