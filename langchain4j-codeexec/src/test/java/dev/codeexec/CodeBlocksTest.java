package dev.codeexec;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CodeBlocksTest {

    private static final String FENCE = "```";

    // ---- extract ----

    @Test
    void should_extract_every_block_in_order_when_text_has_several() {
        String text = "Intro\n" + FENCE + "python\nprint(1)\n" + FENCE + "\nmiddle prose\n" + FENCE
                + "bash\necho hi\nls\n" + FENCE + "\nend";

        List<CodeBlock> blocks = CodeBlocks.extract(text);

        assertThat(blocks).containsExactly(CodeBlock.of("python", "print(1)"), CodeBlock.of("bash", "echo hi\nls"));
    }

    @Test
    void should_take_first_word_of_info_string_when_it_has_attributes() {
        String text = FENCE + "python {.numberLines startFrom=\"3\"}\nx = 1\n" + FENCE + "\n" + FENCE
                + "bash{.x}\ntrue\n" + FENCE + "\n" + FENCE + "sh title=\"run me\"\nfalse\n" + FENCE;

        List<CodeBlock> blocks = CodeBlocks.extract(text);

        assertThat(blocks).extracting(CodeBlock::language).containsExactly("python", "bash", "sh");
        assertThat(blocks).extracting(CodeBlock::code).containsExactly("x = 1", "true", "false");
    }

    @Test
    void should_not_end_block_when_fence_appears_inside_code_not_at_line_start() {
        String code = "s = \"" + FENCE + "\"\nprint(s + '" + FENCE + "python')";
        String text = FENCE + "python\n" + code + "\n" + FENCE + "\n";

        List<CodeBlock> blocks = CodeBlocks.extract(text);

        assertThat(blocks).containsExactly(CodeBlock.of("python", code));
    }

    @Test
    void should_not_open_block_when_fence_is_inside_prose_line() {
        String text = "Write " + FENCE + "python to start a block.\n" + FENCE + "bash\necho ok\n" + FENCE;

        assertThat(CodeBlocks.extract(text)).containsExactly(CodeBlock.of("bash", "echo ok"));
    }

    @Test
    void should_ignore_block_when_it_is_unterminated() {
        String text = FENCE + "python\nprint(1)\n" + FENCE + "\nthen\n" + FENCE + "bash\necho never closed\n";

        assertThat(CodeBlocks.extract(text)).containsExactly(CodeBlock.of("python", "print(1)"));
        assertThat(CodeBlocks.extract(FENCE + "python\nprint(1)")).isEmpty();
        assertThat(CodeBlocks.extract(FENCE + "python")).isEmpty();
    }

    @Test
    void should_keep_empty_language_when_fence_has_no_tag() {
        assertThat(CodeBlocks.extract(FENCE + "\nplain\n" + FENCE)).containsExactly(CodeBlock.of("", "plain"));
    }

    @Test
    void should_return_nothing_when_text_is_null_or_has_no_fence() {
        assertThat(CodeBlocks.extract(null)).isEmpty();
        assertThat(CodeBlocks.extract("just prose")).isEmpty();
    }

    @Test
    void should_strip_carriage_returns_when_text_has_crlf_line_endings() {
        String text = "Run this:\r\n" + FENCE + "bash\r\necho a\r\necho b\r\n" + FENCE + "\r\n";

        assertThat(CodeBlocks.extract(text)).containsExactly(CodeBlock.of("bash", "echo a\necho b"));
    }

    @Test
    void should_use_custom_delimiter_when_given() {
        CodeBlockDelimiter tags = new CodeBlockDelimiter("<code>", "</code>");
        String text = "<code>python\nprint(2)\n</code>";

        assertThat(CodeBlocks.extract(text, tags)).containsExactly(CodeBlock.of("python", "print(2)"));
        assertThat(CodeBlocks.lone(text, tags)).contains(CodeBlock.of("python", "print(2)"));
    }

    // ---- lone ----

    @Test
    void should_return_block_when_text_is_exactly_one_runnable_block() {
        String text = "\n  " + FENCE + "python\nprint('hi')\n" + FENCE + "  \n\n";

        assertThat(CodeBlocks.lone(text)).contains(CodeBlock.of("python", "print('hi')"));
    }

    @Test
    void should_return_empty_when_prose_precedes_block() {
        assertThat(CodeBlocks.lone("Here you go:\n" + FENCE + "python\nprint(1)\n" + FENCE)).isEmpty();
    }

    @Test
    void should_return_empty_when_prose_follows_block() {
        assertThat(CodeBlocks.lone(FENCE + "python\nprint(1)\n" + FENCE + "\nThat prints 1.")).isEmpty();
    }

    @Test
    void should_return_empty_when_prose_follows_block_and_text_ends_with_fence() {
        // The text starts and ends with a fence, but the last fence opens a second, unterminated block.
        String text = FENCE + "python\nprint(1)\n" + FENCE + "\nAnd then:\n" + FENCE;

        assertThat(CodeBlocks.lone(text)).isEmpty();
    }

    @Test
    void should_return_empty_when_text_has_two_blocks() {
        assertThat(CodeBlocks.lone(FENCE + "python\nprint(1)\n" + FENCE + "\n" + FENCE + "bash\nls\n" + FENCE))
                .isEmpty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"json", "JSON", "text", "markdown", "md", "yaml", "csv", "output", ""})
    void should_return_empty_when_tag_is_data_prose_or_missing(String tag) {
        assertThat(CodeBlocks.lone(FENCE + tag + "\n{\"a\": 1}\n" + FENCE)).isEmpty();
    }

    @Test
    void should_run_block_when_info_string_has_trailing_whitespace() {
        assertThat(CodeBlocks.lone(FENCE + "python   \t\nprint(1)\n" + FENCE))
                .contains(CodeBlock.of("python", "print(1)"));
    }

    @Test
    void should_return_block_when_text_has_crlf_line_endings() {
        Optional<CodeBlock> block = CodeBlocks.lone(FENCE + "bash\r\necho a\r\necho b\r\n" + FENCE + "\r\n");

        assertThat(block).contains(CodeBlock.of("bash", "echo a\necho b"));
    }

    @Test
    void should_return_empty_when_closing_fence_is_followed_by_text_on_its_line() {
        assertThat(CodeBlocks.lone(FENCE + "python\nprint(1)\n" + FENCE + " done")).isEmpty();
    }

    @Test
    void should_return_empty_when_text_is_null_blank_or_only_fences() {
        assertThat(CodeBlocks.lone(null)).isEmpty();
        assertThat(CodeBlocks.lone("   ")).isEmpty();
        assertThat(CodeBlocks.lone(FENCE)).isEmpty();
        assertThat(CodeBlocks.lone(FENCE + FENCE)).isEmpty();
    }

    @Test
    void should_accept_any_case_when_tag_is_runnable() {
        assertThat(CodeBlocks.isRunnableTag("Python")).isTrue();
        assertThat(CodeBlocks.isRunnableTag(" bash ")).isTrue();
        assertThat(CodeBlocks.isRunnableTag("Json")).isFalse();
        assertThat(CodeBlocks.isRunnableTag(null)).isFalse();
    }

    @Test
    void should_read_markdown_fences_when_longer_or_tilde() {
        String four = "````python\nprint('```')\n```\nprint(2)\n````";
        assertThat(CodeBlocks.lone(four)).contains(CodeBlock.of("python", "print('```')\n```\nprint(2)"));

        String tilde = "~~~bash\necho hi\n~~~";
        assertThat(CodeBlocks.lone(tilde)).contains(CodeBlock.of("bash", "echo hi"));

        // A tilde block is not closed by backticks, nor a long fence by a shorter one.
        assertThat(CodeBlocks.extract("~~~sh\necho a\n```\n~~~")).containsExactly(CodeBlock.of("sh", "echo a\n```"));
        assertThat(CodeBlocks.extract("````py\nx\n```")).isEmpty();
        // A longer closing run closes.
        assertThat(CodeBlocks.lone("```py\nx = 1\n`````")).contains(CodeBlock.of("py", "x = 1"));
    }

    @Test
    void should_not_take_inline_code_for_a_fence() {
        assertThat(CodeBlocks.extract("```x``` is inline\n```python\nprint(1)\n```"))
                .containsExactly(CodeBlock.of("python", "print(1)"));
    }
}
