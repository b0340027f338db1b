package dev.codeexec.benchmarks.container;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.zerodep.ZerodepDockerHttpClient;
import dev.codeexec.benchmarks.Stats;
import dev.codeexec.container.ContainerEngine;
import dev.codeexec.engine.Engine;
import dev.codeexec.engine.ProgramRunner;
import dev.codeexec.engine.RunProgramSpec;
import dev.codeexec.engine.RunResult;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.langchain4j.CodeExecution;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.invocation.InvocationParameters;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * ContainerEngine against raw baselines measured in the same run.
 * <ol>
 *   <li>A run of {@code true} in an existing workspace container ({@code runProgram}: one exec with the run's wrapper,
 *       framed stdin, exit status) against {@code docker exec <container> true} from the CLI and against a raw Engine
 *       API exec through docker-java (create, start attached, await, inspect), on the same container.</li>
 *   <li>{@code workspace_exec("true")} through the tools with changed-file reports on (the default), in steady state:
 *       the report from the run's own listing; the same with the report made by archive listings before and after
 *       the run (an engine that does not offer the in-run listing, as before it existed); and with reports off;
 *       against the engine's own {@code runProgram} of the same command.</li>
 *   <li>Workspace creation: cold (create, start, layout) and from the warm pool, against
 *       {@code docker run --rm <image> true} from the CLI (skipped with 0 creation iterations).</li>
 * </ol>
 * Usage: {@code container.ContainerEngineBenchmark [image [exec iterations [creation iterations]]]}; samples
 * alternate between the contenders so drift hits all of them.
 */
public final class ContainerEngineBenchmark {

    private ContainerEngineBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        String image = args.length > 0 ? args[0] : "codeexec-python:bookworm";
        int execs = args.length > 1 ? Integer.parseInt(args[1]) : 100;
        int creations = args.length > 2 ? Integer.parseInt(args[2]) : 15;
        DockerClientConfig cfg = DefaultDockerClientConfig.createDefaultConfigBuilder().build();
        try (DockerClient raw = DockerClientImpl.getInstance(cfg, new ZerodepDockerHttpClient.Builder()
                .dockerHost(cfg.getDockerHost()).sslConfig(cfg.getSSLConfig()).build());
             ContainerEngine engine = ContainerEngine.builder().image(image).build()) {
            execInExistingContainer(engine, raw, execs);
            toolExec(engine, execs);
        }
        if (creations > 0) {
            creation(image, creations);
        }
    }

    private static void execInExistingContainer(ContainerEngine engine, DockerClient raw, int iterations)
            throws Exception {
        Workspace ws = engine.manager().createWorkspace("bench", WorkspacePolicy.DEFAULT);
        String container = raw.listContainersCmd().withLabelFilter(Map.of("dev.codeexec.engine",
                engine.instanceId())).exec().get(0).getId();
        RunProgramSpec spec = RunProgramSpec.builder("/bin/true").build();
        for (int i = 0; i < 10; i++) {
            engine.runner().runProgram(ws, spec);
            cli("docker", "exec", container, "true");
            rawExec(raw, container);
        }
        long[] eng = new long[iterations];
        long[] cli = new long[iterations];
        long[] api = new long[iterations];
        for (int i = 0; i < iterations; i++) {
            long t0 = System.nanoTime();
            RunResult r = engine.runner().runProgram(ws, spec);
            long t1 = System.nanoTime();
            cli("docker", "exec", container, "true");
            long t2 = System.nanoTime();
            rawExec(raw, container);
            long t3 = System.nanoTime();
            if (r.exitCode() != 0) {
                throw new IllegalStateException("engine run failed: " + r);
            }
            eng[i] = t1 - t0;
            cli[i] = t2 - t1;
            api[i] = t3 - t2;
        }
        Stats e = new Stats(eng);
        Stats c = new Stats(cli);
        Stats a = new Stats(api);
        System.out.println("ContainerEngine.runProgram(true):  " + e);
        System.out.println("docker exec <c> true (CLI):        " + c);
        System.out.println("raw API exec (create+start+inspect): " + a);
        System.out.printf("ratio engine / CLI exec:           %.2f%n", e.median() / c.median());
        System.out.printf("ratio engine / raw API exec:       %.2f%n", e.median() / a.median());
    }

    private static void toolExec(ContainerEngine engine, int iterations) {
        Engine archiveLooks = withoutInRunListing(engine);
        try (CodeExecution listed = CodeExecution.builder().engine(engine).build();
             CodeExecution looked = CodeExecution.builder().engine(archiveLooks).build();
             CodeExecution off = CodeExecution.builder().engine(engine).reportChangedFiles(false).build()) {
            Workspace ws = engine.manager().createWorkspace("bench-tool", WorkspacePolicy.DEFAULT);
            RunProgramSpec spec = RunProgramSpec.builder("true").build();
            for (int i = 0; i < 10; i++) {
                exec(listed);
                exec(looked);
                exec(off);
                engine.runner().runProgram(ws, spec);
            }
            Stats[] s = alternate(iterations, () -> exec(listed), () -> exec(looked), () -> exec(off),
                    () -> engine.runner().runProgram(ws, spec));
            Stats sl = s[0];
            Stats sk = s[1];
            Stats so = s[2];
            Stats sr = s[3];
            System.out.println("workspace_exec(true), in-run listing:   " + sl);
            System.out.println("workspace_exec(true), archive looks:    " + sk);
            System.out.println("workspace_exec(true), reports off:      " + so);
            System.out.println("engine runProgram(true):                " + sr);
            System.out.printf("ratio tool (in-run listing) / runProgram: %.2f (p90 %.2f)%n", sl.median() / sr.median(),
                    sl.percentile(90) / sr.percentile(90));
            System.out.printf("ratio tool (archive looks) / runProgram:  %.2f (p90 %.2f)%n", sk.median() / sr.median(),
                    sk.percentile(90) / sr.percentile(90));
            System.out.printf("ratio tool (reports off) / runProgram:    %.2f (p90 %.2f)%n", so.median() / sr.median(),
                    so.percentile(90) / sr.percentile(90));
        }
    }

    /** Times each contender once per iteration, in turn, so that drift hits all of them. */
    private static Stats[] alternate(int iterations, Runnable... contenders) {
        long[][] t = new long[contenders.length][iterations];
        for (int i = 0; i < iterations; i++) {
            for (int c = 0; c < contenders.length; c++) {
                long t0 = System.nanoTime();
                contenders[c].run();
                t[c][i] = System.nanoTime() - t0;
            }
        }
        Stats[] s = new Stats[contenders.length];
        for (int c = 0; c < contenders.length; c++) {
            s[c] = new Stats(t[c]);
        }
        return s;
    }

    private static void exec(CodeExecution codeExec) {
        String out = codeExec.tools().workspaceExec("true", null, null, null, null, null, CONTEXT);
        if (!out.startsWith("exit_code: 0")) {
            throw new IllegalStateException("tool run failed: " + out);
        }
    }

    private static final InvocationContext CONTEXT = InvocationContext.builder().invocationId(UUID.randomUUID())
            .chatMemoryId("bench").invocationParameters(new InvocationParameters()).timestampNow().build();

    /** The engine with a runner that does not list in the run: the tools' report comes from archive looks. */
    private static Engine withoutInRunListing(Engine engine) {
        ProgramRunner plain = engine.runner()::runProgram;
        return (Engine) Proxy.newProxyInstance(Engine.class.getClassLoader(), new Class<?>[] {Engine.class},
                (proxy, m, a) -> {
                    if (m.getName().equals("runner")) {
                        return plain;
                    }
                    if (m.getName().equals("close")) {
                        return null; // closed with the real one
                    }
                    try {
                        return m.invoke(engine, a);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    /** What a careful direct docker-java caller does for one exec: create, start attached, await, inspect. */
    private static void rawExec(DockerClient docker, String container) throws InterruptedException {
        String id = docker.execCreateCmd(container).withCmd("true").withAttachStdout(true).withAttachStderr(true)
                .exec().getId();
        try (ResultCallback.Adapter<Frame> cb = docker.execStartCmd(id).exec(new ResultCallback.Adapter<>())) {
            cb.awaitCompletion(60, TimeUnit.SECONDS);
        } catch (java.io.IOException ignored) {
            // Closing a finished callback.
        }
        Long code = docker.inspectExecCmd(id).exec().getExitCodeLong();
        if (code == null || code != 0) {
            throw new IllegalStateException("raw exec failed: " + code);
        }
    }

    private static void creation(String image, int iterations) throws Exception {
        try (ContainerEngine cold = ContainerEngine.builder().image(image).build();
             ContainerEngine pooled = ContainerEngine.builder().image(image).warmPool(1, Duration.ofMinutes(10))
                     .build()) {
            long[] c = new long[iterations];
            long[] p = new long[iterations];
            long[] run = new long[iterations];
            for (int i = -2; i < iterations; i++) {
                long t0 = System.nanoTime();
                Workspace a = cold.manager().createWorkspace("cold", WorkspacePolicy.DEFAULT);
                long t1 = System.nanoTime();
                cold.manager().cleanup(a);
                awaitPool(pooled);
                long t2 = System.nanoTime();
                Workspace b = pooled.manager().createWorkspace("pooled", WorkspacePolicy.DEFAULT);
                long t3 = System.nanoTime();
                pooled.manager().cleanup(b);
                long t4 = System.nanoTime();
                cli("docker", "run", "--rm", "--network", "none", image, "true");
                long t5 = System.nanoTime();
                if (i >= 0) {
                    c[i] = t1 - t0;
                    p[i] = t3 - t2;
                    run[i] = t5 - t4;
                }
            }
            Stats sc = new Stats(c);
            Stats sp = new Stats(p);
            Stats sr = new Stats(run);
            System.out.println("createWorkspace, cold:             " + sc);
            System.out.println("createWorkspace, warm pool:        " + sp);
            System.out.println("docker run --rm <image> true (CLI): " + sr);
            System.out.printf("ratio cold / docker run:           %.2f%n", sc.median() / sr.median());
            System.out.printf("ratio warm pool / docker run:      %.3f%n", sp.median() / sr.median());
        }
    }

    private static void awaitPool(ContainerEngine engine) throws InterruptedException {
        for (int i = 0; i < 600 && engine.pooledContainers() < 1; i++) {
            Thread.sleep(20);
        }
    }

    private static void cli(String... argv) throws Exception {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        p.getOutputStream().close();
        try (InputStream in = p.getInputStream()) {
            in.transferTo(java.io.OutputStream.nullOutputStream());
        }
        if (p.waitFor() != 0) {
            throw new IllegalStateException(String.join(" ", argv) + " failed");
        }
    }
}
