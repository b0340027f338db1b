package dev.codeexec.benchmarks.e2b;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.containing;
import static com.github.tomakehurst.wiremock.client.WireMock.delete;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.common.ConsoleNotifier;
import com.github.tomakehurst.wiremock.extension.ResponseDefinitionTransformerV2;
import com.github.tomakehurst.wiremock.http.ResponseDefinition;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import dev.codeexec.benchmarks.Stats;
import dev.codeexec.e2b.E2bEngine;
import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.langchain4j.CodeExecution;
import dev.langchain4j.invocation.InvocationContext;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * E2bEngine's client side against a raw HTTP baseline on the same WireMock server, which serves E2B's wire format
 * (Connect envelopes, envd's JSON, the control plane's), so the network and the sandbox are out of the picture and
 * what is left is the engine's own work and its extra requests:
 * <ol>
 *   <li>a run ({@code runProgram}: one {@code Process/Start} stream, its working directory checked by the run itself)
 *       against a JDK {@code HttpClient} POST of the same envelope and a read of its frames;</li>
 *   <li>a file upload ({@code putFiles} of one file: the upload and the helper that checks the target and moves it
 *       into place) against one raw multipart POST;</li>
 *   <li>a {@code workspace_exec} tool call in steady state (one Start whose stream also carries the listing of
 *       {@code work/} and {@code out/} for the changed files, answered with the run's own nonce) against the raw
 *       Start.</li>
 * </ol>
 * Each operation's HTTP requests are counted from WireMock's journal. Usage: {@code e2b.E2bEngineBenchmark
 * [iterations]}; samples alternate between the contenders so drift hits all of them.
 */
public final class E2bEngineBenchmark {

    private static final String ID = "sbxbench";
    private static final String ROOT = "/home/user/workspaces/ws1";

    private E2bEngineBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        WireMockServer server = new WireMockServer(wireMockConfig().dynamicPort().notifier(new ConsoleNotifier(false))
                .containerThreads(16).extensions(new RunStream()));
        server.start();
        try {
            stub(server);
            String url = "http://localhost:" + server.port();
            try (E2bEngine engine = E2bEngine.builder().e2bVariables(Map.of()).apiKey("e2b_bench").apiUrl(url)
                    .sandboxUrl(url).build();
                 CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
                Workspace ws = engine.manager().createWorkspace("bench", WorkspacePolicy.DEFAULT);
                HttpClient raw = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
                InvocationContext ctx = InvocationContext.builder().chatMemoryId("bench").build();
                RunProgramSpec spec = RunProgramSpec.builder("true").build();
                Runnable engineRun = () -> {
                    RunResult r = engine.runner().runProgram(ws, spec);
                    if (r.exitCode() != 0 || !r.stdout().equals("ok\n")) {
                        throw new IllegalStateException("engine run failed: " + r);
                    }
                };
                Runnable rawRun = () -> rawStart(raw, url);
                Runnable engineUpload = () -> engine.fs().putFiles(ws, List.of(PutFile.of("work/data.csv", "a,b\n")));
                Runnable rawUpload = () -> rawUpload(raw, url);
                Runnable exec = () -> {
                    String out = codeExec.tools().workspaceExec("true", null, null, null, null, null, ctx);
                    if (!out.startsWith("exit_code: 0")) {
                        throw new IllegalStateException("workspace_exec failed: " + out);
                    }
                };
                exec.run(); // the conversation's workspace exists from now on
                System.out.println("HTTP requests per operation (WireMock journal):");
                System.out.println("  runProgram (first):  " + count(server, engineRun));
                System.out.println("  runProgram:          " + count(server, engineRun));
                System.out.println("  runProgram cwd work: " + count(server, () -> engine.runner().runProgram(ws,
                        RunProgramSpec.builder("true").cwd("work").build())));
                System.out.println("  raw Start:           " + count(server, rawRun));
                System.out.println("  putFiles (1 file):   " + count(server, engineUpload));
                System.out.println("  raw upload:          " + count(server, rawUpload));
                System.out.println("  workspace_exec:      " + count(server, exec));
                compare("run: runProgram vs raw Start", engineRun, rawRun, iterations, server);
                compare("upload: putFiles vs raw POST /files", engineUpload, rawUpload, iterations, server);
                compare("workspace_exec vs raw Start", exec, rawRun, iterations, server);
            }
        } finally {
            server.stop();
        }
    }

    private static String count(WireMockServer server, Runnable op) {
        server.resetRequests();
        op.run();
        Map<String, Integer> m = new TreeMap<>();
        for (ServeEvent e : server.getAllServeEvents()) {
            m.merge(e.getRequest().getMethod() + " " + e.getRequest().getUrl().replaceAll("\\?.*", ""), 1,
                    Integer::sum);
        }
        return m.values().stream().mapToInt(Integer::intValue).sum() + " " + m;
    }

    private static void compare(String name, Runnable engine, Runnable raw, int iterations, WireMockServer server) {
        for (int i = 0; i < 50; i++) {
            engine.run();
            raw.run();
        }
        long[] e = new long[iterations];
        long[] r = new long[iterations];
        for (int i = 0; i < iterations; i++) {
            if (i % 100 == 0) {
                server.resetRequests(); // the journal is not what is measured
            }
            long t0 = System.nanoTime();
            engine.run();
            long t1 = System.nanoTime();
            raw.run();
            long t2 = System.nanoTime();
            e[i] = t1 - t0;
            r[i] = t2 - t1;
        }
        Stats se = new Stats(e);
        Stats sr = new Stats(r);
        System.out.printf("%s%n  engine %s%n  raw    %s%n  ratio of medians %.2f, p90 %.2f%n", name, se, sr,
                se.median() / sr.median(), se.percentile(90) / sr.percentile(90));
    }

    // ------------------------------------------------------------------ the raw baseline

    private static final byte[] START = envelope("{\"process\":{\"cmd\":\"true\",\"args\":[],\"cwd\":\"" + ROOT
            + "\"},\"stdin\":false}");

    private static void rawStart(HttpClient raw, String url) {
        HttpRequest req = HttpRequest.newBuilder(URI.create(url + "/process.Process/Start"))
                .header("Content-Type", "application/connect+json").header("Connect-Protocol-Version", "1")
                .header("E2b-Sandbox-Id", ID).header("E2b-Sandbox-Port", "49983").header("X-Access-Token", "tok")
                .header("X-Bench", "raw-run").POST(HttpRequest.BodyPublishers.ofByteArray(START)).build();
        try {
            HttpResponse<InputStream> r = raw.send(req, HttpResponse.BodyHandlers.ofInputStream());
            try (InputStream in = r.body()) {
                while (true) {
                    int flags = in.read();
                    if (flags < 0) {
                        throw new IllegalStateException("no end of stream");
                    }
                    int len = ByteBuffer.wrap(in.readNBytes(4)).getInt();
                    in.readNBytes(len);
                    if ((flags & 2) != 0) {
                        in.readAllBytes();
                        return;
                    }
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void rawUpload(HttpClient raw, String url) {
        String boundary = "benchboundary";
        byte[] body = ("--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + ROOT
                + "/work/data.csv\"\r\nContent-Type: application/octet-stream\r\n\r\na,b\n\r\n--" + boundary
                + "--\r\n").getBytes(StandardCharsets.UTF_8);
        HttpRequest req = HttpRequest.newBuilder(URI.create(url + "/files?username=user"))
                .header("Content-Type", "multipart/form-data; boundary=" + boundary).header("E2b-Sandbox-Id", ID)
                .header("E2b-Sandbox-Port", "49983").header("X-Access-Token", "tok")
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
        try {
            HttpResponse<byte[]> r = raw.send(req, HttpResponse.BodyHandlers.ofByteArray());
            if (r.statusCode() != 200) {
                throw new IllegalStateException("raw upload answered " + r.statusCode());
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    // ------------------------------------------------------------------ E2B's wire format on WireMock

    private static byte[] envelope(int flags, String json) {
        byte[] p = json.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(5 + p.length).put((byte) flags).putInt(p.length).put(p).array();
    }

    private static byte[] envelope(String json) {
        return envelope(0, json);
    }

    private static byte[] stream(long pid, String stdout, Supplier<String> end) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(envelope("{\"event\":{\"start\":{\"pid\":" + pid + "}}}"));
        if (!stdout.isEmpty()) {
            out.writeBytes(envelope("{\"event\":{\"data\":{\"stdout\":\"" + Base64.getEncoder().encodeToString(
                    stdout.getBytes(StandardCharsets.UTF_8)) + "\"}}}"));
        }
        out.writeBytes(envelope(end.get()));
        out.writeBytes(envelope(2, "{}"));
        return out.toByteArray();
    }

    private static String entry(String rel, String type) {
        String path = ROOT + "/" + rel;
        return "{\"name\":\"" + rel.substring(rel.lastIndexOf('/') + 1) + "\",\"type\":\"" + type + "\",\"path\":\""
                + path + "\",\"size\":\"4096\",\"mode\":493,\"permissions\":\"drwxr-xr-x\",\"owner\":\"user\","
                + "\"group\":\"user\",\"modifiedTime\":\"2025-06-01T10:00:00Z\"}";
    }

    private static void stub(WireMockServer s) {
        String sandbox = "{\"templateID\":\"code-interpreter-v1\",\"sandboxID\":\"" + ID + "\",\"clientID\":\"x\","
                + "\"envdVersion\":\"0.2.4\",\"envdAccessToken\":\"tok\",\"domain\":null}";
        String ok = "{\"event\":{\"end\":{\"exited\":true,\"status\":\"exit status 0\"}}}";
        s.stubFor(post("/sandboxes").willReturn(aResponse().withStatus(201).withBody(sandbox)));
        s.stubFor(delete("/sandboxes/" + ID).willReturn(aResponse().withStatus(204)));
        s.stubFor(post("/process.Process/Start").withRequestBody(containing("codeexec-root"))
                .willReturn(connect(stream(1, "codeexec-ids 1000 1000\ncodeexec-root " + ROOT + "\n", () -> ok))));
        s.stubFor(post("/process.Process/Start").withRequestBody(containing("codeexec-isdir"))
                .willReturn(connect(stream(2, "", () -> ok))));
        s.stubFor(post("/process.Process/Start").atPriority(10)
                .willReturn(connect(stream(3, "ok\n", () -> ok))));
        s.stubFor(post("/filesystem.Filesystem/Stat").atPriority(10).willReturn(aResponse().withStatus(404)
                .withBody("{\"code\":\"not_found\",\"message\":\"file not found\"}")));
        for (String dir : List.of("work", "out")) {
            s.stubFor(post("/filesystem.Filesystem/Stat").withRequestBody(matchingJsonPath("$.path",
                    equalTo(ROOT + "/" + dir))).willReturn(aResponse().withStatus(200)
                    .withBody("{\"entry\":" + entry(dir, "FILE_TYPE_DIRECTORY") + "}")));
        }
        s.stubFor(post("/filesystem.Filesystem/ListDir").willReturn(aResponse().withStatus(200)
                .withBody("{\"entries\":[" + entry("work/inputs", "FILE_TYPE_DIRECTORY") + "]}")));
        s.stubFor(post(urlPathEqualTo("/files")).willReturn(aResponse().withStatus(200)
                .withBody("[{\"path\":\"" + ROOT + "/work/data.csv\",\"name\":\"data.csv\",\"type\":\"file\"}]")));
    }

    /**
     * Answers a run's {@code Start} (its wrapper holds the listing function) as envd does when the run's PID 1 lists
     * folders after the program: {@code ok}, then, when the request asks for it (a nonce among the wrapper's
     * arguments), each folder as an empty directory with that nonce. Other requests keep their stubbed answers.
     */
    private static final class RunStream implements ResponseDefinitionTransformerV2 {

        @Override
        public ResponseDefinition transform(ServeEvent event) {
            byte[] raw = event.getRequest().getBody();
            String body = new String(raw, StandardCharsets.UTF_8);
            if (!event.getRequest().getUrl().equals("/process.Process/Start") || !body.contains("codeexec-listing")) {
                return event.getResponseDefinition();
            }
            java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                    "\"([0-9a-f]{32})\",\"(\\d+)\",\"(\\d+)\",\"([^\"]*)\"").matcher(body);
            StringBuilder out = new StringBuilder("ok\n");
            if (m.find()) {
                out.append("\u0000\u0001codeexec-listing ").append(m.group(1)).append('\n');
                for (String folder : m.group(4).split("\\\\n")) {
                    out.append("d\t4096\t1748772000.0000000000\t").append(folder).append('\u0000');
                }
                out.append("E0\u0000\u0001end ").append(m.group(1)).append(" 0\n");
            }
            String ok = "{\"event\":{\"end\":{\"exited\":true,\"status\":\"exit status 0\"}}}";
            return connect(stream(3, out.toString(), () -> ok)).build();
        }

        @Override
        public String getName() {
            return "bench-run-stream";
        }
    }

    private static com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder connect(byte[] body) {
        return aResponse().withStatus(200).withHeader("Content-Type", "application/connect+json").withBody(body);
    }
}
