package dev.codeexec.samples.analyst;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./scripts/sample}: it builds only when a source changed since its last successful build, and answers
 * {@code --help} and a wrong option without building. The script runs in a copy of the repository's layout, with a
 * stand-in {@code mvn} and {@code java} first on its {@code PATH} that record their calls ({@code mvn} writes the class
 * path a real build would, and brings its dependency back as a real build downloads it).
 */
class SampleScriptTest {

    private static final Path REPOSITORY = Path.of(System.getProperty("codeexec.repository", ".."));
    private static final String USAGE = "samples/src/main/resources/dev/codeexec/samples/analyst/usage.txt";

    @TempDir
    Path repo;

    private Path calls;

    @BeforeEach
    void layOut() throws IOException {
        copy("scripts/sample");
        copy(USAGE);
        write("pom.xml", "<project/>");
        write("samples/pom.xml", "<project/>");
        write("samples/src/main/java/A.java", "class A {}");
        write("langchain4j-codeexec/src/main/java/B.java", "class B {}");
        write("langchain4j-codeexec/src/test/java/BTest.java", "class BTest {}");
        write("lib/dependency.jar", "");
        calls = repo.resolve("calls.log");
        script("bin/mvn", "echo \"mvn $*\" >> " + calls + "\n"
                + "[ -f " + repo.resolve("fail-build") + " ] && exit 1\n"
                + "mkdir -p samples/target/classes\n"
                + "touch " + repo.resolve("lib/dependency.jar") + "\n"
                + "printf '%s' " + repo.resolve("lib/dependency.jar") + " > samples/target/classpath.txt\n");
        script("bin/java", "echo \"java $*\" >> " + calls + "\n");
    }

    @Test
    void should_print_the_usage_without_building_when_asked_for_help() throws Exception {
        Run r = run("--backend", "local", "--help");

        assertThat(r.exit).isZero();
        assertThat(r.stdout).isEqualTo(Files.readString(repo.resolve(USAGE)));
        assertThat(r.stdout).contains("(default: " + DataAnalystChatbot.Options.DEFAULT_OUTPUT + ")");
        assertThat(calls).doesNotExist();
    }

    @Test
    void should_refuse_a_wrong_option_without_building() throws Exception {
        assertThat(run("--bogus")).satisfies(r -> {
            assertThat(r.exit).isEqualTo(2);
            assertThat(r.stderr).startsWith("unknown option '--bogus'\nusage: ./scripts/sample");
        });
        assertThat(run("--backend", "vm").stderr).startsWith("unknown value 'vm' for --backend; use one of "
                + Backend.flags() + "\n");
        assertThat(run("--backend", "local", "--output").stderr).startsWith("--output needs a value\n");
        assertThat(run("--image", "--interactive").stderr).startsWith("--image needs a value\n");
        assertThat(calls).doesNotExist();
    }

    @Test
    void should_build_once_and_again_only_when_a_source_changed() throws Exception {
        assertThat(run("--backend", "local").stdout).contains("Building the sample");
        assertThat(run("--backend", "local", "--interactive").stdout).doesNotContain("Building");
        write("langchain4j-codeexec/src/test/java/BTest.java", "class BTest { int changed; }"); // tests: no build
        assertThat(run().exit).isZero();
        write("langchain4j-codeexec/src/main/java/B.java", "class B { int changed; }");
        assertThat(run("--backend", "Sandbox").exit).isZero();
        write("samples/pom.xml", "<project><!-- changed --></project>");
        assertThat(run().exit).isZero();

        assertThat(calls()).containsExactly(
                "mvn -B -q -ntp -DskipTests -pl samples -am package",
                "java -cp samples/target/classes:" + repo.resolve("lib/dependency.jar") + " "
                        + "dev.codeexec.samples.analyst.DataAnalystChatbot --backend local",
                "java -cp samples/target/classes:" + repo.resolve("lib/dependency.jar") + " "
                        + "dev.codeexec.samples.analyst.DataAnalystChatbot --backend local --interactive",
                "java -cp samples/target/classes:" + repo.resolve("lib/dependency.jar") + " "
                        + "dev.codeexec.samples.analyst.DataAnalystChatbot",
                "mvn -B -q -ntp -DskipTests -pl samples -am package",
                "java -cp samples/target/classes:" + repo.resolve("lib/dependency.jar") + " "
                        + "dev.codeexec.samples.analyst.DataAnalystChatbot --backend Sandbox",
                "mvn -B -q -ntp -DskipTests -pl samples -am package",
                "java -cp samples/target/classes:" + repo.resolve("lib/dependency.jar") + " "
                        + "dev.codeexec.samples.analyst.DataAnalystChatbot");
    }

    @Test
    void should_build_again_when_the_last_build_failed_or_its_class_path_is_gone() throws Exception {
        Files.writeString(repo.resolve("fail-build"), "");
        assertThat(run().exit).isNotZero();
        Files.delete(repo.resolve("fail-build"));
        assertThat(run().exit).isZero();
        Files.delete(repo.resolve("lib/dependency.jar")); // e.g. an emptied ~/.m2
        assertThat(run().exit).isZero();
        assertThat(run().exit).isZero();

        assertThat(calls()).filteredOn(c -> c.startsWith("mvn")).hasSize(3);
        assertThat(calls()).filteredOn(c -> c.startsWith("java")).hasSize(3);
    }

    private record Run(int exit, String stdout, String stderr) {
    }

    private Run run(String... args) throws Exception {
        List<String> command = new java.util.ArrayList<>(List.of("bash", repo.resolve("scripts/sample").toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(repo.toFile());
        pb.environment().put("PATH", repo.resolve("bin") + ":" + System.getenv("PATH"));
        pb.environment().remove("SAMPLE_MAIN");
        Path out = repo.resolve("stdout.txt");
        Path err = repo.resolve("stderr.txt");
        Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("scripts/sample did not end");
        }
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    private List<String> calls() throws IOException {
        return Files.readAllLines(calls);
    }

    private void copy(String path) throws IOException {
        Files.createDirectories(repo.resolve(path).getParent());
        Files.copy(REPOSITORY.resolve(path), repo.resolve(path));
    }

    private void write(String path, String text) throws IOException {
        Files.createDirectories(repo.resolve(path).getParent());
        Files.writeString(repo.resolve(path), text, StandardCharsets.UTF_8);
    }

    private void script(String path, String body) throws IOException {
        write(path, "#!/bin/sh\n" + body);
        Files.setPosixFilePermissions(repo.resolve(path), PosixFilePermissions.fromString("rwxr-xr-x"));
    }
}
