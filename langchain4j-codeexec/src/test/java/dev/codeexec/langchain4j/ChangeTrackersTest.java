package dev.codeexec.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.RunResult;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.invocation.InvocationParameters;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a conversation holds for its change reports, and that it goes with the conversation: a workspace closed,
 * reaped or dropped with the runtime takes its change tracker along, and thousands of conversations leave the heap
 * where it was (heap after GC, generous margins, no timing).
 */
class ChangeTrackersTest {

    private static final byte[] CONTENT = "content".getBytes();

    private final FakeEngine engine = new FakeEngine();
    private CodeExecution codeExec = CodeExecution.builder().engine(engine).build();

    @AfterEach
    void close() {
        codeExec.close();
    }

    private static InvocationContext ctx(Object memoryId) {
        return InvocationContext.builder().invocationId(UUID.randomUUID()).chatMemoryId(memoryId)
                .invocationParameters(new InvocationParameters()).timestampNow().build();
    }

    private String exec(String conversation) {
        return codeExec.tools().workspaceExec("true", null, null, null, null, null, ctx(conversation));
    }

    /** A conversation whose workspace holds {@code files} files, listed cheaply: one list shared by all. */
    private void openWithFiles(String conversation, int files) {
        java.util.List<dev.codeexec.engine.FileInfo> listing = new java.util.ArrayList<>();
        for (int i = 0; i < files; i++) {
            listing.add(new dev.codeexec.engine.FileInfo("work/src/module" + (i % 50) + "/file" + i + ".js", 7,
                    false));
        }
        engine.sharedListings = Map.of("work", listing, "out", java.util.List.of());
        exec(conversation); // creates the tracker, which keeps the state of all those files
    }

    private ChangeTrackers changes() {
        return codeExec.runtime().changes();
    }

    @Test
    void should_keep_the_heap_bounded_when_thousands_of_conversations_come_and_go() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 50; i++) { // warm up: classes loaded, caches filled
            openWithFiles("warm-" + i, 2_500);
            codeExec.closeWorkspace("warm-" + i);
        }
        long baseline = usedAfterGc(memory);

        for (int i = 0; i < 2_000; i++) {
            openWithFiles("conv-" + i, 2_500);
            assertThat(exec("conv-" + i)).startsWith("exit_code: 0").doesNotContain("files changed");
            codeExec.closeWorkspace("conv-" + i);
        }

        assertThat(changes().size()).isZero();
        assertThat(changes().trackedEntries()).isZero();
        long growth = usedAfterGc(memory) - baseline;
        // Kept, 2,000 trackers of 2,500 entries would be hundreds of MiB; one conversation's is well under 1 MiB.
        assertThat(growth).as("heap growth after 2,000 conversations, bytes").isLessThan(32L << 20);
    }

    @Test
    void should_bound_what_open_conversations_hold_and_release_it_all_on_close() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long baseline = usedAfterGc(memory);
        for (int i = 0; i < 250; i++) {
            openWithFiles("open-" + i, 2_500);
        }

        // 250 x 2,500 entries is more than all trackers may hold together: the least recently used were closed.
        assertThat(changes().trackedEntries()).isPositive().isLessThanOrEqualTo(ChangeTrackers.MAX_ENTRIES_IN_ALL);
        assertThat(changes().size()).isLessThan(250);
        codeExec.close();

        assertThat(changes().size()).isZero();
        assertThat(engine.files).as("the workspaces are gone too").isEmpty();
        assertThat(usedAfterGc(memory) - baseline).isLessThan(32L << 20);
    }

    @Test
    void should_close_the_tracker_of_a_workspace_that_is_reaped_when_idle() throws InterruptedException {
        codeExec = CodeExecution.builder().engine(engine).workspaceIdleTtl(Duration.ofMillis(10)).build();
        openWithFiles("idle", 100);
        assertThat(changes().size()).isEqualTo(1);

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (changes().size() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }

        assertThat(changes().size()).as("trackers after the reaper ran").isZero();
        assertThat(engine.files).isEmpty();
        // The conversation goes on in a new workspace, with a new tracker.
        assertThat(exec("idle")).startsWith("exit_code: 0");
        assertThat(changes().size()).isEqualTo(1);
    }

    @Test
    void should_close_the_tracker_of_a_workspace_found_gone() {
        openWithFiles("gone", 10);
        engine.program = (ws, spec) -> {
            throw new dev.codeexec.engine.WorkspaceGoneException("the workspace no longer exists");
        };

        assertThat(exec("gone")).contains("error");
        assertThat(changes().size()).isZero();
    }

    @Test
    void should_say_nothing_was_checked_when_work_holds_more_entries_than_are_followed() {
        engine.program = (ws, spec) -> {
            Map<String, byte[]> m = engine.filesOf(ws);
            for (int i = 0; m.size() < 6_000; i++) {
                m.put("work/f" + i, CONTENT);
            }
            m.put("out/new" + m.size() + ".txt", CONTENT);
            return new RunResult("", "", 0, Duration.ZERO, false, false, false);
        };
        exec("big");

        String text = exec("big");
        dev.langchain4j.service.tool.ToolExecutionResult provided = codeExec.toolProvider().provideTools(null)
                .aiServiceTools().stream().filter(t -> t.name().equals("workspace_exec")).findFirst().orElseThrow()
                .toolExecutor().executeWithContext(dev.langchain4j.agent.tool.ToolExecutionRequest.builder().id("1")
                        .name("workspace_exec").arguments("{\"command\":\"true\"}").build(), ctx("big"));

        assertThat(provided.attributes()).containsEntry("files_changed", java.util.List.of())
                .containsEntry("files_changed_complete", false);
        assertThat(text).contains("--- files changed ---\nnot checked: work/ and out/ hold more than 5000 files and "
                + "folders").doesNotContain("+ out/new.txt");
    }

    private static long usedAfterGc(MemoryMXBean memory) {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
