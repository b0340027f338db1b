package dev.codeexec.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Differential test of the sed validator against GNU sed's own {@code --sandbox}, which refuses exactly the commands
 * the validator must find (e, r, R, w, W, s///e, s///w). For thousands of generated scripts: whenever the validator
 * accepts a script, GNU sed in sandbox mode must not report a sandbox violation for it. A script the validator misreads
 * would show up as accepted here while sed finds an e or w in it.
 */
class SedValidatorDifferentialIT {

    private static final String[] ADDRESSES = {"", "", "1", "$", "/a/", "\\,a,", "1,3", "/a/,/b/", "0,/x/", "1~2",
            "/x/I", "1!", "/[/]/", "/[]/]/", "\\|a|,+2", "2,~4 !"};
    private static final String[] PIECES = {"a", "[/]", "[]/]", "[^]e]", "\\/", "[[:alpha:]/]", "/", "e", "w",
            "\\n", "[", "]", "|", ";", "\\", "x", ".*", "[[.-.]]", "[[=a=]/]", "\\[", "&", "}", "#", " "};
    private static final String[] FLAGS = {"", "", "g", "p", "e", "w f", "2", "gI", "ew", " w x", ";e id", "M", "pw f",
            "}", " ;", "g;"};
    private static final String[] DELIMITERS = {"/", "/", "|", ",", "#", ":", "e", "w", ";", " ", "[", "\\", "}"};
    private static final String[] SEPARATORS = {";", "\n", " ", "", "}", "; ", "\n\n", "{"};

    private final Random random = new Random(20240611L);

    private String pick(String[] options) {
        return options[random.nextInt(options.length)];
    }

    private String text(int max) {
        StringBuilder sb = new StringBuilder();
        int n = random.nextInt(max + 1);
        for (int k = 0; k < n; k++) {
            sb.append(pick(PIECES));
        }
        return sb.toString();
    }

    private String command() {
        String d = pick(DELIMITERS);
        return switch (random.nextInt(16)) {
            case 0 -> "p";
            case 1 -> "d";
            case 2 -> "e id";
            case 3 -> "w f";
            case 4, 5, 6 -> "s" + d + text(3) + d + text(2) + d + pick(FLAGS);
            case 7 -> "y" + d + text(2) + d + text(2) + d;
            case 8 -> pick(new String[] {"a", "i", "c"}) + pick(new String[] {" ", "\\\n", "\\", ""}) + text(3);
            case 9 -> ":" + text(1);
            case 10 -> pick(new String[] {"b", "t", "T"}) + pick(new String[] {"", " l", "l", " l e"});
            case 11 -> "{";
            case 12 -> "}";
            case 13 -> "#" + text(2);
            case 14 -> pick(new String[] {"q", "l 3", "=", "r f", "R f", "W f", "n", "N", "x"});
            default -> text(3);
        };
    }

    private String script() {
        StringBuilder sb = new StringBuilder();
        int n = 1 + random.nextInt(3);
        for (int k = 0; k < n; k++) {
            if (k > 0) {
                sb.append(pick(SEPARATORS));
            }
            sb.append(pick(ADDRESSES)).append(command());
        }
        return sb.toString();
    }

    private static boolean accepted(String script) {
        try {
            ArgumentValidators.sed().validate(List.of("sed", "-n", "-e", script));
            return true;
        } catch (PolicyViolationException e) {
            return false;
        }
    }

    private static String sandboxStderr(String script) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("sed", "--sandbox", "-n", "-e", script)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        byte[] err = p.getErrorStream().readAllBytes();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("sed timed out on " + script);
        }
        return new String(err, StandardCharsets.UTF_8);
    }

    @Test
    void should_never_accept_a_script_that_gnu_sed_sandbox_refuses() throws Exception {
        Requirements.requireCommand("sed");
        Process v = new ProcessBuilder("sed", "--version").redirectErrorStream(true).start();
        String version = new String(v.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        v.waitFor(120, TimeUnit.SECONDS);
        Requirements.require(version.contains("GNU") && !sandboxStderr("e id").isEmpty(),
                "GNU sed with --sandbox (4.3 or newer)");

        Set<String> acceptedScripts = new LinkedHashSet<>();
        int generated = 0;
        int rejectedWithExecOrWrite = 0;
        while (acceptedScripts.size() < 600 && generated < 200_000) {
            String s = script();
            generated++;
            if (accepted(s)) {
                acceptedScripts.add(s);
            } else if (s.contains("e") || s.contains("w")) {
                rejectedWithExecOrWrite++;
            }
        }
        List<String> misses = new ArrayList<>();
        int sedErrors = 0;
        for (String s : acceptedScripts) {
            String err = sandboxStderr(s);
            if (err.contains("disabled in sandbox mode")) {
                misses.add(s);
            } else if (!err.isEmpty()) {
                sedErrors++;
            }
        }
        System.out.printf("sed differential: %d generated, %d accepted by the validator (%d of them invalid for sed),"
                + " %d refused containing e/w%n", generated, acceptedScripts.size(), sedErrors,
                rejectedWithExecOrWrite);

        assertThat(misses).as("scripts the validator accepted but GNU sed --sandbox refused").isEmpty();
        assertThat(acceptedScripts).hasSizeGreaterThan(300);
        assertThat(acceptedScripts.size() - sedErrors).as("valid accepted scripts").isGreaterThan(100);
    }
}
