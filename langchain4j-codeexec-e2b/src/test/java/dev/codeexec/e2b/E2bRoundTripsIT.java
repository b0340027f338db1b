package dev.codeexec.e2b;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.PutFile;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.langchain4j.CodeExecution;
import dev.langchain4j.invocation.InvocationContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * How many HTTP requests each operation costs, counted by the fake E2B's server, and connection reuse: one TCP
 * connection carries every request of a sandbox when they come one after another. The counts are printed for
 * docs/e2b.md.
 */
class E2bRoundTripsIT {

    @RegisterExtension
    static final FakeE2bExtension FAKE = FakeE2bExtension.host("e2b-trips");

    /** The requests of {@code sandbox} since the last clear, by method and path. */
    private static Map<String, Integer> trips(String sandbox) {
        Map<String, Integer> m = new TreeMap<>();
        for (FakeE2b.Request r : FAKE.fake().requests()) {
            if (sandbox.equals(r.sandboxId())) {
                m.merge(r.method() + " " + r.path(), 1, Integer::sum);
            }
        }
        return m;
    }

    private static int total(Map<String, Integer> m) {
        return m.values().stream().mapToInt(Integer::intValue).sum();
    }

    @Test
    void should_use_one_streaming_request_per_run_and_one_upload_per_batch() {
        try (E2bEngine engine = FAKE.engine().build()) {
            Workspace ws = engine.manager().createWorkspace("trips", WorkspacePolicy.DEFAULT);
            String id = engine.sandboxId(ws);
            engine.fs().putFiles(ws, List.of(PutFile.of("work/warm.txt", "x"))); // the directories exist now
            // A workspace's first run also looks at its run history (a ListDir and a Stat), as every tenth one does.
            engine.runner().runProgram(ws, RunProgramSpec.builder("true").build());

            FAKE.fake().clearRequests();
            engine.runner().runProgram(ws, RunProgramSpec.builder("true").build());
            Map<String, Integer> run = trips(id);

            FAKE.fake().clearRequests();
            engine.runner().runProgram(ws, RunProgramSpec.builder("true").cwd("work").build());
            Map<String, Integer> runInWork = trips(id);

            FAKE.fake().clearRequests();
            engine.fs().putFiles(ws, List.of(PutFile.of("work/one.txt", "1")));
            Map<String, Integer> one = trips(id);

            List<PutFile> batch = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                batch.add(PutFile.of("work/batch/f" + i + ".txt", "content " + i));
            }
            FAKE.fake().clearRequests();
            engine.fs().putFiles(ws, batch);
            Map<String, Integer> ten = trips(id);

            FAKE.fake().clearRequests();
            engine.fs().readFile(ws, "work/one.txt", 0, 100);
            Map<String, Integer> read = trips(id);

            System.out.println("round trips: runProgram (cwd .) " + total(run) + " " + run);
            System.out.println("round trips: runProgram (cwd work) " + total(runInWork) + " " + runInWork);
            System.out.println("round trips: putFiles 1 file " + total(one) + " " + one);
            System.out.println("round trips: putFiles 10 files " + total(ten) + " " + ten);
            System.out.println("round trips: readFile " + total(read) + " " + read);
            assertThat(run).containsExactly(Map.entry("POST /process.Process/Start", 1));
            // The working directory is checked and entered by the run itself.
            assertThat(runInWork).containsExactly(Map.entry("POST /process.Process/Start", 1));
            // The upload and the helper that checks the targets, creates parents and moves the files into place.
            assertThat(one).containsOnly(Map.entry("POST /files", 1), Map.entry("POST /process.Process/Start", 1));
            assertThat(ten).containsOnly(Map.entry("POST /files", 1), Map.entry("POST /process.Process/Start", 1));
            assertThat(total(ten)).as("a batch costs no request per file").isLessThanOrEqualTo(total(one) + 3);
            // The read: the core's Stat of the file's type, then one stream that checks and reads in the sandbox.
            assertThat(read).containsEntry("POST /process.Process/Start", 1).doesNotContainKey("GET /files");
            assertThat(total(read)).isLessThanOrEqualTo(3);
        }
    }

    @Test
    void should_count_the_requests_of_a_workspace_exec_tool_call() {
        try (E2bEngine engine = FAKE.engine().build();
             CodeExecution codeExec = CodeExecution.builder().engine(engine).build()) {
            InvocationContext ctx = InvocationContext.builder().chatMemoryId("exec").build();
            codeExec.tools().workspaceExec("echo warm > out/a.txt", null, null, null, null, null, ctx);
            String id = FAKE.fake().created().get(FAKE.fake().created().size() - 1);

            FAKE.fake().clearRequests();
            String result = codeExec.tools().workspaceExec("echo hi > out/b.txt", null, null, null, null, null, ctx);
            Map<String, Integer> exec = trips(id);

            System.out.println("round trips: workspace_exec " + total(exec) + " " + exec);
            assertThat(result).startsWith("exit_code: 0").contains("out/b.txt");
            // The change report comes from the run's own listing: no ListDir, no Stat.
            assertThat(exec).containsExactly(Map.entry("POST /process.Process/Start", 1));
        }
    }

    @Test
    void should_carry_every_request_of_a_sandbox_on_one_tcp_connection_when_they_come_in_turn() {
        try (E2bEngine engine = FAKE.engine().build()) {
            FAKE.fake().clearRequests();
            Workspace ws = engine.manager().createWorkspace("reuse", WorkspacePolicy.DEFAULT);
            String id = engine.sandboxId(ws);
            for (int i = 0; i < 10; i++) {
                engine.fs().putFiles(ws, List.of(PutFile.of("work/r" + i + ".txt", "run " + i)));
                engine.runner().runProgram(ws, RunProgramSpec.builder("cat").args("work/r" + i + ".txt").build());
                engine.fs().readFile(ws, "work/r" + i + ".txt", 0, 10);
            }

            long requests = FAKE.fake().requests().stream().filter(r -> id.equals(r.sandboxId())).count();
            System.out.println("connections: " + FAKE.fake().connections(id).size() + " for " + requests + " requests");
            assertThat(requests).isGreaterThan(40);
            assertThat(FAKE.fake().connections(id)).hasSize(1);
        }
    }
}
