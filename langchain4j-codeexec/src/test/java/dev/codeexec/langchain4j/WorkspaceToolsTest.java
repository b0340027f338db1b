package dev.codeexec.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.Capabilities;
import dev.codeexec.policy.CommandPolicy;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.SavedOutput;
import dev.codeexec.testing.ExpectedLog;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.agent.tool.ToolSpecifications;
import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.data.message.PdfFileContent;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.invocation.InvocationParameters;
import dev.langchain4j.service.tool.AiServiceTool;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.service.tool.ToolProviderRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The tool layer on a fake engine: argument handling, result text, refusals, and that bad input changes nothing. */
class WorkspaceToolsTest {

    private final FakeEngine engine = new FakeEngine();
    private final InMemoryArtifactService artifacts = new InMemoryArtifactService();
    private CodeExecution codeExec = CodeExecution.builder().engine(engine).artifactService(artifacts)
            .maxWriteBytes(1024 * 1024).build();

    @AfterEach
    void close() {
        codeExec.close();
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

    @Test
    void should_state_exit_code_timeout_and_truncation_when_a_command_runs() {
        engine.program = (ws, spec) -> new RunResult("hello\n", "warn\n", 3, Duration.ofMillis(40), false, false,
                false);

        ToolExecutionResult r = call("workspace_exec", "{\"command\":\"echo hello\"}");

        assertThat(r.isError()).isFalse();
        assertThat(r.resultText()).startsWith("exit_code: 3 | timed_out: false | truncated: false | duration: 0.04s")
                .contains("--- stdout ---\nhello").contains("--- stderr ---\nwarn");
        assertThat(r.attributes()).containsEntry("exit_code", 3).containsEntry("timed_out", false)
                .containsEntry("duration_ms", 40L);
        assertThat(engine.runs.get(0).cmd()).isEqualTo("bash");
        assertThat(engine.runs.get(0).args()).containsExactly("-c", "echo hello");
        assertThat(engine.runs.get(0).cleanEnv()).as("clean env by default where supported").isTrue();
        assertThat(engine.runs.get(0).timeout()).isEqualTo(Duration.ofSeconds(60));
    }

    @Test
    void should_say_killed_when_the_command_timed_out() {
        engine.program = (ws, spec) -> new RunResult("partial", "", -1, Duration.ofSeconds(2), true, false, false);

        ToolExecutionResult r = call("workspace_exec", "{\"command\":\"sleep 100\",\"timeout_seconds\":2}");

        assertThat(r.resultText()).startsWith("exit_code: none (killed) | timed_out: true")
                .contains("killed with all its child processes").contains("partial");
        assertThat(engine.runs.get(0).timeout()).isEqualTo(Duration.ofSeconds(2));
    }

    @Test
    void should_window_long_output_to_head_and_tail_when_it_exceeds_the_limit() {
        codeExec = CodeExecution.builder().engine(engine).maxOutputBytes(100).build();
        String out = "HEAD" + "x".repeat(10_000) + "TAIL";
        engine.program = (ws, spec) -> new RunResult(out, "", 0, Duration.ZERO, false, true, false);

        String text = call("workspace_exec", "{\"command\":\"yes\"}").resultText();

        assertThat(text).contains("truncated: true").contains("HEAD").contains("TAIL").contains("bytes omitted]")
                .contains("The engine kept the start and the end of stdout and dropped the middle.")
                .contains("Write large output to a file under out/");
        assertThat(text.length()).isLessThan(600);
    }

    @Test
    void should_say_where_the_whole_output_is_when_the_engine_saved_it() {
        String out = "HEAD\n[output truncated: 2000000 bytes dropped here; the end of the output follows]\nFINAL";
        engine.program = (ws, spec) -> new RunResult(out, "e", 0, Duration.ZERO, false, true, true)
                .withSavedOutput(new SavedOutput("runs/run_1/stdout", 3_000_000, 3_000_000, null),
                        new SavedOutput("runs/run_1/stderr", 16, 40, "saving stopped at the engine's cap of 16 bytes"));

        String text = call("workspace_exec", "{\"command\":\"make test\"}").resultText();

        assertThat(text).contains("truncated: true")
                .contains("The engine kept the start and the end of stdout and stderr and dropped the middle.")
                .contains("The whole stdout (3000000 bytes) is saved in runs/run_1/stdout: read it in windows with "
                        + "workspace_read_file")
                .contains("The first 16 of 40 bytes of stderr are saved in runs/run_1/stderr (saving stopped at the "
                        + "engine's cap of 16 bytes)")
                .contains("FINAL").doesNotContain("Write large output to a file");
    }

    @Test
    void should_report_files_changed_when_a_command_writes_files() {
        engine.program = (ws, spec) -> {
            engine.filesOf(ws).put("out/result.csv", "a,b\n".getBytes(StandardCharsets.UTF_8));
            return new RunResult("", "", 0, Duration.ZERO, false, false, false);
        };

        ToolExecutionResult r = call("workspace_exec", "{\"command\":\"make\"}");

        assertThat(r.resultText()).contains("--- files changed ---\n+ out/result.csv (4 bytes)");
        assertThat(r.attributes().get("files_changed")).isEqualTo(List.of("out/result.csv"));
    }

    @Test
    void should_attribute_only_the_run_own_changes_when_files_changed_between_runs() {
        engine.program = (ws, spec) -> {
            String cmd = spec.args().get(1);
            if (cmd.startsWith("touch ")) {
                engine.filesOf(ws).put(cmd.substring(6), new byte[0]);
            }
            return new RunResult("", "", 0, Duration.ZERO, false, false, false);
        };

        String first = call("workspace_exec", "{\"command\":\"touch work/a\"}").resultText();
        codeExec.workspace("conv-1").putFile("work/by-app.txt", "x");
        String second = call("workspace_exec", "{\"command\":\"true\"}").resultText();
        call("workspace_write_file", "{\"path\":\"out/by-tool.txt\",\"content\":\"y\"}");
        String third = call("workspace_exec", "{\"command\":\"touch out/b\"}").resultText();
        String fourth = call("workspace_exec", "{\"command\":\"touch work/c\"}").resultText();

        assertThat(first).endsWith("--- files changed ---\n+ work/a (0 bytes)");
        assertThat(second).doesNotContain("files changed");
        assertThat(third).endsWith("--- files changed ---\n+ out/b (0 bytes)");
        assertThat(fourth).endsWith("--- files changed ---\n+ work/c (0 bytes)");
    }

    @Test
    void should_return_a_readable_error_and_create_no_workspace_when_arguments_are_malformed() {
        for (String bad : List.of("{", "[1,2]", "{}", "{\"command\":\"\"}", "{\"command\":42,\"timeout_seconds\":\"x\"}",
                "{\"command\":\"ls\",\"timeout_seconds\":-5}", "{\"command\":\"ls\",\"timeout_seconds\":0}",
                "{\"command\":\"ls\",\"timeout_seconds\":100000}", "{\"command\":\"ls\",\"cwd\":\"../other\"}",
                "{\"command\":\"ls\",\"cwd\":\"/etc\"}", "{\"command\":\"ls\",\"env\":{\"BAD NAME\":\"1\"}}",
                "{\"command\":\"ls\",\"env\":[1]}", "{\"command\":\"ls\",\"background\":\"maybe\"}")) {
            ToolExecutionResult r = call("workspace_exec", bad);
            assertThat(r.isError()).as(bad).isTrue();
            assertThat(r.resultText()).as(bad).startsWith("error: ").contains("Nothing was run or changed")
                    .doesNotContain("Exception").doesNotContain("\tat ");
        }
        assertThat(engine.runs).isEmpty();
        assertThat(engine.created).as("no workspace is created for a bad call").isEmpty();
    }

    @Test
    void should_name_the_argument_and_value_when_timeout_is_negative() {
        assertThat(call("workspace_exec", "{\"command\":\"ls\",\"timeout_seconds\":-5}").resultText())
                .contains("'timeout_seconds' (-5) must be between 1 and 600");
    }

    @Test
    void should_accept_numbers_and_booleans_as_strings_when_models_quote_them() {
        ToolExecutionResult r = call("workspace_exec", "{\"command\":\"ls\",\"timeout_seconds\":\"7\","
                + "\"background\":\"false\",\"env\":\"{\\\"A\\\":1}\"}");

        assertThat(r.isError()).isFalse();
        assertThat(engine.runs.get(0).timeout()).isEqualTo(Duration.ofSeconds(7));
        assertThat(engine.runs.get(0).env()).containsEntry("A", "1");
    }

    @Test
    void should_refuse_background_sessions_clearly_when_the_engine_is_not_interactive() {
        ToolExecutionResult r = call("workspace_exec", "{\"command\":\"python3 -i\",\"background\":true}");

        assertThat(r.isError()).isTrue();
        assertThat(r.resultText()).contains("background sessions need an engine with interactive sessions")
                .contains("'fake' engine");
        assertThat(engine.runs).isEmpty();
    }

    @Test
    void should_answer_unknown_session_when_the_id_does_not_exist() {
        for (String tool : List.of("workspace_write_stdin", "workspace_kill_session")) {
            ToolExecutionResult r = call(tool, "{\"session_id\":\"s_deadbeef\",\"chars\":\"x\"}");
            assertThat(r.isError()).isTrue();
            assertThat(r.resultText()).contains("no background session 's_deadbeef'");
        }
        assertThat(call("workspace_kill_session", "{}").resultText()).contains("'session_id' is required");
    }

    @Test
    void should_refuse_and_change_nothing_when_a_write_exceeds_the_limit() {
        codeExec = CodeExecution.builder().engine(engine).build();
        String big = "a".repeat(50 * 1024 * 1024);

        ToolExecutionResult r = call("workspace_write_file", "{\"path\":\"work/big.txt\",\"content\":\"" + big
                + "\"}");

        assertThat(r.isError()).isTrue();
        assertThat(r.resultText()).contains("files written by a tool are limited to 8388608 bytes")
                .contains("Nothing was run or changed");
        assertThat(engine.files.values().stream().flatMap(m -> m.keySet().stream())).isEmpty();
    }

    @Test
    void should_name_the_write_limit_when_content_is_just_over_it() {
        codeExec = CodeExecution.builder().engine(engine).maxWriteBytes(1000).build();

        ToolExecutionResult r = call("workspace_write_file", "{\"path\":\"work/a.txt\",\"content\":\""
                + "b".repeat(1001) + "\"}");

        assertThat(r.resultText()).contains("'content' is 1001 bytes; the limit per write is 1000 bytes");
        assertThat(engine.created).isEmpty();
    }

    @Test
    void should_create_append_and_read_back_a_file() {
        assertThat(call("workspace_write_file", "{\"path\":\"work/a.txt\",\"content\":\"one\\n\"}").resultText())
                .isEqualTo("created work/a.txt (now 4 bytes)");
        assertThat(call("workspace_write_file", "{\"path\":\"work/a.txt\",\"content\":\"two\\n\",\"append\":true}")
                .resultText()).isEqualTo("appended 4 bytes to work/a.txt (now 8 bytes)");
        assertThat(call("workspace_write_file", "{\"path\":\"$WORK_DIR/a.txt\",\"content\":\"x\"}").resultText())
                .isEqualTo("overwrote work/a.txt (now 1 bytes)");
        call("workspace_write_file", "{\"path\":\"work/a.txt\",\"content\":\"0123456789\"}");

        String window = call("workspace_read_file", "{\"path\":\"work/a.txt\",\"offset\":2,\"max_bytes\":3}")
                .resultText();

        assertThat(window).isEqualTo("path: work/a.txt | size: 10 bytes | bytes 2-4 | truncated: true (more follows; "
                + "call again with offset=5)\n234");
    }

    @Test
    void should_describe_binary_files_instead_of_dumping_them() {
        codeExec.workspace("conv-1").putFile("out/plot.png", new byte[] {(byte) 0x89, 'P', 'N', 'G', 0, 1, 2});

        ToolExecutionResult r = call("workspace_read_file", "{\"path\":\"out/plot.png\"}");

        assertThat(r.resultText()).contains("size: 7 bytes | type: image/png | binary: not shown")
                .doesNotContain("PNG");
        assertThat(r.attributes()).containsEntry("binary", true);
    }

    @Test
    void should_refuse_paths_that_leave_the_workspace_when_reading_or_writing() {
        for (String json : List.of("{\"path\":\"../ws2/secret.txt\"}", "{\"path\":\"/etc/passwd\"}",
                "{\"path\":\"work/../../x\"}")) {
            assertThat(call("workspace_read_file", json).resultText()).as(json)
                    .contains("refused").contains("workspace");
            assertThat(call("workspace_write_file", json.replace("}", ",\"content\":\"x\"}")).isError()).isTrue();
        }
        assertThat(engine.created).isEmpty();
    }

    @Test
    void should_list_files_with_sizes() {
        codeExec.workspace("conv-1").putFile("work/inputs/data.csv", "a,b\n1,2\n");
        codeExec.workspace("conv-1").putFile("out/r.txt", "r");

        assertThat(call("workspace_list_files", "{}").resultText())
                .isEqualTo("2 entries under the workspace root:\nout/r.txt (1 bytes)\nwork/inputs/data.csv (8 bytes)");
        assertThat(call("workspace_list_files", "{\"path\":\"out/*.txt\"}").resultText()).contains("out/r.txt");
        assertThat(call("workspace_list_files", "{\"path\":\"nothing\"}").resultText()).startsWith("no files match");
    }

    @Test
    void should_stop_listing_at_the_limit_and_say_that_more_exist_without_claiming_a_count() {
        List<dev.codeexec.engine.PutFile> many = new java.util.ArrayList<>();
        for (int i = 0; i < 250; i++) {
            many.add(dev.codeexec.engine.PutFile.of(String.format("work/many/f%03d", i), "x"));
        }
        codeExec.workspace("conv-1").putFiles(many);

        ToolExecutionResult r = call("workspace_list_files", "{\"path\":\"work\"}");

        assertThat(r.resultText()).startsWith("the first 200 entries found under work (the listing stopped there: "
                + "more exist, not counted):\nwork/many/f000 (1 bytes)")
                .endsWith("\n... more entries not listed (truncated: true); narrow the path or use a glob")
                .doesNotContain("250").doesNotContain(" 50 more");
        assertThat(r.attributes()).containsEntry("count", 200).containsEntry("truncated", true);
        assertThat(call("workspace_list_files", "{\"path\":\"work/many/f1*\"}").resultText())
                .startsWith("100 entries under work/many/f1*:");
    }

    @Test
    void should_leave_the_run_history_out_of_the_listing_unless_it_is_asked_for() {
        codeExec.workspace("conv-1").putFile("runs/run_20260101T000000.000_1/log.txt", "log");
        codeExec.workspace("conv-1").putFile("out/r.txt", "r");

        assertThat(call("workspace_list_files", "{}").resultText())
                .isEqualTo("1 entry under the workspace root:\nout/r.txt (1 bytes)");
        assertThat(call("workspace_list_files", "{\"path\":\"runs\"}").resultText())
                .contains("runs/run_20260101T000000.000_1/log.txt (3 bytes)");
    }

    @Test
    void should_save_a_file_as_an_artifact_and_stage_it_back() {
        codeExec.workspace("conv-1").putFile("out/result.csv", "x,y\n");

        ToolExecutionResult saved = call("workspace_save_artifact", "{\"path\":\"out/result.csv\"}");

        assertThat(saved.resultText()).startsWith("saved out/result.csv as artifact://result.csv@1 (4 bytes");
        assertThat(saved.attributes()).containsEntry("artifact", "artifact://result.csv@1");
        assertThat(artifacts.names()).containsExactly("conversations/conv-1/result.csv");
        codeExec.closeWorkspace("conv-1"); // the artifact outlives the workspace
        ToolExecutionResult staged = call("workspace_stage_artifact", "{\"ref\":\"artifact://result.csv@1\"}");
        assertThat(staged.resultText()).isEqualTo("staged artifact://result.csv@1 at work/inputs/result.csv (4 bytes)");
        assertThat(staged.attributes()).containsEntry("artifact", "artifact://result.csv@1");
        assertThat(codeExec.workspace("conv-1").read("work/inputs/result.csv", 0, 100).contentAsString())
                .isEqualTo("x,y\n");
    }

    @Test
    void should_keep_artifacts_to_their_conversation_when_another_one_asks_for_them() {
        codeExec.workspace("alice").putFile("out/alice-salary.csv", "alice,123456\n");
        assertThat(call("workspace_save_artifact", "{\"path\":\"out/alice-salary.csv\"}", ctx("alice")).resultText())
                .startsWith("saved out/alice-salary.csv as artifact://alice-salary.csv@1");

        // The attack: bob stages alice's artifact by its model-facing name, by a path out of his scope, by the
        // store's full name, and saves a new version under her name.
        for (String ref : List.of("artifact://alice-salary.csv", "artifact://alice-salary.csv@1",
                "artifact://conversations/alice/alice-salary.csv")) {
            ToolExecutionResult r = call("workspace_stage_artifact", "{\"ref\":\"" + ref + "\"}", ctx("bob"));
            assertThat(r.isError()).as(ref).isTrue();
            assertThat(r.attributes()).as(ref).containsEntry("error", "not_found");
            assertThat(r.resultText()).as(ref).contains("does not exist").doesNotContain("conversations/bob", "123456");
        }
        ToolExecutionResult escape = call("workspace_stage_artifact",
                "{\"ref\":\"artifact://../alice/alice-salary.csv\"}", ctx("bob"));
        assertThat(escape.resultText()).contains("no empty, '.' or '..' segment");
        assertThat(call("workspace_save_artifact",
                "{\"path\":\"out/x.csv\",\"name\":\"../../alice/alice-salary.csv\"}", ctx("bob")).resultText())
                .contains("no empty, '.' or '..' segment");
        codeExec.workspace("bob").putFile("out/mine.csv", "bob,1\n");
        assertThat(call("workspace_save_artifact", "{\"path\":\"out/mine.csv\",\"name\":\"alice-salary.csv\"}",
                ctx("bob")).resultText()).startsWith("saved out/mine.csv as artifact://alice-salary.csv@1");
        assertThat(codeExec.workspace("bob").list("work/inputs")).isEmpty();

        // alice's artifact is untouched, and she still stages her own (positive control)
        assertThat(artifacts.versions("conversations/alice/alice-salary.csv")).containsExactly(1);
        assertThat(call("workspace_stage_artifact", "{\"ref\":\"artifact://alice-salary.csv\"}", ctx("alice"))
                .resultText())
                .isEqualTo("staged artifact://alice-salary.csv@1 at work/inputs/alice-salary.csv (13 bytes)");
        assertThat(codeExec.workspace("alice").read("work/inputs/alice-salary.csv", 0, 100).contentAsString())
                .isEqualTo("alice,123456\n");
        // and bob gets his own file under the same short name
        call("workspace_stage_artifact", "{\"ref\":\"artifact://alice-salary.csv\"}", ctx("bob"));
        assertThat(codeExec.workspace("bob").read("work/inputs/alice-salary.csv", 0, 100).contentAsString())
                .isEqualTo("bob,1\n");
    }

    @Test
    void should_separate_conversation_keys_that_sanitise_alike() {
        codeExec.workspace("Alice").putFile("out/r.txt", "upper");
        call("workspace_save_artifact", "{\"path\":\"out/r.txt\"}", ctx("Alice"));

        assertThat(call("workspace_stage_artifact", "{\"ref\":\"artifact://r.txt\"}", ctx("alice")).isError())
                .isTrue();
        assertThat(call("workspace_stage_artifact", "{\"ref\":\"artifact://r.txt\"}", ctx("Alice")).isError())
                .isFalse();
        assertThat(artifacts.names()).singleElement().asString().matches("conversations/alice__[0-9a-f]{24}/r\\.txt");
    }

    @Test
    void should_share_artifacts_across_conversations_when_the_scope_is_shared() {
        codeExec.close();
        codeExec = CodeExecution.builder().engine(engine).artifactService(artifacts)
                .artifactScope(ArtifactScope.shared()).build();
        codeExec.workspace("conv-1").putFile("out/result.csv", "x,y\n");

        call("workspace_save_artifact", "{\"path\":\"out/result.csv\"}");
        ToolExecutionResult staged = call("workspace_stage_artifact", "{\"ref\":\"artifact://result.csv@1\"}",
                ctx("conv-2"));

        assertThat(artifacts.names()).containsExactly("result.csv");
        assertThat(staged.resultText()).isEqualTo("staged artifact://result.csv@1 at work/inputs/result.csv (4 bytes)");
    }

    @Test
    void should_use_a_custom_scope_and_refuse_a_malformed_prefix_without_telling_the_model() {
        codeExec.close();
        codeExec = CodeExecution.builder().engine(engine).artifactService(artifacts)
                .artifactScope(ArtifactScope.prefixed(key -> "users/" + key.substring(0, 1) + "/")).build();
        codeExec.workspace("a1").putFile("out/r.txt", "r");
        call("workspace_save_artifact", "{\"path\":\"out/r.txt\"}", ctx("a1"));

        assertThat(artifacts.names()).containsExactly("users/a/r.txt");
        assertThat(call("workspace_stage_artifact", "{\"ref\":\"artifact://r.txt\"}", ctx("a2")).isError()).isFalse();
        assertThat(codeExec.workspace("b1").artifactPrefix()).isEqualTo("users/b/");

        codeExec.close();
        codeExec = CodeExecution.builder().engine(engine).artifactService(artifacts)
                .artifactScope(ArtifactScope.prefixed(key -> "../" + key + "/")).build();
        try (ExpectedLog log = ExpectedLog.capture()) {
            ToolExecutionResult bad = call("workspace_stage_artifact", "{\"ref\":\"artifact://r.txt\"}",
                    ctx("a1"));
            assertThat(bad.resultText()).startsWith("error: workspace_stage_artifact failed unexpectedly")
                    .doesNotContain("..");
            assertThat(log.text()).contains("the artifact scope gave the prefix '../a1/'");
        }
    }

    @Test
    void should_give_application_code_full_names_and_the_prefix_of_the_conversation() {
        WorkspaceIO io = codeExec.workspace("conv-1");
        io.putFile("out/r.txt", "r");

        assertThat(io.artifactPrefix()).isEqualTo("conversations/conv-1/");
        assertThat(io.saveArtifact("out/r.txt", null)).hasToString("artifact://r.txt@1");
        assertThat(io.saveArtifact("out/r.txt", io.artifactPrefix() + "r.txt"))
                .hasToString("artifact://conversations/conv-1/r.txt@1");
        assertThat(call("workspace_stage_artifact", "{\"ref\":\"artifact://r.txt\"}").resultText())
                .isEqualTo("staged artifact://r.txt@1 at work/inputs/r.txt (1 bytes)");
        assertThat(ArtifactScope.perConversation().prefix("Bob")).matches("conversations/bob__[0-9a-f]{24}/");
        assertThat(ArtifactScope.shared().prefix("Bob")).isEmpty();
    }

    @Test
    void should_refuse_brace_globs_like_the_workspace_glob_syntax_when_a_tool_needs_one_file() {
        codeExec.workspace("conv-1").putFile("out/a.csv", "a");

        assertThat(call("workspace_read_file", "{\"path\":\"out/{a,b}.csv\"}").resultText()).contains("not a glob");
        assertThat(call("workspace_write_file", "{\"path\":\"out/{a,b}.csv\",\"content\":\"x\"}").resultText())
                .contains("not a glob");
        assertThat(call("workspace_save_artifact", "{\"path\":\"out/{a,b}.csv\"}").resultText()).contains("not a glob");
        assertThat(engine.files.values().stream().flatMap(m -> m.keySet().stream())).containsExactly("out/a.csv");
        // positive control: the same file named plainly, and the glob where globs belong
        assertThat(call("workspace_read_file", "{\"path\":\"out/a.csv\"}").isError()).isFalse();
        assertThat(call("workspace_list_files", "{\"path\":\"out/*.csv\"}").resultText()).contains("out/a.csv");
    }

    @Test
    void should_refuse_artifact_paths_outside_work_out_runs_and_unknown_artifacts() {
        assertThat(call("workspace_save_artifact", "{\"path\":\"skills/x\"}").resultText())
                .contains("must be a file under work/, out/ or runs/");
        assertThat(call("workspace_save_artifact", "{\"path\":\"out/*.csv\"}").resultText()).contains("not a glob");
        assertThat(call("workspace_stage_artifact", "{\"ref\":\"host:///etc/passwd\"}").resultText())
                .contains("must be an artifact reference");
        assertThat(call("workspace_stage_artifact", "{\"ref\":\"artifact://none@3\"}").resultText())
                .contains("has no version 3");
        assertThat(call("workspace_stage_artifact", "{\"ref\":\"artifact://a\",\"to\":\"out/a\"}").resultText())
                .contains("'to' must be under work/");
    }

    @Test
    void should_keep_conversations_in_separate_workspaces() {
        call("workspace_write_file", "{\"path\":\"work/a.txt\",\"content\":\"A\"}", ctx("alice"));
        call("workspace_write_file", "{\"path\":\"work/a.txt\",\"content\":\"B\"}", ctx("bob"));

        assertThat(codeExec.workspace("alice").read("work/a.txt", 0, 10).contentAsString()).isEqualTo("A");
        assertThat(codeExec.workspace("bob").read("work/a.txt", 0, 10).contentAsString()).isEqualTo("B");
        assertThat(engine.created).containsExactlyInAnyOrder("alice", "bob");
    }

    @Test
    void should_use_the_workspace_and_engine_overrides_when_invocation_parameters_carry_them() {
        FakeEngine other = new FakeEngine();
        InvocationContext c = InvocationContext.builder().invocationId(UUID.randomUUID()).chatMemoryId("conv-1")
                .invocationParameters(InvocationParameters.from(Map.of(CodeExecution.WORKSPACE_ID_PARAMETER, "shared",
                        CodeExecution.ENGINE_PARAMETER, other))).timestampNow().build();

        call("workspace_exec", "{\"command\":\"ls\"}", c);

        assertThat(other.created).containsExactly("shared");
        assertThat(engine.created).isEmpty();
    }

    @Test
    void should_refuse_the_shared_default_workspace_when_memory_ids_are_required() {
        codeExec = CodeExecution.builder().engine(engine).requireMemoryId(true).build();

        ToolExecutionResult r = call("workspace_exec", "{\"command\":\"ls\"}", ctx("default"));

        assertThat(r.isError()).isTrue();
        assertThat(r.resultText()).contains("no conversation id");
        assertThat(engine.runs).isEmpty();
        assertThat(call("workspace_exec", "{\"command\":\"ls\"}", ctx("conv-9")).isError()).isFalse();
    }

    @Test
    void should_run_in_the_shared_default_workspace_when_not_strict() {
        assertThat(call("workspace_exec", "{\"command\":\"ls\"}", ctx("default")).isError()).isFalse();
        assertThat(engine.created).containsExactly("default");
    }

    @Test
    void should_refuse_a_policy_violation_as_a_tool_result_and_run_nothing() {
        codeExec = CodeExecution.builder().engine(engine).commandPolicy(DENY_CURL).build();

        ToolExecutionResult refused = call("workspace_exec", "{\"command\":\"curl http://x\"}");
        ToolExecutionResult allowed = call("workspace_exec", "{\"command\":\"echo hi\",\"env\":{\"LD_PRELOAD\":"
                + "\"x.so\",\"LANG\":\"C\"}}");

        assertThat(refused.isError()).isTrue();
        assertThat(refused.resultText()).startsWith("error: refused by policy: command 'curl' is denied")
                .contains("do not retry");
        assertThat(allowed.isError()).isFalse();
        assertThat(engine.runs).hasSize(1);
        assertThat(engine.runs.get(0).cleanEnv()).isTrue();
        assertThat(engine.runs.get(0).env()).containsOnlyKeys("LANG");
        assertThat(engine.runs.get(0).cmd()).isEqualTo("sh");
        assertThat(engine.runs.get(0).args().get(1)).as("the command is pinned to its executable")
                .matches("/(usr/)?(local/)?bin/echo hi");
    }

    @Test
    void should_refuse_policy_mode_when_the_engine_cannot_provide_a_clean_environment() {
        engine.capabilities = Capabilities.builder().supportsCleanEnv(false).build();
        codeExec = CodeExecution.builder().engine(engine).commandPolicy(DENY_CURL).build();

        ToolExecutionResult r = call("workspace_exec", "{\"command\":\"echo hi\"}");
        ToolExecutionResult code = call("execute_code", "{\"language\":\"python\",\"code\":\"print(1)\"}");

        assertThat(r.isError()).isTrue();
        assertThat(r.resultText()).contains("needs an engine that starts programs from a clean environment")
                .contains("'fake' engine cannot");
        assertThat(code.isError()).isTrue();
        assertThat(engine.runs).isEmpty();
    }

    @Test
    void should_check_the_interpreter_against_the_policy_when_code_runs_in_policy_mode() {
        codeExec = CodeExecution.builder().engine(engine).commandPolicy(DENY_CURL).build();

        ToolExecutionResult bash = call("execute_code", "{\"language\":\"bash\",\"code\":\"curl x\"}");
        ToolExecutionResult py = call("execute_code", "{\"language\":\"python\",\"code\":\"print(1)\"}");

        assertThat(bash.resultText()).contains("refused by policy");
        assertThat(py.isError()).isFalse();
        assertThat(engine.runs).hasSize(1);
        assertThat(engine.runs.get(0).cmd()).isEqualTo("sh");
        assertThat(engine.runs.get(0).args().get(1)).matches("/\\S+/python3 \\.\\./runs/code_snippet\\.py");
        assertThat(engine.runs.get(0).cleanEnv()).isTrue();
    }

    @Test
    void should_stage_attached_files_once_per_invocation_with_safe_unique_names() {
        String png = Base64.getEncoder().encodeToString(new byte[] {1, 2, 3});
        String pdf = Base64.getEncoder().encodeToString("%PDF-1.4".getBytes(StandardCharsets.UTF_8));
        UserMessage msg = UserMessage.builder().contents(List.of(TextContent.from("look"),
                ImageContent.from(png, "image/png"), ImageContent.from(Base64.getEncoder().encodeToString(
                        new byte[] {9}), "image/png"), PdfFileContent.from(pdf, "application/pdf"),
                ImageContent.from("https://example.com/cat.jpg"))).build();
        InvocationContext c = InvocationContext.builder().invocationId(UUID.randomUUID()).chatMemoryId("conv-1")
                .userMessage(msg).invocationParameters(new InvocationParameters()).timestampNow().build();

        String first = call("workspace_list_files", "{\"path\":\"work/inputs\"}", c).resultText();
        String second = call("workspace_list_files", "{\"path\":\"work/inputs\"}", c).resultText();

        assertThat(first).startsWith("Files attached to the user's message:\n- work/inputs/image.png (3 bytes)\n"
                + "- work/inputs/image_2.png (1 bytes)\n- work/inputs/document.pdf (8 bytes)\n"
                + "- cat.jpg: not staged, because it is a https URL and this library does not download files");
        assertThat(second).doesNotContain("Files attached");
        assertThat(second).contains("work/inputs/image.png").contains("work/inputs/document.pdf");
    }

    @Test
    void should_never_show_host_paths_when_an_attachment_is_outside_the_input_roots() {
        UserMessage msg = UserMessage.from(TextContent.from("read this"),
                PdfFileContent.from(java.net.URI.create("file:///secret/host/report.pdf")));
        InvocationContext c = InvocationContext.builder().invocationId(UUID.randomUUID()).chatMemoryId("conv-1")
                .userMessage(msg).invocationParameters(new InvocationParameters()).timestampNow().build();

        String text = call("workspace_list_files", "{}", c).resultText();

        assertThat(text).contains("report.pdf: not staged, because it is a host file outside the input roots")
                .doesNotContain("/secret");
    }

    @Test
    void should_sanitise_and_deduplicate_names_case_insensitively() {
        assertThat(AttachmentStager.sanitize("../../etc/passwd")).isEqualTo("passwd");
        assertThat(AttachmentStager.sanitize("C:\\Users\\me\\My Report (1).PDF")).isEqualTo("My_Report__1_.PDF");
        assertThat(AttachmentStager.sanitize("..")).isEqualTo("upload");
        assertThat(AttachmentStager.sanitize(".bashrc")).isEqualTo("bashrc");
        assertThat(AttachmentStager.sanitize("")).isEqualTo("upload");
        java.util.Set<String> taken = new java.util.HashSet<>(List.of("data.csv"));
        assertThat(AttachmentStager.unique("DATA.csv", taken)).isEqualTo("DATA_2.csv");
        assertThat(AttachmentStager.unique("data.csv", taken)).isEqualTo("data_3.csv");
    }

    @Test
    void should_offer_the_same_parameters_on_both_faces_and_honour_renamed_tools() {
        codeExec = CodeExecution.builder().engine(engine).toolName(WorkspaceTool.EXEC, "shell")
                .tools(WorkspaceTool.EXEC, WorkspaceTool.WRITE_STDIN, WorkspaceTool.READ_FILE).build();
        Map<String, ToolSpecification> annotated = ToolSpecifications.toolSpecificationsFrom(WorkspaceTools.class)
                .stream().collect(Collectors.toMap(ToolSpecification::name, s -> s));
        Map<String, ToolSpecification> provided = new HashMap<>();
        codeExec.toolProvider().provideTools(null).aiServiceTools()
                .forEach(t -> provided.put(t.name(), t.toolSpecification()));

        assertThat(annotated).hasSize(WorkspaceTool.values().length);
        assertThat(provided).containsOnlyKeys("shell", "workspace_write_stdin", "workspace_read_file");
        assertThat(provided.get("shell").parameters()).isEqualTo(annotated.get("workspace_exec").parameters());
        assertThat(provided.get("workspace_write_stdin").description()).contains("started by shell with background")
                .doesNotContain("workspace_exec");
        assertThat(provided.get("shell").description()).contains("Default time limit 60 s, maximum 600 s");
        assertThat(codeExec.tools().workspaceListFiles(null, ctx("c"))).contains("is not enabled");
    }

    @Test
    void should_offer_the_artifact_tools_only_when_the_invocation_has_an_artifact_store() {
        codeExec = CodeExecution.builder().engine(engine).build(); // no store, and FakeEngine has none
        Map<String, ToolSpecification> offered = provided(ctx("c"));

        assertThat(offered).doesNotContainKeys("workspace_save_artifact", "workspace_stage_artifact")
                .containsKeys("workspace_exec", "workspace_list_files", "execute_code");
        assertThat(offered.values()).allSatisfy(s -> assertThat(s.description()).doesNotContain("artifact"));
        assertThat(codeExec.workspaceGuidance()).doesNotContain("artifact");
        // The @Tool methods cannot be hidden: they answer, and nothing is saved.
        assertThat(codeExec.tools().workspaceSaveArtifact("out/x.txt", null, ctx("c")))
                .startsWith("error: ").contains("no artifact store is configured");

        // An invocation on an engine that has a store of its own gets them (the per-invocation engine override).
        try (dev.codeexec.local.LocalEngine withStore = dev.codeexec.local.LocalEngine.builder()
                .artifactService(artifacts).build()) {
            InvocationContext override = ctx("c");
            override.invocationParameters().put(CodeExecution.ENGINE_PARAMETER, withStore);
            assertThat(provided(override)).containsKeys("workspace_save_artifact", "workspace_stage_artifact");
        }

        // Positive control: with the application's store, both are offered and the layout points to them.
        codeExec.close();
        codeExec = CodeExecution.builder().engine(engine).artifactService(artifacts).build();
        Map<String, ToolSpecification> withStore = provided(ctx("c"));
        assertThat(withStore).containsKeys("workspace_save_artifact", "workspace_stage_artifact");
        assertThat(withStore.get("workspace_exec").description()).contains("save them with workspace_save_artifact");
        assertThat(codeExec.workspaceGuidance()).contains("workspace_save_artifact");
    }

    private Map<String, ToolSpecification> provided(InvocationContext ctx) {
        Map<String, ToolSpecification> out = new HashMap<>();
        codeExec.toolProvider().provideTools(ToolProviderRequest.builder().invocationContext(ctx)
                .userMessage(UserMessage.from("x")).build()).aiServiceTools()
                .forEach(t -> out.put(t.name(), t.toolSpecification()));
        return out;
    }

    /** A policy that denies curl (and, built in, every shell and wrapper). */
    static final CommandPolicy DENY_CURL = CommandPolicy.builder().deny("curl").build();
}
