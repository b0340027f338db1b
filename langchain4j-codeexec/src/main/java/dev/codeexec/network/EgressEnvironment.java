package dev.codeexec.network;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The environment that sends a program's tools through the proxy with no configuration by the model: the proxy
 * variables in both cases ({@code curl}, {@code pip} and Python's {@code requests}/{@code urllib}, {@code git} over
 * HTTPS, {@code npm}, Go, gRPC), and {@code JAVA_TOOL_OPTIONS} proxy properties, since the JVM ignores the variables.
 * {@code ALL_PROXY} is an {@code http://} URL as well: the proxy answers HTTP and SOCKS5 on the same port, and some
 * clients fail on {@code socks5h://} without an extra package. Every value points at the sandbox's own loopback,
 * where the engine's forwarder listens; nothing secret is in it (the JVM prints {@code JAVA_TOOL_OPTIONS}).
 */
public final class EgressEnvironment {

    /** Hosts that stay direct: the sandbox's own loopback. */
    public static final String NO_PROXY = "localhost,127.0.0.1,::1";

    private EgressEnvironment() {
    }

    /** The variables for a proxy listening on {@code 127.0.0.1:port} inside the sandbox. */
    public static Map<String, String> variables(int port) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " is out of range");
        }
        String url = "http://127.0.0.1:" + port;
        Map<String, String> env = new LinkedHashMap<>();
        for (String name : new String[] {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"}) {
            env.put(name, url);
            env.put(name.toLowerCase(java.util.Locale.ROOT), url);
        }
        env.put("NO_PROXY", NO_PROXY);
        env.put("no_proxy", NO_PROXY);
        env.put("GRPC_PROXY", url);
        env.put("NPM_CONFIG_PROXY", url);
        env.put("NPM_CONFIG_HTTPS_PROXY", url);
        env.put("JAVA_TOOL_OPTIONS", "-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=" + port
                + " -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=" + port
                + " -Dhttp.nonProxyHosts=localhost|127.*|[::1]");
        return env;
    }
}
