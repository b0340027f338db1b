package dev.codeexec.workspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.Workspace;
import dev.codeexec.engine.WorkspaceGoneException;
import dev.codeexec.local.LocalEngine;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The registry's hooks: told once per created workspace, and once per removal with its reason; find never creates. */
class WorkspaceRegistryListenerTest {

    @TempDir
    Path base;

    private LocalEngine engine;
    private final List<String> removed = new CopyOnWriteArrayList<>();
    private final AtomicLong clock = new AtomicLong();
    private WorkspaceRegistry registry;

    @BeforeEach
    void setUp() {
        engine = LocalEngine.builder().baseDir(base).build();
        registry = WorkspaceRegistry.builder(engine).idleTtl(Duration.ofMinutes(1)).clock(clock::get)
                .backgroundReaper(false).removalListener((key, ws, why) -> removed.add(key + ":" + why)).build();
    }

    @AfterEach
    void tearDown() {
        registry.close();
        engine.close();
    }

    @Test
    void should_tell_each_creation_once_and_find_without_creating() {
        List<Workspace> created = new CopyOnWriteArrayList<>();

        assertThat(registry.find("a")).isEmpty();
        Workspace first = registry.withWorkspace("a", created::add, ws -> ws);
        Workspace again = registry.withWorkspace("a", created::add, ws -> ws);

        assertThat(created).containsExactly(first);
        assertThat(again).isEqualTo(first);
        assertThat(registry.find("a")).hasValue(first);
        assertThat(registry.find("b")).isEmpty();
        assertThat(registry.keys()).containsExactly("a");
    }

    @Test
    void should_tell_each_removal_with_its_reason() {
        registry.acquire("closed");
        registry.acquire("idle");
        registry.acquire("gone");

        registry.close("closed");
        assertThatThrownBy(() -> registry.withWorkspace("gone", ws -> {
            throw new WorkspaceGoneException("lost by the backend");
        })).isInstanceOf(WorkspaceGoneException.class);
        clock.addAndGet(Duration.ofMinutes(2).toNanos());
        registry.reapIdle();

        assertThat(removed).containsExactly("closed:CLOSED", "gone:GONE", "idle:IDLE");
        assertThat(registry.find("gone")).isEmpty();
    }

    @Test
    void should_keep_working_when_a_hook_throws() {
        Workspace ws = registry.withWorkspace("a", created -> {
            throw new IllegalStateException("hook bug");
        }, w -> w);

        assertThat(ws).isNotNull();
        assertThat(registry.find("a")).hasValue(ws);
    }
}
