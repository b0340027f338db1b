package dev.codeexec.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.FileChange;
import dev.codeexec.engine.FileChangeTracker;
import dev.codeexec.engine.FileChanges;
import dev.codeexec.engine.FolderSnapshot;
import dev.codeexec.engine.ListedRun;
import dev.codeexec.engine.ListingProgramRunner;
import dev.codeexec.engine.ProgramRunner;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceFS;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.governance.ExecutionEvent;
import dev.codeexec.governance.ExecutionListener;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.invocation.InvocationParameters;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The change report of a run whose engine lists the folders at the end of the run itself
 * ({@link ListingProgramRunner}): the tracker compares that listing instead of looking, and looks when the run listed
 * nothing; the events are those of any run.
 */
class ChangeTrackersListingTest {

    /** A tracker that tells looks from comparisons with a listing: a listing's files read as created. */
    static final class RecordingTracker implements FileChangeTracker {
        final AtomicInteger looks = new AtomicInteger();
        final List<FolderSnapshot> compared = new CopyOnWriteArrayList<>();

        @Override
        public FileChanges changes() {
            looks.incrementAndGet();
            return new FileChanges(List.of(), true, 100);
        }

        @Override
        public FileChanges changes(FolderSnapshot s) {
            if (s == null) {
                return changes();
            }
            compared.add(s);
            List<FileChange> c = new ArrayList<>();
            s.entries().stream().filter(e -> e.kind() == FolderSnapshot.Kind.FILE)
                    .forEach(e -> c.add(new FileChange(e.path(), FileChange.Kind.CREATED, e.sizeBytes())));
            return new FileChanges(c, true, 100);
        }

        @Override
        public int trackedEntries() {
            return 1;
        }

        @Override
        public void close() {
        }
    }

    /** The fake engine with a listing runner and the recording tracker. */
    static final class ListingEngine implements Engine {
        final FakeEngine fake = new FakeEngine();
        final RecordingTracker tracker = new RecordingTracker();
        final List<List<String>> listedFolders = new CopyOnWriteArrayList<>();
        final AtomicInteger plainRuns = new AtomicInteger();
        volatile boolean listNothing;

        @Override
        public String name() {
            return "listing";
        }

        @Override
        public WorkspaceManager manager() {
            return fake.manager();
        }

        @Override
        public WorkspaceFS fs() {
            WorkspaceFS d = fake.fs();
            return (WorkspaceFS) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {WorkspaceFS.class},
                    (proxy, m, args) -> {
                        if (m.getName().equals("trackChanges")) {
                            return tracker;
                        }
                        try {
                            return m.invoke(d, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }

        @Override
        public ProgramRunner runner() {
            ProgramRunner plain = fake.runner();
            return new ListingProgramRunner() {
                @Override
                public RunResult runProgram(Workspace ws, RunProgramSpec spec) {
                    plainRuns.incrementAndGet();
                    return plain.runProgram(ws, spec);
                }

                @Override
                public ListedRun runProgramAndList(Workspace ws, RunProgramSpec spec, List<String> folders,
                                                   int maxEntries) {
                    listedFolders.add(folders);
                    RunResult r = plain.runProgram(ws, spec);
                    return new ListedRun(r, listNothing ? null : new FolderSnapshot(folders, List.of(
                            new FolderSnapshot.Entry("work", FolderSnapshot.Kind.DIRECTORY, 0, Instant.EPOCH),
                            new FolderSnapshot.Entry("work/made.txt", FolderSnapshot.Kind.FILE, 4, Instant.EPOCH)),
                            true));
                }
            };
        }

        @Override
        public Capabilities describe() {
            return fake.describe();
        }

        @Override
        public void close() {
        }
    }

    private final ListingEngine engine = new ListingEngine();
    private final List<ExecutionEvent> events = new CopyOnWriteArrayList<>();
    private CodeExecution codeExec = CodeExecution.builder().engine(engine).listener(new ExecutionListener() {
        @Override
        public void onEvent(ExecutionEvent e) {
            events.add(e);
        }
    }).build();

    @AfterEach
    void close() {
        codeExec.close();
    }

    private String exec(String command) {
        return codeExec.tools().workspaceExec(command, null, null, null, null, null,
                InvocationContext.builder().invocationId(UUID.randomUUID()).chatMemoryId("c")
                        .invocationParameters(new InvocationParameters()).timestampNow().build());
    }

    @Test
    void should_report_from_the_runs_own_listing_without_a_look_when_the_runner_lists() {
        exec("true"); // creates the tracker
        int looks = engine.tracker.looks.get();

        String out = exec("touch work/made.txt");

        assertThat(out).contains("+ work/made.txt (4 bytes)");
        assertThat(engine.tracker.looks.get()).as("no look around a steady-state run").isEqualTo(looks);
        assertThat(engine.listedFolders).allMatch(f -> f.equals(ChangedFiles.FOLDERS));
        assertThat(engine.plainRuns.get()).isZero();
        assertThat(events.stream().filter(e -> e instanceof ExecutionEvent.RunStarted)).hasSize(2);
        assertThat(events.stream().filter(e -> e instanceof ExecutionEvent.RunFinished)).hasSize(2);
    }

    @Test
    void should_look_when_the_run_listed_nothing() {
        exec("true");
        engine.listNothing = true;
        int looks = engine.tracker.looks.get();

        String out = exec("touch work/made.txt");

        assertThat(out).doesNotContain("made.txt");
        assertThat(engine.tracker.looks.get()).as("the look after the run").isEqualTo(looks + 1);
    }

    @Test
    void should_run_without_a_listing_when_changed_files_are_not_reported() {
        codeExec.close();
        codeExec = CodeExecution.builder().engine(engine).reportChangedFiles(false).build();

        exec("true");

        assertThat(engine.listedFolders).isEmpty();
        assertThat(engine.plainRuns.get()).isEqualTo(1);
    }
}
