package dev.codeexec.kubernetes;

import java.io.IOException;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;

/**
 * The labels and annotations that tie a workspace pod to the engine that made it, the same set the container backend
 * puts on its containers: {@link #OWNER} on everything this library creates (so {@code kubectl get pods -l
 * dev.codeexec/owner} finds it all), {@link #ENGINE} (the engine instance, whose Lease owns the pod),
 * {@link #WORKSPACE} (the workspace id, or {@value #POOL} for a warm pod not yet handed out), {@link #CREATED}
 * (epoch milliseconds). The creating host and process id go into annotations: a host name need not be a label value.
 */
final class PodLabels {

    private PodLabels() {
    }

    /** The prefix of every key the engine owns; a template's own labels may not use it. */
    static final String PREFIX = "dev.codeexec/";
    static final String OWNER = PREFIX + "owner";
    static final String OWNER_VALUE = "langchain4j-codeexec";
    static final String ENGINE = PREFIX + "engine";
    static final String WORKSPACE = PREFIX + "workspace";
    static final String CREATED = PREFIX + "created";
    /** A hash of the pod spec and NetworkPolicy: pods of one template, whichever engine made them. */
    static final String TEMPLATE = PREFIX + "template";
    /** The workspace label of a pooled pod. */
    static final String POOL = "pool";
    /** Annotation: the creating host. */
    static final String HOST = PREFIX + "host";
    /** Annotation: the creating process. */
    static final String PID = PREFIX + "pid";

    /** The labels of a new pod of {@code engineId} for {@code workspace} (an id, or {@link #POOL}). */
    static Map<String, String> of(String engineId, String workspace, long createdMillis) {
        Map<String, String> m = new HashMap<>();
        m.put(OWNER, OWNER_VALUE);
        m.put(ENGINE, engineId);
        m.put(WORKSPACE, workspace);
        m.put(CREATED, Long.toString(createdMillis));
        return m;
    }

    /**
     * A label value standing for a workspace id: at most 63 characters of {@code [A-Za-z0-9._-]}, starting and ending
     * with a letter or digit. Readable, not injective: the engine maps workspaces to pods by name, not by label.
     */
    static String value(String workspaceId) {
        String s = workspaceId == null ? "" : workspaceId.replaceAll("[^A-Za-z0-9._-]", "_");
        if (s.length() > 63) {
            s = s.substring(0, 63);
        }
        s = s.replaceAll("^[^A-Za-z0-9]+", "").replaceAll("[^A-Za-z0-9]+$", "");
        return s.isEmpty() || POOL.equals(s) ? "ws" : s;
    }

    /** When a pod was created: its {@link #CREATED} label, or its creation timestamp. */
    static long created(io.fabric8.kubernetes.api.model.Pod p) {
        String label = p.getMetadata().getLabels() == null ? null : p.getMetadata().getLabels().get(CREATED);
        try {
            if (label != null) {
                return Long.parseLong(label);
            }
        } catch (NumberFormatException e) {
            // fall through to the timestamp
        }
        String ts = p.getMetadata().getCreationTimestamp();
        return ts == null ? Long.MAX_VALUE : java.time.Instant.parse(ts).toEpochMilli();
    }

    /** The labels that select the pods of one engine. */
    static Map<String, String> engine(String engineId) {
        return Map.of(OWNER, OWNER_VALUE, ENGINE, engineId);
    }

    /** The annotations naming the creating process. */
    static Map<String, String> creator() {
        return Map.of(HOST, hostName(), PID, Long.toString(ProcessHandle.current().pid()));
    }

    /** This host's name. */
    static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "unknown";
        }
    }
}
