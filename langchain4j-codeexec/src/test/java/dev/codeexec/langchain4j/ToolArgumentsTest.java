package dev.codeexec.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.langchain4j.ToolArguments.InvalidArgument;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ToolArgumentsTest {

    @Test
    void should_accept_quoted_numbers_and_booleans_when_models_send_them() {
        ToolArguments a = ToolArguments.parse("{\"n\":\"42\",\"m\":7.0,\"b\":\"TRUE\",\"c\":false}");

        assertThat(a.integer("n")).isEqualTo(42L);
        assertThat(a.integer("m")).isEqualTo(7L);
        assertThat(a.bool("b")).isTrue();
        assertThat(a.bool("c")).isFalse();
    }

    @Test
    void should_name_the_argument_and_value_when_conversion_fails() {
        ToolArguments a = ToolArguments.parse("{\"n\":\"soon\",\"f\":1.5,\"b\":\"maybe\",\"s\":{}}");

        assertThatThrownBy(() -> a.integer("n")).isInstanceOf(InvalidArgument.class)
                .hasMessage("'n' must be a whole number, got 'soon'");
        assertThatThrownBy(() -> a.integer("f")).hasMessage("'f' must be a whole number, got '1.5'");
        assertThatThrownBy(() -> a.bool("b")).hasMessage("'b' must be true or false, got 'maybe'");
        assertThatThrownBy(() -> a.string("s")).hasMessage("'s' must be a string, got an object");
        assertThatThrownBy(() -> a.requiredString("missing")).hasMessageContaining("'missing' is required");
    }

    @Test
    void should_use_the_first_alias_present() {
        assertThat(ToolArguments.parse("{\"timeout\":5}").integer("timeout_seconds", "timeout")).isEqualTo(5L);
        assertThat(ToolArguments.parse("{}").integer("timeout_seconds", "timeout")).isNull();
    }

    @Test
    void should_accept_an_env_object_also_when_it_is_double_encoded() {
        assertThat(ToolArguments.parse("{\"env\":{\"A\":1,\"B\":\"x\"}}").stringMap("env"))
                .isEqualTo(Map.of("A", "1", "B", "x"));
        assertThat(ToolArguments.parse("{\"env\":\"{\\\"A\\\":\\\"1\\\"}\"}").stringMap("env"))
                .isEqualTo(Map.of("A", "1"));
        assertThatThrownBy(() -> ToolArguments.parse("{\"env\":{\"A\":{}}}").stringMap("env"))
                .hasMessage("'env.A' must be a string, got an object");
    }

    @Test
    void should_refuse_invalid_json_and_non_objects_with_a_readable_message() {
        assertThatThrownBy(() -> ToolArguments.parse("{\"a\":")).hasMessageStartingWith("the arguments are not valid JSON");
        assertThatThrownBy(() -> ToolArguments.parse("[1]")).hasMessage("the arguments must be a JSON object, got '[1]'");
        assertThatThrownBy(() -> ToolArguments.parse("{\"a\":\"" + "x".repeat(100) + "\"}", 50, 10))
                .hasMessageContaining("more than the 50 these tools accept");
        assertThat(ToolArguments.parse("  ").asMap()).isEmpty();
    }
}
