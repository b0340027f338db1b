package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import dev.codeexec.network.FakeInternet;
import dev.codeexec.testing.Requirements;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real clients behind the sandbox's egress proxy, configured by nothing but the run's environment: curl (HTTP, and
 * HTTPS through CONNECT), pip installing from a package index served under an allowed name, git cloning over HTTP, a
 * JVM's {@code HttpClient} through {@code JAVA_TOOL_OPTIONS}, and Python's TLS. Each refusal is paired with the
 * allowed request it differs from, in the same run. The "internet" is {@link FakeInternet} on this host's loopback.
 */
class SandboxEgressToolsIT {

    @TempDir
    static Path tmp;

    static FakeInternet internet;
    static SandboxEngine engine;
    static Workspace ws;

    @BeforeAll
    static void start() throws Exception {
        SandboxTesting.requireSandbox();
        Requirements.requireCommand("curl");
        Requirements.requireCommand("git");
        internet = new FakeInternet(tmp.resolve("internet"));
        publishPackage(internet.files());
        publishRepository(internet.files());
        engine = SandboxEngine.builder().rootDir(tmp.resolve("root"))
                .egress(EgressPolicy.builder().allow("allowed.test:*").allow("pypi.test:*")
                        .allow(FakeInternet.ADDRESS + ":*").build())
                .egressProxy(EgressProxy.builder().resolver(FakeInternet.resolver())).build();
        ws = engine.manager().createWorkspace("tools", WorkspacePolicy.DEFAULT);
    }

    @AfterAll
    static void stop() throws IOException {
        if (engine != null) {
            engine.close();
        }
        if (internet != null) {
            internet.close();
        }
    }

    private static RunResult sh(String script) {
        return engine.runner().runProgram(ws, RunProgramSpec.builder("sh").args("-c", script)
                .timeout(Duration.ofSeconds(240)).build());
    }

    /** Runs the commands in one sandbox, one after the other; what each printed (stdout and stderr), trimmed. */
    private static List<String> each(String... commands) {
        StringBuilder script = new StringBuilder();
        for (String c : commands) {
            script.append("echo '<<>>'; ").append(c).append(" 2>&1; ");
        }
        String out = sh(script.toString()).stdout();
        return java.util.Arrays.stream(out.split("<<>>\n", -1)).skip(1).map(String::strip).toList();
    }

    @Test
    void curl_reaches_an_allowed_name_over_http_and_https_and_shows_the_refusal_for_another() {
        String http = "allowed.test:" + internet.httpPort();
        String https = "allowed.test:" + internet.httpsPort();
        List<String> out = each("curl -sS http://" + http + "/a", "curl -sS -k https://" + https + "/b",
                "curl -sS http://other.test:" + internet.httpPort() + "/c",
                "curl -sS -k https://other.test:" + internet.httpsPort() + "/d");
        assertThat(out.get(0)).isEqualTo("hello " + http + " /a");
        assertThat(out.get(1)).isEqualTo("hello " + https + " /b");
        assertThat(out.get(2)).isEqualTo("egress to other.test:" + internet.httpPort()
                + " is not allowed by the policy; allowed: allowed.test:*, pypi.test:*, 127.0.0.2:*");
        assertThat(out.get(3)).contains("CONNECT tunnel failed, response 403");
    }

    @Test
    void curl_follows_a_redirect_to_an_allowed_host_and_not_to_a_denied_one() {
        String base = "http://allowed.test:" + internet.httpPort();
        List<String> out = each("curl -sS -L '" + base + "/redirect?" + base + "/landed'",
                "curl -sS -L '" + base + "/redirect?http://other.test:" + internet.httpPort() + "/stolen'");
        assertThat(out.get(0)).isEqualTo("hello allowed.test:" + internet.httpPort() + " /landed");
        assertThat(out.get(1)).startsWith("egress to other.test:" + internet.httpPort() + " is not allowed");
    }

    @Test
    void a_program_that_drops_the_proxy_settings_or_asks_for_an_ip_literal_gets_nowhere() {
        String url = "http://allowed.test:" + internet.httpPort() + "/x";
        List<String> out = each("curl -sS " + url,
                "env -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy curl -sS " + url,
                "curl -sS --noproxy '*' http://" + FakeInternet.ADDRESS + ":" + internet.httpPort() + "/",
                "curl -sS 'http://[fd00::1]:" + internet.httpPort() + "/'",
                "curl -sS 'http://[::ffff:169.254.169.254]/latest/meta-data/'");
        assertThat(out.get(0)).isEqualTo("hello allowed.test:" + internet.httpPort() + " /x");
        assertThat(out.get(1)).contains("Could not resolve host: allowed.test");
        assertThat(out.get(2)).contains("Couldn't connect");
        assertThat(out.get(3)).startsWith("egress to [fd00::1]:" + internet.httpPort() + " is not allowed");
        assertThat(out.get(4)).startsWith("egress to [::ffff:169.254.169.254]:80 is not allowed");
    }

    @Test
    void pip_installs_from_an_index_under_an_allowed_name_and_not_from_another() {
        // HTTPS through CONNECT, as from PyPI; --trusted-host accepts the stand-in's self-signed certificate.
        String index = ":" + internet.httpsPort() + "/files/simple/";
        String pip = "python3 -m pip install --retries 1 --no-cache-dir --disable-pip-version-check --no-deps ";
        List<String> out = each(pip + "-q --target work/lib --index-url https://pypi.test" + index
                        + " --trusted-host pypi.test tinypkg && PYTHONPATH=work/lib python3 -c "
                        + "'import tinypkg; print(\"value\", tinypkg.VALUE)'",
                pip + "--target work/lib2 --index-url https://other.test" + index + " --trusted-host other.test "
                        + "tinypkg");
        assertThat(out.get(0)).isEqualTo("value 42");
        assertThat(out.get(1)).contains("Tunnel connection failed: 403 egress to other.test:" + internet.httpsPort()
                + " is not allowed by the policy").contains("No matching distribution found for tinypkg");
    }

    @Test
    void git_clones_over_http_from_an_allowed_name_and_not_from_another() {
        String path = ":" + internet.httpPort() + "/files/repo.git";
        RunResult r = sh("export GIT_TERMINAL_PROMPT=0; git clone -q http://allowed.test" + path + " work/clone "
                + "&& cat work/clone/README; git clone -q http://other.test" + path + " work/clone2 2>&1");
        assertThat(r.stdout()).contains("from the repository").contains("403");
        assertThat(r.stdout().indexOf("from the repository")).isLessThan(r.stdout().indexOf("403"));
    }

    @Test
    void a_jvm_reaches_an_allowed_name_with_java_tool_options_only() {
        String probe = String.join("\n",
                "import java.net.URI;",
                "import java.net.http.*;",
                "public class Probe {",
                "  public static void main(String[] a) throws Exception {",
                "    HttpClient c = HttpClient.newHttpClient();",
                "    for (String u : a) {",
                "      HttpResponse<String> r = c.send(HttpRequest.newBuilder(URI.create(u)).build(),",
                "          HttpResponse.BodyHandlers.ofString());",
                "      System.out.println(r.statusCode() + \" \" + r.body().strip());",
                "    }",
                "  }",
                "}");
        engine.fs().putFiles(ws, List.of(PutFile.of("work/Probe.java", probe.getBytes(StandardCharsets.UTF_8))));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        RunResult r = sh(java + " -Xmx64m work/Probe.java http://allowed.test:" + internet.httpPort() + "/jvm "
                + "http://other.test:" + internet.httpPort() + "/jvm");
        assertThat(r.stdout()).contains("200 hello allowed.test:" + internet.httpPort() + " /jvm")
                .contains("403 egress to other.test:" + internet.httpPort() + " is not allowed");
        assertThat(r.stderr()).contains("Picked up JAVA_TOOL_OPTIONS");
    }

    @Test
    void a_tls_handshake_for_another_name_than_the_tunnel_is_cut_before_the_host_sees_it() {
        String code = String.join("\n",
                "import os, socket, ssl",
                "def fetch(name):",
                "    s = socket.create_connection(('127.0.0.1', 3128), timeout=60)",
                "    s.sendall(b'CONNECT allowed.test:" + internet.httpsPort() + " HTTP/1.1\\r\\n\\r\\n')",
                "    head = s.recv(4096)",
                "    ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE",
                "    try:",
                "        t = ctx.wrap_socket(s, server_hostname=name)",
                "        t.sendall(b'GET /sni HTTP/1.1\\r\\nHost: ' + name.encode() + b'\\r\\nConnection: close\\r\\n\\r\\n')",
                "        return t.recv(4096).split(b'\\r\\n')[0].decode()",
                "    except (OSError, ssl.SSLError) as e:",
                "        return 'refused ' + type(e).__name__",
                "print('same', fetch('allowed.test'))",
                "print('other', fetch('other.test'))");
        RunResult r = engine.runner().runProgram(ws, RunProgramSpec.builder("python3").args("-c", code)
                .timeout(Duration.ofSeconds(240)).build());
        assertThat(r.stdout()).contains("same HTTP/1.1 200 OK").contains("other refused");
    }

    /** A one-module wheel, {@code tinypkg 1.0}, and its project page in a simple index. */
    private static void publishPackage(Path files) throws IOException {
        String wheel = "tinypkg-1.0-py3-none-any.whl";
        try (OutputStream out = Files.newOutputStream(files.resolve(wheel)); ZipOutputStream zip =
                new ZipOutputStream(out)) {
            entry(zip, "tinypkg/__init__.py", "VALUE = 42\n");
            entry(zip, "tinypkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n");
            entry(zip, "tinypkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                    + "Tag: py3-none-any\n");
            entry(zip, "tinypkg-1.0.dist-info/RECORD", "tinypkg/__init__.py,,\ntinypkg-1.0.dist-info/METADATA,,\n"
                    + "tinypkg-1.0.dist-info/WHEEL,,\ntinypkg-1.0.dist-info/RECORD,,\n");
        }
        Path page = Files.createDirectories(files.resolve("simple/tinypkg"));
        Files.writeString(page.resolve("index.html"), "<html><body><a href=\"../../" + wheel + "\">" + wheel
                + "</a></body></html>\n");
    }

    private static void entry(ZipOutputStream zip, String name, String text) throws IOException {
        zip.putNextEntry(new ZipEntry(name));
        zip.write(text.getBytes(StandardCharsets.UTF_8));
        zip.closeEntry();
    }

    /** A bare repository with one commit, served by plain HTTP (git's dumb protocol). */
    private static void publishRepository(Path files) throws Exception {
        Path work = tmp.resolve("repo-work");
        Files.createDirectories(work);
        Files.writeString(work.resolve("README"), "from the repository\n");
        git(work, "init", "-q");
        git(work, "add", "README");
        git(work, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "one");
        git(files, "clone", "-q", "--bare", work.toString(), "repo.git");
        git(files.resolve("repo.git"), "update-server-info");
    }

    private static void git(Path dir, String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("git"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IllegalStateException("git " + String.join(" ", args) + " failed: " + out);
        }
    }

}
