package dev.codeexec.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.testing.Requirements;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Differential test of the parser against real shells: for generated lines the parser accepts, the shell, given the
 * same line as the arguments of printf, must produce exactly the words the parser produced. This proves the accepted
 * subset means the same to bash and dash as to the policy, even for a caller that passes the line as written instead
 * of {@link ParsedCommand#toShellScript()}.
 */
class ShellParserDifferentialIT {

    private static final String[] ALPHABET = {"a", "b", "a", "b", " ", " ", "\t", "'", "'", "\"", "\"", "\\", "$",
            "`", "{", "}", ",", ".", "..", "~", "=", ":", "*", "?", "[", "]", "!", "#", "(", ")", "<", ">", "^", "%",
            "@", "+", "-", "/", "é", "你", "😀", "&", "|", ";", "{}", "''", "\"\"", "\\'", "\\\"", "\\\\", "\\ "};

    @TempDir
    Path dir;

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"/bin/sh", "/bin/bash"})
    void should_split_words_exactly_as_the_shell_does_when_the_parser_accepts_a_line(String shell) throws Exception {
        Requirements.require(Files.isExecutable(Path.of(shell)), shell);
        Requirements.require(Files.isExecutable(Path.of("/usr/bin/printf")), "/usr/bin/printf");
        Random random = new Random(42);
        Set<String> accepted = new LinkedHashSet<>();
        int generated = 0;
        while (accepted.size() < 2000 && generated < 500_000) {
            StringBuilder sb = new StringBuilder("x ");
            int n = 1 + random.nextInt(10);
            for (int k = 0; k < n; k++) {
                sb.append(ALPHABET[random.nextInt(ALPHABET.length)]);
            }
            generated++;
            String line = sb.toString();
            try {
                ParsedCommand p = ShellParser.parse(line);
                if (p.segments().size() == 1) {
                    accepted.add(line);
                }
            } catch (PolicyViolationException e) {
                // refused lines are the parser's business; only accepted ones are compared
            }
        }
        List<String> lines = new ArrayList<>(accepted);
        List<String> mismatches = new ArrayList<>();
        for (int from = 0; from < lines.size(); from += 200) {
            List<String> batch = lines.subList(from, Math.min(lines.size(), from + 200));
            StringBuilder script = new StringBuilder();
            for (String line : batch) {
                // "x" is the parser's command word; the shell sees it as the first argument of printf.
                script.append("/usr/bin/printf '%s\\0' ").append(line).append("\n/usr/bin/printf '\\001\\0'\n");
            }
            Path file = dir.resolve("batch.sh");
            Files.writeString(file, script.toString(), StandardCharsets.UTF_8);
            Process p = new ProcessBuilder(shell, file.toString()).redirectErrorStream(false).start();
            byte[] out = p.getInputStream().readAllBytes();
            String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(err).as("shell errors").isEmpty();
            List<String> fields = new ArrayList<>(Arrays.asList(new String(out, StandardCharsets.UTF_8).split("\0",
                    -1)));
            int pos = 0;
            for (String line : batch) {
                List<String> words = new ArrayList<>();
                while (pos < fields.size() && !fields.get(pos).equals("\u0001")) {
                    words.add(fields.get(pos++));
                }
                pos++;
                List<String> expected = ShellParser.parse(line).segments().get(0).argv();
                if (!words.equals(expected)) {
                    mismatches.add(line.replace("\t", "\\t") + " -> shell " + words + " parser " + expected);
                }
            }
        }
        System.out.printf("parser differential (%s): %d generated, %d accepted and compared%n", shell, generated,
                lines.size());

        assertThat(mismatches).as("lines the shell splits differently").isEmpty();
        assertThat(lines).hasSizeGreaterThan(1000);
    }
}
