package dev.codeexec.tck;

import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ScriptedOpenAi;
import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.Engine;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.memory.chat.ChatMemoryProvider;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;
import dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fixture of the workspace tools suite: the scripted OpenAI endpoint (WireMock, one per class), a fresh engine per
 * test from {@link #createEngine()} with its artifact store and chat memory, the services the tests talk to, and the
 * helpers they share. It checks nothing itself; the scenarios live in {@link WorkspaceToolsConversationContract},
 * {@link WorkspaceToolsInputContract} and {@link AbstractWorkspaceToolsIT}, and a backend's test class extends
 * {@link AbstractWorkspaceToolsIT}, the last class of the chain.
 */
public abstract class WorkspaceToolsFixture {

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
