package dev.codeexec.langchain4j;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionInput;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.FileRef;
import dev.codeexec.artifact.ArtifactRef;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.InputSpec;
import dev.codeexec.engine.OutputManifest;
import dev.codeexec.engine.OutputSpec;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.StagedInput;
import dev.codeexec.workspace.snapshot.RestoreReceipt;
import dev.codeexec.workspace.snapshot.Snapshot;
import dev.codeexec.workspace.snapshot.SnapshotOptions;
import dev.langchain4j.data.message.UserMessage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Application access to one conversation's workspace: the same workspace, engine, lock and rules the model's tools
 * use. For callbacks, listeners, skills and tests that put files in, run programs and collect results. Obtain it from
 * {@link CodeExecution#workspace(Object)}; it is a cheap handle, create one whenever needed.
 *
 * <p>Every method takes the workspace's lock for its duration, so it never interleaves with a tool call of the same
 * conversation. Failures are {@link dev.codeexec.engine.CodeExecException}s (bad paths, policy refusals, a gone
 * workspace); a program that runs and fails is a {@link RunResult}, not an exception.
 *
 * <p>{@link #runCommand} obeys the command policy exactly as {@code workspace_exec} does. {@link #run(RunProgramSpec)}
 * is for programs the application itself chose: it is not checked by the command policy, only by the engine.
 */
public final class WorkspaceIO {

    private final ToolRuntime runtime;
    private final Engine engine;
    private final String key;

    WorkspaceIO(ToolRuntime runtime, Engine engine, String key) {
        this.runtime = runtime;
        this.engine = engine;
        this.key = key;
    }

    /** The conversation key this handle works on. */
    public String conversationId() {
        return key;
    }

    /**
     * The prefix under which this conversation's tools save and find artifacts, per the configured
     * {@link ArtifactScope}: {@code conversations/<key>/} by default, {@code ""} when artifacts are shared. An
     * artifact saved as {@code artifactPrefix() + "report.csv"} is what the model stages as
     * {@code artifact://report.csv}.
     */
    public String artifactPrefix() {
        return runtime.artifactPrefix(key);
    }

    /** Writes files (atomically each; parents created). Paths are workspace-relative. */
    public void putFiles(List<PutFile> files) {
        Objects.requireNonNull(files, "files");
        runtime.withWorkspace(engine, key, ws -> {
            engine.fs().putFiles(ws, files);
            return null;
        });
    }

    /** Writes one UTF-8 text file. */
    public void putFile(String path, String text) {
        putFiles(List.of(PutFile.of(path, text)));
    }

    /** Writes one file. */
    public void putFile(String path, byte[] content) {
        putFiles(List.of(PutFile.of(path, content)));
    }

    /**
     * Captures this conversation's workspace as the next version of snapshot {@code name}, in its artifact scope
     * (where {@code workspace_snapshot} puts them, so the model can restore it), under the workspace's lock.
     *
     * @param options what to capture and the bounds; null for those configured on the builder
     * @throws dev.codeexec.workspace.snapshot.SnapshotLimitException when over a bound (nothing recorded)
     * @throws dev.codeexec.engine.UnsupportedCapabilityException     when no artifact store is configured
     */
    public Snapshot snapshot(String name, SnapshotOptions options) {
        SnapshotOptions o = options == null ? runtime.snapshotOptions() : options;
        return runtime.withWorkspace(engine, key, ws -> runtime.snapshots(engine, key).capture(engine, ws, name, o));
    }

    /**
     * Restores snapshot {@code name} of this conversation (version, or the latest when null) into its workspace,
     * under the workspace's lock, and returns the receipt.
     *
     * @throws dev.codeexec.workspace.snapshot.SnapshotIntegrityException when a content is missing or wrong (nothing
     *                                                                     written)
     */
    public RestoreReceipt restore(String name, Integer version) {
        return restoreFrom(key, name, version);
    }

    /**
     * Restores a snapshot of <em>another</em> conversation into this one's workspace: a fork. The snapshot is read
     * from that conversation's artifact scope, in the store of this handle's engine (which may be another engine than
     * the one the snapshot was taken on, when they share the store).
     */
    public RestoreReceipt restoreFrom(Object fromConversationId, String name, Integer version) {
        String from = Objects.requireNonNull(fromConversationId, "fromConversationId").toString();
        return runtime.withWorkspace(engine, key, ws -> runtime.snapshots(engine, from).restore(engine, ws, name,
                version, runtime.snapshotOptions(), false));
    }

    /**
     * Stages inputs: {@code artifact://} references (by the store's full names, not scoped; see
     * {@link #artifactPrefix()}), {@code workspace://} paths, and host paths, the last only under the input roots
     * configured on the engine (anything else is refused with a {@link dev.codeexec.engine.PolicyViolationException}).
     */
    public List<StagedInput> stageInputs(List<InputSpec> inputs) {
        Objects.requireNonNull(inputs, "inputs");
        return runtime.withWorkspace(engine, key, ws -> engine.fs().stageInputs(ws, inputs));
    }

    /**
     * Stages the files attached to a user message into {@code work/inputs/}, as the tools do on their first call of an
     * invocation.
     *
     * @return the workspace-relative paths staged (already staged identical files are reported once more)
     */
    public List<String> stageAttachments(UserMessage message) {
        Objects.requireNonNull(message, "message");
        return runtime.withWorkspace(engine, key, ws -> {
            List<String> paths = new ArrayList<>();
            for (AttachmentStager.Staged s : runtime.stageAttachments(engine, ws, message)) {
                if (s.staged()) {
                    paths.add(s.path());
                }
            }
            return paths;
        });
    }

    /**
     * Runs a shell command line as {@code workspace_exec} would: through the command policy when one is configured,
     * with the tools' environment rules.
     *
     * @param timeout the time limit; null for the configured default
     */
    public RunResult runCommand(String commandLine, String cwd, Duration timeout) {
        Objects.requireNonNull(commandLine, "commandLine");
        Duration limit = timeout == null ? runtime.settings().defaultTimeout() : timeout;
        return runtime.withWorkspace(engine, key, ws -> engine.runner().runProgram(ws,
                runtime.commandSpec(engine, ws, commandLine, Map.of(), cwd, null, limit)));
    }

    /** {@link #runCommand(String, String, Duration)} in the workspace root with the default time limit. */
    public RunResult runCommand(String commandLine) {
        return runCommand(commandLine, null, null);
    }

    /** Runs a program the application chose (not checked by the command policy). */
    public RunResult run(RunProgramSpec spec) {
        Objects.requireNonNull(spec, "spec");
        return runtime.withWorkspace(engine, key, ws -> engine.runner().runProgram(ws, spec));
    }

    /**
     * Runs a code block with the engine's own code executor ({@link Engine#executeCode}), under the engine's
     * environment rules. Not checked by the command policy: for code the application chose. (The model's
     * {@code execute_code} tool runs snippets with a clean environment instead.)
     *
     * @param timeout the time limit; null for the engine's default
     */
    public CodeExecutionResult executeCode(CodeBlock block, Duration timeout) {
        Objects.requireNonNull(block, "block");
        return runtime.withWorkspace(engine, key, ws -> engine.executeCode(ws,
                new CodeExecutionInput(List.of(block), key, timeout)));
    }

    /** Lists a folder (recursively) or the files matching a glob. */
    public List<FileInfo> list(String globOrDir) {
        return runtime.withWorkspace(engine, key, ws -> engine.fs().list(ws, globOrDir));
    }

    /** Reads a window of a file. */
    public FileRef read(String path, long offset, int maxBytes) {
        return runtime.withWorkspace(engine, key, ws -> engine.fs().readFile(ws, path, offset, maxBytes));
    }

    /** Reads the files matching the globs, contents inline (at most 4 MiB each). */
    public List<FileRef> collect(String... globs) {
        return runtime.withWorkspace(engine, key, ws -> engine.fs().collect(ws, List.of(globs)));
    }

    /** Collects outputs under the spec's limits, inline and/or saved as artifacts. */
    public OutputManifest collectOutputs(OutputSpec spec) {
        Objects.requireNonNull(spec, "spec");
        return runtime.withWorkspace(engine, key, ws -> engine.fs().collectOutputs(ws, spec));
    }

    /**
     * Saves one file under {@code work/}, {@code out/} or {@code runs/} as an artifact, with the limits of
     * {@code workspace_save_artifact}.
     *
     * <p>Unlike the tool, this uses the store's full names: {@code saveArtifact("out/r.csv", "r.csv")} saves
     * {@code artifact://r.csv}, outside every conversation's {@linkplain CodeExecution.Builder#artifactScope scope}.
     * To save where this conversation's tools find it, put {@link #artifactPrefix()} in front of the name.
     *
     * @param name the artifact name (full, not scoped); null for the file name
     */
    public ArtifactRef saveArtifact(String path, String name) {
        String p = ToolPaths.normalizeFile(path, "path");
        if (ToolPaths.ARTIFACT_ROOTS.stream().noneMatch(r -> ToolPaths.under(p, r) && !p.equals(r))) {
            throw new dev.codeexec.engine.InvalidSpecException("path (" + path + ") must be a file under work/, out/ "
                    + "or runs/");
        }
        String n = name == null || name.isBlank() ? p.substring(p.lastIndexOf('/') + 1) : name;
        var service = runtime.artifactService(engine);
        return runtime.withWorkspace(engine, key, ws -> runtime.saveArtifact(engine, ws, service, p, n).ref());
    }
}
