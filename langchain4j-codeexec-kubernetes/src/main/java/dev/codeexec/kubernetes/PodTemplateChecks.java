package dev.codeexec.kubernetes;

import dev.codeexec.engine.InvalidSpecException;
import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The checks of {@link PodTemplate}'s settings against Kubernetes' own rules (names, label keys and values,
 * quantities) and ours (an egress proxy is an address, not a name), each failing with an {@link InvalidSpecException}
 * that names the setting and the bad value, before any API server sees it.
 */
final class PodTemplateChecks {

    private PodTemplateChecks() {
    }

    static final Pattern LABEL_NAME = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?");
    static final Pattern DNS_SUBDOMAIN = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?");
    static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
    static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.-]*");

    static void requireName(String what, String name) {
        if (name == null || !DNS_SUBDOMAIN.matcher(name).matches()) {
            throw new InvalidSpecException(what + " '" + name + "' is not a valid object name");
        }
    }

    static Map<String, Quantity> resources(String kind, String cpu, String cpuDefault, String memory,
                                           String memoryDefault, String ephemeral, String ephemeralDefault) {
        Map<String, Quantity> m = new LinkedHashMap<>();
        m.put("cpu", quantity("cpu " + kind, cpu, cpuDefault));
        m.put("memory", quantity("memory " + kind, memory, memoryDefault));
        m.put("ephemeral-storage", quantity("ephemeral-storage " + kind, ephemeral, ephemeralDefault));
        return Collections.unmodifiableMap(m);
    }

    static Quantity quantity(String what, String value, String fallback) {
        Quantity q = new Quantity(value == null ? fallback : value);
        BigDecimal amount;
        try {
            amount = amount(q);
        } catch (RuntimeException e) {
            throw new InvalidSpecException(what + " '" + value + "' is not a quantity (like 500m, 1Gi)");
        }
        if (amount.signum() <= 0) {
            throw new InvalidSpecException(what + " (" + value + ") must be positive");
        }
        return q;
    }

    static BigDecimal amount(Quantity q) {
        return q.getNumericalAmount();
    }

    static Map<String, String> labels(String what, Map<String, String> in, boolean refuseOurs) {
        in.forEach((k, v) -> {
            labelKey(what, k, refuseOurs);
            if (v == null || !(v.isEmpty() || LABEL_NAME.matcher(v).matches())) {
                throw new InvalidSpecException(what + " value '" + v + "' of '" + k + "' is not a valid label value");
            }
        });
        return Map.copyOf(in);
    }

    static void labelKey(String what, String key, boolean refuseOurs) {
        int slash = key.lastIndexOf('/');
        String prefix = slash < 0 ? null : key.substring(0, slash);
        String name = key.substring(slash + 1);
        if ((prefix != null && !DNS_SUBDOMAIN.matcher(prefix).matches()) || !LABEL_NAME.matcher(name).matches()) {
            throw new InvalidSpecException(what + " key '" + key + "' is not a valid key");
        }
        if (refuseOurs && PodLabels.PREFIX.equals(prefix + "/")) {
            throw new InvalidSpecException(what + " key '" + key + "' uses the engine's own prefix "
                    + PodLabels.PREFIX);
        }
    }

    static PodTemplate.EgressProxy parseProxy(String s) {
        int colon = s.lastIndexOf(':');
        String host = colon < 0 ? "" : s.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(s.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        boolean ipv4 = host.matches("(\\d{1,3}\\.){3}\\d{1,3}");
        boolean ipv6 = host.matches("[0-9A-Fa-f:]+") && host.contains(":");
        if (colon < 0 || port < 1 || port > 65535 || !(ipv4 || ipv6)) {
            throw new InvalidSpecException("egressProxy '" + s + "' must be an IP address and port "
                    + "(the proxy Service's ClusterIP, like 10.96.0.20:3128): the pods have no DNS");
        }
        if (ipv4 && java.util.Arrays.stream(host.split("\\.")).anyMatch(o -> Integer.parseInt(o) > 255)) {
            throw new InvalidSpecException("egressProxy '" + s + "' is not an IPv4 address");
        }
        return new PodTemplate.EgressProxy(host, port, Map.of(), null, port);
    }

}
