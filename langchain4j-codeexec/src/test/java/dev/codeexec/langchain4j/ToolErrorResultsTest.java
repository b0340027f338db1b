package dev.codeexec.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.WorkspaceBusyException;
import dev.codeexec.engine.WorkspaceFullException;
import dev.codeexec.testing.ExpectedLog;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.invocation.InvocationParameters;
import dev.langchain4j.service.tool.AiServiceTool;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.service.tool.ToolProviderRequest;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the model reads when a tool call fails, whatever the engine's message: plain words instead of exception
 * class names, very long paths shortened, one guidance sentence for every refusal because of a link, and a busy
 * workspace told apart from a policy refusal.
 */
class ToolErrorResultsTest {

    /** The guidance every refusal because of a link ends with (default tool names). */
    static final String LINK_GUIDANCE = "Links are refused here when they lead out of the workspace, do not resolve, "
            + "or stand where a real file or folder is needed: name the real file or folder inside the workspace "
            + "instead, or remove the link with workspace_exec (rm <link>) and put a real file or folder in its "
            + "place. Nothing was run or changed.";

    /** A Java exception or error class name. */
    private static final String CLASS_NAME = "\\b[A-Z][A-Za-z0-9_]*(Exception|Error)\\b";

    private final FakeEngine engine = new FakeEngine();
    private final CodeExecution codeExec = CodeExecution.builder().engine(engine)
            .artifactService(new InMemoryArtifactService()).build();

    @AfterEach
    void close() {
        codeExec.close();
    }

    @Test
    void should_put_file_system_failures_in_plain_words_when_the_engine_names_an_exception() {
        codeExec.workspace("conv-1").putFile("work/a.txt", "a");

        engine.fileFailure = new CodeExecException("could not write 'work/a.txt': FileSystemException");
        ToolExecutionResult write = call("workspace_write_file", "{\"path\":\"work/a.txt\",\"content\":\"x\"}");
        engine.fileFailure = new InvalidSpecException("cannot read 'work/a.txt': java.nio.file.AccessDeniedException");
        ToolExecutionResult read = call("workspace_read_file", "{\"path\":\"work/a.txt\"}");
        engine.fileFailure = new CodeExecException("cannot list the workspace: IOException");
        ToolExecutionResult list = call("workspace_list_files", "{}");

        assertThat(write.resultText())
                .isEqualTo("error: could not write 'work/a.txt': the file system refused the operation");
        assertThat(write.attributes()).containsEntry("error", "failed");
        assertThat(read.resultText()).isEqualTo("error: cannot read 'work/a.txt': permission denied");
        assertThat(read.attributes()).containsEntry("error", "invalid_request");
        assertThat(list.resultText()).isEqualTo("error: cannot list the workspace: an input/output error");
        for (ToolExecutionResult r : List.of(write, read, list)) {
            assertThat(r.isError()).isTrue();
            assertThat(r.resultText()).doesNotContainPattern(CLASS_NAME);
        }
    }

    @Test
    void should_tell_the_model_how_full_the_workspace_is_and_what_to_delete_when_a_write_finds_no_room() {
        codeExec.workspace("conv-1").putFile("work/a.txt", "a");

        engine.fileFailure = new WorkspaceFullException(16_700_000, 16_777_216, null);
        ToolExecutionResult write = call("workspace_write_file", "{\"path\":\"work/b.txt\",\"content\":\"x\"}");

        assertThat(write.isError()).isTrue();
        assertThat(write.attributes()).containsEntry("error", "workspace_full");
        assertThat(write.resultText()).isEqualTo("error: the workspace is full: 16700000 of 16777216 bytes used; "
                + "delete files under work/ or out/ to make room. The files already there are intact; delete what is "
                + "no longer needed (for example with workspace_exec: rm work/<file>), then try again.");
    }

    @Test
    void should_name_no_exception_class_when_a_failure_is_unexpected() {
        engine.fileFailure = new IllegalStateException("broken at /srv/host/secret");

        try (ExpectedLog log = ExpectedLog.capture()) {
            ToolExecutionResult r = call("workspace_list_files", "{}");

            assertThat(r.resultText())
                    .isEqualTo("error: workspace_list_files failed unexpectedly; the application log has details.");
            assertThat(r.attributes()).containsEntry("error", "internal");
            // the details are where the result says they are, and only there
            assertThat(log.text()).contains("workspace_list_files failed unexpectedly")
                    .contains("java.lang.IllegalStateException: broken at /srv/host/secret");
        }
    }

    @Test
    void should_shorten_a_very_long_path_in_an_error_and_say_it_was_shortened() {
        String path = "work/" + "p".repeat(2000) + "/data.csv";

        ToolExecutionResult missing = call("workspace_read_file", "{\"path\":\"" + path + "\"}");
        ToolExecutionResult absolute = call("workspace_read_file", "{\"path\":\"/" + path + "\"}");

        assertThat(missing.resultText()).startsWith("error: file work/ppp")
                .contains("...[shortened: " + (path.length() - 120) + " characters left out]...")
                .endsWith("ppp/data.csv does not exist");
        assertThat(missing.resultText().length()).isLessThan(250);
        assertThat(absolute.resultText()).startsWith("error: 'path' is refused: path '/work/ppp")
                .contains("characters left out]...").contains("ppp/data.csv' is absolute")
                .endsWith("fix the arguments of workspace_read_file and call it again.");
        assertThat(absolute.resultText().length()).isLessThan(500);
    }

    @Test
    void should_end_every_refusal_because_of_a_link_with_the_same_guidance() {
        engine.fileFailure = new PathEscapeException("path 'work/l/x' passes through a link that leads outside the "
                + "workspace");
        ToolExecutionResult read = call("workspace_read_file", "{\"path\":\"work/l/x\"}");
        ToolExecutionResult save = call("workspace_save_artifact", "{\"path\":\"work/l/x\"}");
        engine.fileFailure = new PathEscapeException("path 'work/d' passes through a link that does not resolve");
        ToolExecutionResult dangling = call("workspace_write_file", "{\"path\":\"work/d\",\"content\":\"x\"}");
        engine.fileFailure = new InvalidSpecException("'work/l' is a symbolic link; name a real file");
        ToolExecutionResult invalid = call("workspace_list_files", "{\"path\":\"work/l\"}");
        engine.fileFailure = null;
        engine.program = (ws, spec) -> {
            throw new PolicyViolationException("'work/l' is a symbolic link where the sandbox mounts a file or "
                    + "directory; refusing to run (remove it, it may have been planted)");
        };
        ToolExecutionResult run = call("workspace_exec", "{\"command\":\"ls\"}");

        assertThat(read.resultText()).isEqualTo("error: the path leaves the workspace (path 'work/l/x' passes through "
                + "a link that leads outside the workspace). " + LINK_GUIDANCE);
        assertThat(dangling.resultText()).startsWith("error: the path leaves the workspace (path 'work/d' passes "
                + "through a link that does not resolve). ");
        assertThat(run.resultText()).startsWith("error: refused by policy: 'work/l' is a symbolic link")
                .doesNotContain("do not retry");
        for (ToolExecutionResult r : List.of(read, save, dangling, invalid, run)) {
            assertThat(r.isError()).isTrue();
            assertThat(r.resultText()).endsWith(LINK_GUIDANCE);
        }
        assertThat(save.attributes()).as("the saved file's path escapes, as the read's does")
                .containsEntry("error", "path_escape");
        assertThat(run.attributes()).containsEntry("error", "policy");
    }

    @Test
    void should_keep_the_other_advice_when_a_refusal_is_not_because_of_a_link() {
        engine.fileFailure = new PathEscapeException("path 'work/x' leaves the workspace");
        ToolExecutionResult escape = call("workspace_read_file", "{\"path\":\"work/x\"}");
        engine.fileFailure = null;
        engine.program = (ws, spec) -> {
            throw new PolicyViolationException("reading 'work/x' is denied by the workspace's access policy");
        };
        ToolExecutionResult policy = call("workspace_exec", "{\"command\":\"ls\"}");

        assertThat(escape.resultText()).endsWith("Use paths inside the workspace, such as work/... or out/...; "
                + "nothing was changed.").doesNotContain("Links");
        assertThat(policy.resultText()).endsWith("Nothing was run; do not retry the same command.");
    }

    @Test
    void should_call_the_workspace_busy_and_name_the_session_to_poll_or_kill_when_a_session_holds_it() {
        engine.interactive = true;
        String id = sessionId(call("workspace_exec", "{\"command\":\"sleep 600\",\"background\":true}"));
        engine.fileFailure = new WorkspaceBusyException("a background session of this workspace is still running "
                + "(engine-session-1)", List.of("engine-session-1"));
        engine.program = (ws, spec) -> {
            throw new WorkspaceBusyException("busy (engine-session-1)", List.of("engine-session-1"));
        };

        ToolExecutionResult list = call("workspace_list_files", "{}");
        ToolExecutionResult run = call("workspace_exec", "{\"command\":\"ls\"}");

        assertThat(list.resultText()).isEqualTo("error: the workspace is busy with background session " + id
                + ", which is still running: on this backend nothing else can run in the workspace, and its files "
                + "cannot be read or written, while a background session of it runs. Read " + id + "'s output with "
                + "workspace_write_stdin (empty chars) until it exits, or stop it with workspace_kill_session, then "
                + "call workspace_list_files again. Nothing was run or changed.");
        assertThat(run.resultText()).startsWith("error: the workspace is busy with background session " + id)
                .endsWith("then call workspace_exec again. Nothing was run or changed.");
        for (ToolExecutionResult r : List.of(list, run)) {
            assertThat(r.isError()).isTrue();
            assertThat(r.attributes()).containsEntry("error", "busy");
            assertThat(r.resultText()).doesNotContain("policy").doesNotContain("do not retry")
                    .doesNotContain("engine-session");
        }

        // Positive control: once the session is killed, the same call works.
        assertThat(call("workspace_kill_session", "{\"session_id\":\"" + id + "\"}").resultText())
                .contains("status: killed");
        engine.fileFailure = null;
        assertThat(call("workspace_list_files", "{}").isError()).isFalse();
    }

    @Test
    void should_name_only_the_conversations_running_sessions_when_the_engine_names_none() {
        engine.interactive = true;
        String mine = sessionId(call("workspace_exec", "{\"command\":\"sleep 600\",\"background\":true}"));
        String other = sessionId(call("workspace_exec", "{\"command\":\"sleep 600\",\"background\":true}",
                ctx("conv-2")));
        engine.fileFailure = new WorkspaceBusyException("busy", List.of());

        String text = call("workspace_read_file", "{\"path\":\"work/a.txt\"}").resultText();

        assertThat(text).startsWith("error: the workspace is busy with background session " + mine + ", ")
                .doesNotContain(other);
    }

    @Test
    void should_stage_the_users_files_on_a_later_call_when_a_session_held_the_workspace_at_the_first() {
        engine.interactive = true;
        String id = sessionId(call("workspace_exec", "{\"command\":\"sleep 600\",\"background\":true}"));
        UserMessage message = UserMessage.builder().contents(List.of(TextContent.from("look"),
                ImageContent.from(Base64.getEncoder().encodeToString(new byte[] {1, 2, 3}), "image/png"))).build();
        InvocationContext invocation = InvocationContext.builder().invocationId(UUID.randomUUID())
                .chatMemoryId("conv-1").userMessage(message).invocationParameters(new InvocationParameters())
                .timestampNow().build();
        engine.fileFailure = new WorkspaceBusyException("busy", List.of("engine-session-1"));

        ToolExecutionResult busy = call("workspace_list_files", "{}", invocation);
        call("workspace_kill_session", "{\"session_id\":\"" + id + "\"}", invocation);
        engine.fileFailure = null;
        ToolExecutionResult later = call("workspace_list_files", "{\"path\":\"work/inputs\"}", invocation);

        assertThat(busy.resultText()).startsWith("error: the workspace is busy with background session " + id);
        assertThat(later.resultText()).startsWith("Files attached to the user's message:\n"
                + "- work/inputs/image.png (3 bytes)\n1 entry under work/inputs:");
    }

    private ToolExecutionResult call(String tool, String json) {
        return call(tool, json, ctx("conv-1"));
    }

    private ToolExecutionResult call(String tool, String json, InvocationContext ctx) {
        List<AiServiceTool> tools = codeExec.toolProvider()
                .provideTools(ToolProviderRequest.builder().invocationContext(ctx).userMessage(UserMessage.from("x"))
                        .build()).aiServiceTools();
        AiServiceTool t = tools.stream().filter(x -> x.name().equals(tool)).findFirst().orElseThrow();
        return t.toolExecutor().executeWithContext(ToolExecutionRequest.builder().id("c1").name(tool).arguments(json)
                .build(), ctx);
    }

    private static InvocationContext ctx(Object memoryId) {
        return InvocationContext.builder().invocationId(UUID.randomUUID()).chatMemoryId(memoryId)
                .invocationParameters(new InvocationParameters()).timestampNow().build();
    }

    private static String sessionId(ToolExecutionResult started) {
        Matcher m = Pattern.compile("s_[0-9a-f]{8}").matcher(started.resultText());
        assertThat(m.find()).as(started.resultText()).isTrue();
        return m.group();
    }
}
