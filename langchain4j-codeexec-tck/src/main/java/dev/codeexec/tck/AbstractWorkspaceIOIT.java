package dev.codeexec.tck;

import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.WorkspaceIO;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.CodeBlock;
import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.InputSpec;
import dev.codeexec.engine.InvalidSpecException;
import dev.codeexec.engine.OutputSpec;
import dev.codeexec.engine.PathEscapeException;
import dev.codeexec.engine.PolicyViolationException;
import dev.codeexec.engine.RunResult;
import dev.codeexec.policy.CommandPolicy;
import dev.langchain4j.code.CodeExecutionEngine;
import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.invocation.InvocationContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The application facade and the CodeExecutionEngine adapter, on the engine a subclass supplies through
 * {@link #createEngine()}. Requirements of the backend are checked by the subclass.
 */
public abstract class AbstractWorkspaceIOIT {

    /** The one host directory the engine may stage inputs from. */
    @TempDir
    protected Path inputs;
    /** The artifact store the engine must save to. */
    protected InMemoryArtifactService artifacts = new InMemoryArtifactService();
    protected Engine engine;

    /**
     * A fresh engine for one test, closed after it: host inputs allowed from {@link #inputs} only, artifacts saved to
     * {@link #artifacts}, python 3 reachable as {@code python3}.
     */
    protected abstract Engine createEngine();

    @BeforeEach
    void setUp() {
        engine = createEngine();
    }

    @AfterEach
    void tearDown() {
        if (engine != null) {
            engine.close();
        }
    }

    @Test
    void should_share_the_conversation_workspace_with_the_tools() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            WorkspaceIO io = codeExec.workspace("conv");
            io.putFile("work/inputs/n.txt", "21");

            String out = codeExec.tools().workspaceExec("python3 -c \"print(int(open('work/inputs/n.txt').read())*2)\"",
                    null, null, null, null, null, InvocationContext.builder().chatMemoryId("conv").build());
            RunResult r = io.runCommand("cat work/inputs/n.txt");

            assertThat(out).contains("--- stdout ---\n42");
            assertThat(r.stdout()).isEqualTo("21");
        }
    }

    @Test
    void should_stage_granted_host_files_and_refuse_others() throws Exception {
        Path granted = Files.writeString(inputs.resolve("data.csv"), "a,b\n");
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            WorkspaceIO io = codeExec.workspace("conv");

            io.stageInputs(List.of(InputSpec.of("host://" + granted)));

            assertThat(io.read("work/inputs/data.csv", 0, 100).contentAsString()).isEqualTo("a,b\n");
            assertThatThrownBy(() -> io.stageInputs(List.of(InputSpec.of("host:///etc/hostname"))))
                    .isInstanceOf(PolicyViolationException.class);
        }
    }

    @Test
    void should_collect_outputs_and_save_an_artifact() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            WorkspaceIO io = codeExec.workspace("conv");
            io.executeCode(CodeBlock.of("python", "open('../out/r.txt','w').write('done')"), Duration.ofSeconds(30));

            assertThat(io.collectOutputs(OutputSpec.DEFAULT).files()).extracting(f -> f.name())
                    .containsExactly("out/r.txt");
            assertThat(io.saveArtifact("out/r.txt", null).toString()).isEqualTo("artifact://r.txt@1");
            assertThat(new String(artifacts.load("r.txt", 1).content())).isEqualTo("done");
            assertThatThrownBy(() -> io.saveArtifact("skills/x", null)).isInstanceOf(InvalidSpecException.class);
            assertThatThrownBy(() -> io.putFile("../escape.txt", "x")).isInstanceOf(PathEscapeException.class);
        }
    }

    @Test
    void should_save_files_larger_than_one_read_window_and_refuse_files_over_the_limit() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).maxArtifactBytes(30L << 20).build()) {
            WorkspaceIO io = codeExec.workspace("conv");
            io.runCommand("head -c 20971520 /dev/urandom > out/big.bin && head -c 31457281 /dev/zero > out/huge.bin");

            assertThat(io.saveArtifact("out/big.bin", null).toString()).isEqualTo("artifact://big.bin@1");
            assertThat(artifacts.load("big.bin", 1).content()).isEqualTo(readAll(io, "out/big.bin", 20971520));
            assertThatThrownBy(() -> io.saveArtifact("out/huge.bin", null)).isInstanceOf(InvalidSpecException.class)
                    .hasMessageContaining("larger than the 31457280 bytes");
        }
    }

    private static byte[] readAll(WorkspaceIO io, String path, int size) {
        byte[] all = new byte[size];
        int off = 0;
        while (off < size) {
            byte[] b = io.read(path, off, 1 << 20).content();
            System.arraycopy(b, 0, all, off, b.length);
            off += b.length;
        }
        return all;
    }

    @Test
    void should_apply_the_command_policy_to_run_command_but_not_to_trusted_specs() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine)
                .commandPolicy(CommandPolicy.allowing("echo")).build()) {
            WorkspaceIO io = codeExec.workspace("conv");

            assertThat(io.runCommand("echo ok").stdout()).isEqualTo("ok\n");
            assertThatThrownBy(() -> io.runCommand("cat /etc/hostname")).isInstanceOf(PolicyViolationException.class)
                    .hasMessageContaining("not in the policy's allow list");
            assertThat(io.run(dev.codeexec.engine.RunProgramSpec.builder("cat").args("/etc/hostname").build())
                    .exitCode()).isZero();
        }
    }

    @Test
    void should_stage_message_attachments_for_application_code() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            UserMessage msg = UserMessage.from(TextContent.from("see"), ImageContent.from(
                    Base64.getEncoder().encodeToString(new byte[] {1, 2}), "image/png"));
            msg = msg.toBuilder().attributes(Map.of(CodeExecution.FILE_NAMES_ATTRIBUTE, List.of("../../chart.png")))
                    .build();

            List<String> staged = codeExec.workspace("conv").stageAttachments(msg);

            assertThat(staged).containsExactly("work/inputs/chart.png");
        }
    }

    @Test
    void should_run_python_in_the_conversation_workspace_through_the_langchain4j_engine_interface() {
        try (CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            CodeExecutionEngine lc4j = codeExec.codeExecutionEngine("conv");

            String first = lc4j.execute("open('state.txt','w').write('kept')\nprint('wrote')");
            String second = lc4j.execute("print(open('state.txt').read())");

            assertThat(first).startsWith("exit_code: 0").contains("wrote");
            assertThat(second).contains("--- output ---\nkept");
        }
    }
}
