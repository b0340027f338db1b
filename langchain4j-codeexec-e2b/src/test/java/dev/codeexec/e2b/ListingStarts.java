package dev.codeexec.e2b;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.extension.ResponseDefinitionTransformerV2;
import com.github.tomakehurst.wiremock.http.ResponseDefinition;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A WireMock transformer that answers a run's {@code Process/Start} as envd does when the run's PID 1 lists folders
 * after the program ({@link SandboxScripts#NS_INIT}): the start event, {@code ok} on stdout, then the listing of the
 * folders the request asks for (each an empty directory) with the request's own nonce, the end event (status 0) and
 * the end of the stream. A run that asks for no listing gets the same without one. Used by stubs with
 * {@code withTransformers(ListingStarts.NAME)}.
 */
final class ListingStarts implements ResponseDefinitionTransformerV2 {

    static final String NAME = "codeexec-listing-starts";

    @Override
    public ResponseDefinition transform(ServeEvent event) {
        byte[] body = event.getRequest().getBody();
        JsonNode req = Json.parse(Arrays.copyOfRange(body, 5, body.length), "request");
        List<String> args = new ArrayList<>();
        req.at("/process/args").forEach(a -> args.add(a.asText()));
        int at = args.indexOf(SandboxScripts.NS_INIT);
        String nonce = args.get(at + 5);
        StringBuilder out = new StringBuilder("ok\n");
        if (!nonce.equals("-")) {
            out.append("\u0000\u0001codeexec-listing ").append(nonce).append('\n');
            for (String folder : args.get(at + 8).split("\n")) {
                out.append("d\t4096\t1748772000.1234567890\t").append(folder).append('\u0000');
            }
            out.append("E0\u0000").append("\u0001end ").append(nonce).append(" 0\n");
        }
        return WireStubs.stream(Wire.concat(Wire.start(31), Wire.stdout(out.toString()), Wire.exit(0),
                Wire.end("{}"))).build();
    }

    /** Only for the stubs that name it. */
    @Override
    public boolean applyGlobally() {
        return false;
    }

    @Override
    public String getName() {
        return NAME;
    }
}
