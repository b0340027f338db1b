package dev.codeexec.samples.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.samples.docs.JavaSnippets.Snippet;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every Java snippet of docs/ and of the README compiles with the imports it shows ({@link JavaSnippets}), so a
 * reader who copies one knows where each type comes from, and a changed API breaks this test before it breaks a
 * reader.
 */
class DocSnippetsTest {

    private static final Path REPOSITORY = Path.of(System.getProperty("codeexec.repository", ".."));

    @Test
    void should_compile_every_java_snippet_of_the_docs_with_the_imports_it_shows(@TempDir Path classes)
            throws IOException {
        List<Snippet> snippets = new ArrayList<>(JavaSnippets.read(REPOSITORY.resolve("README.md"), "README.md"));
        try (Stream<Path> pages = Files.list(REPOSITORY.resolve("docs"))) {
            for (Path page : pages.filter(p -> p.toString().endsWith(".md")).sorted().toList()) {
                snippets.addAll(JavaSnippets.read(page, "docs/" + page.getFileName()));
            }
        }

        Map<Snippet, String> failures = JavaSnippets.compile(snippets, classes);

        assertThat(failures).as(() -> failures.entrySet().stream().map(e -> e.getKey() + " does not compile:\n"
                + e.getValue()).collect(Collectors.joining("\n\n"))).isEmpty();
        assertThat(snippets).hasSizeGreaterThan(40); // the pages' blocks were found at all
        // Excerpts are lines cut out of a class: only their imports compile. They stay the exception.
        assertThat(snippets.stream().filter(Snippet::isExcerpt).map(Snippet::toString)).hasSizeLessThanOrEqualTo(1);
    }

    @Test
    void should_fail_a_snippet_that_uses_a_type_it_does_not_import(@TempDir Path classes) {
        // Positive control: the context names types fully qualified, so it cannot stand in for a missing import.
        Snippet missing = new Snippet("control.md", 1, "RunResult r = null;", "dev.codeexec.engine.Engine engine;");
        Snippet imported = new Snippet("control.md", 5, "import dev.codeexec.engine.RunResult;\n\nRunResult r = null;",
                "dev.codeexec.engine.Engine engine;");
        Snippet elided = new Snippet("control.md", 9, "import dev.codeexec.engine.Engine;\n\n"
                + "abstract class E implements Engine {\n    @Override public String name() { ... }\n    ...\n}", "");

        Map<Snippet, String> failures = JavaSnippets.compile(List.of(missing, imported, elided), classes);

        assertThat(failures).containsOnlyKeys(missing);
        assertThat(failures.get(missing)).contains("cannot find symbol").contains("RunResult");
    }
}
