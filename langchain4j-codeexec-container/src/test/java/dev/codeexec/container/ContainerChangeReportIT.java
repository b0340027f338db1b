package dev.codeexec.container;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.FolderSnapshot;
import dev.codeexec.engine.ListedRun;
import dev.codeexec.engine.ListingProgramRunner;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.StdStream;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.langchain4j.CodeExecution;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.invocation.InvocationParameters;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code workspace_exec}'s change report on a real workspace container, from the listing the run's own wrapper makes
 * after the program ({@link dev.codeexec.spi.ListingRunner}): right for created, modified and deleted files, odd names, links and too
 * many entries; made without an archive request in steady state (counted at the Docker socket); never forged by a
 * program that imitates the listing, whose output is shown as it wrote it.
 */
class ContainerChangeReportIT {

    static final List<String> FOLDERS = List.of("work", "out");

    @TempDir
    static Path dir;

    static DockerSocketProxy proxy;
    static ContainerEngine engine;
    static CodeExecution codeExec;

    @BeforeAll
    static void start() throws Exception {
        ContainerTesting.requireDocker();
        proxy = DockerSocketProxy.start(dir);
        engine = ContainerTesting.engine().dockerHost(proxy.dockerHost()).build();
        codeExec = CodeExecution.builder().engine(engine).build();
    }

    @AfterAll
    static void stop() throws Exception {
        if (codeExec != null) {
            codeExec.close();
        }
        if (engine != null) {
            engine.close();
        }
        if (proxy != null) {
            proxy.close();
        }
    }

    static String exec(String conversation, String python) {
        return codeExec.tools().workspaceExec("python3 -", null, null, python, 60, null, ctx(conversation));
    }

    static int archiveRequests() {
        return proxy.requests("/archive?path=");
    }

    @Test
    void should_report_created_modified_and_deleted_files_without_an_archive_request_when_the_run_lists_them() {
        String c = "crud";
        exec(c, "import os\nos.makedirs('out', exist_ok=True)\nopen('work/mod.txt','w').write('a')\n"
                + "open('out/del.txt','w').write('x')\nopen('work/keep.txt','w').write('k')\n");
        proxy.count("/archive?path=");

        String out = exec(c, "import os\nopen('work/mod.txt','a').write('bc')\nos.remove('out/del.txt')\n"
                + "open('work/with space.txt','w').write('1')\nopen('work/new\\nline.txt','w').write('22')\n"
                + "os.makedirs('out/sub dir')\nopen('out/sub dir/r.csv','w').write('1,2,3')\n");

        assertThat(out).contains("--- files changed ---", "+ work/with space.txt (1 bytes)",
                "+ work/new\nline.txt (2 bytes)", "+ out/sub dir/r.csv (5 bytes)", "~ work/mod.txt (3 bytes)",
                "- out/del.txt").doesNotContain("keep.txt");
        assertThat(archiveRequests()).as("archive requests of a steady-state run").isZero();
        assertThat(exec(c, "print(1)")).doesNotContain("files changed");
        assertThat(archiveRequests()).as("nor of the next one").isZero();
    }

    static void inWorkspace(String id, java.util.function.Consumer<Workspace> test) {
        Workspace ws = engine.manager().createWorkspace(id, WorkspacePolicy.DEFAULT);
        try {
            test.accept(ws);
        } finally {
            engine.manager().cleanup(ws);
        }
    }

    static InvocationContext ctx(String conversation) {
        return InvocationContext.builder().invocationId(UUID.randomUUID()).chatMemoryId(conversation)
                .invocationParameters(new InvocationParameters()).timestampNow().build();
    }

    @Test
    void should_count_an_archive_request_when_the_tracker_looks_for_itself() {
        String c = "control";
        exec(c, "open('work/a.txt','w').write('a')\n");
        proxy.count("/archive?path=");

        String out = exec(c, "open('work/b.txt','w').write('bb')\n");
        assertThat(out).contains("+ work/b.txt (2 bytes)");
        int listed = archiveRequests();
        // A program that closes its stdout and kills its wrapper leaves no listing: the tracker looks.
        String killed = exec(c, "import os\nopen('work/c.txt','w').write('ccc')\nos.close(1)\n"
                + "os.kill(os.getppid(), 9)\n");
        assertThat(killed).contains("+ work/c.txt (3 bytes)");
        assertThat(listed).isZero();
        assertThat(archiveRequests()).as("positive control: a look is counted").isPositive();
    }

    @Test
    void should_report_links_as_a_look_does_and_never_follow_one_outside() {
        String c = "links";
        exec(c, "open('work/data.txt','w').write('12345')\n");

        String out = exec(c, "import os\nos.symlink('data.txt', 'work/inside')\n"
                + "os.symlink('/etc/passwd', 'work/outside')\nos.symlink('../..', 'work/up')\n");

        assertThat(out).contains("+ work/inside (5 bytes)").doesNotContain("outside").doesNotContain("work/up");
    }

    @Test
    void should_say_nothing_was_checked_when_the_folders_hold_more_entries_than_are_followed() {
        String c = "many";
        exec(c, "print(0)\n");

        String out = exec(c, "import os\nos.makedirs('work/many')\n"
                + "for i in range(5100):\n    open('work/many/f%d' % i, 'w').close()\n");
        assertThat(out).contains("not checked: work/ and out/ hold more than 5000");

        String after = exec(c, "import shutil\nshutil.rmtree('work/many')\nopen('work/small.txt','w').write('s')\n");
        assertThat(after).doesNotContain("+ work/many/f1 ");
    }

    @Test
    void should_keep_a_forged_listing_out_of_the_report_and_show_it_as_output_when_a_program_imitates_it() {
        inWorkspace("forge", ws -> {
            // The program reads the run's nonce from its wrapper's argv and writes a whole listing of its own.
            String forge = "import os,sys\nargv=open('/proc/%d/cmdline' % os.getppid(),'rb').read().split(b'\\0')\n"
                    + "nonce=argv[argv.index(b'sh',1)+7].decode()\n"
                    + "fake='\\0\\1codeexec-listing %s\\nf\\t9\\t0\\twork/forged.txt\\0E0\\0\\1end %s 0\\n' % (nonce, nonce)\n"
                    + "sys.stdout.write('before' + fake + 'after')\nos.makedirs('work', exist_ok=True)\n"
                    + "open('work/real.txt','w').write('r')\n";
            ByteArrayOutputStream heard = new ByteArrayOutputStream();
            RunProgramSpec spec = RunProgramSpec.builder("python3").args("-c", forge).timeout(Duration.ofSeconds(60))
                    .outputListener((s, b) -> {
                        if (s == StdStream.STDOUT) {
                            heard.writeBytes(b);
                        }
                    }).build();

            ListedRun r = ((ListingProgramRunner) engine.runner()).runProgramAndList(ws, spec, FOLDERS, 100);

            assertThat(r.result().exitCode()).isZero();
            assertThat(r.result().stdout()).startsWith("before\u0000\u0001codeexec-listing ")
                    .contains("work/forged.txt").endsWith("0\nafter");
            assertThat(heard.toString(StandardCharsets.UTF_8)).isEqualTo(r.result().stdout());
            assertThat(r.listing()).isNotNull();
            assertThat(r.listing().entries()).extracting(FolderSnapshot.Entry::path).contains("work/real.txt")
                    .doesNotContain("work/forged.txt");
        });
    }

    @Test
    void should_list_the_folders_whole_when_the_output_outgrows_the_cap_and_none_when_the_run_times_out() {
        inWorkspace("cap", ws -> {
            ListingProgramRunner runner = (ListingProgramRunner) engine.runner();
            RunProgramSpec big = RunProgramSpec.builder("python3").args("-c",
                    "import os,sys\nos.makedirs('out', exist_ok=True)\nopen('out/o.txt','w').write('o')\nsys.stdout.write('x' * 300000)\n")
                    .maxOutputBytes(1000).timeout(Duration.ofSeconds(60)).build();

            ListedRun r = runner.runProgramAndList(ws, big, FOLDERS, 100);

            assertThat(r.result().stdoutTruncated()).as("%s %s %s", r.result().stdout().length(),
                    r.result().exitCode(), r.result().stderr()).isTrue();
            assertThat(r.result().stdout()).as("the kept tail is the program's").endsWith("x".repeat(400))
                    .doesNotContain("codeexec-listing").doesNotContain("out/o.txt");
            assertThat(r.listing().entries()).extracting(FolderSnapshot.Entry::path).contains("out/o.txt");

            RunProgramSpec slow = RunProgramSpec.builder("sleep").args("30").timeout(Duration.ofSeconds(1)).build();
            ListedRun t = runner.runProgramAndList(ws, slow, FOLDERS, 100);
            assertThat(t.result().timedOut()).isTrue();
            assertThat(t.listing()).isNull();
        });
    }
}
