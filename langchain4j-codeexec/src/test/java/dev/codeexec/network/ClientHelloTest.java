package dev.codeexec.network;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ClientHelloTest {

    @Test
    void the_server_name_of_a_real_client_hello_is_read() throws Exception {
        byte[] hello = TlsHellos.clientHello("files.pythonhosted.org");
        ClientHello.Result r = ClientHello.inspect(hello, hello.length);
        assertThat(r.kind()).isEqualTo(ClientHello.Kind.HELLO);
        assertThat(r.serverName()).hasValue("files.pythonhosted.org");
    }

    @Test
    void a_hello_without_server_name_is_read_as_such() throws Exception {
        byte[] hello = TlsHellos.clientHello(null);
        ClientHello.Result r = ClientHello.inspect(hello, hello.length);
        assertThat(r.kind()).isEqualTo(ClientHello.Kind.HELLO);
        assertThat(r.serverName()).isEmpty();
    }

    @Test
    void every_prefix_of_a_hello_is_incomplete_not_a_verdict() throws Exception {
        byte[] hello = TlsHellos.clientHello("pypi.org");
        for (int n = 0; n < hello.length; n++) {
            assertThat(ClientHello.inspect(hello, n).kind()).as("prefix of %d bytes", n)
                    .isEqualTo(ClientHello.Kind.INCOMPLETE);
        }
    }

    @Test
    void other_protocols_are_not_tls() {
        byte[] ssh = "SSH-2.0-OpenSSH_9.2\r\n".getBytes(StandardCharsets.US_ASCII);
        assertThat(ClientHello.inspect(ssh, ssh.length).kind()).isEqualTo(ClientHello.Kind.NOT_TLS);
        byte[] get = "GET / HTTP/1.1\r\n".getBytes(StandardCharsets.US_ASCII);
        assertThat(ClientHello.inspect(get, get.length).kind()).isEqualTo(ClientHello.Kind.NOT_TLS);
    }

    @Test
    void a_tls_record_other_than_a_handshake_first_or_an_odd_record_version_is_still_screened() throws Exception {
        byte[] hello = TlsHellos.clientHello("other.test");
        byte[] alertFirst = new byte[7 + hello.length];
        System.arraycopy(new byte[] {0x15, 3, 1, 0, 2, 1, 0x70}, 0, alertFirst, 0, 7); // a warning alert
        System.arraycopy(hello, 0, alertFirst, 7, hello.length);
        assertThat(ClientHello.inspect(alertFirst, alertFirst.length).kind()).isEqualTo(ClientHello.Kind.MALFORMED);
        byte[] oddVersion = Arrays.copyOf(hello, hello.length);
        oddVersion[1] = 2;
        ClientHello.Result r = ClientHello.inspect(oddVersion, oddVersion.length);
        assertThat(r.kind()).isEqualTo(ClientHello.Kind.HELLO);
        assertThat(r.serverName()).hasValue("other.test");
    }

    @Test
    void a_handshake_record_that_lies_about_its_contents_is_malformed() throws Exception {
        byte[] hello = TlsHellos.clientHello("pypi.org");
        byte[] lying = Arrays.copyOf(hello, hello.length);
        lying[5] = 2; // not a ClientHello
        assertThat(ClientHello.inspect(lying, lying.length).kind()).isEqualTo(ClientHello.Kind.MALFORMED);
        byte[] truncatedInside = Arrays.copyOf(hello, hello.length);
        truncatedInside[6] = 0x7f; // the hello claims more bytes than its record holds
        assertThat(ClientHello.inspect(truncatedInside, truncatedInside.length).kind())
                .isEqualTo(ClientHello.Kind.MALFORMED);
    }
}
