package dev.codeexec.samples.dropin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.artifact.FileSystemArtifactService;
import dev.codeexec.langchain4j.ScriptedOpenAi;
import dev.codeexec.langchain4j.ScriptedOpenAi.Reply;
import dev.codeexec.samples.docs.JavaSnippets;
import dev.codeexec.samples.docs.JavaSnippets.Snippet;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/getting-started.md: its Java blocks are code of this module (DocSnippetsTest compiles them as shown), and its
 * artifact set-up works.
 */
class GettingStartedDocTest {

    private static final Path REPOSITORY = Path.of(System.getProperty("codeexec.repository", ".."));
    private static final Path SOURCES = REPOSITORY.resolve("samples/src/main/java/dev/codeexec/samples/dropin");

    @Test
    void should_take_every_java_block_of_the_page_from_compiled_sources() throws IOException {
        List<String> source = new ArrayList<>();
        for (String file : List.of("GettingStarted.java", "HelpDesk.java")) {
            Files.readAllLines(SOURCES.resolve(file)).forEach(l -> source.add(l.strip()));
        }
        List<Snippet> blocks = JavaSnippets.read(REPOSITORY.resolve("docs/getting-started.md"), "getting-started.md");
        for (Snippet block : blocks) {
            List<String> body = block.body().lines().map(String::strip).toList();
            assertThat(Collections.indexOfSubList(source, body)).as("in a source file:\n" + block.body())
                    .isNotNegative();
            // The imports it shows are the source's (HelpDesk is in the sources' own package).
            for (String i : block.imports()) {
                assertThat(source.contains(i.strip()) || i.contains(".samples.dropin.HelpDesk;")).as(i).isTrue();
            }
        }
        assertThat(blocks).hasSize(3);
    }

    @Test
    void should_offer_and_save_artifacts_when_the_engine_has_a_store(@TempDir Path dir) {
        Requirements.requireCommand("bwrap");
        try (ScriptedOpenAi openAi = new ScriptedOpenAi()) {
            openAi.script(req -> switch (ScriptedOpenAi.toolResultsThisTurn(req)) {
                case 0 -> Reply.tool("c1", "workspace_exec", Map.of("command", "echo 832040 > out/fib30.txt"));
                case 1 -> Reply.tool("c2", "workspace_save_artifact", Map.of("path", "out/fib30.txt"));
                default -> Reply.text(ScriptedOpenAi.lastToolResult(req));
            });
            try (GettingStarted.WithArtifacts w = GettingStarted.withArtifacts(openAi.chatModel(), dir)) {
                assertThat(w.assistant().chat("user-1", "Compute the 30th Fibonacci number and keep it."))
                        .startsWith("saved out/fib30.txt as artifact://fib30.txt@1");
            }
            assertThat(openAi.requests().get(0).path("tools").findValuesAsText("name"))
                    .contains("workspace_save_artifact", "workspace_stage_artifact");
        }
        FileSystemArtifactService store = FileSystemArtifactService.at(dir);
        assertThat(new String(store.load("conversations/user-1/fib30.txt", 1).content(), StandardCharsets.UTF_8))
                .isEqualTo("832040\n");
    }
}
