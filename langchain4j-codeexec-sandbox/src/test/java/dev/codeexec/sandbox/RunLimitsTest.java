package dev.codeexec.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.codeexec.engine.ResourceLimit;
import dev.codeexec.engine.ResourceLimits;
import java.time.Duration;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

class RunLimitsTest {

    @Test
    void should_default_to_the_bounds_the_host_enforces() {
        assertThat(RunLimits.defaults(EnumSet.allOf(ResourceLimit.class))).isEqualTo(ResourceLimits.builder()
                .memoryBytes(2L << 30).maxProcesses(1024).build());
        assertThat(RunLimits.defaults(EnumSet.of(ResourceLimit.PROCESSES, ResourceLimit.CPU_TIME)))
                .isEqualTo(ResourceLimits.builder().maxProcesses(1024).build());
        assertThat(RunLimits.unbounded(EnumSet.of(ResourceLimit.CPU_TIME))).isEqualTo("memory and processes");
        assertThat(RunLimits.unbounded(EnumSet.allOf(ResourceLimit.class))).isEmpty();
    }

    @Test
    void should_replace_defaults_field_by_field_and_turn_them_off_on_request() {
        ResourceLimits defaults = RunLimits.defaults(EnumSet.allOf(ResourceLimit.class));
        assertThat(RunLimits.withDefaults(defaults, null)).isEqualTo(defaults);
        assertThat(RunLimits.withDefaults(defaults, ResourceLimits.builder().memoryBytes(8L << 30)
                .cpuTime(Duration.ofSeconds(5)).build())).isEqualTo(new ResourceLimits(Duration.ofSeconds(5),
                8L << 30, null, null, 1024));
        assertThat(RunLimits.withDefaults(defaults, ResourceLimits.NONE)).isEqualTo(ResourceLimits.NONE);
    }

    @Test
    void should_know_which_kernels_count_processes_per_user_namespace() {
        assertThat(RunLimits.kernelAtLeast("6.18.44-fc-v1045", 5, 14)).isTrue();
        assertThat(RunLimits.kernelAtLeast("5.14.0-70.el9.x86_64", 5, 14)).isTrue();
        assertThat(RunLimits.kernelAtLeast("5.10.0-28-amd64", 5, 14)).isFalse();
        assertThat(RunLimits.kernelAtLeast("garbage", 5, 14)).isFalse();
        assertThat(RunLimits.none().processesByRlimit()).isFalse();
        assertThat(RunLimits.none().inside(64)).isEmpty();
    }
}
