package dev.codeexec.samples.dropin;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.tck.AbstractWorkspaceToolsIT;
import dev.codeexec.langchain4j.ScriptedOpenAi;
import dev.codeexec.samples.docs.JavaSnippets;
import dev.codeexec.samples.docs.JavaSnippets.Snippet;
import dev.codeexec.langchain4j.ScriptedOpenAi.Reply;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The README's drop-in example is {@link HelpDesk}, word for word: this test checks that the README shows this very
 * file (read with {@link JavaSnippets}, which also compiles it for {@code DocSnippetsTest}), counts its added lines (marked {@code // +}) against the README's claim and the limit of ten, and runs it
 * against a scripted OpenAI endpoint in a real sandbox.
 */
class HelpDeskReadmeTest {

    private static final Path REPOSITORY = Path.of(System.getProperty("codeexec.repository", ".."));
    private static final Path SOURCE = REPOSITORY.resolve(
            "samples/src/main/java/dev/codeexec/samples/dropin/HelpDesk.java");

    @Test
    void should_show_this_file_in_the_readme_with_its_added_lines_counted() throws IOException {
        String readme = Files.readString(REPOSITORY.resolve("README.md"));
        List<String> source = Files.readAllLines(SOURCE);
        // Everything after the package line, as the README shows it (DocSnippetsTest compiles it as shown).
        String shown = String.join("\n", source.subList(2, source.size()));

        assertThat(JavaSnippets.read(REPOSITORY.resolve("README.md"), "README.md")).extracting(Snippet::code)
                .contains(shown);
        long added = source.stream().filter(l -> l.matches(".*// \\+( .*)?$")).count();
        assertThat(added).isLessThanOrEqualTo(10);
        assertThat(readme).contains("**" + added + " added lines**");
    }

    @Test
    void should_answer_with_code_it_ran_in_the_sandbox() {
        Requirements.requireCommand("bwrap");
        try (ScriptedOpenAi openAi = new ScriptedOpenAi()) {
            openAi.script(req -> ScriptedOpenAi.toolResultsThisTurn(req) == 0
                    ? Reply.tool("call_1", "workspace_exec", Map.of("command", "python3 -c 'print(2 ** 100)'"))
                    : Reply.text("2^100 = " + AbstractWorkspaceToolsIT.stdout(ScriptedOpenAi.lastToolResult(req))));

            try (HelpDesk desk = new HelpDesk(openAi.chatModel())) {
                assertThat(desk.answer("user-1", "What is 2 to the power of 100?"))
                        .isEqualTo("2^100 = 1267650600228229401496703205376");
            }
            // the tools the model was offered: no artifact tools, since the desk configured no artifact store
            assertThat(openAi.requests().get(0).path("tools").findValuesAsText("name")).contains("workspace_exec",
                    "execute_code").doesNotContain("workspace_save_artifact");
        }
    }
}
