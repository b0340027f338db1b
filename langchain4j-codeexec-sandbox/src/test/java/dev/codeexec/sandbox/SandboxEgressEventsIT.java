package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.artifact.InMemoryArtifactService;
import dev.codeexec.governance.AuditLogListener;
import dev.codeexec.governance.ExecutionEvent;
import dev.codeexec.governance.ExecutionListener;
import dev.codeexec.langchain4j.CodeExecution;
import dev.codeexec.langchain4j.ToolCalls;
import dev.codeexec.network.EgressEvent;
import dev.codeexec.network.EgressPolicy;
import dev.codeexec.network.EgressProxy;
import dev.codeexec.network.FakeInternet;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A model's command reaches one host and is refused another: the tools report both connections as events of the
 * conversation, and the audit line names host, port and outcome but no path or query.
 */
class SandboxEgressEventsIT {

    @TempDir
    Path tmp;

    @Test
    void connections_of_a_conversations_programs_are_its_events_without_request_contents() throws Exception {
        SandboxTesting.requireSandbox();
        BlockingQueue<ExecutionEvent.Connection> connections = new LinkedBlockingQueue<>();
        try (FakeInternet internet = new FakeInternet(tmp.resolve("internet"));
             SandboxEngine engine = SandboxEngine.builder().rootDir(tmp.resolve("root"))
                     .egress(EgressPolicy.allowing("allowed.test:*", FakeInternet.ADDRESS + ":*"))
                     .egressProxy(EgressProxy.builder().resolver(FakeInternet.resolver())).build();
             CodeExecution tools = CodeExecution.builder().engine(engine)
                     .artifactService(new InMemoryArtifactService())
                     .listener(new ExecutionListener() {
                         @Override
                         public void connection(ExecutionEvent.Connection event) {
                             connections.add(event);
                         }
                     }).build()) {
            String port = Integer.toString(internet.httpPort());
            String result = ToolCalls.call(tools, "c1", "workspace_exec", "{\"command\":\"curl -sS "
                    + "'http://allowed.test:" + port + "/secret/path?token=abc'; echo; curl -sS "
                    + "http://other.test:" + port + "/x\"}").resultText();
            assertThat(result).contains("hello allowed.test:" + port + " /secret/path?token=abc")
                    .contains("egress to other.test:" + port + " is not allowed by the policy");

            List<ExecutionEvent.Connection> seen = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                ExecutionEvent.Connection c = connections.poll(60, TimeUnit.SECONDS);
                assertThat(c).as("connection event %d", i).isNotNull();
                seen.add(c);
            }
            assertThat(seen).extracting(e -> e.connection().outcome())
                    .containsExactlyInAnyOrder(EgressEvent.Outcome.ALLOWED, EgressEvent.Outcome.DENIED);
            AuditLogListener audit = AuditLogListener.create();
            for (ExecutionEvent.Connection c : seen) {
                assertThat(c.conversationId()).isEqualTo("c1");
                assertThat(c.engine()).isEqualTo("sandbox");
                String line = audit.format(c);
                assertThat(line).startsWith("connection ").contains("conversation=c1").contains("port=" + port)
                        .doesNotContain("secret").doesNotContain("token");
            }
            assertThat(audit.format(seen.stream().filter(c -> !c.connection().outcome().connected()).findFirst()
                    .orElseThrow())).contains("host=other.test").contains("outcome=denied").contains("reason=");
        }
    }
}
