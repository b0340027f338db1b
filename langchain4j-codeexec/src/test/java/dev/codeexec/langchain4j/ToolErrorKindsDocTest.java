package dev.codeexec.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The error table of docs/tools.md against the code: every kind the tools can return is documented, and no other. */
class ToolErrorKindsDocTest {

    private static final Path DOC = Path.of("../docs/tools.md");
    private static final Path SOURCES = Path.of("src/main/java/dev/codeexec/langchain4j");

    @Test
    void should_document_exactly_the_error_kinds_the_tools_return() throws IOException {
        Set<String> kinds = Arrays.stream(ToolErrorKind.values()).map(ToolErrorKind::attribute)
                .collect(Collectors.toCollection(TreeSet::new));

        assertThat(documentedKinds()).isEqualTo(kinds);
    }

    @Test
    void should_return_every_error_kind_somewhere() throws IOException {
        String code;
        try (Stream<Path> files = Files.list(SOURCES)) {
            List<Path> sources = files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> !p.getFileName().toString().equals("ToolErrorKind.java")).toList();
            StringBuilder sb = new StringBuilder();
            for (Path p : sources) {
                sb.append(Files.readString(p));
            }
            code = sb.toString();
        }

        for (ToolErrorKind kind : ToolErrorKind.values()) {
            assertThat(code).as("a result of kind " + kind.attribute()).contains("ToolErrorKind." + kind.name());
        }
    }

    /** The backticked kinds in the first column of the table under "### Errors" (its rows, not its header). */
    private static Set<String> documentedKinds() throws IOException {
        String doc = Files.readString(DOC);
        int start = doc.indexOf("### Errors");
        assertThat(start).as("docs/tools.md has an Errors section").isNotNegative();
        String section = doc.substring(start, doc.indexOf("\n## ", start));
        int rows = section.indexOf("\n|---");
        assertThat(rows).as("the Errors section has a table").isNotNegative();
        Set<String> kinds = new TreeSet<>();
        Pattern kind = Pattern.compile("`([a-z_]+)`");
        for (String line : section.substring(rows + 1).lines().skip(1).toList()) {
            if (!line.startsWith("|")) {
                break;
            }
            Matcher m = kind.matcher(line.substring(1, line.indexOf('|', 1)));
            while (m.find()) {
                kinds.add(m.group(1));
            }
        }
        return kinds;
    }
}
