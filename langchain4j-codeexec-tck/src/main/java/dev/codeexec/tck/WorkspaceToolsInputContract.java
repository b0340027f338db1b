package dev.codeexec.tck;

import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.WorkspaceIO;
import static dev.codeexec.langchain4j.ScriptedOpenAi.lastToolResult;
import static dev.codeexec.langchain4j.ScriptedOpenAi.toolResultsThisTurn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.langchain4j.ScriptedOpenAi.Reply;
import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.data.message.PdfFileContent;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.service.AiServices;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Workspace tools scenarios, second part: what the model and the user send in. Bad input and oversized writes get
 * tool results and leave the workspaces unchanged, attached files are staged before tools run, refusals because of a
 * link and of a too-long file name read well, and badly typed arguments are answered on each tool face. Backends do
 * not extend this class directly: they extend {@link AbstractWorkspaceToolsIT}, the last class of the chain.
 */
public abstract class WorkspaceToolsInputContract extends WorkspaceToolsConversationContract {

    /** The guidance every refusal because of a link ends with (default tool names). */
    static final String LINK_GUIDANCE = "Links are refused here when they lead out of the workspace, do not resolve, "
            + "or stand where a real file or folder is needed: name the real file or folder inside the workspace "
            + "instead, or remove the link with workspace_exec (rm <link>) and put a real file or folder in its "
            + "place. Nothing was run or changed.";


    @Test
    void should_answer_bad_input_with_tool_results_and_leave_the_workspaces_unchanged() throws IOException {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).artifactService(artifacts)
                .maxWriteBytes(1024 * 1024).build()) {
            WorkspaceIO victim = codeExec.workspace("victim");
            victim.putFile("out/secret.txt", "top secret");
            WorkspaceIO mine = codeExec.workspace("bad");
            mine.putFile("work/own.txt", "mine");
            Path victimRoot = hostRootOf("out/secret.txt");
            // A link to another conversation's workspace, as a command could plant, and a harmless internal one.
            mine.run(RunProgramSpec.builder("ln").args("-s", victimRoot.toString(), "work/other").build());
            mine.run(RunProgramSpec.builder("ln").args("-s", "own.txt", "work/alias.txt").build());
            List<FileInfo> mineBefore = mine.list(".");
            List<FileInfo> victimBefore = victim.list(".");
            List<String[]> calls = List.of(
                    new String[] {"workspace_exec", "{\"command\": \"ls\", "},
                    new String[] {"workspace_exec", "{}"},
                    new String[] {"workspace_exec", "{\"command\":\"ls\",\"timeout_seconds\":-1}"},
                    new String[] {"workspace_exec", "{\"command\":\"ls\",\"timeout_seconds\":\"soon\"}"},
                    new String[] {"workspace_exec", "{\"command\":\"touch x\",\"cwd\":\"../..\"}"},
                    new String[] {"workspace_read_file", "{\"path\":\"/etc/passwd\"}"},
                    new String[] {"workspace_read_file", "{\"path\":\"work/other/out/secret.txt\"}"},
                    new String[] {"workspace_write_file", "{\"path\":\"work/other/out/evil.txt\",\"content\":\"x\"}"},
                    new String[] {"workspace_write_file", "{\"path\":\"work/big.txt\",\"content\":\""
                            + "a".repeat(2 * 1024 * 1024) + "\"}"},
                    new String[] {"workspace_write_stdin", "{\"session_id\":\"s_00000000\",\"chars\":\"hi\"}"},
                    new String[] {"workspace_kill_session", "{\"session_id\":\"s_00000000\"}"},
                    new String[] {"execute_code", "{\"language\":\"cobol\",\"code\":\"DISPLAY 'x'.\"}"},
                    new String[] {"workspace_save_artifact", "{\"path\":\"work/other/out/secret.txt\"}"},
                    new String[] {"workspace_stage_artifact", "{\"ref\":\"artifact://missing\"}"});
            openAi.script(req -> {
                int step = toolResultsThisTurn(req);
                if (step < calls.size()) {
                    return Reply.tool("call_" + step, calls.get(step)[0], calls.get(step)[1]);
                }
                return step == calls.size() ? Reply.tool("call_ok", "workspace_read_file",
                        Map.of("path", "work/alias.txt")) : Reply.text("done");
            });

            assertThat(assistant(codeExec).chat("bad", "misbehave")).isEqualTo("done");

            List<ToolExecutionResultMessage> results = toolMessages("bad");
            assertThat(results).hasSize(calls.size() + 1);
            for (int i = 0; i < calls.size(); i++) {
                assertThat(results.get(i).text()).as(calls.get(i)[0] + " " + calls.get(i)[1].substring(0,
                        Math.min(80, calls.get(i)[1].length()))).startsWith("error: ")
                        .doesNotContain(base.toString()).doesNotContain("Exception");
                assertThat(results.get(i).isError()).isTrue();
            }
            assertThat(results.get(6).text()).contains("leaves the workspace");
            assertThat(results.get(8).text()).contains("limit per write is 1048576 bytes");
            assertThat(results.get(9).text()).contains("no background session 's_00000000'");
            assertThat(results.get(calls.size()).text()).as("positive control: a link inside the workspace")
                    .endsWith("\nmine");
            assertThat(mine.list(".")).isEqualTo(mineBefore);
            assertThat(victim.list(".")).isEqualTo(victimBefore);
            assertThat(artifacts.names()).isEmpty();
        }
    }

    @Test
    void should_refuse_a_50_mb_write_and_leave_the_workspace_unchanged() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            WorkspaceIO ws = codeExec.workspace("big");
            ws.putFile("work/keep.txt", "keep");
            List<FileInfo> before = ws.list(".");
            String big = "{\"path\":\"work/big.txt\",\"content\":\"" + "a".repeat(50 * 1024 * 1024) + "\"}";
            var tool = codeExec.toolProvider().provideTools(null).aiServiceTools().stream()
                    .filter(t -> t.name().equals("workspace_write_file")).findFirst().orElseThrow();

            var result = tool.toolExecutor().executeWithContext(dev.langchain4j.agent.tool.ToolExecutionRequest
                    .builder().id("c").name("workspace_write_file").arguments(big).build(),
                    dev.langchain4j.invocation.InvocationContext.builder().chatMemoryId("big").build());

            assertThat(result.isError()).isTrue();
            assertThat(result.resultText()).contains("limited to 8388608 bytes");
            assertThat(ws.list(".")).isEqualTo(before);
        }
    }

    @Test
    void should_stage_attached_files_before_tools_run() throws IOException {
        byte[] png = Base64.getDecoder().decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
                + "YPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==");
        Path granted = Files.writeString(inputRoot.resolve("notes.txt"), "granted host file");
        Path outside = Files.writeString(base.resolve("outside.pdf"), "not granted");
        openAi.script(req -> toolResultsThisTurn(req) == 0
                ? Reply.tool("call_ls", "workspace_exec", Map.of("command", "ls work/inputs; cat work/inputs/notes.txt"))
                : Reply.text(lastToolResult(req)));
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            FileAssistant a = AiServices.builder(FileAssistant.class).chatModel(openAi.chatModel())
                    .toolProvider(codeExec.toolProvider()).chatMemoryProvider(memory).build();

            String answer = a.chat("files", List.of(TextContent.from("What did I attach?"),
                    ImageContent.from(Base64.getEncoder().encodeToString(png), "image/png"),
                    ImageContent.from(granted.toUri()),
                    PdfFileContent.from(outside.toUri())));

            assertThat(answer).startsWith("Files attached to the user's message:\n"
                    + "- work/inputs/image.png (" + png.length + " bytes)\n"
                    + "- work/inputs/notes.txt (17 bytes)\n"
                    + "- outside.pdf: not staged, because it is a host file outside the input roots")
                    .contains("exit_code: 0").contains("image.png\nnotes.txt\ngranted host file")
                    .doesNotContain(base.toString()).doesNotContain(inputRoot.toString());
            assertThat(codeExec.workspace("files").read("work/inputs/image.png", 0, 1000).content()).isEqualTo(png);
        }
    }

    @Test
    void should_end_every_refusal_because_of_a_link_with_the_same_guidance() throws IOException {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).artifactService(artifacts).build()) {
            var tools = codeExec.tools();
            var ctx = dev.langchain4j.invocation.InvocationContext.builder().chatMemoryId("links").build();
            // Links the model can make with a command: out of the workspace, dangling, and one that stays inside.
            String made = tools.workspaceExec("mkdir -p work/real && echo inside > work/real/f.txt && ln -s "
                    + inputRoot + " work/out-link && ln -s ../missing work/dangling && ln -s real work/in-link",
                    null, null, null, null, null, ctx);
            String saved = tools.workspaceSaveArtifact("work/real/f.txt", "f.txt", ctx);

            List<String> refused = List.of(
                    tools.workspaceReadFile("work/out-link/f.txt", null, null, ctx),
                    tools.workspaceWriteFile("work/out-link/planted.txt", "x", null, ctx),
                    tools.workspaceListFiles("work/out-link", ctx),
                    tools.workspaceReadFile("work/dangling", null, null, ctx),
                    tools.workspaceWriteFile("work/dangling", "x", true, ctx),
                    tools.workspaceSaveArtifact("work/out-link/f.txt", null, ctx),
                    tools.workspaceStageArtifact("artifact://f.txt", "work/out-link/f.txt", ctx),
                    tools.workspaceExec("ls", "work/out-link", null, null, null, null, ctx));

            assertThat(made).startsWith("exit_code: 0");
            assertThat(saved).startsWith("saved work/real/f.txt as artifact://f.txt@1");
            for (String r : refused) {
                assertThat(r).startsWith("error: ").endsWith(LINK_GUIDANCE)
                        .doesNotContain(inputRoot.toString()).doesNotContain("Exception");
            }
            try (Stream<Path> planted = Files.list(inputRoot)) {
                assertThat(planted).as("nothing was written through the link").isEmpty();
            }
            assertThat(tools.workspaceReadFile("work/in-link/f.txt", null, null, ctx))
                    .as("positive control: a link inside the workspace").endsWith("\ninside\n");
        }
    }

    @Test
    void should_name_no_exception_class_and_shorten_the_path_when_a_file_name_is_too_long() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            var ctx = dev.langchain4j.invocation.InvocationContext.builder().chatMemoryId("long").build();
            // Longer than any file system's name limit (255 bytes): the engine's write fails.
            String path = "work/" + "n".repeat(300) + ".txt";

            String written = codeExec.tools().workspaceWriteFile(path, "x", null, ctx);

            assertThat(written).startsWith("error: ").contains("'work/nnn")
                    .contains("...[shortened: " + (path.length() - 120) + " characters left out]...")
                    .contains("nnn.txt'").doesNotContain("Exception").doesNotContain(base.toString());
            assertThat(written.length()).isLessThan(path.length());
            assertThat(codeExec.workspace("long").list("work")).noneMatch(f -> f.path().contains("nnn"));
        }
    }

    @Test
    void should_give_argument_conversion_errors_to_the_model_when_the_tool_methods_are_registered() {
        openAi.script(req -> switch (toolResultsThisTurn(req)) {
            case 0 -> Reply.tool("c0", "workspace_exec", Map.of("command", "echo hi", "timeout_seconds", "soon"));
            case 1 -> Reply.tool("c1", "workspace_exec", Map.of("command", "echo hi"));
            default -> Reply.text("ok");
        });
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            Assistant a = AiServices.builder(Assistant.class).chatModel(codeExec.wrap(openAi.chatModel()))
                    .tools(codeExec.tools()).toolArgumentsErrorHandler(codeExec.toolArgumentsErrorHandler())
                    .chatMemoryProvider(memory).build();

            assertThat(a.chat("t", "hello")).isEqualTo("ok");

            List<ToolExecutionResultMessage> results = toolMessages("t");
            assertThat(results.get(0).text()).startsWith("error: invalid arguments for workspace_exec")
                    .contains("timeout_seconds").doesNotContain("Exception");
            assertThat(results.get(1).text()).startsWith("exit_code: 0").contains("hi");
        }
    }

    /**
     * The one difference between the faces (README, docs/tools.md): LangChain4j converts the arguments of
     * {@code @Tool} methods before they run, and without an arguments error handler a badly typed one fails the
     * invocation; the provider face answers the model with a tool error instead, and nothing runs in either case.
     */
    @Test
    void should_fail_the_invocation_on_a_badly_typed_argument_only_on_the_tool_methods_without_the_handler() {
        openAi.script(req -> toolResultsThisTurn(req) == 0
                ? Reply.tool("c0", "workspace_exec", Map.of("command", "touch out/ran", "timeout_seconds", "soon"))
                : Reply.text("ok"));
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            Assistant methods = AiServices.builder(Assistant.class).chatModel(codeExec.wrap(openAi.chatModel()))
                    .tools(codeExec.tools()).chatMemoryProvider(memory).build();
            assertThatThrownBy(() -> methods.chat("m", "hello")).hasMessageContaining("timeout_seconds");

            Assistant provider = AiServices.builder(Assistant.class).chatModel(codeExec.wrap(openAi.chatModel()))
                    .toolProvider(codeExec.toolProvider()).chatMemoryProvider(memory).build();
            assertThat(provider.chat("p", "hello")).isEqualTo("ok");
            assertThat(toolMessages("p").get(0).text()).startsWith("error: ").contains("timeout_seconds");
            assertThat(codeExec.workspace("m").list("out")).isEmpty();
            assertThat(codeExec.workspace("p").list("out")).isEmpty();
        }
    }
}
