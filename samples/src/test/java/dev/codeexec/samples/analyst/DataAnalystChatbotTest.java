package dev.codeexec.samples.analyst;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.e2b.FakeE2b;
import dev.codeexec.e2b.FakeTesting;
import dev.codeexec.testing.Requirements;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The offline demo of the README's sample command, end to end on every backend this host offers: the real
 * OpenAiChatModel against the scripted endpoint, real tool calls and results, and what a run leaves behind.
 */
class DataAnalystChatbotTest {

    @TempDir
    Path output;

    private final ByteArrayOutputStream printed = new ByteArrayOutputStream();
    private final PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);

    /** No OPENAI_API_KEY: the scripted model, whatever the environment of the build has. */
    private static final Map<String, String> OFFLINE = Map.of();

    @ParameterizedTest
    @EnumSource(value = Backend.class, names = {"SANDBOX", "LOCAL", "CONTAINER", "JUPYTER"})
    void should_analyse_chart_summarise_save_and_run_the_lone_code_block_when_the_demo_runs(Backend backend)
            throws IOException {
        DataAnalystChatbot.Result r = runDemo(backend);

        assertThat(r.backend()).isEqualTo(backend);
        assertDemo(r);
        if (backend == Backend.SANDBOX || backend == Backend.CONTAINER) {
            if (r.network().ran()) {
                assertNetwork(r);
            } else {
                assertThat(r.network().skipped()).contains("cannot enforce an egress policy here");
            }
        } else {
            assertThat(r.network().skipped()).contains("The " + backend.flag() + " backend cannot enforce an egress "
                    + "policy");
        }
    }

    /**
     * The network step on the sandbox: pip installs tinystats from the sample's index under the name pypi.local (the
     * one destination the policy allows), the model uses it, and example.org gets the proxy's refusal.
     */
    @Test
    void should_install_from_the_allowed_index_and_show_the_refusal_of_another_host_on_the_sandbox() throws Exception {
        Requirements.requireCommand("bwrap");
        DataAnalystChatbot.Result r = runDemo(Backend.SANDBOX);

        assertDemo(r);
        assertThat(r.network().ran()).as(String.valueOf(r.network().skipped())).isTrue();
        assertNetwork(r);
        assertThat(printed()).contains("Egress policy: allow pypi.local:", "Backend: sandbox, isolation:",
                "their one way out is the engine's egress proxy");
    }

    @Test
    void should_skip_the_network_step_and_say_why_on_the_local_backend() {
        DataAnalystChatbot.Result r = runDemo(Backend.LOCAL);

        assertThat(r.network().ran()).isFalse();
        assertThat(r.network().steps()).isEmpty();
        assertThat(printed()).contains("The local backend cannot enforce an egress policy", "The step is skipped: it "
                + "is never run without an egress policy enforced.").doesNotContain("pip install");
    }

    private void assertNetwork(DataAnalystChatbot.Result r) {
        List<Transcript.Step> steps = r.network().steps();
        assertThat(steps).filteredOn(s -> s.arguments().contains("pip install") || s.arguments().contains(
                "fetch_wheel.py " + "http")).last().satisfies(s -> assertThat(s.result()).startsWith("exit_code: 0")
                .contains("Successfully installed tinystats-0.1.0"));
        Transcript.Step use = steps.stream().filter(s -> s.arguments().contains("python3 work/use_tinystats.py"))
                .findFirst().orElseThrow();
        assertThat(use.result()).startsWith("exit_code: 0").contains("count: 36", "sum: 2683.75",
                "tinystats 0.1.0 from work/lib/tinystats/__init__.py");
        Transcript.Step reach = steps.get(steps.size() - 1);
        assertThat(reach.arguments()).contains("python3 work/reach.py");
        assertThat(reach.result()).contains("http://example.org/ -> refused: 403 egress to example.org:80 is not "
                + "allowed by the policy; allowed: pypi.local:").contains("https://example.org/ -> refused:")
                .contains("egress to example.org:443 is not allowed").doesNotContain("-> reached");
        assertThat(r.network().answer()).startsWith("Installed tinystats 0.1.0 from pypi.local into work/lib.")
                .contains("over 36 sales", "Other hosts are out of reach");
        assertThat(r.answer()).as("the analysis's answer").contains("south");
    }

    /**
     * The demo on {@code --backend e2b}, configured from the environment as a user would (key and URLs), against the
     * e2b module's fake E2B on the loopback interface; only the sandbox user and base folder are the fake's.
     */
    @Test
    void should_run_the_demo_in_an_e2b_sandbox_when_the_e2b_backend_is_chosen(@TempDir Path e2bBase)
            throws Exception {
        FakeTesting.requirePython();
        try (FakeE2b fake = new FakeE2b(e2bBase)) {
            Map<String, String> env = Map.of("E2B_API_KEY", FakeE2b.API_KEY, "E2B_API_URL", fake.url(),
                    "E2B_SANDBOX_URL", fake.url());
            DataAnalystChatbot.Result r = DataAnalystChatbot.run(DataAnalystChatbot.Options.parse("--backend", "e2b",
                    "--output", output.toString()), new ByteArrayInputStream(new byte[0]), out, env,
                    (backend, artifacts) -> Backends.open(backend, artifacts, Backends.DEFAULT_IMAGE, null, env,
                            b -> b, b -> b.user("root").baseDir(e2bBase.toString())));

            assertThat(r.backend()).isEqualTo(Backend.E2B);
            assertDemo(r);
            assertThat(printed()).contains("Backend: e2b, isolation: an E2B cloud sandbox per workspace (template "
                    + "code-interpreter-v1)", "Creating the workspace's E2B sandbox");
            assertThat(fake.created()).hasSize(1);
            assertThat(fake.live()).as("the sandbox was killed when the chatbot ended").isEmpty();
        }
    }

    @Test
    void should_say_which_variable_to_set_when_the_e2b_backend_has_no_api_key() {
        assertThatThrownBy(() -> DataAnalystChatbot.run(DataAnalystChatbot.Options.parse("--backend", "e2b",
                "--output", output.toString()), new ByteArrayInputStream(new byte[0]), out, OFFLINE))
                .isInstanceOf(Backends.Unavailable.class)
                .hasMessageStartingWith("E2B_API_KEY is not set")
                .hasNoCause()
                .satisfies(e -> assertThat(((Backends.Unavailable) e).fix()).contains("https://e2b.dev/dashboard",
                        "export E2B_API_KEY=<your key>", "--template NAME"));
    }

    @Test
    void should_say_the_key_was_refused_without_showing_it_when_e2b_refuses_the_api_key(@TempDir Path e2bBase)
            throws Exception {
        String wrongKey = "e2b_0123456789abcdef_not_this_teams";
        try (FakeE2b fake = new FakeE2b(e2bBase)) {
            Map<String, String> env = Map.of("E2B_API_KEY", wrongKey, "E2B_API_URL", fake.url(),
                    "E2B_SANDBOX_URL", fake.url());
            assertThatThrownBy(() -> DataAnalystChatbot.run(DataAnalystChatbot.Options.parse("--backend", "e2b",
                    "--output", output.toString()), new ByteArrayInputStream(new byte[0]), out, env))
                    .isInstanceOf(Backends.Unavailable.class)
                    .satisfies(e -> {
                        assertThat(((Backends.Unavailable) e).fix()).startsWith("check E2B_API_KEY: E2B refused it");
                        assertThat(e.getMessage()).doesNotContain(wrongKey);
                        assertThat(((Backends.Unavailable) e).fix()).doesNotContain(wrongKey);
                    });
            assertThat(printed()).doesNotContain(wrongKey);
            assertThat(fake.created()).isEmpty();
        }
    }

    private void assertDemo(DataAnalystChatbot.Result r) throws IOException {
        // out/ was copied into the run folder, which outlives the workspace
        Path summary = r.runDir().resolve("out/summary.md");
        assertThat(r.outputs()).contains(summary.toAbsolutePath().normalize());
        assertThat(Files.readString(summary)).contains("| south | 451 | 828.75 | 31% |")
                .contains("**south** brings in the most revenue: 828.75 of 2683.75 (31%).");
        Path chart = r.outputs().stream().filter(p -> p.getFileName().toString().startsWith("revenue_by_region."))
                .findFirst().orElseThrow();
        byte[] chartBytes = Files.readAllBytes(chart);
        if (chart.toString().endsWith(".png")) {
            assertThat(new String(chartBytes, 1, 3, StandardCharsets.US_ASCII)).isEqualTo("PNG");
        } else {
            assertThat(new String(chartBytes, StandardCharsets.UTF_8)).startsWith("<svg").contains(">south<");
        }
        assertThat(Files.readString(summary)).contains("](" + chart.getFileName() + ")");
        // the summary was saved as an artifact, in the run's store
        assertThat(r.artifacts()).containsExactly("artifact://sales-summary.md@1");
        Path stored = r.runDir().resolve("artifacts/conversations/analyst/sales-summary.md/@versions/v1.bin");
        assertThat(Files.readAllBytes(stored)).isEqualTo(Files.readAllBytes(summary));
        // the steps: a Python analysis through workspace_exec, then the lone code block run by the response processor
        assertThat(r.steps()).extracting(Transcript.Step::tool).containsSubsequence("workspace_list_files",
                "workspace_write_file", "workspace_exec", "workspace_read_file", "workspace_save_artifact",
                "execute_code");
        Transcript.Step analysis = r.steps().stream().filter(s -> s.arguments().contains("python3 work/analyse.py"))
                .findFirst().orElseThrow();
        assertThat(analysis.result()).startsWith("exit_code: 0").contains("summary: out/summary.md");
        Transcript.Step block = r.steps().get(r.steps().size() - 1);
        assertThat(block.codeBlock()).as("promoted by the response processor").isTrue();
        assertThat(block.tool()).isEqualTo("execute_code");
        assertThat(block.result()).startsWith("exit_code: 0").contains("summary.md 319 bytes");
        assertThat(r.answer()).contains("south").contains("artifact://sales-summary.md@1")
                .contains("The check found 2 files in out/.");
        // what the user reads: every step, where the outputs are, how to chat
        assertThat(printed()).contains("[1] The model calls workspace_list_files", "The answer was one fenced python "
                        + "block, so the response processor runs it", "Assistant: **south**",
                "Outputs of this run (they stay after it): " + r.runDir().toAbsolutePath(),
                "./scripts/sample --interactive");
    }

    @Test
    void should_fall_back_to_local_and_say_what_that_means_when_the_sandbox_cannot_run() throws Exception {
        DataAnalystChatbot.Result r = DataAnalystChatbot.run(DataAnalystChatbot.Options.parse("--output",
                output.toString()), new ByteArrayInputStream(new byte[0]), out, OFFLINE, (backend, artifacts) ->
                Backends.open(backend, artifacts, Backends.DEFAULT_IMAGE, null, OFFLINE,
                        b -> b.bwrapPath(Path.of("/nonexistent/bwrap")), b -> b));

        assertThat(r.backend()).isEqualTo(Backend.LOCAL);
        assertThat(printed()).contains("WARNING: the sandbox cannot run here, so this runs on the LOCAL backend, "
                + "which is NOT a sandbox.", "can read and change your files and use your network",
                "Why the sandbox cannot run: sandbox preflight failed: the configured bubblewrap '/nonexistent/bwrap' "
                        + "is not an executable file", "Fix: install bubblewrap");
        assertThat(r.artifacts()).containsExactly("artifact://sales-summary.md@1");
    }

    @Test
    void should_choose_the_sandbox_without_a_warning_when_its_preflight_passes() throws Exception {
        Requirements.requireCommand("bwrap");
        DataAnalystChatbot.Result r = DataAnalystChatbot.run(DataAnalystChatbot.Options.parse("--output",
                output.toString()), new ByteArrayInputStream(new byte[0]), out, OFFLINE);

        assertThat(r.backend()).isEqualTo(Backend.SANDBOX);
        assertThat(printed()).doesNotContain("WARNING").contains("Backend: sandbox");
    }

    @Test
    void should_run_commands_and_code_blocks_when_chatting_offline() throws Exception {
        String typed = "help\nrun wc -l work/inputs/sales.csv\npy print(6 * 7)\nexit\n";
        DataAnalystChatbot.Result r = DataAnalystChatbot.run(DataAnalystChatbot.Options.parse("--backend", "local",
                "--interactive", "--output", output.toString()),
                new ByteArrayInputStream(typed.getBytes(StandardCharsets.UTF_8)), out, OFFLINE);

        assertThat(printed()).contains("I am the offline scripted model");
        assertThat(r.steps()).extracting(Transcript.Step::tool).containsExactly("workspace_exec", "execute_code");
        assertThat(r.steps().get(0).result()).startsWith("exit_code: 0").contains("37 work/inputs/sales.csv");
        assertThat(r.steps().get(1).codeBlock()).isTrue();
        assertThat(r.steps().get(1).result()).contains("42");
        assertThat(r.answer()).isEqualTo("I ran the block: exit code 0. Its output is above.");
    }

    @Test
    void should_list_work_and_out_without_the_tools_caches_and_end_a_chat_without_the_hint_to_start_one()
            throws Exception {
        // What matplotlib leaves in the workspace's home on first import, and a result in out/.
        String typed = "run mkdir -p home/.cache/matplotlib home/.config/matplotlib && touch "
                + "home/.cache/matplotlib/fontlist-v390.json out/chart.png\nfiles\nexit\n";
        DataAnalystChatbot.Result r = DataAnalystChatbot.run(DataAnalystChatbot.Options.parse("--backend", "local",
                "--interactive", "--output", output.toString()),
                new ByteArrayInputStream(typed.getBytes(StandardCharsets.UTF_8)), out, OFFLINE);

        assertThat(r.steps()).extracting(Transcript.Step::tool).containsExactly("workspace_exec",
                "workspace_list_files", "workspace_list_files");
        assertThat(r.steps().get(0).result()).startsWith("exit_code: 0");
        String listed = r.steps().get(1).result() + "\n" + r.steps().get(2).result();
        assertThat(listed).contains("work/inputs/sales.csv", "out/chart.png").doesNotContain("matplotlib", "home/");
        assertThat(r.answer()).contains("work/inputs/", "`files .` lists the whole workspace");
        assertThat(printed()).contains("Chat ended").doesNotContain("To chat with the analyst yourself");
    }

    @Test
    void should_show_the_real_defaults_in_the_usage() {
        DataAnalystChatbot.Options defaults = DataAnalystChatbot.Options.parse();
        assertThat(defaults.output()).isEqualTo(DataAnalystChatbot.Options.DEFAULT_OUTPUT);
        assertThat(DataAnalystChatbot.Options.USAGE).contains("[--backend " + Backend.flags() + "]",
                "(default: " + DataAnalystChatbot.Options.DEFAULT_OUTPUT + ")",
                "(default: " + dev.codeexec.e2b.E2bEngine.DEFAULT_TEMPLATE + ")",
                "(default: $CODEEXEC_IMAGE, else " + Backends.PROVISIONED_IMAGE + ")");
        assertThat(DataAnalystChatbot.nextStep(defaults, true)).startsWith("To chat with the analyst yourself: "
                + "./scripts/sample --interactive");
        assertThat(DataAnalystChatbot.nextStep(DataAnalystChatbot.Options.parse("--interactive", "--backend",
                "local"), true)).endsWith("To watch the scripted demo: ./scripts/sample --backend local");
    }

    @Test
    void should_say_why_and_what_to_do_when_a_backend_cannot_start() {
        assertThatThrownBy(() -> DataAnalystChatbot.run(DataAnalystChatbot.Options.parse("--backend", "container",
                "--image", "codeexec-no-such-image:none", "--output", output.toString()),
                new ByteArrayInputStream(new byte[0]), out, OFFLINE))
                .isInstanceOf(Backends.Unavailable.class)
                .satisfies(e -> assertThat(((Backends.Unavailable) e).fix()).contains("./scripts/provision docker"));
    }

    /**
     * {@code --backend kubernetes} where no cluster is configured (no KUBECONFIG, no ~/.kube/config, not in a pod):
     * one paragraph that says what to configure, before any client is made, and no stack trace.
     */
    @Test
    void should_say_what_to_configure_when_the_kubernetes_backend_has_no_cluster(@TempDir Path home) {
        Map<String, String> env = Map.of("KUBERNETES_SERVICE_PORT", "443");
        assertThatThrownBy(() -> DataAnalystChatbot.run(DataAnalystChatbot.Options.parse("--backend", "kubernetes",
                "--output", output.toString()), new ByteArrayInputStream(new byte[0]), out, env,
                (backend, artifacts) -> Backends.openKubernetes(artifacts, Backends.DEFAULT_IMAGE, env, home)))
                .isInstanceOf(Backends.Unavailable.class)
                .hasNoCause()
                .satisfies(e -> {
                    Backends.Unavailable u = (Backends.Unavailable) e;
                    assertThat(u.backend()).isEqualTo(Backend.KUBERNETES);
                    assertThat(DataAnalystChatbot.unavailable(u)).isEqualTo("The kubernetes backend cannot start "
                            + "here: no Kubernetes cluster is configured: KUBECONFIG is not set and ~/.kube/config "
                            + "does not exist, and this is not a pod in a cluster (KUBERNETES_SERVICE_HOST is not "
                            + "set)\nFix: " + u.fix());
                    assertThat(u.fix()).contains("export KUBECONFIG=", "~/.kube/config", "kubectl get pods",
                            "--image NAME", "docs/kubernetes.md").doesNotContain("\n");
                });
        assertThat(printed()).doesNotContain("Exception", "\tat ");
    }

    @Test
    void should_name_the_valid_values_when_an_option_is_wrong() {
        assertThatThrownBy(() -> DataAnalystChatbot.Options.parse("--backend", "vm"))
                .hasMessage("unknown backend 'vm'; use one of sandbox|local|container|jupyter|e2b|kubernetes");
        assertThatThrownBy(() -> DataAnalystChatbot.Options.parse("--backend")).hasMessage("--backend needs a value");
        assertThatThrownBy(() -> DataAnalystChatbot.Options.parse("--bogus")).hasMessage("unknown option '--bogus'");
        assertThat(DataAnalystChatbot.Options.parse("--backend", "Jupyter", "--interactive").backend())
                .isEqualTo(Backend.JUPYTER);
        assertThat(DataAnalystChatbot.Options.parse("--backend", "kubernetes", "--image", "registry.example/py:1"))
                .satisfies(o -> {
                    assertThat(o.backend()).isEqualTo(Backend.KUBERNETES);
                    assertThat(o.image()).isEqualTo("registry.example/py:1");
                });
        assertThat(DataAnalystChatbot.Options.USAGE).contains("--backend sandbox|local|container|jupyter|e2b|"
                + "kubernetes", "the container and kubernetes backends' image", "for --backend kubernetes: KUBECONFIG");
    }

    private DataAnalystChatbot.Result runDemo(Backend backend) {
        try {
            return DataAnalystChatbot.run(DataAnalystChatbot.Options.parse("--backend", backend.flag(), "--output",
                    output.toString()), new ByteArrayInputStream(new byte[0]), out, OFFLINE);
        } catch (Backends.Unavailable e) {
            Requirements.require(false, "the " + backend.flag() + " backend: " + e.getMessage());
            throw new AssertionError("unreachable");
        }
    }

    private String printed() {
        return printed.toString(StandardCharsets.UTF_8);
    }
}
