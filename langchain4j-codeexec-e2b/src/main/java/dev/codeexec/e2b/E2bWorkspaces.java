package dev.codeexec.e2b;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.CodeExecException;
import dev.codeexec.engine.UnsupportedCapabilityException;
import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.engine.WorkspaceManager;
import dev.codeexec.engine.WorkspacePolicy;
import dev.codeexec.workspace.SafeNames;
import dev.codeexec.workspace.WorkspaceLayout;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Workspaces in sandboxes ({@link WorkspaceMode}), and the sandboxes' lifecycle: creation with the engine's metadata
 * ({@link #LABEL_OWNER}, {@link #LABEL_ENGINE}, {@link #LABEL_WORKSPACE}) and internet access as configured, setup
 * (the workspace user's ids, a PID-namespace probe, the layout) with the sandbox killed when setup fails, the lease
 * renewer, cleanup and close.
 *
 * <p>The lease: a sandbox lives {@code sandboxTimeout} past its last renewal. Every {@code sandboxTimeout / 3} the
 * renewer extends the sandboxes that were used or run a program since its last pass, so a busy workspace stays
 * alive with no request per operation, an idle one expires by itself, and if this JVM dies its sandboxes stop within
 * {@code sandboxTimeout}. A shared sandbox the engine did not create is extended with {@code connect}, which never
 * shortens what its owner gave it.
 */
final class E2bWorkspaces implements WorkspaceManager {

    private static final Logger LOG = LoggerFactory.getLogger(E2bWorkspaces.class);

    static final String LABEL_OWNER = "dev.codeexec.owner";
    static final String LABEL_ENGINE = "dev.codeexec.engine";
    static final String LABEL_WORKSPACE = "dev.codeexec.workspace";

    /** One workspace: its sandbox, its real root, and what runs in it. */
    static final class Slot {
        final String id;
        final Sandbox sandbox;
        final String root;
        final Set<EnvdChannel> channels = ConcurrentHashMap.newKeySet();
        final AtomicInteger displays = new AtomicInteger();
        private volatile String context;

        Slot(String id, Sandbox sandbox, String root) {
            this.id = id;
            this.sandbox = sandbox;
            this.root = root;
        }

        /** The workspace's code interpreter context, created on first use. */
        synchronized String context(Supplier<String> create) {
            if (context == null) {
                context = create.get();
            }
            return context;
        }

        synchronized void forgetContext() {
            context = null;
        }

        synchronized String currentContext() {
            return context;
        }
    }

    private final E2bSettings settings;
    private final E2bControlPlane control;
    private final E2bHttp http;
    private final String engineId;
    private final Map<String, Slot> slots = new ConcurrentHashMap<>();
    private final Map<String, Long> renewedAt = new ConcurrentHashMap<>();
    private final ScheduledExecutorService renewer;
    private Sandbox shared;
    private volatile boolean closed;

    E2bWorkspaces(E2bSettings settings, E2bControlPlane control, E2bHttp http, String engineId) {
        this.settings = settings;
        this.control = control;
        this.http = http;
        this.engineId = engineId;
        this.renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "codeexec-e2b-lease-" + engineId.substring(0, 8));
            t.setDaemon(true);
            return t;
        });
        long period = Math.max(1000, settings.sandboxTimeout().toMillis() / 3);
        renewer.scheduleWithFixedDelay(this::renew, period, period, TimeUnit.MILLISECONDS);
    }

    /** Connects to the configured shared sandbox at once, so that a wrong id fails when the engine is built. */
    void connectShared() {
        if (settings.sharedSandboxId() != null) {
            shared();
        }
    }

    @Override
    public Workspace createWorkspace(String execId, WorkspacePolicy policy) {
        if (closed) {
            throw new CodeExecException("this E2bEngine is closed");
        }
        if (policy != null && policy.maxDiskBytes() > 0) {
            throw new UnsupportedCapabilityException("E2bEngine cannot enforce WorkspacePolicy.maxDiskBytes (a "
                    + "sandbox's disk is its template's; there is no per-directory quota); refusing to create the "
                    + "workspace");
        }
        String id = SafeNames.label(execId, "ws", 40) + "-" + UUID.randomUUID().toString().substring(0, 8);
        Slot slot;
        if (settings.mode() == WorkspaceMode.SANDBOX_PER_WORKSPACE) {
            Sandbox sb = create(id);
            try {
                slot = new Slot(id, sb, setup(sb, id));
            } catch (RuntimeException e) {
                // A sandbox this engine cannot use costs money: it goes at once.
                try {
                    sb.kill();
                } catch (RuntimeException k) {
                    e.addSuppressed(k);
                }
                throw e;
            }
        } else {
            Sandbox sb = shared();
            slot = new Slot(id, sb, setup(sb, id));
        }
        slots.put(id, slot);
        LOG.debug("workspace {} in {}", id, slot.sandbox);
        return new Workspace(id, slot.root);
    }

    /** The shared sandbox: created (or connected to) and probed once. */
    private synchronized Sandbox shared() {
        if (shared != null && !shared.isGone()) {
            return shared;
        }
        Sandbox sb;
        if (settings.sharedSandboxId() != null) {
            E2bSandbox info = control.connect(settings.sharedSandboxId(), settings.sandboxTimeout());
            sb = new Sandbox(info, http, control, false, "shared");
        } else {
            sb = create("shared");
        }
        try {
            setup(sb, null);
        } catch (RuntimeException e) {
            try {
                sb.kill();
            } catch (RuntimeException k) {
                e.addSuppressed(k);
            }
            throw e;
        }
        shared = sb;
        return sb;
    }

    /** Creates a sandbox with this engine's metadata; it is this engine's to kill. */
    private Sandbox create(String workspaceLabel) {
        Map<String, String> meta = new LinkedHashMap<>(settings.metadata());
        meta.put(LABEL_OWNER, "langchain4j-codeexec");
        meta.put(LABEL_ENGINE, engineId);
        meta.put(LABEL_WORKSPACE, workspaceLabel);
        E2bSandbox info = control.create(SandboxSpec.builder(settings.template())
                .timeout(settings.sandboxTimeout()).metadata(meta).envVars(settings.envVars())
                .allowInternetAccess(settings.internetAccess()).secure(settings.secure()).build(), settings.egress());
        LOG.info("E2B sandbox {} created from template {} (internet {}, timeout {} s)", info.sandboxId(),
                settings.template(), settings.network(), settings.sandboxTimeout().toSeconds());
        renewedAt.put(info.sandboxId(), System.nanoTime());
        try {
            return new Sandbox(info, http, control, true, workspaceLabel);
        } catch (RuntimeException e) {
            // An answer this engine cannot use (an unusable domain, say): the sandbox must not run on unseen.
            try {
                control.kill(info.sandboxId());
            } catch (RuntimeException k) {
                e.addSuppressed(k);
            }
            throw e;
        }
    }

    /**
     * Runs the setup helper: the base and staging directories, the user's ids and the namespace probe (once per
     * sandbox), and the workspace's layout when {@code workspace} is set.
     *
     * @return the workspace's real root, or null without a workspace
     */
    private String setup(Sandbox sb, String workspace) {
        boolean probe = !sb.hasIds();
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", SandboxScripts.SETUP, "sh",
                settings.baseDir(), settings.user(), workspace == null ? "" : workspace, probe ? "1" : "0",
                probe ? "" : Integer.toString(sb.uid()), probe ? "" : Integer.toString(sb.gid())));
        argv.addAll(WorkspaceLayout.DIRECTORIES);
        Sandbox.HelperResult r = sb.helper(argv, workspace == null ? "set up the sandbox" : "create a workspace");
        switch (r.exitCode()) {
            case 0 -> {
            }
            case 11 -> throw new BackendUnavailableException("sandbox " + sb.id() + " (template "
                    + settings.template() + ") has no user '" + settings.user() + "'; set E2bEngine.builder().user(...)"
                    + " to one of its users");
            case 12 -> throw new BackendUnavailableException("sandbox " + sb.id() + " (template "
                    + settings.template() + ") cannot run programs in a PID namespace of their own ('unshare --pid "
                    + "--fork --kill-child' and 'setpriv' as root failed: " + firstLine(r.stderr()) + "); the engine "
                    + "needs them to kill a run's whole process tree, and refuses to run without");
            default -> throw new BackendUnavailableException("sandbox " + sb.id() + ": could not " + (workspace == null
                    ? "set up the sandbox" : "create a workspace") + " under " + settings.baseDir() + " (status "
                    + r.exitCode() + ": " + firstLine(r.stderr()) + ")");
        }
        if (probe) {
            String ids = r.line("codeexec-ids");
            String[] parts = ids == null ? new String[0] : ids.strip().split(" ");
            try {
                sb.ids(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]));
            } catch (RuntimeException e) {
                throw new E2bProtocolException("sandbox " + sb.id() + ": the setup did not report the user's ids",
                        200, null);
            }
        }
        if (workspace == null) {
            return null;
        }
        String root = r.line("codeexec-root");
        if (root == null || !root.startsWith("/")) {
            throw new E2bProtocolException("sandbox " + sb.id() + ": the setup did not report the workspace's path",
                    200, null);
        }
        return root;
    }

    private static String firstLine(String s) {
        String l = s.strip();
        int nl = l.indexOf('\n');
        l = nl < 0 ? l : l.substring(0, nl);
        return l.length() > 200 ? l.substring(0, 200) + "..." : l.isEmpty() ? "no message" : l;
    }

    /**
     * The live workspace {@code ws}.
     *
     * @throws WorkspaceGoneException  when it is not a live workspace of this engine
     * @throws E2bSandboxGoneException when its sandbox is gone
     */
    Slot slot(Workspace ws) {
        Slot s = slots.get(ws.id());
        if (s == null) {
            throw new WorkspaceGoneException("workspace '" + ws.id() + "' is not a live workspace of this engine");
        }
        s.sandbox.requireAlive();
        return s;
    }

    @Override
    public void cleanup(Workspace ws) {
        Slot s = slots.remove(ws.id());
        if (s == null) {
            return;
        }
        if (settings.mode() == WorkspaceMode.SANDBOX_PER_WORKSPACE) {
            s.sandbox.kill();
            renewedAt.remove(s.sandbox.id());
            return;
        }
        removeFromShared(s);
    }

    /** A workspace of the shared sandbox: its programs killed, its context and directory removed. */
    private void removeFromShared(Slot s) {
        if (s.sandbox.isGone()) {
            return;
        }
        for (EnvdChannel c : List.copyOf(s.channels)) {
            c.killRunning();
        }
        String ctx = s.currentContext();
        if (ctx != null && settings.codeInterpreter()) {
            try {
                s.sandbox.interpreter().deleteContext(ctx);
            } catch (RuntimeException e) {
                LOG.debug("could not remove a code interpreter context", e);
            }
        }
        com.fasterxml.jackson.databind.node.ObjectNode req = Json.object();
        req.put("path", s.root);
        try {
            s.sandbox.envd.call("filesystem.Filesystem/Remove", req, Envd.ROOT, E2bHttp.Retry.TRANSIENT,
                    "remove workspace " + s.id);
        } catch (E2bSandboxGoneException e) {
            // Its files went with it.
        }
    }

    /** The renewer's pass: extends every sandbox used since the last pass. */
    private void renew() {
        if (closed) {
            return;
        }
        List<Sandbox> live = new ArrayList<>();
        slots.values().forEach(s -> {
            if (!live.contains(s.sandbox)) {
                live.add(s.sandbox);
            }
        });
        synchronized (this) {
            if (shared != null && !live.contains(shared)) {
                live.add(shared);
            }
        }
        for (Sandbox sb : live) {
            if (sb.isGone()) {
                continue;
            }
            long last = renewedAt.getOrDefault(sb.id(), 0L);
            if (!sb.busy() && sb.lastUse() - last <= 0) {
                continue;
            }
            try {
                long now = System.nanoTime();
                if (sb.owned) {
                    control.setTimeout(sb.id(), settings.sandboxTimeout());
                } else {
                    // Someone else's sandbox: connect extends its time to live and never shortens it.
                    control.connect(sb.id(), settings.sandboxTimeout());
                }
                renewedAt.put(sb.id(), now);
            } catch (E2bSandboxGoneException e) {
                sb.markGone(e);
                LOG.warn("E2B sandbox {} is gone (it timed out or was killed); its workspaces are lost", sb.id());
            } catch (RuntimeException e) {
                LOG.warn("could not renew E2B sandbox {}: {}", sb.id(), e.getMessage());
            }
        }
    }

    /** Kills every sandbox this engine created; workspaces in a sandbox it did not create are removed. */
    void close() {
        closed = true;
        renewer.shutdownNow();
        RuntimeException failure = null;
        List<Slot> all = new ArrayList<>(slots.values());
        slots.clear();
        for (Slot s : all) {
            try {
                if (settings.mode() == WorkspaceMode.SANDBOX_PER_WORKSPACE) {
                    s.sandbox.kill();
                } else if (!s.sandbox.owned) {
                    removeFromShared(s);
                }
            } catch (RuntimeException e) {
                failure = add(failure, e);
            }
        }
        Sandbox sb;
        synchronized (this) {
            sb = shared;
            shared = null;
        }
        if (sb != null) {
            try {
                sb.kill();
            } catch (RuntimeException e) {
                failure = add(failure, e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static RuntimeException add(RuntimeException failure, RuntimeException e) {
        if (failure == null) {
            return e;
        }
        failure.addSuppressed(e);
        return failure;
    }
}
