package dev.codeexec.samples.analyst;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the offline model answers: a function from the conversation so far (the real request the OpenAI client sent,
 * with the real tool results) to the next assistant message. It plays a careful analyst: it looks at the inputs,
 * writes and runs a Python analysis, falls back to awk when Python cannot run it, reads its summary, saves it as an
 * artifact, checks the outputs with one lone fenced code block (which the response processor runs), and answers
 * from what the tools returned. The network step that follows is {@link NetworkScript}'s.
 *
 * <p>Other messages (in {@code --interactive} mode) understand a few commands: {@code analyse}, {@code run <command>},
 * {@code read <path>}, {@code files} (work/ and out/), {@code files <path>}, {@code py <python code>}; anything else
 * gets a help text.
 */
final class AnalystScript {

    static final String CSV_PATH = "work/inputs/sales.csv";
    static final String SUMMARY = "out/summary.md";
    static final String ARTIFACT_NAME = "sales-summary.md";

    /** The user message of the non-interactive demo. */
    static final String DEMO_REQUEST = "I put sales.csv into work/inputs/. Which region brings in the most revenue? "
            + "Chart revenue by region, write a short Markdown summary to out/ and save it as an artifact I can keep.";

    static final String HELP = "I am the offline scripted model: no real model behind me, so I understand only "
            + "these messages: `analyse` (the demo analysis), `run <command>` (workspace_exec), `read <path>` "
            + "(workspace_read_file), `files` (workspace_list_files of work/ and out/; `files <path>` for another "
            + "folder or a glob) and `py <python code>` (I answer with one "
            + "fenced code block, which the response processor runs). Set OPENAI_API_KEY (and OPENAI_BASE_URL, "
            + "OPENAI_MODEL for another OpenAI-compatible server) to chat with a real model.";

    /** What {@code files} lists, in order. */
    static final List<String> FILES_FOLDERS = List.of("work", "out");

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern EXIT_CODE = Pattern.compile("exit_code: (-?\\d+)");
    private static final Pattern ARTIFACT_REF = Pattern.compile("artifact://[^\\s)]+@\\d+");

    static final String ANALYSE_PY = resource("analyse.py");
    static final String ANALYSE_SH = resource("analyse.sh");

    /** One tool call of this turn with its real result (null while it has none). */
    record Call(String id, String name, JsonNode args, String result) {
        boolean is(String tool, String arg, String value) {
            return name.equals(tool) && value.equals(args.path(arg).asText());
        }

        boolean succeeded() {
            Matcher m = result == null ? null : EXIT_CODE.matcher(result);
            return m != null && m.find() && m.group(1).equals("0");
        }
    }

    /** What the model answers: a text, or one tool call. */
    record Reply(String text, String toolName, ObjectNode args) {
        static Reply text(String text) {
            return new Reply(text, null, null);
        }

        static Reply tool(String name, Object... kv) {
            ObjectNode args = JSON.createObjectNode();
            for (int i = 0; i < kv.length; i += 2) {
                args.put((String) kv[i], (String) kv[i + 1]);
            }
            return new Reply(null, name, args);
        }

        boolean isToolCall() {
            return toolName != null;
        }
    }

    /** The next assistant message for a chat-completions request body. */
    Reply next(JsonNode request) {
        JsonNode messages = request.path("messages");
        int lastUser = -1;
        for (int i = 0; i < messages.size(); i++) {
            if ("user".equals(messages.get(i).path("role").asText())) {
                lastUser = i;
            }
        }
        String user = lastUser < 0 ? "" : text(messages.get(lastUser)).strip();
        List<Call> calls = callsAfter(messages, lastUser);
        String command = user.toLowerCase(Locale.ROOT);
        if (user.equals(DEMO_REQUEST) || command.equals("analyse") || command.equals("analyze")) {
            return analysis(calls);
        }
        if (user.startsWith(NetworkScript.REQUEST_START)) {
            return NetworkScript.next(user, calls);
        }
        if (command.equals("files")) {
            return files(calls);
        }
        if (!calls.isEmpty()) {
            Call last = calls.get(calls.size() - 1);
            return Reply.text(last.name().equals("execute_code")
                    ? "I ran the block: " + exitCodeOf(last) + ". Its output is above."
                    : "Done: " + last.name() + " answered (above)" + (last.result() != null
                    && EXIT_CODE.matcher(last.result()).find() ? " with " + exitCodeOf(last) : "") + ".");
        }
        if (command.startsWith("run ")) {
            return Reply.tool("workspace_exec", "command", user.substring(4).strip());
        }
        if (command.startsWith("read ")) {
            return Reply.tool("workspace_read_file", "path", user.substring(5).strip());
        }
        if (command.startsWith("files ")) {
            return Reply.tool("workspace_list_files", "path", user.substring(6).strip());
        }
        if (command.startsWith("py ")) {
            return Reply.text("```python\n" + user.substring(3).strip() + "\n```");
        }
        return Reply.text(HELP);
    }

    /**
     * {@code files}: the folders that hold the user's files, {@code work/} (inputs, scripts) then {@code out/}
     * (results). Not the workspace root, where the caches that tools keep in the workspace's home and temporary
     * folders (matplotlib's {@code home/.cache/matplotlib}, {@code home/.config/matplotlib}) would crowd them out.
     */
    private static Reply files(List<Call> calls) {
        for (String folder : FILES_FOLDERS) {
            if (find(calls, c -> c.is("workspace_list_files", "path", folder)).isEmpty()) {
                return Reply.tool("workspace_list_files", "path", folder);
            }
        }
        return Reply.text("Above: work/ (the inputs in work/inputs/, and scripts) and out/ (results). The tools' "
                + "caches in home/ and tmp/ are left out; `files .` lists the whole workspace.");
    }

    /** The demo, one step per request, each decided by the real results of the steps before it. */
    private static Reply analysis(List<Call> calls) {
        if (find(calls, c -> c.is("workspace_list_files", "path", "work/inputs")).isEmpty()) {
            return Reply.tool("workspace_list_files", "path", "work/inputs");
        }
        if (find(calls, c -> c.is("workspace_write_file", "path", "work/analyse.py")).isEmpty()) {
            return Reply.tool("workspace_write_file", "path", "work/analyse.py", "content", ANALYSE_PY);
        }
        Optional<Call> python = find(calls, c -> c.is("workspace_exec", "command", "python3 work/analyse.py"));
        if (python.isEmpty()) {
            return Reply.tool("workspace_exec", "command", "python3 work/analyse.py");
        }
        boolean pythonWorks = python.get().succeeded();
        if (!pythonWorks) {
            // Python is missing or cannot run the script on this backend: the same analysis with awk.
            if (find(calls, c -> c.is("workspace_write_file", "path", "work/analyse.sh")).isEmpty()) {
                return Reply.tool("workspace_write_file", "path", "work/analyse.sh", "content", ANALYSE_SH);
            }
            if (find(calls, c -> c.is("workspace_exec", "command", "sh work/analyse.sh")).isEmpty()) {
                return Reply.tool("workspace_exec", "command", "sh work/analyse.sh");
            }
        }
        Optional<Call> summary = find(calls, c -> c.is("workspace_read_file", "path", SUMMARY));
        if (summary.isEmpty()) {
            return Reply.tool("workspace_read_file", "path", SUMMARY);
        }
        Optional<Call> saved = find(calls, c -> c.name().equals("workspace_save_artifact"));
        if (saved.isEmpty()) {
            return Reply.tool("workspace_save_artifact", "path", SUMMARY, "name", ARTIFACT_NAME);
        }
        Optional<Call> check = find(calls, c -> c.name().equals("execute_code"));
        if (check.isEmpty()) {
            // A final answer that is exactly one fenced block: the response processor runs it and hands the result
            // back, as if the model had called execute_code.
            return Reply.text(pythonWorks
                    ? "```python\nimport os\nout = os.environ.get('OUTPUT_DIR', '../out')\n"
                    + "for name in sorted(os.listdir(out)):\n"
                    + "    print(name, os.path.getsize(os.path.join(out, name)), 'bytes')\n```"
                    : "```bash\ncd \"${OUTPUT_DIR:-../out}\" && for f in *; do echo \"$f $(wc -c < \"$f\") bytes\"; "
                    + "done\n```");
        }
        return Reply.text(finalAnswer(summary.get(), saved.get(), check.get()));
    }

    private static String finalAnswer(Call summary, Call saved, Call check) {
        String best = summary.result().lines().filter(l -> l.contains("brings in the most revenue")).findFirst()
                .orElse("The summary is in out/summary.md.").strip();
        String chart = summary.result().lines().filter(l -> l.startsWith("![")).findFirst()
                .map(l -> "out/" + l.substring(l.indexOf('(') + 1, l.indexOf(')'))).orElse("out/");
        Matcher ref = ARTIFACT_REF.matcher(saved.result());
        String artifact = ref.find() ? "saved as " + ref.group() + ", so it outlives this workspace"
                : "not saved as an artifact (" + firstLine(saved.result()) + ")";
        long files = check.result().lines().filter(l -> l.endsWith(" bytes")).count();
        return best + "\n\nThe chart is " + chart + " and the summary " + SUMMARY + ", " + artifact + ". "
                + "The check found " + files + " files in out/.";
    }

    private static Optional<Call> find(List<Call> calls, java.util.function.Predicate<Call> p) {
        return calls.stream().filter(p).findFirst();
    }

    /** The tool calls after message {@code from} (the last user message), each with its result. */
    private static List<Call> callsAfter(JsonNode messages, int from) {
        List<Call> calls = new ArrayList<>();
        for (int i = from + 1; i < messages.size(); i++) {
            JsonNode m = messages.get(i);
            if ("assistant".equals(m.path("role").asText())) {
                for (JsonNode tc : m.path("tool_calls")) {
                    JsonNode args;
                    try {
                        args = JSON.readTree(tc.path("function").path("arguments").asText("{}"));
                    } catch (IOException e) {
                        args = JSON.createObjectNode();
                    }
                    calls.add(new Call(tc.path("id").asText(), tc.path("function").path("name").asText(), args,
                            null));
                }
            } else if ("tool".equals(m.path("role").asText())) {
                String id = m.path("tool_call_id").asText();
                for (int c = 0; c < calls.size(); c++) {
                    Call call = calls.get(c);
                    if (call.id().equals(id)) {
                        calls.set(c, new Call(call.id(), call.name(), call.args(), text(m)));
                    }
                }
            }
        }
        return calls;
    }

    /** A message's text: a string, or the text parts of a list. */
    private static String text(JsonNode message) {
        JsonNode c = message.path("content");
        if (c.isTextual()) {
            return c.asText();
        }
        StringBuilder sb = new StringBuilder();
        for (JsonNode part : c) {
            sb.append(part.path("text").asText(""));
        }
        return sb.toString();
    }

    private static String exitCodeOf(Call c) {
        Matcher m = c.result() == null ? null : EXIT_CODE.matcher(c.result());
        return m != null && m.find() ? "exit code " + m.group(1) : "no exit code";
    }

    private static String firstLine(String s) {
        return s == null ? "" : s.lines().findFirst().orElse("");
    }

    static String resource(String name) {
        try (InputStream in = AnalystScript.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The sales data the demo stages into {@link #CSV_PATH}. */
    static String salesCsv() {
        return resource("sales.csv");
    }
}
