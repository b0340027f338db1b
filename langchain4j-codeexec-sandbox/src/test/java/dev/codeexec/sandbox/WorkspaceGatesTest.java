package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.BackendUnavailableException;
import dev.codeexec.engine.Workspace;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The gate's occupant (a workspace's python kernel): every section of the workspace runs with it paused, its own turns
 * with it awake, and a section nested in a turn pauses it again.
 */
class WorkspaceGatesTest {

    private final Workspace ws = new Workspace("w1", "/nowhere/w1");
    private final WorkspaceGates gates = new WorkspaceGates();

    /** Records pauses and resumes, and whether it is paused now. */
    static final class Recorder implements WorkspaceGates.Occupant {
        final List<String> events = new ArrayList<>();
        boolean paused;
        boolean failPause;

        @Override
        public void pause() {
            if (failPause) {
                throw new BackendUnavailableException("cannot pause");
            }
            assertThat(paused).as("paused twice").isFalse();
            paused = true;
            events.add("pause");
        }

        @Override
        public void resume() {
            assertThat(paused).as("resumed while awake").isTrue();
            paused = false;
            events.add("resume");
        }
    }

    @Test
    void should_run_a_section_with_the_occupant_paused_when_the_workspace_has_one() {
        Recorder kernel = new Recorder();
        gates.occupy(ws, kernel);

        boolean pausedInside = gates.exclusive(ws, () -> kernel.paused);

        assertThat(pausedInside).isTrue();
        assertThat(kernel.paused).isFalse();
        assertThat(kernel.events).containsExactly("pause", "resume");
    }

    @Test
    void should_run_a_turn_with_the_occupant_awake_and_pause_it_for_a_section_nested_in_the_turn() {
        Recorder kernel = new Recorder();
        gates.occupy(ws, kernel);

        List<Boolean> seen = gates.occupantTurn(ws, () -> {
            boolean inTurn = kernel.paused;
            boolean inNested = gates.exclusive(ws, () -> gates.exclusive(ws, () -> kernel.paused));
            return List.of(inTurn, inNested, kernel.paused);
        });

        assertThat(seen).containsExactly(false, true, false);
        assertThat(kernel.events).containsExactly("pause", "resume");
    }

    @Test
    void should_wake_the_occupant_for_a_turn_nested_in_a_section_and_pause_it_again_after() {
        Recorder kernel = new Recorder();
        gates.occupy(ws, kernel);

        List<Boolean> seen = gates.exclusive(ws, () -> {
            boolean inTurn = gates.occupantTurn(ws, () -> kernel.paused);
            return List.of(inTurn, kernel.paused);
        });

        assertThat(seen).containsExactly(false, true);
        assertThat(kernel.paused).isFalse();
        assertThat(kernel.events).containsExactly("pause", "resume", "pause", "resume");
    }

    @Test
    void should_pause_nothing_when_the_occupant_vacated_or_another_workspace_has_one() {
        Recorder kernel = new Recorder();
        Recorder other = new Recorder();
        gates.occupy(ws, kernel);
        gates.occupy(new Workspace("w2", "/nowhere/w2"), other);
        gates.vacate(ws, new Recorder()); // not the occupant: ignored
        gates.exclusiveRun(ws, () -> { });
        gates.vacate(ws, kernel);

        gates.exclusiveRun(ws, () -> { });

        assertThat(kernel.events).containsExactly("pause", "resume");
        assertThat(other.events).isEmpty();
    }

    @Test
    void should_not_run_the_section_when_the_occupant_cannot_be_paused() {
        Recorder kernel = new Recorder();
        kernel.failPause = true;
        gates.occupy(ws, kernel);
        List<String> ran = new ArrayList<>();

        assertThatThrownBy(() -> gates.exclusiveRun(ws, () -> ran.add("section")))
                .isInstanceOf(BackendUnavailableException.class);

        assertThat(ran).isEmpty();
        // Positive control: once it can be paused, the same section runs.
        kernel.failPause = false;
        gates.exclusiveRun(ws, () -> ran.add("section"));
        assertThat(ran).containsExactly("section");
    }
    @Test
    void should_answer_without_pausing_the_occupant_when_the_awake_check_settles_it() {
        Recorder kernel = new Recorder();
        gates.occupy(ws, kernel);
        List<String> ran = new ArrayList<>();

        String answer = gates.exclusiveUnlessSettled(ws, () -> Optional.of("settled"), () -> {
            ran.add("paused action");
            return "collected";
        });

        assertThat(answer).isEqualTo("settled");
        assertThat(ran).isEmpty();
        assertThat(kernel.events).isEmpty();
    }

    @Test
    void should_pause_the_occupant_and_run_the_action_when_the_awake_check_cannot_settle_it() {
        Recorder kernel = new Recorder();
        gates.occupy(ws, kernel);
        List<Boolean> awakeSawPaused = new ArrayList<>();

        boolean pausedInAction = gates.exclusiveUnlessSettled(ws, () -> {
            awakeSawPaused.add(kernel.paused);
            return Optional.empty();
        }, () -> kernel.paused);

        assertThat(awakeSawPaused).containsExactly(false);
        assertThat(pausedInAction).isTrue();
        assertThat(kernel.events).containsExactly("pause", "resume");
    }
}
