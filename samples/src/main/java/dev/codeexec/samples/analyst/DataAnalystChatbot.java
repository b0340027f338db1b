package dev.codeexec.samples.analyst;

import dev.codeexec.CodeBlock;
import dev.codeexec.CodeExecutionResult;
import dev.codeexec.FileRef;
import dev.codeexec.artifact.FileSystemArtifactService;
import dev.codeexec.e2b.E2bEngine;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.Engine;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.WorkspaceIO;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A data-analyst chatbot: an {@link AiServices} assistant with the workspace tools and the response processor of
 * {@link CodeExecution}, on the backend of your choice.
 *
 * <p>Without {@code OPENAI_API_KEY} it runs offline: {@link ScriptedModel} serves a scripted conversation to the real
 * {@link OpenAiChatModel} from an embedded server on the loopback interface. The conversation stages a CSV into
 * {@code work/inputs/}, runs a Python analysis through {@code workspace_exec}, writes a chart and a Markdown summary to
 * {@code out/}, saves the summary as an artifact and ends with one lone fenced code block, which the response processor
 * runs. Then, on the backends that hold programs to an egress policy (sandbox, container), the network step
 * ({@link NetworkStep}): pip installs a package from the sample's own index, which the policy allows, and a request to
 * another host gets the proxy's refusal. With {@code OPENAI_API_KEY} (and optionally {@code OPENAI_BASE_URL} and
 * {@code OPENAI_MODEL}, for any OpenAI-compatible server) the same assistant talks to that model.
 *
 * <pre>
 * ./scripts/sample [--backend sandbox|local|container|jupyter|e2b|kubernetes] [--interactive] [--output DIR]
 *                  [--image IMAGE] [--template NAME]
 * </pre>
 *
 * Every step is printed; the outputs are copied to a folder of the run that stays after it.
 */
public final class DataAnalystChatbot {

    /** The conversation (and so the workspace) of this run. */
    static final String CONVERSATION = "analyst";

    static final String SYSTEM = "You are a careful data analyst. Work in your workspace with your tools: look at the "
            + "inputs, write a script, run it, check its results, and answer briefly with the numbers they gave. ";

    /** The AI service: an ordinary LangChain4j assistant. */
    interface Analyst {
        String chat(@MemoryId String conversation, @UserMessage String message);
    }

    /** Command-line options. */
    record Options(Backend backend, boolean interactive, Path output, String image, String template, boolean help) {

        /**
         * The usage text, also what {@code ./scripts/sample} prints for {@code --help} and reads its options from
         * (so it answers without a build): one file for both.
         */
        static final String USAGE = AnalystScript.resource("usage.txt").strip();

        /** Where each run's folder is made, relative to the repository root {@code ./scripts/sample} runs in. */
        static final Path DEFAULT_OUTPUT = Path.of("samples", "target", "data-analyst");

        static Options parse(String... args) {
            Backend backend = null;
            boolean interactive = false;
            boolean help = false;
            Path output = DEFAULT_OUTPUT;
            String image = Backends.DEFAULT_IMAGE;
            String template = null;
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--backend" -> backend = Backend.fromFlag(value(args, ++i, "--backend"));
                    case "--interactive" -> interactive = true;
                    case "--output" -> output = Path.of(value(args, ++i, "--output"));
                    case "--image" -> image = value(args, ++i, "--image");
                    case "--template" -> template = value(args, ++i, "--template");
                    case "--help", "-h" -> help = true;
                    default -> throw new IllegalArgumentException("unknown option '" + args[i] + "'");
                }
            }
            return new Options(backend, interactive, output, image, template, help);
        }

        private static String value(String[] args, int i, String option) {
            if (i >= args.length || args[i].startsWith("--")) {
                throw new IllegalArgumentException(option + " needs a value");
            }
            return args[i];
        }
    }

    /**
     * What a run did.
     *
     * @param runDir    the folder of this run's outputs (it stays after the run)
     * @param outputs   the files of the workspace's {@code out/}, copied into {@code runDir/out/}
     * @param artifacts the artifacts saved in this run, as the model saw them ({@code artifact://name@version})
     * @param steps     the tool calls of the analysis (or of the chat)
     * @param answer    the assistant's answer to the analysis (or its last answer in a chat)
     * @param network   the network step: what it did, or why it was skipped; null in a chat
     */
    record Result(Backend backend, Path runDir, List<Path> outputs, List<String> artifacts,
                  List<Transcript.Step> steps, String answer, NetworkStep.Outcome network) {
    }

    private DataAnalystChatbot() {
    }

    public static void main(String[] args) {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage() + "\n" + Options.USAGE);
            System.exit(2);
            return;
        }
        if (options.help()) {
            System.out.println(Options.USAGE);
            return;
        }
        try {
            run(options, System.in, System.out, System.getenv());
        } catch (Backends.Unavailable e) {
            System.out.println("\n" + unavailable(e));
            System.exit(3);
        }
    }

    /** What the user reads when the backend cannot start: why, and what to do; never a stack trace. */
    static String unavailable(Backends.Unavailable e) {
        return "The " + e.backend().flag() + " backend cannot start here: " + e.getMessage() + "\nFix: " + e.fix();
    }

    /**
     * Runs the chatbot: the scripted demo, or an interactive chat on {@code in}.
     *
     * @param env the environment to read {@code OPENAI_*} from
     * @throws Backends.Unavailable when the backend cannot start, or cannot prepare its first workspace
     */
    static Result run(Options options, InputStream in, PrintStream out, Map<String, String> env)
            throws Backends.Unavailable {
        try (PackageIndex index = PackageIndex.start()) {
            Backends.Egress egress = new Backends.Egress(index.policy(), index::proxy, "the sample's package index ("
                    + PackageIndex.HOST + ", on this host)");
            return run(options, in, out, env, (backend, artifacts) -> Backends.open(backend, artifacts,
                    options.image(), options.template(), env, egress), index);
        }
    }

    /** How a run opens its backend (tests open one the sandbox cannot start on). */
    interface BackendOpener {
        Backends.Opened open(Backend requested, FileSystemArtifactService artifacts) throws Backends.Unavailable;
    }

    static Result run(Options options, InputStream in, PrintStream out, Map<String, String> env,
                      BackendOpener opener) throws Backends.Unavailable {
        return run(options, in, out, env, opener, null);
    }

    /**
     * @param index the package index of the network step, whose policy {@code opener} gave the engine; null skips
     *              the step
     */
    static Result run(Options options, InputStream in, PrintStream out, Map<String, String> env,
                      BackendOpener opener, PackageIndex index) throws Backends.Unavailable {
        Path runDir = createRunDir(options.output());
        FileSystemArtifactService artifacts = FileSystemArtifactService.at(runDir.resolve("artifacts"));
        String apiKey = env.get("OPENAI_API_KEY");
        boolean offline = apiKey == null || apiKey.isBlank();
        out.println("== Data analyst chatbot: an AiServices assistant with code execution ==");
        try (ScriptedModel scripted = offline ? new ScriptedModel() : null) {
            ChatModel model;
            if (offline) {
                model = scripted.chatModel();
                out.println("Model:   offline, a scripted conversation served to the real OpenAiChatModel at "
                        + scripted.baseUrl() + " (no API key, no network; set OPENAI_API_KEY for a real model)");
            } else {
                String baseUrl = env.getOrDefault("OPENAI_BASE_URL", "https://api.openai.com/v1");
                String name = env.getOrDefault("OPENAI_MODEL", "gpt-4o-mini");
                model = OpenAiChatModel.builder().apiKey(apiKey).baseUrl(baseUrl).modelName(name)
                        .timeout(Duration.ofSeconds(120)).build();
                out.println("Model:   " + name + " at " + baseUrl + " (OPENAI_API_KEY is set)");
            }

            Backends.Opened opened;
            Progress opening = Progress.of(out, "opening the backend");
            try {
                opened = opener.open(options.backend(), artifacts);
            } finally {
                opening.close();
            }
            try (Engine engine = opened.engine();
                 CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
                out.println("Backend: " + opened.backend().flag() + ", isolation: " + opened.boundary());
                if (opened.warning() != null) {
                    out.println(opened.warning());
                }
                out.println("Outputs: " + runDir.toAbsolutePath());
                WorkspaceIO workspace = codeExec.workspace(CONVERSATION);
                prepare(opened.backend(), workspace, out);

                Transcript transcript = new Transcript(out);
                Analyst analyst = AiServices.builder(Analyst.class)
                        .chatModel(codeExec.wrap(model))
                        .toolProvider(codeExec.toolProvider())
                        .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(60))
                        .systemMessageProvider(id -> SYSTEM + codeExec.workspaceGuidance())
                        .beforeToolExecution(transcript::before)
                        .afterToolExecution(transcript::after)
                        .build();

                String answer = options.interactive() ? chat(analyst, in, out, offline)
                        : ask(analyst, AnalystScript.DEMO_REQUEST, out);
                List<Transcript.Step> steps = transcript.steps();
                NetworkStep.Outcome network = options.interactive() ? null
                        : NetworkStep.run(opened, index, message -> ask(analyst, message, out), transcript, out);
                List<Path> outputs = copyOutputs(workspace, runDir, out);
                List<String> saved = listArtifacts(artifacts, workspace.artifactPrefix(), out);
                out.println("\n" + nextStep(options, offline));
                return new Result(opened.backend(), runDir, outputs, saved, steps, answer, network);
            }
        }
    }

    /** What to try next: after the demo, a chat; after a chat, the demo (not the command that was just run). */
    static String nextStep(Options options, boolean offline) {
        String backend = options.backend() == null ? "" : " --backend " + options.backend().flag();
        if (options.interactive()) {
            return "Chat ended; the outputs it wrote are listed above and kept. To watch the scripted demo: "
                    + "./scripts/sample" + backend;
        }
        return "To chat with the analyst yourself: ./scripts/sample --interactive" + backend
                + (offline ? "   (offline, the scripted model understands a few commands: type help; "
                + "set OPENAI_API_KEY for a real model)" : "");
    }

    /** Stages the CSV; starts what the backend starts lazily (a container, a kernel) with progress. */
    private static void prepare(Backend backend, WorkspaceIO workspace, PrintStream out) throws Backends.Unavailable {
        String what = switch (backend) {
            case CONTAINER -> "starting the workspace's container";
            case JUPYTER -> "starting the workspace's Jupyter kernel";
            case E2B -> "creating the workspace's E2B sandbox";
            case KUBERNETES -> "starting the workspace's pod";
            default -> "creating the workspace";
        };
        out.println("\n" + Character.toUpperCase(what.charAt(0)) + what.substring(1) + ", staging "
                + AnalystScript.CSV_PATH + " ...");
        Progress progress = Progress.of(out, what);
        try {
            workspace.putFile(AnalystScript.CSV_PATH, AnalystScript.salesCsv());
            if (backend == Backend.JUPYTER) {
                CodeExecutionResult ready = workspace.executeCode(CodeBlock.of("python", "print('kernel ready')"),
                        Duration.ofSeconds(120));
                if (!ready.succeeded()) {
                    throw new Backends.Unavailable(backend, "the kernel did not run a first cell: "
                            + ready.output().strip(), Backends.fix(backend, new CodeExecException(ready.output())),
                            null);
                }
            }
        } catch (CodeExecException e) {
            throw new Backends.Unavailable(backend, e.getMessage(), Backends.fix(backend, e), e);
        } finally {
            progress.close();
        }
    }

    private static String ask(Analyst analyst, String message, PrintStream out) {
        out.println("\nYou: " + message);
        String answer = analyst.chat(CONVERSATION, message);
        out.println("\nAssistant: " + answer);
        return answer;
    }

    private static String chat(Analyst analyst, InputStream in, PrintStream out, boolean offline) {
        out.println("\nChat with the analyst (" + AnalystScript.CSV_PATH + " is staged). Empty line or 'exit' to "
                + "end." + (offline ? " Offline: type help." : ""));
        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        String answer = null;
        while (true) {
            out.print("you> ");
            out.flush();
            String line;
            try {
                line = reader.readLine();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            if (line == null || line.isBlank() || line.strip().equals("exit")) {
                return answer;
            }
            try {
                answer = analyst.chat(CONVERSATION, line.strip());
                out.println("assistant> " + answer);
            } catch (RuntimeException e) {
                // A failed model call (a bad key, a server down) ends this message, not the chat.
                out.println("(the model call failed: " + e.getMessage() + ")");
            }
        }
    }

    /** Copies the workspace's {@code out/} into the run folder, which outlives the workspace. */
    private static List<Path> copyOutputs(WorkspaceIO workspace, Path runDir, PrintStream out) {
        Path target = runDir.resolve("out").toAbsolutePath().normalize();
        List<Path> copied = new ArrayList<>();
        out.println("\nOutputs of this run (they stay after it): " + runDir.toAbsolutePath());
        for (FileRef f : workspace.collect("out/**")) {
            Path dest = runDir.resolve(f.name()).toAbsolutePath().normalize();
            if (!dest.startsWith(target)) {
                continue; // collect names workspace files under out/; never write anywhere else
            }
            try {
                Files.createDirectories(dest.getParent());
                Files.write(dest, f.content());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            copied.add(dest);
            out.printf("  %-32s %,d bytes%s%n", f.name(), f.sizeBytes(), f.truncated() ? " (cut: too large)" : "");
        }
        if (copied.isEmpty()) {
            out.println("  (out/ is empty)");
        }
        return copied;
    }

    /** The artifacts of this conversation in the run's store, by the names the model saw. */
    private static List<String> listArtifacts(FileSystemArtifactService store, String prefix, PrintStream out) {
        List<String> refs = new ArrayList<>();
        for (String name : store.names()) {
            if (!name.startsWith(prefix)) {
                continue;
            }
            for (int version : store.versions(name)) {
                String ref = "artifact://" + name.substring(prefix.length()) + "@" + version;
                refs.add(ref);
                // The store's documented layout: <root>/<name>/@versions/v<N>.bin holds the bytes.
                out.printf("  %-32s artifacts/%s/@versions/v%d.bin%n", ref, name, version);
            }
        }
        return refs;
    }

    private static Path createRunDir(Path output) {
        String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
        try {
            Files.createDirectories(output);
            Path dir = output.resolve(stamp);
            for (int i = 2; Files.exists(dir); i++) {
                dir = output.resolve(stamp + "-" + i);
            }
            return Files.createDirectories(dir.resolve("out")).getParent();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the output folder " + output.toAbsolutePath(), e);
        }
    }
}
