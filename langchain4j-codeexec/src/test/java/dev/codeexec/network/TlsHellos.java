package dev.codeexec.network;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/** Real TLS ClientHellos, made by the JDK's own TLS client, for tests of the proxy's server-name check. */
final class TlsHellos {

    private TlsHellos() {
    }

    /** The first flight of a TLS client for {@code serverName} (none when null). */
    static byte[] clientHello(String serverName) throws Exception {
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, null, null);
        SSLEngine engine = ctx.createSSLEngine(serverName == null ? null : serverName, 443);
        engine.setUseClientMode(true);
        SSLParameters params = engine.getSSLParameters();
        params.setServerNames(serverName == null ? List.of() : List.of(new SNIHostName(serverName)));
        engine.setSSLParameters(params);
        ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
        engine.beginHandshake();
        engine.wrap(ByteBuffer.allocate(0), out);
        out.flip();
        return Arrays.copyOf(out.array(), out.limit());
    }
}
