package dev.codeexec.kubernetes;

import dev.codeexec.engine.InvalidSpecException;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The owner of an engine's Lease: the object whose deletion makes the cluster's garbage collector delete the Lease, and
 * through the Lease's owner references every pod of the engine. Without one, the pods of an engine whose JVM died stay
 * until another engine in the namespace sweeps (its Lease expired), or until someone deletes the Lease.
 *
 * <p>Given explicitly ({@link KubernetesEngine.Builder#leaseOwner}), or found from the downward API: when the JVM runs
 * in a pod whose spec passes {@code POD_NAME} and {@code POD_UID} (and {@code POD_NAMESPACE}, if set, names the
 * engine's namespace), that pod owns the Lease. A found owner is used only after the API server confirms a pod of
 * that name and uid in the namespace: an owner reference to an object that is not there makes the garbage collector
 * delete the Lease, and with it the engine's pods, at once. An owner must be in the Lease's namespace (owner references
 * do not cross namespaces). Pure functions and one read; no state.
 */
final class LeaseOwner {

    private static final Logger LOG = LoggerFactory.getLogger(LeaseOwner.class);

    private LeaseOwner() {
    }

    /**
     * The Lease's owner: {@code explicit} when given (checked, for a Pod), else the JVM's own pod when the downward
     * API names it and the API server confirms it, else null.
     *
     * @param env looks up {@code POD_NAME}, {@code POD_UID}, {@code POD_NAMESPACE} (the process environment's)
     * @throws InvalidSpecException when an explicit owner lacks a kind, name or uid, or is a Pod that is not there
     */
    static OwnerReference resolve(OwnerReference explicit, Function<String, String> env, KubernetesClient client,
                                  String namespace) {
        if (explicit != null) {
            if (blank(explicit.getApiVersion()) || blank(explicit.getKind()) || blank(explicit.getName())
                    || blank(explicit.getUid())) {
                throw new InvalidSpecException("leaseOwner needs apiVersion, kind, name and uid (got " + explicit
                        + ")");
            }
            OwnerReference owner = plain(explicit);
            if ("Pod".equals(owner.getKind()) && "v1".equals(owner.getApiVersion()) && !existsOrUnknown(client,
                    namespace, owner)) {
                throw new InvalidSpecException("leaseOwner: no pod '" + owner.getName() + "' with uid "
                        + owner.getUid() + " in namespace '" + namespace + "'; an owner that is not there would "
                        + "make the cluster delete the engine's Lease and pods at once");
            }
            return owner;
        }
        String name = env.apply("POD_NAME");
        String uid = env.apply("POD_UID");
        String podNamespace = env.apply("POD_NAMESPACE");
        if (blank(name) || blank(uid)) {
            return null;
        }
        if (!blank(podNamespace) && !podNamespace.equals(namespace)) {
            LOG.info("the engine's pods are in namespace {}, its own pod {} in {}: owner references do not cross "
                    + "namespaces, so the Lease has no owner", namespace, name, podNamespace);
            return null;
        }
        OwnerReference own = new OwnerReferenceBuilder().withApiVersion("v1").withKind("Pod").withName(name)
                .withUid(uid).build();
        try {
            if (exists(client, namespace, own)) {
                return own;
            }
            LOG.info("POD_NAME/POD_UID name pod {} ({}), which is not in namespace {}: the Lease has no owner", name,
                    uid, namespace);
        } catch (KubernetesClientException e) {
            LOG.info("could not confirm the engine's own pod {} in namespace {} ({}): the Lease has no owner", name,
                    namespace, e.getMessage());
        }
        return null;
    }

    /** An owner reference without {@code controller} and {@code blockOwnerDeletion} (which need more RBAC). */
    private static OwnerReference plain(OwnerReference o) {
        return new OwnerReferenceBuilder().withApiVersion(o.getApiVersion()).withKind(o.getKind())
                .withName(o.getName()).withUid(o.getUid()).build();
    }

    private static boolean existsOrUnknown(KubernetesClient client, String namespace, OwnerReference owner) {
        try {
            return exists(client, namespace, owner);
        } catch (KubernetesClientException e) {
            LOG.warn("could not check the Lease's owner pod {} in namespace {}: {}", owner.getName(), namespace,
                    e.getMessage());
            return true;
        }
    }

    private static boolean exists(KubernetesClient client, String namespace, OwnerReference owner) {
        Pod p = client.pods().inNamespace(namespace).withName(owner.getName()).get();
        return p != null && owner.getUid().equals(p.getMetadata().getUid());
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }
}
