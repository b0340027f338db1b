package dev.codeexec.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The adapter's tests run against the LangChain4j the build names: 1.19 in the main build, the oldest supported
 * version in the second pass of {@code ./scripts/test} ({@code -Plangchain4j-oldest}, classes built against the newest
 * and run against the old jars, as an application on that version runs them). Without this check, a pass whose
 * class path kept the newer jars would prove nothing.
 */
class LangChain4jVersionTest {

    @ParameterizedTest
    @ValueSource(strings = {"langchain4j", "langchain4j-core"})
    void should_run_against_the_langchain4j_version_the_build_names(String artifact) throws IOException {
        String expected = System.getProperty("codeexec.langchain4j.version", "");
        org.junit.jupiter.api.Assumptions.assumeFalse(expected.isBlank() || expected.startsWith("${"),
                "run by Maven, which names the version");
        Properties p = new Properties();
        try (InputStream in = LangChain4jVersionTest.class.getClassLoader()
                .getResourceAsStream("META-INF/maven/dev.langchain4j/" + artifact + "/pom.properties")) {
            assertThat(in).as("pom.properties of " + artifact).isNotNull();
            p.load(in);
        }

        assertThat(p.getProperty("version")).isEqualTo(expected);
    }
}
