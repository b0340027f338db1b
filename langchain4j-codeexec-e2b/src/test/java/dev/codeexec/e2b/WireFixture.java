package dev.codeexec.e2b;

import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;

import com.github.tomakehurst.wiremock.WireMockServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * The set-up of the tests against the wire format: one WireMock server on a free port for the class, emptied before
 * each test, with {@link WireStubs} over it; the engine a test builds into {@link #engine} is closed after it.
 * Subclasses add their own {@code @BeforeEach} stubs (they run after this class's reset).
 */
abstract class WireFixture {

    static WireMockServer server;
    WireStubs stubs;
    E2bEngine engine;

    @BeforeAll
    static void startWireMock() {
        server = new WireMockServer(wireMockConfig().dynamicPort());
        server.start();
    }

    @AfterAll
    static void stopWireMock() {
        server.stop();
    }

    @BeforeEach
    void resetWireMock() {
        server.resetAll();
        stubs = new WireStubs(server);
    }

    @AfterEach
    void closeEngine() {
        if (engine != null) {
            engine.close();
        }
    }
}
