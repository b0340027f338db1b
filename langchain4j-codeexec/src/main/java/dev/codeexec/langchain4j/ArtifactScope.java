package dev.codeexec.langchain4j;

import dev.codeexec.workspace.SafeNames;
import java.util.Objects;
import java.util.function.Function;

/**
 * Which part of the artifact store a conversation's tools see. The tools store every artifact under a prefix derived
 * from the conversation's workspace key, show the model only the name after it ({@code artifact://report.csv@2}) and
 * resolve every name the model gives inside that prefix. Artifact names have no {@code ..} segment, so a model cannot
 * name its way out of its prefix into another conversation's.
 *
 * <p><b>Warning:</b> {@link #shared()} lets every conversation read, and save new versions of, every other
 * conversation's artifacts through the tools. Use it only when all users of the AI service may see each other's
 * files.
 *
 * <pre>{@code
 * CodeExecution.builder().engine(engine).artifactService(store)
 *         .artifactScope(ArtifactScope.perConversation())         // the default
 *         .build();
 * }</pre>
 *
 * <p>The scope applies to the model's tools ({@code workspace_save_artifact}, {@code workspace_stage_artifact}).
 * Application code ({@link WorkspaceIO#saveArtifact}, {@link WorkspaceIO#stageInputs}) uses the store's full names;
 * {@link WorkspaceIO#artifactPrefix()} gives the prefix to put an artifact where a conversation's tools find it. The
 * scope is a naming rule, not access control over the store itself: code that reaches the store directly (an engine
 * whose programs can read the store's folder, say) sees every name.
 *
 * <p>Immutable and thread-safe.
 */
public final class ArtifactScope {

    /** {@value}: the folder under which {@link #perConversation()} keeps each conversation's artifacts. */
    public static final String CONVERSATIONS_FOLDER = "conversations";

    private static final ArtifactScope PER_CONVERSATION = new ArtifactScope("perConversation",
            key -> CONVERSATIONS_FOLDER + "/" + SafeNames.uniqueSegment(key) + "/");
    private static final ArtifactScope SHARED = new ArtifactScope("shared", key -> "");

    private final String name;
    private final Function<String, String> keyToPrefix;

    private ArtifactScope(String name, Function<String, String> keyToPrefix) {
        this.name = name;
        this.keyToPrefix = keyToPrefix;
    }

    /**
     * The default: each conversation's artifacts live under {@code conversations/<key>/}, where {@code <key>} is the
     * workspace key (the memory id, or the {@link CodeExecution#WORKSPACE_ID_PARAMETER} override) made safe by
     * {@link SafeNames#uniqueSegment}: kept as it is when it is a lower-case {@code [a-z0-9._-]} segment, else
     * sanitised with a hash added, so two keys never share a prefix. The model saving {@code report.csv} in
     * conversation {@code alice} creates {@code conversations/alice/report.csv} in the store and sees
     * {@code artifact://report.csv@1}.
     */
    public static ArtifactScope perConversation() {
        return PER_CONVERSATION;
    }

    /**
     * No prefix: every conversation's tools see the whole store under the store's own names. See the warning on the
     * class.
     */
    public static ArtifactScope shared() {
        return SHARED;
    }

    /**
     * A custom rule, for example one prefix per user rather than per conversation:
     * {@code ArtifactScope.prefixed(key -> "users/" + userOf(key) + "/")}.
     *
     * @param keyToPrefix maps a workspace key to its prefix: {@code ""} (the whole store) or a relative artifact name
     *                    followed by {@code /}. It must be a pure function, and injective where conversations must not
     *                    see each other's artifacts (derive it with {@link SafeNames#uniqueSegment}). A prefix that
     *                    breaks these rules fails the tool call with an internal error, logged, never shown to the
     *                    model.
     */
    public static ArtifactScope prefixed(Function<String, String> keyToPrefix) {
        return new ArtifactScope("prefixed", Objects.requireNonNull(keyToPrefix, "keyToPrefix"));
    }

    /**
     * The prefix of a workspace key's artifacts: {@code ""} or {@code seg/.../seg/}.
     *
     * @throws IllegalStateException when a custom rule returns null or a malformed prefix
     */
    public String prefix(String workspaceKey) {
        Objects.requireNonNull(workspaceKey, "workspaceKey");
        String p = keyToPrefix.apply(workspaceKey);
        if (p == null || !p.isEmpty() && (!p.endsWith("/") || !isRelativeName(p.substring(0, p.length() - 1)))) {
            throw new IllegalStateException("the artifact scope gave the prefix " + (p == null ? "null"
                    : ToolArguments.echo(p)) + "; a prefix must be empty or a relative artifact name followed by '/'");
        }
        return p;
    }

    /**
     * True when {@code name} is a relative {@code /}-separated name without an empty, {@code .} or {@code ..}
     * segment, backslash or NUL: the structure every artifact name has, checked here before a prefix is put in
     * front, whatever the store checks itself. (The characters allowed in a segment are the store's to decide.)
     */
    static boolean isRelativeName(String name) {
        if (name == null || name.isEmpty() || name.startsWith("/") || name.indexOf('\\') >= 0
                || name.indexOf('\0') >= 0) {
            return false;
        }
        for (String segment : name.split("/", -1)) {
            if (segment.isEmpty() || segment.equals(".") || segment.equals("..")) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString() {
        return "ArtifactScope." + name + "()";
    }
}
