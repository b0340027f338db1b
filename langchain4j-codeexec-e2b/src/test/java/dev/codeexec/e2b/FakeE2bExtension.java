package dev.codeexec.e2b;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A {@link FakeE2b} for one test class, registered as a static field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final FakeE2bExtension FAKE = FakeE2bExtension.host("e2b-limits");
 * }</pre>
 *
 * <p>Before the class's own {@code @BeforeAll} methods it checks what the fake needs on this host
 * ({@link FakeTesting#requireHost()}, or {@link FakeTesting#requirePython()} for the code interpreter; missing, the
 * class is skipped), makes a temporary base directory and starts the fake there. After the class's {@code @AfterAll}
 * methods it closes the engines handed to {@link #closing(E2bEngine)} (last first), then the fake, then removes the
 * base directory.
 */
final class FakeE2bExtension implements BeforeAllCallback, AfterAllCallback {

    private final String prefix;
    private final boolean python;
    private final Deque<E2bEngine> engines = new ArrayDeque<>();
    private Path base;
    private FakeE2b fake;

    private FakeE2bExtension(String prefix, boolean python) {
        this.prefix = prefix;
        this.python = python;
    }

    /** A fake for tests that run programs only: root with PID namespaces and util-linux. */
    static FakeE2bExtension host(String prefix) {
        return new FakeE2bExtension(prefix, false);
    }

    /** A fake for tests that also run code interpreter cells: as {@link #host}, and {@code /usr/bin/python3}. */
    static FakeE2bExtension python(String prefix) {
        return new FakeE2bExtension(prefix, true);
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        if (python) {
            FakeTesting.requirePython();
        } else {
            FakeTesting.requireHost();
        }
        base = Files.createTempDirectory(prefix);
        fake = new FakeE2b(base);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        try {
            while (!engines.isEmpty()) {
                engines.pop().close();
            }
            if (fake != null) {
                fake.close();
            }
        } finally {
            if (base != null) {
                FakeEnvd.removeAll(base);
            }
        }
    }

    /** The running fake. */
    FakeE2b fake() {
        return fake;
    }

    /** The fake's base directory: every sandbox's file system lives under it. */
    Path base() {
        return base;
    }

    /** An engine builder pointed at the fake. */
    E2bEngine.Builder engine() {
        return fake.engine();
    }

    /** Closes {@code engine} when the class ends, before the fake; returns it. */
    E2bEngine closing(E2bEngine engine) {
        engines.push(engine);
        return engine;
    }
}
