package dev.codeexec.governance.micrometer;

import dev.codeexec.governance.ExecutionEvent;
import dev.codeexec.governance.ExecutionListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Micrometer metrics of the workspace tools, from their {@link ExecutionEvent}s: add it with
 * {@code CodeExecution.builder().listener(new MicrometerExecutionListener(registry))}. Micrometer
 * ({@code io.micrometer:micrometer-core}) is an optional dependency of this library: this class is the only one that
 * uses it, and nothing else refers to it, so applications without Micrometer never load it.
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 *   <tr><td>{@value #RUNS}</td><td>timer</td><td>engine, action, outcome</td>
 *       <td>foreground runs and their durations; {@code outcome} is success, non_zero_exit, timed_out or failed</td></tr>
 *   <tr><td>{@value #RUN_OUTPUT}</td><td>distribution summary (bytes)</td><td>engine</td>
 *       <td>output captured per run</td></tr>
 *   <tr><td>{@value #RUNS_ACTIVE}</td><td>gauge</td><td>engine</td><td>foreground runs in progress</td></tr>
 *   <tr><td>{@value #REFUSALS}</td><td>counter</td><td>engine, tool, kind</td>
 *       <td>refused calls; {@code kind} is policy, approval, path or capability</td></tr>
 *   <tr><td>{@value #SESSIONS}</td><td>timer</td><td>engine, outcome</td>
 *       <td>background sessions, timed from start to end; {@code outcome} is exited or stopped</td></tr>
 *   <tr><td>{@value #FILES_WRITTEN}</td><td>counter</td><td>engine, tool</td><td>files written by the tools</td></tr>
 *   <tr><td>{@value #ARTIFACTS_SAVED}</td><td>counter</td><td>engine</td><td>artifacts saved</td></tr>
 *   <tr><td>{@value #WORKSPACES_CREATED}</td><td>counter</td><td>engine</td><td>workspaces created</td></tr>
 *   <tr><td>{@value #WORKSPACES_CLOSED}</td><td>counter</td><td>engine, reason</td>
 *       <td>workspaces removed; {@code reason} is closed, idle or gone</td></tr>
 *   <tr><td>{@value #EGRESS_CONNECTIONS}</td><td>timer</td><td>engine, via, outcome</td>
 *       <td>connections through the egress proxy, from request to end; {@code via} is http, connect or socks,
 *       {@code outcome} allowed, approved, denied, limited or failed</td></tr>
 *   <tr><td>{@value #EGRESS_BYTES}</td><td>distribution summary (bytes)</td><td>engine, direction</td>
 *       <td>bytes per connection, {@code up} (to the host) and {@code down}</td></tr>
 * </table>
 *
 * <p>Tags have few values (engine names, tool names, fixed outcomes): no conversation ids, paths or commands, which
 * would make a meter per conversation. Thread-safe.
 */
public final class MicrometerExecutionListener implements ExecutionListener {

    /** {@value}: the run timer. */
    public static final String RUNS = "codeexec.runs";
    /** {@value}: output bytes per run. */
    public static final String RUN_OUTPUT = "codeexec.run.output";
    /** {@value}: runs in progress. */
    public static final String RUNS_ACTIVE = "codeexec.runs.active";
    /** {@value}: refused calls. */
    public static final String REFUSALS = "codeexec.refusals";
    /** {@value}: the background-session timer. */
    public static final String SESSIONS = "codeexec.sessions";
    /** {@value}: files written. */
    public static final String FILES_WRITTEN = "codeexec.files.written";
    /** {@value}: artifacts saved. */
    public static final String ARTIFACTS_SAVED = "codeexec.artifacts.saved";
    /** {@value}: workspaces created. */
    public static final String WORKSPACES_CREATED = "codeexec.workspaces.created";
    /** {@value}: workspaces removed. */
    public static final String WORKSPACES_CLOSED = "codeexec.workspaces.closed";

    /** {@value}: connections through the egress proxy. */
    public static final String EGRESS_CONNECTIONS = "codeexec.egress.connections";
    /** {@value}: bytes per egress connection. */
    public static final String EGRESS_BYTES = "codeexec.egress.bytes";

    private final MeterRegistry registry;
    private final Map<String, AtomicInteger> active = new ConcurrentHashMap<>();

    /** Records into {@code registry}. */
    public MicrometerExecutionListener(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    @Override
    public void runStarted(ExecutionEvent.RunStarted e) {
        active(e.engine()).incrementAndGet();
    }

    @Override
    public void runFinished(ExecutionEvent.RunFinished e) {
        active(e.engine()).decrementAndGet();
        Timer.builder(RUNS).description("Programs run by the workspace tools")
                .tag("engine", e.engine()).tag("action", lower(e.action())).tag("outcome", e.outcome().tag())
                .register(registry).record(e.duration());
        DistributionSummary.builder(RUN_OUTPUT).description("Output captured per run").baseUnit("bytes")
                .tag("engine", e.engine()).register(registry).record(e.outputBytes());
    }

    @Override
    public void refusal(ExecutionEvent.Refusal e) {
        Counter.builder(REFUSALS).description("Tool calls refused before anything ran")
                .tag("engine", e.engine()).tag("tool", String.valueOf(e.toolName())).tag("kind", lower(e.kind()))
                .register(registry).increment();
    }

    @Override
    public void sessionEnded(ExecutionEvent.SessionEnded e) {
        Timer.builder(SESSIONS).description("Background sessions, from start to end")
                .tag("engine", e.engine()).tag("outcome", e.exitCode() == null ? "stopped" : "exited")
                .register(registry).record(e.duration());
    }

    @Override
    public void fileWritten(ExecutionEvent.FileWritten e) {
        Counter.builder(FILES_WRITTEN).description("Files written by the workspace tools")
                .tag("engine", e.engine()).tag("tool", String.valueOf(e.toolName())).register(registry).increment();
    }

    @Override
    public void artifactSaved(ExecutionEvent.ArtifactSaved e) {
        Counter.builder(ARTIFACTS_SAVED).description("Workspace files saved as artifacts")
                .tag("engine", e.engine()).register(registry).increment();
    }

    @Override
    public void connection(ExecutionEvent.Connection e) {
        var c = e.connection();
        Timer.builder(EGRESS_CONNECTIONS).description("Connections through the egress proxy")
                .tag("engine", e.engine()).tag("via", lower(c.target().kind())).tag("outcome", lower(c.outcome()))
                .register(registry).record(c.duration());
        DistributionSummary.builder(EGRESS_BYTES).description("Bytes per egress connection").baseUnit("bytes")
                .tag("engine", e.engine()).tag("direction", "up").register(registry).record(c.bytesUp());
        DistributionSummary.builder(EGRESS_BYTES).description("Bytes per egress connection").baseUnit("bytes")
                .tag("engine", e.engine()).tag("direction", "down").register(registry).record(c.bytesDown());
    }

    @Override
    public void workspaceCreated(ExecutionEvent.WorkspaceCreated e) {
        Counter.builder(WORKSPACES_CREATED).description("Conversation workspaces created")
                .tag("engine", e.engine()).register(registry).increment();
    }

    @Override
    public void workspaceClosed(ExecutionEvent.WorkspaceClosed e) {
        Counter.builder(WORKSPACES_CLOSED).description("Conversation workspaces removed")
                .tag("engine", e.engine()).tag("reason", lower(e.reason())).register(registry).increment();
    }

    private AtomicInteger active(String engine) {
        return active.computeIfAbsent(engine, name -> {
            AtomicInteger n = new AtomicInteger();
            Gauge.builder(RUNS_ACTIVE, n, AtomicInteger::get).description("Runs in progress").tag("engine", name)
                    .register(registry);
            return n;
        });
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }
}
