package dev.codeexec.langchain4j;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.CodeLanguage;
import dev.codeexec.FileRef;
import dev.codeexec.artifact.Artifact;
import dev.codeexec.artifact.ArtifactNotFoundException;
import dev.codeexec.artifact.ArtifactRef;
import dev.codeexec.artifact.ArtifactService;
import dev.codeexec.artifact.ArtifactSource;
import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.InteractiveProgramRunner;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.OutputSpec;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.ProgramPoll;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.invocation.InvocationParameters;
import dev.langchain4j.service.memory.ChatMemoryService;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one implementation of every workspace tool. Both faces, the {@code @Tool} methods of {@link WorkspaceTools} and
 * the {@link dev.langchain4j.service.tool.ToolProvider}, hand it the tool, the arguments and the invocation context.
 *
 * <p>Order of work in each call: validate the arguments (a bad argument changes nothing and creates no workspace),
 * resolve the engine and the conversation's workspace, take that workspace's lock, stage the user's attached files on
 * the first call of an invocation, then do the work. Session input and kills work on the session alone, without the
 * workspace lock, so that a program that does not read cannot hold the conversation up. Every failure becomes a {@link ToolResult#error} whose text says
 * what to change; exceptions never reach the model as stack traces, and host paths never appear.
 */
final class ToolRuntime implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ToolRuntime.class);

    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final int MAX_ENV_ENTRIES = 64;
    private static final int MAX_COMMAND_CHARS = 64 * 1024;
    private static final int MAX_STDIN_CHARS = 1024 * 1024;
    private static final Duration KILL_GRACE = Duration.ofSeconds(2);
    private static final int MAX_REMEMBERED_INVOCATIONS = 1024;

    private final Engine defaultEngine;
    private final ArtifactService artifacts;
    private final ArtifactScope artifactScope;
    private final CommandGate gate;
    private final ToolSettings settings;
    private final ConversationWorkspaces workspaces;
    private final BackgroundSessions sessions;
    private final AttachmentStager stager;
    /** Per workspace id: the file listing taken after the last run, while still valid. */
    private final Map<String, Map<String, Long>> lastListing = Collections.synchronizedMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Map<String, Long>> eldest) {
            return size() > MAX_REMEMBERED_INVOCATIONS;
        }
    });
    private final AtomicBoolean warnedSharedWorkspace = new AtomicBoolean();
    /** Invocations whose attachments were already staged, per workspace key; bounded, oldest forgotten first. */
    private final Set<String> stagedInvocations = Collections.synchronizedSet(Collections.newSetFromMap(
            new LinkedHashMap<>() {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                    return size() > MAX_REMEMBERED_INVOCATIONS;
                }
            }));

    ToolRuntime(Engine engine, ArtifactService artifacts, ArtifactScope artifactScope, CommandGate gate,
                ToolSettings settings) {
        this.defaultEngine = engine;
        this.artifacts = artifacts;
        this.artifactScope = artifactScope;
        this.gate = gate;
        this.settings = settings;
        this.workspaces = new ConversationWorkspaces(settings.workspaceIdleTtl());
        this.sessions = new BackgroundSessions(settings.sessionTtl(), System::nanoTime);
        this.stager = new AttachmentStager(settings.maxAttachmentBytes());
    }

    ToolSettings settings() {
        return settings;
    }

    Engine defaultEngine() {
        return defaultEngine;
    }

    /** Where a call runs: the engine, the conversation key, and the invocation it belongs to. */
    record Target(Engine engine, String key, UserMessage userMessage, String invocationId) {
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Entry point

    /** Runs one tool call; never throws for anything the model or the engine did. */
    ToolResult call(WorkspaceTool tool, ToolArguments args, InvocationContext ctx) {
        String name = settings.name(tool);
        try {
            if (!settings.enabled().contains(tool)) {
                return ToolResult.error("tool_disabled", "the tool '" + name + "' is not enabled in this "
                        + "application");
            }
            Target target = target(ctx);
            return switch (tool) {
                case EXEC -> exec(target, args);
                case WRITE_STDIN -> writeStdin(target, args);
                case KILL_SESSION -> killSession(target, args);
                case READ_FILE -> readFile(target, args);
                case WRITE_FILE -> writeFile(target, args);
                case LIST_FILES -> listFiles(target, args);
                case EXECUTE_CODE -> executeCode(target, args);
                case SAVE_ARTIFACT -> saveArtifact(target, args);
                case STAGE_ARTIFACT -> stageArtifact(target, args);
            };
        } catch (InvalidArgument e) {
            return ToolResult.error("invalid_argument", clause(e.getMessage())
                    + ". Nothing was run or changed; fix the arguments of " + name + " and call it again.");
        } catch (Refusal e) {
            return ToolResult.error(e.kind, e.getMessage());
        } catch (PathEscapeException e) {
            return ToolResult.error("path_escape", "the path leaves the workspace (" + clause(e.getMessage())
                    + "). Use paths inside the workspace, such as work/... or out/...; nothing was changed.");
        } catch (PolicyViolationException e) {
            return ToolResult.error("policy", "refused by policy: " + clause(e.getMessage())
                    + ". Nothing was run; do not retry the same command.");
        } catch (UnsupportedCapabilityException e) {
            return ToolResult.error("unsupported", e.getMessage());
        } catch (WorkspaceGoneException e) {
            return ToolResult.error("workspace_gone", "the workspace of this conversation is gone ("
                    + clause(e.getMessage()) + "). Files written earlier are lost; artifacts are not.");
        } catch (BackendUnavailableException e) {
            log.warn("{}: backend unavailable: {}", name, e.getMessage());
            return ToolResult.error("backend_unavailable", "the execution backend is unavailable right now; try "
                    + "again later or answer without running code.");
        } catch (InvalidSpecException e) {
            return ToolResult.error("invalid_request", e.getMessage());
        } catch (CodeExecException e) {
            return ToolResult.error("failed", e.getMessage());
        } catch (RuntimeException e) {
            // Unknown failures may carry host details in their messages: log them, tell the model only the kind.
            log.error("{} failed unexpectedly", name, e);
            return ToolResult.error("internal", name + " failed unexpectedly (" + e.getClass().getSimpleName()
                    + "); the application log has details.");
        }
    }

    /** A message without its final period, to continue the sentence. */
    static String clause(String message) {
        String m = message == null ? "" : message.strip();
        return m.endsWith(".") ? m.substring(0, m.length() - 1) : m;
    }

    /** A refusal decided by the tools themselves, with its error kind. */
    private static final class Refusal extends RuntimeException {
        final String kind;

        Refusal(String kind, String message) {
            super(message, null, false, false);
            this.kind = kind;
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Which engine and workspace

    Target target(InvocationContext ctx) {
        InvocationParameters params = ctx == null ? null : ctx.invocationParameters();
        Engine engine = defaultEngine;
        String key = null;
        if (params != null) {
            Object e = params.get(CodeExecution.ENGINE_PARAMETER);
            if (e instanceof Engine override) {
                engine = override;
            } else if (e != null) {
                log.warn("invocation parameter {} is a {}, not an Engine; using the configured engine",
                        CodeExecution.ENGINE_PARAMETER, e.getClass().getName());
            }
            Object w = params.get(CodeExecution.WORKSPACE_ID_PARAMETER);
            if (w != null && !w.toString().isBlank()) {
                key = w.toString();
            }
        }
        if (key == null) {
            Object memoryId = ctx == null ? null : ctx.chatMemoryId();
            key = memoryId == null ? ChatMemoryService.DEFAULT : memoryId.toString();
            if (ChatMemoryService.DEFAULT.equals(key)) {
                if (settings.requireMemoryId()) {
                    throw new Refusal("memory_id_required", "this assistant has no conversation id, so all its users "
                            + "would share one workspace, and the application forbids that. Nothing was run. Answer "
                            + "without the workspace tools.");
                }
                if (warnedSharedWorkspace.compareAndSet(false, true)) {
                    log.warn("Workspace tools called without a @MemoryId: every caller of this AI service shares the "
                            + "workspace '{}'. Add a @MemoryId parameter, pass the '{}' invocation parameter, or set "
                            + "CodeExecution.builder().requireMemoryId(true) to refuse.", key,
                            CodeExecution.WORKSPACE_ID_PARAMETER);
                }
            }
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
        return new Target(engine, key, user, invocation);
    }

    /** Runs {@code fn} on the conversation's workspace under its lock, staging attachments first. */
    private ToolResult inWorkspace(Target t, Function<Workspace, ToolResult> fn) {
        return inWorkspace(t, false, fn);
    }

    /**
     * @param keepsListing true for calls that run a program and manage the cached listing themselves, or that only
     *                     read; false drops it, because the call may change files
     */
    private ToolResult inWorkspace(Target t, boolean keepsListing, Function<Workspace, ToolResult> fn) {
        return workspaces.withWorkspace(t.engine, t.key, ws -> {
            String note = stageAttachments(t, ws);
            if (!keepsListing) {
                lastListing.remove(ws.id());
            }
            ToolResult r = fn.apply(ws);
            return note == null ? r : new ToolResult(note + "\n" + r.text(), r.isError(), r.attributes());
        });
    }

    /** Runs {@code fn} under the workspace lock without staging; for application code. */
    <T> T withWorkspace(Engine engine, String key, Function<Workspace, T> fn) {
        return workspaces.withWorkspace(engine == null ? defaultEngine : engine, key, ws -> {
            lastListing.remove(ws.id());
            return fn.apply(ws);
        });
    }

    private String stageAttachments(Target t, Workspace ws) {
        if (t.userMessage == null || !AttachmentStager.hasFiles(t.userMessage)) {
            return null;
        }
        String marker = t.key + "\u0000" + (t.invocationId == null ? System.identityHashCode(t.userMessage)
                : t.invocationId);
        if (!stagedInvocations.add(marker)) {
            return null;
        }
        List<AttachmentStager.Staged> staged = stager.stage(t.engine, ws, t.userMessage);
        lastListing.remove(ws.id());
        return describeStaged(staged);
    }

    /** Stages a message's files for application code; returns what happened, one line per file. */
    List<AttachmentStager.Staged> stageAttachments(Engine engine, Workspace ws, UserMessage message) {
        return stager.stage(engine == null ? defaultEngine : engine, ws, message);
    }

    static String describeStaged(List<AttachmentStager.Staged> staged) {
        if (staged.isEmpty()) {
            return null;
        }
        StringBuilder sb = new StringBuilder("Files attached to the user's message:");
        for (AttachmentStager.Staged s : staged) {
            if (s.staged()) {
                sb.append("\n- ").append(s.path());
                if (s.sizeBytes() >= 0) {
                    sb.append(" (").append(s.sizeBytes()).append(" bytes)");
                }
            } else {
                sb.append("\n- ").append(s.name()).append(": not staged, because ").append(s.notStagedReason());
            }
        }
        return sb.toString();
    }

    void closeWorkspace(String key) {
        sessions.closeFor(key);
        workspaces.close(key);
    }

    @Override
    public void close() {
        try {
            sessions.close();
        } finally {
            workspaces.close();
        }
    }

    // ---------------------------------------------------------------------------------------------------------------
    // workspace_exec and sessions

    private ToolResult exec(Target t, ToolArguments args) {
        String command = args.requiredString("command", "cmd");
        if (command.length() > MAX_COMMAND_CHARS) {
            throw new InvalidArgument("'command' is " + command.length() + " characters; the limit is "
                    + MAX_COMMAND_CHARS + ". Write a script with " + settings.name(WorkspaceTool.WRITE_FILE)
                    + " and run it");
        }
        String cwd = ToolPaths.normalize(args.string("cwd", "workdir"), "cwd");
        Map<String, String> env = env(args.stringMap("env"));
        String stdin = args.string("stdin");
        if (stdin != null && stdin.length() > MAX_STDIN_CHARS) {
            throw new InvalidArgument("'stdin' is " + stdin.length() + " characters; the limit is " + MAX_STDIN_CHARS
                    + ". Write it to a file and redirect from it");
        }
        boolean background = Boolean.TRUE.equals(args.bool("background"));
        Duration timeout = timeout(args.integer("timeout_seconds", "timeout", "timeout_sec"), background);
        Duration yield = yieldOf(args.integer("yield_ms", "yield_time_ms"));

        RunProgramSpec spec = commandSpec(t.engine, command, env, cwd, stdin, timeout);
        if (background) {
            InteractiveProgramRunner runner = t.engine.interactive().orElseThrow(() -> new Refusal("unsupported",
                    "background sessions need an engine with interactive sessions, and the '" + t.engine.name()
                            + "' engine has none. Nothing was started; run the command without background=true "
                            + "(it may run up to " + settings.maxTimeout().toSeconds() + " seconds)."));
            return inWorkspace(t, ws -> startSession(t, ws, runner, spec, yield));
        }
        return inWorkspace(t, true, ws -> {
            Map<String, Long> before = listingBefore(t, ws);
            RunResult r = t.engine.runner().runProgram(ws, spec);
            ChangedFiles changed = changedSince(t, ws, before);
            return ToolResult.ok(ResultText.run(r, settings.maxOutputBytes(), changed), runAttributes(r.exitCode(),
                    r.timedOut(), r.truncated(), r.duration(), changed));
        });
    }

    /**
     * The spec for a command line: checked by the command policy when one is configured (then with a clean, scrubbed
     * environment, refused on engines that cannot provide one), else run as given with the engine's clean environment
     * unless the application asked to inherit its own.
     *
     * <p>In policy mode the checked line runs as {@code sh -c} of the policy's rendering; {@link CommandGate}
     * explains why that shell is no way around the policy.
     */
    RunProgramSpec commandSpec(Engine engine, String command, Map<String, String> env, String cwd, String stdin,
                               Duration timeout) {
        String line = command;
        Map<String, String> runEnv = env == null ? Map.of() : env;
        boolean cleanEnv = !settings.inheritEnvironment() && engine.describe().supportsCleanEnv();
        if (gate != null) {
            requireCleanEnv(engine);
            line = gate.check(engine, command);
            runEnv = gate.scrubEnv(runEnv);
            cleanEnv = true;
        }
        RunProgramSpec.Builder spec = gate != null ? RunProgramSpec.builder("sh").args("-c", line)
                : RunProgramSpec.shell(line);
        return spec.env(runEnv).cleanEnv(cleanEnv).cwd(cwd).stdin(stdin).timeout(timeout).build();
    }

    private ToolResult startSession(Target t, Workspace ws, InteractiveProgramRunner runner, RunProgramSpec spec,
                                    Duration yield) {
        sessions.reap();
        if (sessions.countFor(t.engine, t.key) >= BackgroundSessions.MAX_PER_WORKSPACE) {
            throw new Refusal("too_many_sessions", "this conversation already has "
                    + BackgroundSessions.MAX_PER_WORKSPACE + " background sessions; stop one with "
                    + settings.name(WorkspaceTool.KILL_SESSION) + " first. Nothing was started.");
        }
        BackgroundSessions.Entry e = sessions.register(t.engine, t.key, runner.startProgram(ws, spec));
        return pollSession(e, yield, null);
    }

    /**
     * Writes to a background session and polls it. Not under the workspace lock: input to a program touches no file
     * of the workspace, and a program that does not read its input must not hold up the conversation's other calls
     * (the engine bounds the write itself).
     */
    private ToolResult writeStdin(Target t, ToolArguments args) {
        String id = args.requiredString("session_id", "sessionId");
        String chars = args.string("chars", "input", "text");
        if (chars != null && chars.length() > MAX_STDIN_CHARS) {
            throw new InvalidArgument("'chars' is " + chars.length() + " characters; the limit is " + MAX_STDIN_CHARS
                    + ". Write the input to a file with " + settings.name(WorkspaceTool.WRITE_FILE)
                    + " and let the program read the file");
        }
        Boolean newline = args.bool("append_newline", "submit");
        boolean closeStdin = Boolean.TRUE.equals(args.bool("close_stdin", "eof"));
        Duration yield = yieldOf(args.integer("yield_ms", "yield_time_ms"));
        BackgroundSessions.Entry e = session(t, id);
        try {
            if (chars != null && !chars.isEmpty()) {
                e.session.write(chars, newline == null || newline);
            }
            if (closeStdin) {
                e.session.closeStdin();
            }
        } catch (InvalidSpecException ex) {
            // The engine's message names no session, or its own id: give the model the one it knows.
            throw new InvalidSpecException("session " + e.id + ": " + clause(ex.getMessage()) + ".", ex);
        }
        return pollSession(e, yield, null);
    }

    /**
     * Kills a background session. Not under the workspace lock, so that it gets through whatever else the
     * conversation is doing, a write to this very session included.
     */
    private ToolResult killSession(Target t, ToolArguments args) {
        String id = args.requiredString("session_id", "sessionId");
        BackgroundSessions.Entry e = session(t, id);
        boolean wasRunning = e.session.exitCode().isEmpty();
        if (wasRunning) {
            e.session.kill(KILL_GRACE);
        }
        ToolResult r = pollSession(e, Duration.ZERO, wasRunning ? "killed" : "exited");
        sessions.remove(e);
        return r;
    }

    private BackgroundSessions.Entry session(Target t, String id) {
        return sessions.find(t.engine, t.key, id).orElseThrow(() -> new Refusal("unknown_session",
                "there is no background session " + ToolArguments.echo(id) + " in this conversation (it may have "
                        + "been killed or reaped after it exited). Start a new one with "
                        + settings.name(WorkspaceTool.EXEC) + " and background=true."));
    }

    private ToolResult pollSession(BackgroundSessions.Entry e, Duration yield, String status) {
        int window = settings.maxOutputBytes();
        ProgramPoll p;
        synchronized (e) {
            p = yield.isZero() ? e.session.poll(e.offset, window) : e.session.await(yield, e.offset, window);
            e.offset = p.nextOffset();
        }
        boolean maybeMore = OutputWindow.utf8Length(p.output()) >= window;
        Map<String, Object> attrs = new LinkedHashMap<>();
        attrs.put("session_id", e.id);
        attrs.put("running", p.running() && status == null);
        if (p.exitCode() != null) {
            attrs.put("exit_code", p.exitCode());
        }
        attrs.put("timed_out", p.timedOut());
        return ToolResult.ok(ResultText.poll(e.id, p, window, maybeMore, status), attrs);
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Files

    private ToolResult readFile(Target t, ToolArguments args) {
        String path = ToolPaths.normalizeFile(args.requiredString("path"), "path");
        if (ToolPaths.isGlob(path)) {
            throw new InvalidArgument("'path' must name one file, not a glob; use "
                    + settings.name(WorkspaceTool.LIST_FILES) + " to find files");
        }
        Long offset = args.integer("offset");
        if (offset != null && offset < 0) {
            throw new InvalidArgument("'offset' (" + offset + ") must be 0 or more");
        }
        Long max = args.integer("max_bytes", "limit", "length");
        if (max != null && (max < 1 || max > settings.maxReadBytes())) {
            throw new InvalidArgument("'max_bytes' (" + max + ") must be between 1 and " + settings.maxReadBytes());
        }
        long off = offset == null ? 0 : offset;
        int maxBytes = max == null ? settings.defaultReadBytes() : max.intValue();
        return inWorkspace(t, true, ws -> {
            FileRef f = t.engine.fs().readFile(ws, path, off, maxBytes);
            byte[] content = f.content() == null ? new byte[0] : f.content();
            Map<String, Object> attrs = new LinkedHashMap<>();
            attrs.put("path", path);
            attrs.put("size_bytes", f.sizeBytes());
            StringBuilder sb = new StringBuilder();
            sb.append("path: ").append(path).append(" | size: ").append(f.sizeBytes()).append(" bytes");
            if (isBinary(content, f.mimeType())) {
                attrs.put("binary", true);
                sb.append(" | type: ").append(f.mimeType()).append(" | binary: not shown. Inspect it with ")
                        .append(settings.name(WorkspaceTool.EXEC))
                        .append(" (for example: file ").append(path).append("; xxd -l 256 ").append(path)
                        .append(") or a python script.");
                return ToolResult.ok(sb.toString(), attrs);
            }
            long end = off + content.length;
            boolean more = f.truncated() || end < f.sizeBytes();
            attrs.put("truncated", more);
            if (off >= f.sizeBytes() && f.sizeBytes() > 0) {
                sb.append(" | offset ").append(off).append(" is at or past the end of the file");
                return ToolResult.ok(sb.toString(), attrs);
            }
            sb.append(" | bytes ").append(off).append("-").append(Math.max(off, end - 1))
                    .append(" | truncated: ").append(more);
            if (more) {
                sb.append(" (more follows; call again with offset=").append(end).append(")");
            }
            sb.append("\n").append(new String(content, StandardCharsets.UTF_8));
            return ToolResult.ok(sb.toString(), attrs);
        });
    }

    private ToolResult writeFile(Target t, ToolArguments args) {
        String path = ToolPaths.normalizeFile(args.requiredString("path"), "path");
        if (ToolPaths.isGlob(path)) {
            throw new InvalidArgument("'path' must name one file, not a glob");
        }
        String content = args.string("content", "text");
        if (content == null) {
            throw new InvalidArgument("'content' is required (use \"\" for an empty file)");
        }
        boolean append = Boolean.TRUE.equals(args.bool("append"));
        long size = OutputWindow.utf8Length(content);
        if (size > settings.maxWriteBytes()) {
            throw new InvalidArgument("'content' is " + size + " bytes; the limit per write is "
                    + settings.maxWriteBytes() + " bytes. Generate large files with a program run by "
                    + settings.name(WorkspaceTool.EXEC) + " instead");
        }
        byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
        return inWorkspace(t, ws -> {
            byte[] existing = existing(t.engine, ws, path, append);
            byte[] toWrite = bytes;
            if (append && existing != null) {
                toWrite = new byte[existing.length + bytes.length];
                System.arraycopy(existing, 0, toWrite, 0, existing.length);
                System.arraycopy(bytes, 0, toWrite, existing.length, bytes.length);
            }
            t.engine.fs().putFiles(ws, List.of(PutFile.of(path, toWrite)));
            Map<String, Object> attrs = new LinkedHashMap<>();
            attrs.put("path", path);
            attrs.put("size_bytes", (long) toWrite.length);
            attrs.put("files_changed", List.of(path));
            String what = existing == null ? "created" : append ? "appended " + bytes.length + " bytes to"
                    : "overwrote";
            return ToolResult.ok(what + " " + path + " (now " + toWrite.length + " bytes)", attrs);
        });
    }

    /** The file's bytes when appending to it, a marker when it exists, or null when it does not. */
    private byte[] existing(Engine engine, Workspace ws, String path, boolean append) {
        if (!append) {
            try {
                List<FileInfo> hit = engine.fs().list(ws, path);
                return hit.stream().anyMatch(f -> f.path().equals(path) && !f.directory()) ? new byte[0] : null;
            } catch (PathEscapeException e) {
                throw e;
            } catch (CodeExecException e) {
                return null;
            }
        }
        Whole f;
        try {
            f = readWhole(engine, ws, path, settings.maxWriteBytes());
        } catch (InvalidSpecException e) {
            if (e instanceof PathEscapeException) {
                throw e;
            }
            return null;
        }
        if (f == null) {
            throw new Refusal("too_large", "cannot append: " + path + " would exceed the limit of "
                    + settings.maxWriteBytes() + " bytes per file written by this tool. Nothing was changed; "
                    + "append with a program run by " + settings.name(WorkspaceTool.EXEC) + " instead.");
        }
        return f.content();
    }

    private ToolResult listFiles(Target t, ToolArguments args) {
        String raw = args.string("path", "glob", "pattern");
        String p = ToolPaths.normalize(raw, "path");
        return inWorkspace(t, true, ws -> {
            List<FileInfo> entries = new ArrayList<>(t.engine.fs().list(ws, p));
            entries.sort(Comparator.comparing(FileInfo::path));
            Map<String, Object> attrs = new LinkedHashMap<>();
            attrs.put("count", entries.size());
            if (entries.isEmpty()) {
                return ToolResult.ok("no files match " + ToolArguments.echo(p)
                        + " (inputs are in work/inputs, scratch in work, results in out)", attrs);
            }
            StringBuilder sb = new StringBuilder();
            sb.append(entries.size()).append(entries.size() == 1 ? " entry" : " entries").append(" under ")
                    .append(p.equals(".") ? "the workspace root" : p).append(':');
            int shown = 0;
            for (FileInfo f : entries) {
                if (shown++ >= settings.maxListEntries()) {
                    break;
                }
                sb.append('\n').append(f.path());
                sb.append(f.directory() ? "/" : " (" + f.sizeBytes() + " bytes)");
            }
            if (entries.size() > settings.maxListEntries()) {
                sb.append("\n... and ").append(entries.size() - settings.maxListEntries())
                        .append(" more (truncated: true); narrow the path or use a glob");
                attrs.put("truncated", true);
            }
            return ToolResult.ok(sb.toString(), attrs);
        });
    }

    // ---------------------------------------------------------------------------------------------------------------
    // execute_code

    private ToolResult executeCode(Target t, ToolArguments args) {
        String language = args.requiredString("language", "lang");
        String code = args.requiredString("code", "source");
        if (code.length() > settings.maxWriteBytes()) {
            throw new InvalidArgument("'code' is " + code.length() + " characters; the limit is "
                    + settings.maxWriteBytes());
        }
        Duration timeout = timeout(args.integer("timeout_seconds", "timeout", "timeout_sec"), false);
        CodeBlock block = CodeBlock.of(language, code);
        if (gate != null) {
            requireCleanEnv(t.engine);
            CodeLanguage lang = CodeLanguage.forTag(language).orElseThrow(() -> new Refusal("policy",
                    "refused by policy: with a command policy only python and bash code can run, not "
                            + ToolArguments.echo(language) + ". Nothing was run."));
            // The snippet runs as a command would, through the same policy: bash never passes (built-in deny),
            // python only where the policy allows it.
            String script = gate.check(t.engine, lang.interpreter() + " ../runs/" + scriptName(lang));
            return inWorkspace(t, true, ws -> runScript(t, ws, lang, code, timeout, script));
        }
        // The engine runs the snippet; its default block runner uses a clean environment where it can.
        return inWorkspace(t, ws -> {
            Map<String, Long> before = listingBefore(t, ws);
            long start = System.nanoTime();
            CodeExecutionResult r = t.engine.executeCode(ws, new CodeExecutionInput(List.of(block), t.key, timeout));
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            ChangedFiles changed = changedSince(t, ws, before);
            return ToolResult.ok(ResultText.code(r, took, settings.maxOutputBytes(), changed),
                    runAttributes(r.exitCode(), r.timedOut(), r.truncated(), took, changed));
        });
    }

    private static String scriptName(CodeLanguage lang) {
        return "code_snippet." + lang.fileExtension();
    }

    /**
     * Runs a snippet with the language's interpreter and a clean environment, from {@code work/} as the current
     * folder, through the command policy's checked command line (policy mode). The script file goes to {@code runs/}, the folder for per-run helper files, so it neither clutters
     * {@code work/} nor shows up as a changed file.
     */
    private ToolResult runScript(Target t, Workspace ws, CodeLanguage lang, String code, Duration timeout,
                                 String policyScript) {
        Map<String, Long> before = listingBefore(t, ws);
        String file = scriptName(lang);
        t.engine.fs().putFiles(ws, List.of(PutFile.of("runs/" + file, code.getBytes(StandardCharsets.UTF_8),
                lang.fileMode())));
        RunProgramSpec.Builder spec = policyScript != null ? RunProgramSpec.builder("sh").args("-c", policyScript)
                : RunProgramSpec.builder(lang.interpreter()).args("../runs/" + file);
        RunResult r = t.engine.runner().runProgram(ws, spec.cwd("work").cleanEnv(true).timeout(timeout).build());
        ChangedFiles changed = changedSince(t, ws, before);
        return ToolResult.ok(ResultText.run(r, settings.maxOutputBytes(), changed), runAttributes(r.exitCode(),
                r.timedOut(), r.truncated(), r.duration(), changed));
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Artifacts

    private ToolResult saveArtifact(Target t, ToolArguments args) {
        String path = ToolPaths.normalizeFile(args.requiredString("path"), "path");
        if (ToolPaths.isGlob(path)) {
            throw new InvalidArgument("'path' must name one file, not a glob");
        }
        if (ToolPaths.ARTIFACT_ROOTS.stream().noneMatch(r -> ToolPaths.under(path, r) && !path.equals(r))) {
            throw new InvalidArgument("'path' must be a file under work/, out/ or runs/, got "
                    + ToolArguments.echo(path));
        }
        String name = args.string("name");
        String artifactName = name == null || name.isBlank() ? path.substring(path.lastIndexOf('/') + 1) : name.strip();
        if (!ArtifactScope.isRelativeName(artifactName)) {
            throw new InvalidArgument("'name' must be a relative artifact name such as 'report.csv' or 'q1/report.csv'"
                    + " (no empty, '.' or '..' segment), got " + ToolArguments.echo(artifactName));
        }
        ArtifactService service = artifactService(t.engine);
        String prefix = artifactScope.prefix(t.key);
        return inWorkspace(t, true, ws -> {
            SavedArtifact saved;
            try {
                saved = saveArtifact(t.engine, ws, service, path, prefix + artifactName);
            } catch (InvalidSpecException e) {
                throw new InvalidSpecException(unscoped(e.getMessage(), prefix), e);
            }
            ArtifactRef shown = unscoped(saved.ref(), prefix);
            Map<String, Object> attrs = new LinkedHashMap<>();
            attrs.put("path", path);
            attrs.put("artifact", shown.toString());
            attrs.put("version", shown.version());
            attrs.put("size_bytes", saved.sizeBytes());
            return ToolResult.ok("saved " + path + " as " + shown + " (" + saved.sizeBytes() + " bytes, "
                    + saved.mimeType() + "). The reference stays valid after this workspace is gone.", attrs);
        });
    }

    /** The reference the model sees: the stored name without the conversation's prefix. */
    private static ArtifactRef unscoped(ArtifactRef stored, String prefix) {
        if (!stored.name().startsWith(prefix)) {
            // A store that renamed the artifact: never show the model a name outside its scope.
            throw new IllegalStateException("the artifact store answered with a name outside the conversation's scope");
        }
        return new ArtifactRef(stored.name().substring(prefix.length()), stored.version());
    }

    /** A store's message without the conversation's prefix, so the model sees the names it used. */
    private static String unscoped(String message, String prefix) {
        return prefix.isEmpty() || message == null ? message : message.replace(prefix, "");
    }

    /** A whole file read through windows. */
    record Whole(byte[] content, String mimeType) {
    }

    /** Window size for whole-file reads; engines cap a window (the host file system at 16 MiB). */
    private static final int READ_CHUNK = 4 << 20;

    /**
     * Reads a whole file in windows, or returns null when it is larger than {@code max} bytes (checked before reading
     * beyond the first window).
     */
    static Whole readWhole(Engine engine, Workspace ws, String path, long max) {
        FileRef first = engine.fs().readFile(ws, path, 0, (int) Math.min(READ_CHUNK, max + 1));
        if (first.sizeBytes() > max) {
            return null;
        }
        byte[] head = first.content() == null ? new byte[0] : first.content();
        if (!first.truncated()) {
            return new Whole(head, first.mimeType());
        }
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream((int) first.sizeBytes());
        all.writeBytes(head);
        long offset = head.length;
        while (true) {
            FileRef next = engine.fs().readFile(ws, path, offset, READ_CHUNK);
            byte[] b = next.content() == null ? new byte[0] : next.content();
            all.writeBytes(b);
            offset += b.length;
            if (offset > max) {
                return null; // grew while being read
            }
            if (!next.truncated() || b.length == 0) {
                return new Whole(all.toByteArray(), first.mimeType());
            }
        }
    }

    /** A file saved as an artifact. */
    record SavedArtifact(ArtifactRef ref, long sizeBytes, String mimeType) {
    }

    /**
     * Saves one workspace file as an artifact; the caller holds the workspace lock.
     *
     * @throws InvalidSpecException when the file is missing, too large, or the name is not a valid artifact name
     */
    SavedArtifact saveArtifact(Engine engine, Workspace ws, ArtifactService service, String path, String name) {
        long max = settings.maxArtifactBytes();
        Whole f = readWhole(engine, ws, path, max);
        if (f == null) {
            throw new InvalidSpecException(path + " is larger than the " + max + " bytes artifacts are limited to. "
                    + "Nothing was saved.");
        }
        try {
            ArtifactRef ref = service.save(name, f.content(), f.mimeType());
            return new SavedArtifact(ref, f.content().length, f.mimeType());
        } catch (IllegalArgumentException e) {
            throw new InvalidSpecException("artifact name " + ToolArguments.echo(name) + " is not valid ("
                    + e.getMessage() + "). Nothing was saved.");
        }
    }

    private ToolResult stageArtifact(Target t, ToolArguments args) {
        String raw = args.requiredString("ref", "artifact", "name").strip();
        if (raw.contains("://") && !ArtifactRef.isArtifactRef(raw)) {
            throw new InvalidArgument("'ref' must be an artifact reference such as artifact://report.csv@2, got "
                    + ToolArguments.echo(raw));
        }
        ArtifactRef ref;
        try {
            ref = ArtifactRef.parse(raw);
        } catch (IllegalArgumentException e) {
            throw new InvalidArgument("'ref' " + ToolArguments.echo(raw) + " is not an artifact reference ("
                    + e.getMessage() + ")");
        }
        if (!ArtifactScope.isRelativeName(ref.name())) {
            throw new InvalidArgument("'ref' must name an artifact by a relative name such as artifact://report.csv"
                    + " (no empty, '.' or '..' segment), got " + ToolArguments.echo(raw));
        }
        String base = ref.name().substring(ref.name().lastIndexOf('/') + 1);
        String to = args.string("to", "path");
        String target = to == null || to.isBlank() ? AttachmentStager.INPUTS + "/" + base
                : ToolPaths.normalizeFile(to, "to");
        if (!ToolPaths.under(target, "work")) {
            throw new InvalidArgument("'to' must be under work/ (inputs belong in work/inputs), got "
                    + ToolArguments.echo(target));
        }
        ArtifactService service = artifactService(t.engine);
        String prefix = artifactScope.prefix(t.key);
        ArtifactRef stored = new ArtifactRef(prefix + ref.name(), ref.version());
        return inWorkspace(t, ws -> {
            Artifact a;
            try {
                a = service.load(stored);
            } catch (ArtifactNotFoundException e) {
                throw new Refusal("not_found", clause(unscoped(e.getMessage(), prefix)) + ". Nothing was staged.");
            } catch (IllegalArgumentException e) {
                throw new InvalidSpecException(unscoped(e.getMessage(), prefix) + ". Nothing was staged.", e);
            }
            ArtifactRef shown = unscoped(a.ref(), prefix);
            if (a.size() > settings.maxArtifactBytes()) {
                throw new Refusal("too_large", shown + " is " + a.size() + " bytes; the limit is "
                        + settings.maxArtifactBytes() + ". Nothing was staged.");
            }
            t.engine.fs().putFiles(ws, List.of(PutFile.of(target, a.content())));
            Map<String, Object> attrs = new LinkedHashMap<>();
            attrs.put("artifact", shown.toString());
            attrs.put("path", target);
            attrs.put("size_bytes", (long) a.size());
            attrs.put("files_changed", List.of(target));
            return ToolResult.ok("staged " + shown + " at " + target + " (" + a.size() + " bytes)", attrs);
        });
    }

    /** The artifact prefix of a workspace key under the configured scope; for application code. */
    String artifactPrefix(String key) {
        return artifactScope.prefix(key);
    }

    ArtifactService artifactService(Engine engine) {
        if (artifacts != null) {
            return artifacts;
        }
        Optional<ArtifactService> fromEngine = engine instanceof ArtifactSource source ? source.artifacts()
                : Optional.empty();
        return fromEngine.orElseThrow(() -> new Refusal("unsupported", "no artifact store is configured in this "
                + "application, so files cannot be saved as artifacts. Tell the user where the file is in the "
                + "workspace instead."));
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Shared argument rules

    private Duration timeout(Long seconds, boolean background) {
        long max = settings.maxTimeout().toSeconds();
        if (seconds == null) {
            return background ? settings.maxTimeout() : settings.defaultTimeout();
        }
        if (seconds < 1 || seconds > max) {
            throw new InvalidArgument("'timeout_seconds' (" + seconds + ") must be between 1 and " + max);
        }
        return Duration.ofSeconds(seconds);
    }

    private Duration yieldOf(Long millis) {
        if (millis == null) {
            return settings.sessionYield();
        }
        long max = 30_000;
        if (millis < 0 || millis > max) {
            throw new InvalidArgument("'yield_ms' (" + millis + ") must be between 0 and " + max);
        }
        return Duration.ofMillis(millis);
    }

    private static Map<String, String> env(Map<String, String> env) {
        if (env.size() > MAX_ENV_ENTRIES) {
            throw new InvalidArgument("'env' has " + env.size() + " entries; the limit is " + MAX_ENV_ENTRIES);
        }
        for (Map.Entry<String, String> e : env.entrySet()) {
            if (!ENV_NAME.matcher(e.getKey()).matches()) {
                throw new InvalidArgument("'env' name " + ToolArguments.echo(e.getKey())
                        + " is not a valid variable name (letters, digits and _; not starting with a digit)");
            }
            if (e.getValue().indexOf('\0') >= 0) {
                throw new InvalidArgument("'env." + e.getKey() + "' must not contain a NUL character");
            }
        }
        return env;
    }

    private void requireCleanEnv(Engine engine) {
        if (!engine.describe().supportsCleanEnv()) {
            throw new UnsupportedCapabilityException("refused: a command policy is configured, and it needs an "
                    + "engine that starts programs from a clean environment; the '" + engine.name()
                    + "' engine cannot. Nothing was run.");
        }
    }

    /**
     * The listing a run compares against: the one taken after the previous run in this workspace when nothing can
     * have changed the workspace since (every other tool call and every {@link WorkspaceIO} use drops it, and it is
     * not used while a background session runs), else a fresh one. Saves one of the two listings per run.
     */
    private Map<String, Long> listingBefore(Target t, Workspace ws) {
        if (!settings.reportChangedFiles()) {
            return null;
        }
        Map<String, Long> cached = lastListing.remove(ws.id());
        if (cached != null && sessions.runningFor(t.engine, t.key) == 0) {
            return cached;
        }
        return ChangedFiles.snapshot(t.engine, ws);
    }

    private ChangedFiles changedSince(Target t, Workspace ws, Map<String, Long> before) {
        if (before == null) {
            return null;
        }
        Map<String, Long> after = ChangedFiles.snapshot(t.engine, ws);
        // While a background session runs, the listing may be stale by the next run: do not keep it. (Session
        // calls do not take the workspace lock, so they cannot drop it.)
        if (after != null && sessions.runningFor(t.engine, t.key) == 0) {
            lastListing.put(ws.id(), after);
        }
        return ChangedFiles.between(before, after);
    }

    private static Map<String, Object> runAttributes(int exitCode, boolean timedOut, boolean truncated,
                                                     Duration duration, ChangedFiles changed) {
        Map<String, Object> attrs = new LinkedHashMap<>();
        attrs.put("exit_code", exitCode);
        attrs.put("timed_out", timedOut);
        attrs.put("truncated", truncated);
        attrs.put("duration_ms", duration.toMillis());
        if (changed != null) {
            attrs.put("files_changed", changed.paths());
        }
        return attrs;
    }

    /** Text is shown when it is valid UTF-8 without NULs and the type is not a known binary one. */
    static boolean isBinary(byte[] content, String mimeType) {
        String m = mimeType == null ? "" : mimeType.toLowerCase(Locale.ROOT);
        if (m.startsWith("image/") && !m.contains("svg") || m.startsWith("audio/") || m.startsWith("video/")
                || m.equals("application/pdf") || m.equals("application/zip") || m.equals("application/gzip")) {
            return true;
        }
        for (byte b : content) {
            if (b == 0) {
                return true;
            }
        }
        // A window may end inside a multi-byte character: ignore an incomplete sequence at the very end.
        int len = content.length;
        int back = 0;
        while (back < 3 && len - back - 1 >= 0 && (content[len - back - 1] & 0xC0) == 0x80) {
            back++;
        }
        if (len - back - 1 >= 0 && (content[len - back - 1] & 0xC0) == 0xC0) {
            len = len - back - 1;
        }
        CharsetDecoder d = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        try {
            d.decode(ByteBuffer.wrap(content, 0, len));
            return false;
        } catch (CharacterCodingException e) {
            return true;
        }
    }
}
