package dev.codeexec.samples.analyst;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.local.LocalEngine;
import dev.codeexec.testing.Requirements;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

/** The scripted analyst's decisions on results a backend may give, and its awk fallback against its Python. */
class AnalystScriptTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private final AnalystScript script = new AnalystScript();

    @Test
    void should_redo_the_analysis_with_awk_and_check_with_bash_when_python_cannot_run_it() {
        Conversation c = new Conversation(AnalystScript.DEMO_REQUEST);
        c.answer(script.next(c.request()), "1 entry under work/inputs:\nwork/inputs/sales.csv (1061 bytes)");
        c.answer(script.next(c.request()), "created work/analyse.py (now 2932 bytes)");
        AnalystScript.Reply python = script.next(c.request());
        assertThat(python.args().path("command").asText()).isEqualTo("python3 work/analyse.py");
        c.answer(python, "exit_code: 127 | timed_out: false | truncated: false | duration: 0.01s\n--- stderr ---\n"
                + "bash: line 1: python3: command not found");

        AnalystScript.Reply writeSh = script.next(c.request());
        assertThat(writeSh.toolName()).isEqualTo("workspace_write_file");
        assertThat(writeSh.args().path("path").asText()).isEqualTo("work/analyse.sh");
        c.answer(writeSh, "created work/analyse.sh");
        AnalystScript.Reply runSh = script.next(c.request());
        assertThat(runSh.args().path("command").asText()).isEqualTo("sh work/analyse.sh");
        c.answer(runSh, "exit_code: 0 | timed_out: false | truncated: false | duration: 0.01s");
        AnalystScript.Reply read = script.next(c.request());
        assertThat(read.toolName()).isEqualTo("workspace_read_file");
        c.answer(read, "**east** brings in the most revenue: 1.00 of 2.00 (50%).\n\n![chart](revenue_by_region.svg)");
        AnalystScript.Reply save = script.next(c.request());
        assertThat(save.toolName()).isEqualTo("workspace_save_artifact");
        c.answer(save, "saved out/summary.md as artifact://sales-summary.md@3 (10 bytes, text/markdown).");

        AnalystScript.Reply block = script.next(c.request());
        assertThat(block.isToolCall()).isFalse();
        assertThat(block.text()).startsWith("```bash\n").endsWith("\n```");
        c.answer(block, "execute_code", "exit_code: 0 | timed_out: false | truncated: false | duration: 0.01s\n"
                + "--- output ---\nrevenue_by_region.svg 775 bytes\nsummary.md 319 bytes");
        assertThat(script.next(c.request()).text()).startsWith("**east** brings in the most revenue")
                .contains("The chart is out/revenue_by_region.svg").contains("artifact://sales-summary.md@3")
                .contains("The check found 2 files in out/.");
    }

    @Test
    void should_check_with_python_and_skip_the_fallback_when_python_works() {
        Conversation c = new Conversation("analyse");
        c.answer(script.next(c.request()), "1 entry");
        c.answer(script.next(c.request()), "created");
        c.answer(script.next(c.request()), "exit_code: 0 | timed_out: false | truncated: false | duration: 1s");

        assertThat(script.next(c.request()).args().path("path").asText()).isEqualTo(AnalystScript.SUMMARY);
    }

    @Test
    void should_write_the_same_summary_with_awk_as_with_python() {
        String python = Requirements.requireCommand("python3");
        Requirements.requireCommand("awk");
        try (LocalEngine engine = LocalEngine.create()) {
            Workspace ws = engine.manager().createWorkspace("awk-vs-python", WorkspacePolicy.DEFAULT);
            engine.fs().putFiles(ws, List.of(PutFile.of(AnalystScript.CSV_PATH, AnalystScript.salesCsv()),
                    PutFile.of("work/analyse.py", AnalystScript.ANALYSE_PY),
                    PutFile.of("work/analyse.sh", AnalystScript.ANALYSE_SH)));

            assertThat(run(engine, ws, python + " work/analyse.py").exitCode()).isZero();
            String fromPython = summary(engine, ws);
            assertThat(run(engine, ws, "sh work/analyse.sh").exitCode()).isZero();
            String fromAwk = summary(engine, ws);

            // The chart line names the chart each drew; everything else is the same text.
            assertThat(withoutChart(fromAwk)).isEqualTo(withoutChart(fromPython)).contains("| east | 191 | 645.00 |");
            assertThat(fromAwk).contains("![revenue by region](revenue_by_region.svg)");
        }
    }

    /**
     * Without matplotlib (python3 -S: no site packages) the chart is an SVG drawn with plain Python, and awk draws the
     * very same: a white background, a y axis with round ticks and their labels, an x axis with the regions.
     */
    @Test
    void should_draw_the_fallback_chart_with_a_background_and_axes_the_same_with_awk_as_with_python() throws Exception {
        String python = Requirements.requireCommand("python3");
        Requirements.requireCommand("awk");
        try (LocalEngine engine = LocalEngine.create()) {
            Workspace ws = engine.manager().createWorkspace("svg", WorkspacePolicy.DEFAULT);
            engine.fs().putFiles(ws, List.of(PutFile.of(AnalystScript.CSV_PATH, AnalystScript.salesCsv()),
                    PutFile.of("work/analyse.py", AnalystScript.ANALYSE_PY),
                    PutFile.of("work/analyse.sh", AnalystScript.ANALYSE_SH)));

            assertThat(run(engine, ws, python + " -S work/analyse.py").stdout())
                    .contains("chart: out/revenue_by_region.svg (matplotlib is not installed here");
            String fromPython = chart(engine, ws);
            assertThat(run(engine, ws, "sh work/analyse.sh").exitCode()).isZero();
            String fromAwk = chart(engine, ws);

            assertThat(fromAwk).isEqualTo(fromPython);
            Element svg = javax.xml.parsers.DocumentBuilderFactory.newInstance().newDocumentBuilder()
                    .parse(new java.io.ByteArrayInputStream(fromPython.getBytes(StandardCharsets.UTF_8)))
                    .getDocumentElement();
            Element background = (Element) svg.getElementsByTagName("rect").item(0);
            assertThat(background.getAttribute("width")).isEqualTo("100%");
            assertThat(background.getAttribute("fill")).isEqualTo("white");
            List<String> texts = new java.util.ArrayList<>();
            for (int i = 0; i < svg.getElementsByTagName("text").getLength(); i++) {
                texts.add(svg.getElementsByTagName("text").item(i).getTextContent());
            }
            // sales.csv's best region brings in 828.75: ticks every 200 up to 1000
            assertThat(texts).contains("revenue", "0", "200", "400", "600", "800", "1000", "south", "north", "east",
                    "west", "829");
            // the y axis (x = 70 from the title down to the baseline) and the x axis (along the baseline y = 250)
            assertThat(fromPython).contains("<line x1=\"70\" y1=\"40\" x2=\"70\" y2=\"250\" stroke=\"black\"/>",
                    "<line x1=\"70\" y1=\"250\" x2=\"540\" y2=\"250\" stroke=\"black\"/>");
        }
    }

    @Test
    void should_unpack_the_wheel_itself_when_pip_is_missing_and_answer_with_the_refusal() {
        String index = "http://pypi.local:8080/simple/";
        Conversation c = new Conversation(NetworkScript.request(index));
        AnalystScript.Reply pip = script.next(c.request());
        assertThat(pip.args().path("command").asText()).isEqualTo(NetworkScript.pip(index))
                .contains("--index-url http://pypi.local:8080/simple/", "--target work/lib");
        c.answer(pip, "exit_code: 1 | timed_out: false | truncated: false | duration: 0.1s\n--- stderr ---\n"
                + "/usr/bin/python3: No module named pip");

        AnalystScript.Reply write = script.next(c.request());
        assertThat(write.args().path("path").asText()).isEqualTo("work/fetch_wheel.py");
        c.answer(write, "created work/fetch_wheel.py");
        AnalystScript.Reply fetch = script.next(c.request());
        assertThat(fetch.args().path("command").asText())
                .isEqualTo("python3 work/fetch_wheel.py http://pypi.local:8080/simple/ tinystats work/lib");
        c.answer(fetch, "exit_code: 0 | timed_out: false | truncated: false | duration: 0.1s\n--- stdout ---\n"
                + "Successfully installed tinystats-0.1.0-py3-none-any.whl into work/lib (without pip)");
        c.answer(script.next(c.request()), "created work/use_tinystats.py");
        AnalystScript.Reply use = script.next(c.request());
        assertThat(use.args().path("command").asText()).isEqualTo("python3 work/use_tinystats.py");
        c.answer(use, "exit_code: 0 | timed_out: false | truncated: false | duration: 0.1s\n--- stdout ---\n"
                + "tinystats 0.1.0 from work/lib/tinystats/__init__.py\ncount: 36\nsum: 2683.75\nmean: 74.55\n"
                + "median: 75.0\nmin: -10.0\nmax: 180.0");
        c.answer(script.next(c.request()), "created work/reach.py");
        AnalystScript.Reply reach = script.next(c.request());
        assertThat(reach.args().path("command").asText()).isEqualTo("python3 work/reach.py");
        c.answer(reach, "exit_code: 0 | timed_out: false | truncated: false | duration: 0.1s\n--- stdout ---\n"
                + "http://example.org/ -> refused: 403 egress to example.org:80 is not allowed by the policy; "
                + "allowed: pypi.local:8080\n");

        assertThat(script.next(c.request()).text()).startsWith("Installed tinystats 0.1.0 from pypi.local")
                .contains("median 75.0, mean 74.55, from -10.0 to 180.0 over 36 sales")
                .contains("- http://example.org/ -> refused: 403 egress to example.org:80 is not allowed");
    }

    /** The wheel the index serves, installed by pip and by the script for hosts without pip, then used. */
    @Test
    void should_install_the_served_wheel_with_pip_and_without_it() {
        String python = Requirements.requireCommand("python3");
        try (PackageIndex index = PackageIndex.start(); LocalEngine engine = LocalEngine.create()) {
            String url = "http://127.0.0.1:" + index.port() + "/simple/";
            Workspace ws = engine.manager().createWorkspace("index", WorkspacePolicy.DEFAULT);
            engine.fs().putFiles(ws, List.of(PutFile.of(AnalystScript.CSV_PATH, AnalystScript.salesCsv()),
                    PutFile.of("work/fetch_wheel.py", NetworkScript.FETCH_PY),
                    PutFile.of("work/use_tinystats.py", NetworkScript.USE_PY)));

            RunResult fetched = run(engine, ws, python + " work/fetch_wheel.py " + url + " tinystats work/lib");
            assertThat(fetched.exitCode()).as(fetched.toString()).isZero();
            RunResult used = run(engine, ws, python + " work/use_tinystats.py");
            assertThat(used.exitCode()).as(used.toString()).isZero();
            assertThat(used.stdout()).contains("count: 36", "sum: 2683.75",
                    "median: 75.0");

            Requirements.require(run(engine, ws, python + " -m pip --version").exitCode() == 0,
                    "pip for " + python);
            RunResult pip = run(engine, ws, python + " -m pip install --disable-pip-version-check --no-cache-dir "
                    + "--target work/lib2 --index-url " + url + " tinystats");
            assertThat(pip.exitCode()).as(pip.toString()).isZero();
            assertThat(pip.stdout()).contains("Successfully installed "
                    + "tinystats-0.1.0");
        }
    }

    private static RunResult run(LocalEngine engine, Workspace ws, String line) {
        return engine.runner().runProgram(ws, RunProgramSpec.shell(line).cleanEnv(true)
                .timeout(Duration.ofSeconds(60)).build());
    }

    private static String summary(LocalEngine engine, Workspace ws) {
        return new String(engine.fs().readFile(ws, AnalystScript.SUMMARY, 0, 1 << 16).content(),
                StandardCharsets.UTF_8);
    }

    private static String chart(LocalEngine engine, Workspace ws) {
        return new String(engine.fs().readFile(ws, "out/revenue_by_region.svg", 0, 1 << 16).content(),
                StandardCharsets.UTF_8);
    }

    private static String withoutChart(String summary) {
        return summary.lines().filter(l -> !l.startsWith("![")).map(String::strip)
                .reduce("", (a, b) -> a + b + "\n").strip();
    }

    /** A chat-completions request as the OpenAI client builds it, grown by each answer and its tool result. */
    private static final class Conversation {
        private final ObjectNode request = JSON.createObjectNode();
        private final ArrayNode messages = request.putArray("messages");
        private int ids;

        Conversation(String user) {
            messages.addObject().put("role", "system").put("content", "You are a careful data analyst.");
            messages.addObject().put("role", "user").put("content", user);
        }

        ObjectNode request() {
            return request;
        }

        void answer(AnalystScript.Reply reply, String result) {
            answer(reply, reply.toolName(), result);
        }

        /** The tool call the model made (or the response processor made of its code block), and its result. */
        void answer(AnalystScript.Reply reply, String tool, String result) {
            String id = "call_" + ++ids;
            ObjectNode assistant = messages.addObject().put("role", "assistant");
            ObjectNode call = assistant.putArray("tool_calls").addObject().put("id", id).put("type", "function");
            call.putObject("function").put("name", tool)
                    .put("arguments", reply.args() == null ? "{}" : reply.args().toString());
            messages.addObject().put("role", "tool").put("tool_call_id", id).put("content", result);
        }
    }
}
