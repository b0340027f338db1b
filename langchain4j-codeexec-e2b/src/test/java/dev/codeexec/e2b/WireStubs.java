package dev.codeexec.e2b;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.containing;
import static com.github.tomakehurst.wiremock.client.WireMock.delete;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.client.MappingBuilder;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import java.time.Duration;
import java.util.Map;

/**
 * One WireMock server as both E2B planes, answering as E2B does: the control plane's JSON, envd's Connect streams and
 * unary answers, its file routes, the sandbox proxy's "not found". Requests are matched by what identifies them (the
 * script of a helper, the path of a Stat), so a test stubs only what its scenario needs.
 */
final class WireStubs {

    static final String ID = "sbx1wire";
    static final String TOKEN = "envd-token-1";
    static final String ROOT = "/home/user/workspaces/ws1";

    static final String SANDBOX = "{\"templateID\":\"code-interpreter-v1\",\"sandboxID\":\"" + ID + "\","
            + "\"alias\":\"code-interpreter-v1\",\"clientID\":\"6532622b\",\"envdVersion\":\"0.2.4\","
            + "\"envdAccessToken\":\"" + TOKEN + "\",\"trafficAccessToken\":null,\"domain\":null}";

    private final WireMockServer server;

    WireStubs(WireMockServer server) {
        this.server = server;
    }

    String url() {
        return "http://localhost:" + server.port();
    }

    E2bEngine.Builder engine() {
        return E2bEngine.builder().e2bVariables(Map.of()).apiKey("e2b_wire_key").apiUrl(url()).sandboxUrl(url())
                .retries(2, Duration.ofMillis(1));
    }

    static ResponseDefinitionBuilder stream(byte[] body) {
        return aResponse().withStatus(200).withHeader("Content-Type", "application/connect+json").withBody(body);
    }

    static ResponseDefinitionBuilder json(int status, String body) {
        return aResponse().withStatus(status).withHeader("Content-Type", "application/json").withBody(body);
    }

    /** A Start whose request contains {@code marker} (a helper's script, an argument of a run). */
    static MappingBuilder start(String marker) {
        return post("/process.Process/Start").withRequestBody(containing(marker));
    }

    /** A sandbox, its setup helper and its kill. */
    void sandbox() {
        server.stubFor(post("/sandboxes").willReturn(json(201, SANDBOX)));
        server.stubFor(start("codeexec-root").willReturn(stream(Wire.helper(101,
                "codeexec-ids 1000 1000\ncodeexec-root " + ROOT + "\n", 0))));
        server.stubFor(delete("/sandboxes/" + ID).willReturn(aResponse().withStatus(204)));
        server.stubFor(get("/sandboxes/" + ID).willReturn(json(200, SANDBOX)));
        // Anything not stubbed as existing is not there.
        server.stubFor(post("/filesystem.Filesystem/Stat").atPriority(10).willReturn(json(404,
                "{\"code\":\"not_found\",\"message\":\"file not found: stat: no such file or directory\"}")));
    }

    /** Stat of {@code rel} under the workspace root answers a directory. */
    void dir(String rel) {
        entry(rel, "FILE_TYPE_DIRECTORY", 4096, 0755);
    }

    void file(String rel, long size) {
        entry(rel, "FILE_TYPE_FILE", size, 0644);
    }

    private void entry(String rel, String type, long size, int mode) {
        String path = rel.equals(".") ? ROOT : ROOT + "/" + rel;
        server.stubFor(post("/filesystem.Filesystem/Stat").withRequestBody(matchingJsonPath("$.path", equalTo(path)))
                .willReturn(json(200, "{\"entry\":" + entryJson(path, type, size, mode) + "}")));
    }

    static String entryJson(String path, String type, long size, int mode) {
        return "{\"name\":\"" + path.substring(path.lastIndexOf('/') + 1) + "\",\"type\":\"" + type + "\",\"path\":\""
                + path + "\",\"size\":\"" + size + "\",\"mode\":" + mode + ",\"permissions\":\"-rw-r--r--\","
                + "\"owner\":\"user\",\"group\":\"user\",\"modifiedTime\":\"2025-06-01T10:00:00.123456789Z\"}";
    }

    /** Uploads and the helper that moves them into place succeed. */
    void writes() {
        server.stubFor(post(urlPathEqualTo("/files")).willReturn(json(200,
                "[{\"path\":\"/x\",\"name\":\"x\",\"type\":\"file\"}]")));
        server.stubFor(start("codeexec-isdir").willReturn(stream(Wire.helper(102, "", 0))));
    }

    void signals() {
        server.stubFor(post("/process.Process/SendSignal").willReturn(json(200, "{}")));
    }
}
