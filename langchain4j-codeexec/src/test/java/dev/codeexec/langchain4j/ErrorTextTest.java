package dev.codeexec.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The last pass over every error text: plain words for exception names, very long paths shortened. */
class ErrorTextTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            could not write 'work/a.txt': FileSystemException              | could not write 'work/a.txt': the file system refused the operation
            cannot read 'work/a.txt': AccessDeniedException                | cannot read 'work/a.txt': permission denied
            cannot list the workspace: IOException                         | cannot list the workspace: an input/output error
            cannot create workspace: java.nio.file.NoSuchFileException     | cannot create workspace: no such file or folder
            'x' cannot be mounted safely (UncheckedIOException): nothing ran | 'x' cannot be mounted safely (an input/output error): nothing ran
            it failed (SomethingOddException).                             | it failed (an unexpected error).
            out of memory: OutOfMemoryError                                | out of memory: not enough memory
            'work/MyException.java' does not exist in the workspace        | 'work/MyException.java' does not exist in the workspace
            cannot append: work/IOException.txt would exceed the limit     | cannot append: work/IOException.txt would exceed the limit
            cannot append: IOException.txt would exceed the limit          | cannot append: IOException.txt would exceed the limit
            the run's PATH has no 'python3'                                | the run's PATH has no 'python3'
            an Error in the program                                        | an Error in the program
            """)
    void should_put_exception_names_in_plain_words_when_they_stand_alone(String message, String expected) {
        assertThat(ErrorText.forModel(message)).isEqualTo(expected);
    }

    @Test
    void should_keep_head_and_tail_of_a_very_long_quoted_path_and_say_it_was_shortened() {
        String path = "work/" + "d".repeat(300) + "/report.csv";

        String shown = ErrorText.forModel("'" + path + "' does not exist in the workspace");

        assertThat(shown).isEqualTo("'" + path.substring(0, 60) + "...[shortened: " + (path.length() - 120)
                + " characters left out]..." + path.substring(path.length() - 60)
                + "' does not exist in the workspace");
        assertThat(shown).startsWith("'work/ddd").contains("d/report.csv' does not exist");
    }

    @Test
    void should_shorten_an_unquoted_long_path_and_leave_short_words_alone() {
        String path = "out/" + "x".repeat(200) + ".txt";

        String message = "cannot append: " + path + " would exceed the limit of 10 bytes";

        String shown = ErrorText.forModel(message);

        assertThat(shown).startsWith("cannot append: out/xxx").contains("...[shortened: 88 characters left out]...")
                .endsWith("xxx.txt would exceed the limit of 10 bytes");
        assertThat(shown.length()).isLessThan(message.length());
    }

    @Test
    void should_leave_paths_up_to_the_limit_whole() {
        String path = "work/" + "a".repeat(ErrorText.MAX_WORD_CHARS - 5);
        String message = "'" + path + "' is a directory and " + path + " too";

        assertThat(ErrorText.forModel(message)).isEqualTo(message);
    }

    @ParameterizedTest
    @CsvSource({"work/", "work"})
    void should_not_split_a_character_when_shortening(String prefix) {
        String path = prefix + "\uD83D\uDE00".repeat(150);

        String shown = ErrorText.shorten(path);

        assertThat(Character.isHighSurrogate(shown.charAt(shown.indexOf("...[") - 1))).isFalse();
        assertThat(Character.isLowSurrogate(shown.charAt(shown.indexOf("]...") + 4))).isFalse();
        assertThat(shown).startsWith(prefix + "\uD83D\uDE00").endsWith("\uD83D\uDE00");
    }
}
