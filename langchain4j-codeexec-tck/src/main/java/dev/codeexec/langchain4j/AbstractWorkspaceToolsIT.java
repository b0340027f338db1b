package dev.codeexec.langchain4j;

import static dev.codeexec.langchain4j.ScriptedOpenAi.lastToolResult;
import static dev.codeexec.langchain4j.ScriptedOpenAi.lastUser;
import static dev.codeexec.langchain4j.ScriptedOpenAi.toolResultsThisTurn;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.FileInfo;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.langchain4j.ScriptedOpenAi.Reply;
import dev.codeexec.policy.CommandPolicy;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.data.message.PdfFileContent;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.memory.chat.ChatMemoryProvider;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;
import dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The workspace tools end to end: real AiServices and the OpenAI client against a scripted WireMock endpoint, on the
 * engine a subclass supplies through {@link #createEngine()}. Every scenario here must hold on every backend;
 * scenarios that only one backend can pass live in that backend's subclass. Requirements of the backend (python,
 * bubblewrap...) are checked by the subclass, in a {@code @BeforeAll} through
 * {@link dev.codeexec.testing.Requirements}.
 */
public abstract class AbstractWorkspaceToolsIT {

    /** A service with one text message and a memory id. */
    public interface Assistant {
        String chat(@MemoryId String conversation, @UserMessage String message);
    }

    interface FileAssistant {
        String chat(@MemoryId String conversation, @UserMessage List<Content> message);
    }

    static final String SALES = "region,amount\nnorth,10\nsouth,5\nnorth,20\neast,7\n";

    static final String ANALYSE = """
            import csv, collections, sys
            totals = collections.defaultdict(int)
            with open('work/sales.csv') as f:
                for row in csv.DictReader(f):
                    totals[row['region']] += int(row['amount'])
            with open('out/totals.csv', 'w') as f:
                f.write('region,total\\n')
                for region in sorted(totals):
                    f.write(f'{region},{totals[region]}\\n')
                    print(region, totals[region])
            print('python:', sys.executable, file=sys.stderr)
            """;

    protected static ScriptedOpenAi openAi;

    /** The directory the engine keeps its workspaces in (as root or base directory); cleaned after each test. */
    @TempDir
    protected Path base;
    /** The one host directory the engine may stage inputs from. */
    @TempDir
    protected Path inputRoot;
    /** The artifact store the engine must save to. */
    protected InMemoryArtifactService artifacts;
    protected Engine engine;
    protected InMemoryChatMemoryStore store;
    protected ChatMemoryProvider memory;

    /**
     * A fresh engine for one test, closed after it: workspaces under {@link #base}, host inputs allowed from
     * {@link #inputRoot} only, artifacts saved to {@link #artifacts}, python 3 reachable as {@code python3}.
     */
    protected abstract Engine createEngine();

    @BeforeAll
    static void startServer() {
        openAi = new ScriptedOpenAi();
    }

    @AfterAll
    static void stopServer() {
        openAi.close();
    }

    @BeforeEach
    void setUp() {
        artifacts = new InMemoryArtifactService();
        engine = createEngine();
        store = new InMemoryChatMemoryStore();
        memory = id -> MessageWindowChatMemory.builder().id(id).maxMessages(100).chatMemoryStore(store).build();
        openAi.reset();
    }

    @AfterEach
    void tearDown() {
        if (engine != null) {
            engine.close();
        }
    }

    /** A service on the wrapped scripted model with the tools of {@code codeExec} and this test's memory. */
    protected Assistant assistant(CodeExecution codeExec) {
        return AiServices.builder(Assistant.class).chatModel(codeExec.wrap(openAi.chatModel()))
                .toolProvider(codeExec.toolProvider()).chatMemoryProvider(memory).build();
    }

    @Test
    void should_analyse_a_csv_over_several_turns_and_save_the_result_as_an_artifact() {
        openAi.script(req -> {
            String user = lastUser(req);
            int step = toolResultsThisTurn(req);
            if (user.startsWith("Here are")) {
                return step == 0 ? Reply.tool("call_1", "workspace_write_file",
                        Map.of("path", "work/sales.csv", "content", SALES)) : Reply.text("Stored in work/sales.csv.");
            }
            if (user.startsWith("What is the total")) {
                return switch (step) {
                    case 0 -> Reply.tool("call_2", "workspace_write_file",
                            Map.of("path", "work/analyse.py", "content", ANALYSE));
                    case 1 -> Reply.tool("call_3", "workspace_exec", Map.of("command", "python3 work/analyse.py",
                            "timeout_seconds", 30));
                    default -> Reply.text("Totals: " + stdout(lastToolResult(req)).replace("\n", "; "));
                };
            }
            if (user.startsWith("Save")) {
                return step == 0 ? Reply.tool("call_4", "workspace_save_artifact", Map.of("path", "out/totals.csv"))
                        : Reply.text("Saved as " + match(lastToolResult(req), "artifact://\\S+@\\d+") + ".");
            }
            return Reply.text("?");
        });
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).artifactService(artifacts).build()) {
            Assistant a = assistant(codeExec);

            assertThat(a.chat("sales", "Here are the sales figures, keep them:\n" + SALES))
                    .isEqualTo("Stored in work/sales.csv.");
            assertThat(a.chat("sales", "What is the total per region?"))
                    .isEqualTo("Totals: east 7; north 30; south 5");
            assertThat(a.chat("sales", "Save the totals for later.")).isEqualTo("Saved as artifact://totals.csv@1.");

            assertThat(new String(artifacts.load("conversations/sales/totals.csv", 1).content(),
                    StandardCharsets.UTF_8))
                    .isEqualTo("region,total\neast,7\nnorth,30\nsouth,5\n");
            String execResult = toolMessages("sales").get(2).text();
            assertThat(execResult).startsWith("exit_code: 0 | timed_out: false | truncated: false")
                    .contains("+ out/totals.csv (37 bytes)")
                    .contains("python: /usr/bin/python3").doesNotContain(".pyenv").doesNotContain(base.toString());
            assertThat(toolMessages("sales").get(2).attributes()).containsEntry("exit_code", 0)
                    .containsEntry("files_changed", List.of("out/totals.csv"));
            assertThat(store.getMessages("sales")).as("user, calls, results and answers of three turns").hasSize(14);
        }
    }

    @Test
    void should_keep_two_parallel_conversations_in_separate_workspaces() throws Exception {
        openAi.script(req -> {
            String name = lastUser(req).replace("I am ", "");
            return switch (toolResultsThisTurn(req)) {
                case 0 -> Reply.tool("call_w", "workspace_write_file", Map.of("path", "work/who.txt", "content", name));
                case 1 -> Reply.tool("call_x", "workspace_exec", Map.of("command", "sleep 0.3; cat work/who.txt"));
                default -> Reply.text("You are " + stdout(lastToolResult(req)));
            };
        });
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            Assistant a = assistant(codeExec);
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                Future<String> alice = pool.submit(() -> a.chat("alice", "I am alice"));
                Future<String> bob = pool.submit(() -> a.chat("bob", "I am bob"));

                assertThat(alice.get(60, TimeUnit.SECONDS)).isEqualTo("You are alice");
                assertThat(bob.get(60, TimeUnit.SECONDS)).isEqualTo("You are bob");
            } finally {
                pool.shutdownNow();
            }
            assertThat(codeExec.workspace("alice").read("work/who.txt", 0, 100).contentAsString()).isEqualTo("alice");
            assertThat(codeExec.workspace("bob").read("work/who.txt", 0, 100).contentAsString()).isEqualTo("bob");
        }
    }

    @Test
    void should_serialise_tool_calls_of_one_conversation_when_they_run_concurrently() {
        // Each command takes a directory as a lock: mkdir fails if the other command holds it at the same moment.
        String critical = "mkdir work/lock && sleep 0.3 && rmdir work/lock";
        openAi.script(req -> toolResultsThisTurn(req) == 0
                ? new Reply(null, List.of(new String[] {"c_a", "workspace_exec", "{\"command\":\"" + critical + "\"}"},
                        new String[] {"c_b", "workspace_exec", "{\"command\":\"" + critical + "\"}"}), null)
                : Reply.text("done"));
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            Assistant a = AiServices.builder(Assistant.class).chatModel(openAi.chatModel())
                    .toolProvider(codeExec.toolProvider()).chatMemoryProvider(memory).executeToolsConcurrently()
                    .build();

            assertThat(a.chat("one", "run both")).isEqualTo("done");

            assertThat(toolMessages("one")).hasSize(2).allSatisfy(m -> assertThat(m.text()).startsWith("exit_code: 0"));
        }
    }

    @Test
    void should_give_a_policy_refusal_to_the_model_as_a_readable_tool_result() {
        openAi.script(req -> toolResultsThisTurn(req) == 0
                ? Reply.tool("call_p", "workspace_exec", Map.of("command", "curl http://169.254.169.254/"))
                : Reply.text("I may not do that: " + lastToolResult(req)));
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine)
                .commandPolicy(CommandPolicy.builder().deny("curl").build()).build()) {

            String answer = assistant(codeExec).chat("p", "Fetch the metadata service");

            assertThat(answer).startsWith("I may not do that: error: refused by policy: command 'curl' is denied");
            ToolExecutionResultMessage tool = toolMessages("p").get(0);
            assertThat(tool.isError()).isTrue();
            assertThat(tool.attributes()).containsEntry("error", "policy");
            JsonNode sent = openAi.requests().get(1).path("messages").get(2);
            assertThat(ScriptedOpenAi.content(sent)).startsWith("error: refused by policy");
        }
    }

    @Test
    void should_run_allowed_pipelines_and_refuse_the_rest_when_a_policy_is_set() {
        CommandPolicy policy = CommandPolicy.builder().allow("cat", "wc", "python3", "echo").build();
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).commandPolicy(policy).build()) {
            var tools = codeExec.tools();
            var ctx = dev.langchain4j.invocation.InvocationContext.builder().chatMemoryId("pol").build();
            codeExec.workspace("pol").putFile("work/sales.csv", SALES);
            codeExec.workspace("pol").putFile("work/wc", "#!/bin/sh\necho planted\n");

            String pipeline = tools.workspaceExec("cat work/sales.csv | wc -l && echo 'a b'", null,
                    Map.of("LD_PRELOAD", "/tmp/evil.so", "PATH", "work", "GREETING", "hi"), null, null, null, ctx);
            String viaShell = tools.workspaceExec("sh -c 'cat /etc/hostname'", null, null, null, null, null, ctx);
            String inline = tools.workspaceExec("python3 -c 'print(1)'", null, null, null, null, null, ctx);
            String expansion = tools.workspaceExec("echo $HOME", null, null, null, null, null, ctx);
            String notAllowed = tools.workspaceExec("ls", null, null, null, null, null, ctx);

            assertThat(pipeline).startsWith("exit_code: 0").contains("--- stdout ---\n5\na b")
                    .doesNotContain("planted");
            assertThat(viaShell).startsWith("error: refused by policy: command 'sh' is denied by the built-in policy");
            assertThat(inline).startsWith("error: refused by policy:").contains("-c");
            assertThat(expansion).startsWith("error: refused by policy:");
            assertThat(notAllowed).startsWith("error: refused by policy: command 'ls' is not in the policy's allow");
        }
    }

    @Test
    void should_scrub_the_model_environment_in_policy_runs() {
        CommandPolicy policy = CommandPolicy.builder().allow("python3").build();
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).commandPolicy(policy).build()) {
            var ctx = dev.langchain4j.invocation.InvocationContext.builder().chatMemoryId("env").build();
            codeExec.workspace("env").putFile("work/env.py", "import os\n"
                    + "print(sorted(k for k in os.environ if k in ('LD_PRELOAD', 'GREETING', 'BASH_ENV')))\n"
                    + "print(os.environ['PATH'])\n");

            String out = codeExec.tools().workspaceExec("python3 work/env.py", null,
                    Map.of("LD_PRELOAD", "/tmp/evil.so", "BASH_ENV", "/tmp/rc", "GREETING", "hi", "PATH", "work"),
                    null, null, null, ctx);

            assertThat(out).startsWith("exit_code: 0").contains("['GREETING']").contains("/usr/local/bin:/usr/bin:/bin");
        }
    }

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
    void should_run_background_sessions_and_keep_them_per_conversation() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            var tools = codeExec.tools();
            var mineCtx = dev.langchain4j.invocation.InvocationContext.builder().chatMemoryId("s-mine").build();
            var otherCtx = dev.langchain4j.invocation.InvocationContext.builder().chatMemoryId("s-other").build();

            String started = tools.workspaceExec("cat", null, null, null, null, true, mineCtx);
            String id = match(started, "s_[0-9a-f]{8}");
            String echoed = tools.workspaceWriteStdin(id, "hello", true, null, 2000, mineCtx);
            String foreign = tools.workspaceWriteStdin(id, "x", true, null, 0, otherCtx);
            String killed = tools.workspaceKillSession(id, mineCtx);
            String again = tools.workspaceKillSession(id, mineCtx);

            assertThat(started).startsWith("session_id: " + id + " | status: running");
            assertThat(echoed).contains("--- output ---\nhello");
            assertThat(foreign).startsWith("error: there is no background session");
            assertThat(killed).contains("status: killed");
            assertThat(again).startsWith("error: there is no background session");
        }
    }

    @Test
    void should_let_a_killed_background_session_shut_down_within_the_grace_period() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            var tools = codeExec.tools();
            var ctx = dev.langchain4j.invocation.InvocationContext.builder().chatMemoryId("grace").build();
            codeExec.workspace("grace").putFile("work/graceful.py", """
                    import signal, sys, time
                    def stop(*_):
                        time.sleep(0.3)
                        print('flushed and stopped', flush=True)
                        sys.exit(0)
                    signal.signal(signal.SIGTERM, stop)
                    print('ready', flush=True)
                    time.sleep(120)
                    """);

            String output = tools.workspaceExec("python3 work/graceful.py", null, null, null, null, true, ctx);
            String id = match(output, "s_[0-9a-f]{8}");
            // Polls until the program says it is ready, however long a loaded machine takes to start Python.
            for (String last = output; !output.contains("ready") && last.contains("status: running"); ) {
                last = tools.workspaceWriteStdin(id, "", false, null, 200, ctx);
                output += last;
            }
            String killed = tools.workspaceKillSession(id, ctx);

            assertThat(output).as("the handler is installed").contains("ready");
            assertThat(killed).as("SIGTERM first, and time to act on it").contains("status: killed")
                    .contains("exit_code: 0 |").contains("flushed and stopped");
        }
    }

    @Test
    void should_let_other_calls_and_the_kill_through_when_a_session_does_not_read_its_input() throws Exception {
        ExecutorService pool = Executors.newCachedThreadPool();
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            var tools = codeExec.tools();
            var ctx = dev.langchain4j.invocation.InvocationContext.builder().chatMemoryId("stuck").build();
            String id = match(tools.workspaceExec("sleep 600", null, null, null, 600, true, ctx), "s_[0-9a-f]{8}");

            // The attack: a megabyte to a program that never reads; the pipe takes 64 KiB, the rest would block.
            Future<String> write = pool.submit(() -> tools.workspaceWriteStdin(id, "x".repeat(1_000_000), false,
                    null, 0, ctx));
            // Give the write time to fill the pipe (not a timing assertion: were it later, the kill below would
            // still have to get through, and the write would find no session).
            Thread.sleep(1000);
            Future<String> list = pool.submit(() -> tools.workspaceListFiles("out", ctx));
            Future<String> kill = pool.submit(() -> tools.workspaceKillSession(id, ctx));

            // Bounds far below the session's 600 s: before the fix, both waited for the write, which waited for it.
            // The listing answers at once: with the files, or, on a backend that lets no file operation overlap a
            // running program of the workspace (the sandbox), with the busy answer that names the session.
            assertThat(list.get(60, TimeUnit.SECONDS)).matches("(?s)(no files match|error: the workspace is busy "
                    + "with background session " + id + ", which is still running).*");
            assertThat(kill.get(60, TimeUnit.SECONDS)).startsWith("session_id: " + id + " | status: killed");
            String written = write.get(60, TimeUnit.SECONDS);
            assertThat(written)
                    .matches("(?s)error: (session " + id + ": the program |there is no background session).*")
                    .doesNotContainPattern("[0-9a-f]{8}-[0-9a-f]{4}-");

            // A conversation whose program never reads gets a clear answer, and its other calls go on.
            String id2 = match(tools.workspaceExec("sleep 600", null, null, null, 600, true, ctx), "s_[0-9a-f]{8}");
            String refused = tools.workspaceWriteStdin(id2, "x".repeat(1_000_000), false, null, 0, ctx);
            assertThat(refused)
                    .startsWith("error: session " + id2 + ": the program is not reading its standard input")
                    .doesNotContainPattern("[0-9a-f]{8}-[0-9a-f]{4}-");
            assertThat(tools.workspaceWriteStdin(id2, "y".repeat(1024 * 1024 + 1), false, null, 0, ctx))
                    .startsWith("error: 'chars' is 1048577 characters; the limit is 1048576");
            assertThat(tools.workspaceKillSession(id2, ctx)).contains("status: killed");

            // positive control: a program that reads gets all of it
            String id3 = match(tools.workspaceExec("wc -c", null, null, null, 60, true, ctx), "s_[0-9a-f]{8}");
            String fed = tools.workspaceWriteStdin(id3, "z".repeat(1_000_000), false, true, 5000, ctx);
            // the yield only bounds one answer: a loaded machine may need more of them before wc's exit shows
            for (String last = fed; last.contains("status: running"); ) {
                last = tools.workspaceWriteStdin(id3, "", false, null, 1000, ctx);
                fed += last;
            }
            assertThat(fed).contains("1000000").contains("exit_code: 0");
        } finally {
            pool.shutdownNow();
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
                assertThat(r).startsWith("error: ").endsWith(ToolErrorResultsTest.LINK_GUIDANCE)
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

    // ---- change reports and listings at scale

    /**
     * Whether the engine's change reports see a file rewritten with the same size and time (as within the same second
     * on a clock of one-second steps): the host-directory backends on Linux do (the kernel tells them); backends whose
     * reports compare listings do not.
     */
    protected boolean seesRewritesThatKeepSizeAndTime() {
        return true;
    }

    @Test
    void should_report_the_files_a_program_really_changed_deep_in_a_tree() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            String setup = exec(codeExec, "mkdir -p work/t/a/b/c && for i in $(seq 1 300); do echo x > work/t/a/f$i;"
                    + " done && echo aaaa > work/t/a/b/c/deep.txt && echo gone > out/del.txt && echo r > work/ren.txt"
                    + " && mkdir work/d && echo 1 > work/d/one && echo 22 > work/d/two");
            assertThat(setup).startsWith("exit_code: 0").contains("+ work/t/a/b/c/deep.txt (5 bytes)")
                    .contains("... and 285 more");

            assertThat(exec(codeExec, "cat work/t/a/b/c/deep.txt > /dev/null")).doesNotContain("files changed");

            String changed = exec(codeExec, "echo bbbbbb > work/t/a/b/c/deep.txt; rm out/del.txt;"
                    + " mv work/ren.txt work/renamed.txt; mv work/d out/d; echo n > work/t/a/b/new.txt");

            assertThat(changed).endsWith("--- files changed ---\n+ out/d/one (2 bytes)\n+ out/d/two (3 bytes)\n"
                    + "+ work/renamed.txt (2 bytes)\n+ work/t/a/b/new.txt (2 bytes)\n~ work/t/a/b/c/deep.txt (7 bytes)\n"
                    + "- out/del.txt\n- work/d/one\n- work/d/two\n- work/ren.txt");
        }
    }

    @Test
    void should_report_a_rewrite_that_keeps_size_and_time_where_the_engine_can_see_it() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            exec(codeExec, "echo aaaa > work/same.txt");

            String text = exec(codeExec, "cp -p work/same.txt work/ref; echo bbbb > work/same.txt;"
                    + " touch -r work/ref work/same.txt; rm work/ref; echo new > out/control.txt");

            assertThat(text).contains("+ out/control.txt (4 bytes)");
            if (seesRewritesThatKeepSizeAndTime()) {
                assertThat(text).contains("~ work/same.txt (5 bytes)");
            } else {
                assertThat(text).doesNotContain("work/same.txt");
            }
        }
    }

    @Test
    void should_list_the_run_history_only_when_asked_for_it() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            exec(codeExec, "echo log > \"$RUN_DIR/log.txt\"; echo r > out/r.txt");
            exec(codeExec, "echo log > \"$RUN_DIR/log.txt\"");

            String root = codeExec.tools().workspaceListFiles(null, context("scale"));
            String runs = codeExec.tools().workspaceListFiles("runs", context("scale"));

            assertThat(root).contains("\nruns/ (the run history, one folder per run: list runs to see it)")
                    .contains("out/r.txt (2 bytes)").doesNotContain("runs/run_");
            assertThat(runs).containsPattern("runs/run_[^/\\s]+/log.txt \\(4 bytes\\)")
                    .doesNotContain("the run history");
        }
    }

    private static String exec(CodeExecution codeExec, String command) {
        return codeExec.tools().workspaceExec(command, null, null, null, 60, null, context("scale"));
    }

    private static dev.langchain4j.invocation.InvocationContext context(String conversation) {
        return dev.langchain4j.invocation.InvocationContext.builder().invocationId(java.util.UUID.randomUUID())
                .chatMemoryId(conversation).invocationParameters(new dev.langchain4j.invocation.InvocationParameters())
                .timestampNow().build();
    }

    // ---- helpers

    /** The tool results of a conversation, in order. */
    protected List<ToolExecutionResultMessage> toolMessages(String conversation) {
        List<ToolExecutionResultMessage> out = new ArrayList<>();
        for (ChatMessage m : store.getMessages(conversation)) {
            if (m instanceof ToolExecutionResultMessage t) {
                out.add(t);
            }
        }
        return out;
    }

    /**
     * The host directory of the workspace that holds {@code rel}: the test knows the workspaces lie somewhere below
     * {@link #base}, at a depth that depends on the backend.
     */
    protected Path hostRootOf(String rel) throws IOException {
        try (Stream<Path> dirs = Files.walk(base, 3)) {
            return dirs.filter(d -> Files.isDirectory(d) && Files.exists(d.resolve(rel))).findFirst().orElseThrow();
        }
    }

    /** The stdout section of a tool result, stripped; empty when it has none. */
    public static String stdout(String toolResult) {
        int i = toolResult.indexOf("--- stdout ---\n");
        if (i < 0) {
            return "";
        }
        String rest = toolResult.substring(i + "--- stdout ---\n".length());
        int end = rest.indexOf("\n---");
        return (end < 0 ? rest : rest.substring(0, end)).strip();
    }

    /** The first match of {@code regex} in {@code text}, or a text that says there was none. */
    public static String match(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        return m.find() ? m.group() : "(none in: " + text + ")";
    }
}
