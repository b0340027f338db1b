package dev.codeexec.policy;

import static dev.codeexec.policy.ParsedCommand.Operator.AND;
import static dev.codeexec.policy.ParsedCommand.Operator.OR;
import static dev.codeexec.policy.ParsedCommand.Operator.PIPE;
import static dev.codeexec.policy.ParsedCommand.Operator.SEQUENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.codeexec.engine.PolicyViolationException;
import java.util.Collections;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The parser of the safe shell subset. The first tables are the reference design's corpus (parser_test.go and
 * parser_simple_test.go), the later ones our own cases.
 */
class ShellParserTest {

    // ---------------------------------------------------------------- accept: reference corpus

    static Stream<Arguments> referenceAccepted() {
        return Stream.of(
                // parser_test.go
                arguments("echo hello world", List.of(List.of("echo", "hello", "world")), List.of()),
                arguments("echo 'hello world'", List.of(List.of("echo", "hello world")), List.of()),
                arguments("echo \"hello world\"", List.of(List.of("echo", "hello world")), List.of()),
                arguments("echo abc\"def\"'ghi'", List.of(List.of("echo", "abcdefghi")), List.of()),
                arguments("echo hi | wc -l", List.of(List.of("echo", "hi"), List.of("wc", "-l")), List.of(PIPE)),
                arguments("echo a && echo b", List.of(List.of("echo", "a"), List.of("echo", "b")), List.of(AND)),
                arguments("false || echo fallback", List.of(List.of("false"), List.of("echo", "fallback")),
                        List.of(OR)),
                arguments("echo a ; echo b", List.of(List.of("echo", "a"), List.of("echo", "b")), List.of(SEQUENCE)),
                arguments("echo a | grep a && echo b ; echo c || echo d",
                        List.of(List.of("echo", "a"), List.of("grep", "a"), List.of("echo", "b"),
                                List.of("echo", "c"), List.of("echo", "d")),
                        List.of(PIPE, AND, SEQUENCE, OR)),
                // parser_simple_test.go
                arguments("curl https://x.com", List.of(List.of("curl", "https://x.com")), List.of()),
                arguments("curl 'https://x.com/p?q=1&r=2'", List.of(List.of("curl", "https://x.com/p?q=1&r=2")),
                        List.of()),
                arguments("curl \"https://x.com/p\"", List.of(List.of("curl", "https://x.com/p")), List.of()),
                arguments("echo a\\ b", List.of(List.of("echo", "a b")), List.of()),
                arguments("echo 'a$b'", List.of(List.of("echo", "a$b")), List.of()),
                arguments("echo 'a`b'", List.of(List.of("echo", "a`b")), List.of()),
                arguments("cmd ''", List.of(List.of("cmd", "")), List.of()),
                arguments("cmd \"\"", List.of(List.of("cmd", "")), List.of()),
                arguments("echo \"a\\\"b\"", List.of(List.of("echo", "a\"b")), List.of()),
                arguments("echo 你好", List.of(List.of("echo", "你好")), List.of()),
                arguments("echo\ta", List.of(List.of("echo", "a")), List.of()),
                arguments("echo abc'def'\"ghi\"", List.of(List.of("echo", "abcdefghi")), List.of()),
                arguments("   echo  hi   ", List.of(List.of("echo", "hi")), List.of()),
                arguments("echo \"a\\nb\"", List.of(List.of("echo", "a\\nb")), List.of()),
                arguments("xargs -I{} curl", List.of(List.of("xargs", "-I{}", "curl")), List.of()),
                arguments("find . -exec cat {} +", List.of(List.of("find", ".", "-exec", "cat", "{}", "+")),
                        List.of()),
                arguments("echo a|wc -l", List.of(List.of("echo", "a"), List.of("wc", "-l")), List.of(PIPE)),
                arguments("echo a&&echo b", List.of(List.of("echo", "a"), List.of("echo", "b")), List.of(AND)),
                arguments("a | b && c || d ; e",
                        List.of(List.of("a"), List.of("b"), List.of("c"), List.of("d"), List.of("e")),
                        List.of(PIPE, AND, OR, SEQUENCE)));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("referenceAccepted")
    void should_parse_into_segments_when_reference_corpus_line_is_in_the_subset(String line,
                                                                              List<List<String>> argvs,
                                                                              List<ParsedCommand.Operator> ops) {
        ParsedCommand parsed = ShellParser.parse(line);

        assertThat(parsed.segments()).extracting(ParsedCommand.Segment::argv).isEqualTo(argvs);
        assertThat(parsed.operators()).isEqualTo(ops);
        assertThat(parsed.commandLine()).isEqualTo(line);
    }

    /** Backslashes inside double quotes escape only $ ` " \ and stay literal before anything else (POSIX). */
    @ParameterizedTest(name = "[{index}] {0} -> {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '~', value = {
            "echo \"./s\\afe\"  | ./s\\afe",
            "echo \"a\\bc\"     | a\\bc",
            "echo \"a\\$b\"     | a$b",
            "echo \"a\\`b\"     | a`b",
            "echo \"a\\\"b\"    | a\"b",
            "echo \"a\\\\b\"    | a\\b",
            "echo \"\\a\\b\\c\" | \\a\\b\\c",
    })
    void should_keep_backslash_literally_when_it_escapes_nothing_inside_double_quotes(String line, String arg1) {
        assertThat(ShellParser.parse(line.strip()).segments().get(0).argv().get(1)).isEqualTo(arg1.strip());
    }

    // ---------------------------------------------------------------- reject: reference corpus

    static Stream<Arguments> referenceRejected() {
        return Stream.of(
                // parser_test.go
                arguments("echo $(curl http://x)", "command substitution"),
                arguments("echo `curl http://x`", "command substitution"),
                arguments("echo $HOME", "parameter expansion"),
                arguments("echo ${HOME}", "parameter expansion"),
                arguments("echo $((1+1))", "arithmetic expansion"),
                arguments("diff <(ls) <(ls)", "process substitution"),
                arguments("echo \"value=$X\"", "double-quoted"),
                arguments("cat < /etc/passwd", "redirection"),
                arguments("echo hi > /tmp/out", "redirection"),
                arguments("sleep 1 &", "background"),
                arguments("(echo a)", "subshell"),
                arguments("{ echo a; echo b; }", "block"),
                arguments("if true; then echo a; fi", "if statement"),
                arguments("for i in 1 2 3; do echo $i; done", "for loop"),
                arguments("while true; do echo a; done", "while/until loop"),
                arguments("case x in y) echo z;; esac", "case statement"),
                arguments("f() { echo hi; }", "function declaration"),
                arguments("FOO=bar curl http://x", "leading variable assignment"),
                arguments("X+=1 curl http://x", "leading variable assignment"),
                arguments("PATH+=:./bin echo hi", "leading variable assignment"),
                arguments("! true", "negation"),
                arguments("echo a |& cat", "stderr"),
                arguments("echo 'a\nb'", "newline is not allowed inside a single-quoted string"),
                arguments("echo 'a\rb'", "newline is not allowed inside a single-quoted string"),
                arguments("   ", "empty"),
                // parser_simple_test.go
                arguments("echo a\necho b", "newline"),
                arguments("echo a\\\nb", "escaped newline"),
                arguments("echo 'abc", "unterminated single"),
                arguments("echo \"abc", "unterminated double"),
                arguments("echo abc\\", "trailing backslash"),
                arguments("echo \"abc\\", "trailing backslash"),
                arguments("echo \"a$b\"", "double-quoted"),
                arguments("echo \"a`b\"", "double-quoted"),
                arguments("echo \"a\nb\"", "newline"),
                arguments("echo a |", "empty right"),
                arguments("echo a &&", "empty right"),
                arguments("| echo a", "empty left"),
                arguments("; echo a", "empty left"),
                arguments("a ;; b", "case statement"),
                arguments("a |& b", "stderr"),
                arguments("ls *.txt", "glob"),
                arguments("ls ?.txt", "glob"),
                arguments("ls [a].txt", "test expression"),
                arguments("echo a # comment", "comment"),
                arguments("echo !1", "history expansion"),
                arguments("cmd &", "background"),
                arguments("FOO=bar curl http://x", "leading variable"),
                arguments("echo {a,b}", "brace expansion"),
                arguments("echo {1..3}", "brace expansion"),
                arguments("echo {abc", "unmatched"),
                arguments("{ echo a; }", "block"),
                arguments("echo \u0001", "control character"),
                arguments("echo " + "a".repeat(CommandPolicy.MAX_COMMAND_BYTES - 4), "too long"),
                arguments(String.join(" | ", Collections.nCopies(34, "cmd")), "too many"));
    }

    @ParameterizedTest(name = "[{index}] {0} ~ {1}")
    @MethodSource("referenceRejected")
    void should_reject_naming_the_construct_when_reference_corpus_line_is_outside_the_subset(String line,
                                                                                           String expected) {
        assertThatThrownBy(() -> ShellParser.parse(line))
                .isInstanceOf(PolicyViolationException.class)
                .hasMessageContaining(expected)
                .hasMessageStartingWith("command rejected by the command policy: ");
    }

    @ParameterizedTest(name = "[{index}] \"{0}\" -> {1}")
    @CsvSource(delimiter = '|', value = {
            "FOO=bar       | true",
            "_underscore=1 | true",
            "a=            | true",
            "X+=1          | true",
            "1FOO=bar      | false",
            "=bar          | false",
            "FOO-bar=1     | false",
            "FOO           | false",
            "''            | false",
            "--flag=value  | false",
            "a+b=1         | false",
    })
    void should_detect_assignments_when_word_is_name_equals(String word, boolean expected) {
        assertThat(ShellParser.isLeadingAssignment(word.equals("''") ? "" : word)).isEqualTo(expected);
    }

    // ---------------------------------------------------------------- our own cases

    static Stream<Arguments> ownRejected() {
        return Stream.of(
                // tilde expansion, where bash performs it
                arguments("cat ~/secret", "tilde expansion"),
                arguments("echo ~", "tilde expansion"),
                arguments("ls ~root", "tilde expansion"),
                arguments("echo a=~/x", "tilde expansion"),
                arguments("echo PATH=a:~/b", "tilde expansion"),
                // here-documents and other redirections
                arguments("cat <<EOF", "here-document"),
                arguments("cat <<-EOF", "here-document"),
                arguments("cat <<< hi", "here-string"),
                arguments("echo x >> f", "redirection"),
                arguments("echo x 2>&1", "redirection"),
                arguments("ls &> out", "redirection"),
                arguments("echo x >| f", "redirection"),
                arguments("tee >(cat)", "process substitution"),
                // test expressions
                arguments("[[ -f x ]]", "conditional expression"),
                arguments("[ -f x ]", "test expression"),
                arguments("'[[' -f x ']]'", "conditional expression"),
                // other expansions and quoting forms
                arguments("echo $'a\\nb'", "ANSI-C quoting"),
                arguments("echo $\"hi\"", "locale translation"),
                arguments("echo $[1+1]", "arithmetic expansion"),
                arguments("echo $", "parameter expansion"),
                arguments("echo a | ! b", "negation"),
                arguments("!ls", "negation"),
                arguments("echo x)", "unexpected ')'"),
                arguments("echo ]", "unexpected ']'"),
                arguments("echo }", "unmatched '}'"),
                arguments("echo a{b", "unmatched '{'"),
                arguments("echo {a,'b'}", "brace expansion"),
                arguments("echo a#b", "comment"),
                arguments("echo x ;& echo y", "case statement"),
                arguments("echo a;", "empty right"),
                arguments("echo a ; ; echo b", "empty left"),
                arguments("echo a || || echo b", "empty left"),
                // keywords and names by value, whatever the quoting
                arguments("'if' true", "if statement"),
                arguments("\"FOO\"=bar curl", "leading variable assignment"),
                arguments("'' x", "command name is empty"),
                arguments("function f", "function declaration"),
                arguments("select x", "select loop"),
                arguments("ls ; done", "for loop"),
                // characters
                arguments("echo a\u0000b", "control character U+0000"),
                arguments("echo 'a\u0000b'", "control character U+0000"),
                arguments("echo \"a\u001bb\"", "control character U+001B"),
                arguments("echo \u007f", "control character U+007F"),
                arguments("echo \u0085", "control character U+0085"),
                arguments("echo \\\u0007", "control character U+0007"),
                arguments("echo \u202eabc", "invisible formatting character U+202E"),
                arguments("echo 'x\u2028y'", "invisible formatting character U+2028"),
                arguments("echo \ud800", "unpaired surrogate"),
                arguments("echo '\udc00'", "unpaired surrogate"),
                arguments("echo a\rb", "newline"),
                // limits
                arguments(String.join(" | ", Collections.nCopies(33, "cmd")), "too many segments"),
                arguments("echo " + "你".repeat(5462), "too long"));
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @MethodSource("ownRejected")
    void should_reject_naming_the_construct_when_line_is_outside_the_subset(String line, String expected) {
        assertThatThrownBy(() -> ShellParser.parse(line))
                .isInstanceOf(PolicyViolationException.class)
                .hasMessageContaining(expected);
    }

    static Stream<Arguments> ownAccepted() {
        return Stream.of(
                arguments("git log HEAD~1", List.of("git", "log", "HEAD~1")),
                arguments("echo a~b", List.of("echo", "a~b")),
                arguments("echo '~' \\~ \"~/x\"", List.of("echo", "~", "~", "~/x")),
                arguments("echo '{a,b}' \\{1..3\\}", List.of("echo", "{a,b}", "{1..3}")),
                arguments("jq '{name, age}' work/people.json", List.of("jq", "{name, age}", "work/people.json")),
                arguments("echo {} a{b}c {x.y}", List.of("echo", "{}", "a{b}c", "{x.y}")),
                arguments("echo a\\*b \\$HOME '#' \\! \\> \\|", List.of("echo", "a*b", "$HOME", "#", "!", ">", "|")),
                arguments("echo 'a\tb'", List.of("echo", "a\tb")),
                arguments("grep -c naïve work/ünïcode.txt", List.of("grep", "-c", "naïve", "work/ünïcode.txt")),
                arguments("echo 😀 '😀' \"😀\" \\😀", List.of("echo", "😀", "😀", "😀", "😀")),
                arguments("echo \"it's\" 'say \"hi\"'", List.of("echo", "it's", "say \"hi\"")),
                arguments("echo a=b --x=y", List.of("echo", "a=b", "--x=y")),
                arguments("echo \"a!b\"", List.of("echo", "a!b")),
                arguments("python3 work/x.py --ratio=0.5 -n 10", List.of("python3", "work/x.py", "--ratio=0.5", "-n",
                        "10")));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("ownAccepted")
    void should_parse_literally_when_special_characters_are_quoted_or_harmless(String line, List<String> argv) {
        ParsedCommand parsed = ShellParser.parse(line);

        assertThat(parsed.segments()).hasSize(1);
        assertThat(parsed.segments().get(0).argv()).isEqualTo(argv);
    }

    @Test
    void should_accept_32_segments_and_reject_33() {
        String max = String.join(" | ", Collections.nCopies(CommandPolicy.MAX_SEGMENTS, "cmd"));
        String over = max + " | cmd";

        assertThat(ShellParser.parse(max).segments()).hasSize(32);
        assertThatThrownBy(() -> ShellParser.parse(over)).hasMessageContaining("too many segments");
    }

    @Test
    void should_accept_exactly_16_KiB_and_reject_one_byte_more() {
        String max = "echo " + "a".repeat(CommandPolicy.MAX_COMMAND_BYTES - 5);
        String multiByteMax = "echo " + "a".repeat(CommandPolicy.MAX_COMMAND_BYTES - 5 - 3) + "é" + "a";

        assertThat(ShellParser.parse(max).segments().get(0).argv().get(1)).hasSize(CommandPolicy.MAX_COMMAND_BYTES - 5);
        assertThat(ShellParser.parse(multiByteMax)).isNotNull();
        assertThatThrownBy(() -> ShellParser.parse(max + "a")).hasMessageContaining("too long (16385 bytes");
        assertThatThrownBy(() -> ShellParser.parse(multiByteMax + "é")).hasMessageContaining("too long");
    }

    @Test
    void should_reject_null_as_empty() {
        assertThatThrownBy(() -> ShellParser.parse(null)).isInstanceOf(PolicyViolationException.class)
                .hasMessageContaining("empty");
    }

    @Test
    void should_report_the_position_when_rejecting() {
        assertThatThrownBy(() -> ShellParser.parse("echo ok; cat < x"))
                .hasMessageContaining("(at character 14)");
    }

    @Test
    void should_parse_in_linear_time_when_input_is_pathological() {
        // Many quotes and escapes at the length limit: must finish without quadratic work or deep recursion.
        String line = "echo " + "'a'\\b\"c\"".repeat((CommandPolicy.MAX_COMMAND_BYTES - 5) / 9);
        assertThat(ShellParser.parse(line).segments().get(0).argv()).hasSize(2);
    }

    // ---------------------------------------------------------------- rendering

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("renderingSources")
    void should_render_a_script_that_parses_back_to_the_same_command(String line) {
        ParsedCommand parsed = ShellParser.parse(line);

        ParsedCommand again = ShellParser.parse(parsed.toShellScript());

        assertThat(again).isEqualTo(parsed);
    }

    static Stream<String> renderingSources() {
        return Stream.concat(referenceAccepted().map(a -> (String) a.get()[0]),
                ownAccepted().map(a -> (String) a.get()[0]));
    }

    @Test
    void should_quote_only_words_that_need_it() {
        ParsedCommand parsed = ShellParser.parse("grep -c 'a b' work/x.csv | sort -t, -k2 && echo \"it's\" '' '$x'");

        assertThat(parsed.toShellScript())
                .isEqualTo("grep -c 'a b' work/x.csv | sort -t, -k2 && echo 'it'\\''s' '' '$x'");
        assertThat(parsed.toString()).isEqualTo(parsed.toShellScript());
    }

    @Test
    void should_quote_command_names_that_a_shell_would_read_as_keywords_or_assignments() {
        assertThat(ParsedCommand.quote("if", true)).isEqualTo("'if'");
        assertThat(ParsedCommand.quote("if", false)).isEqualTo("if");
        assertThat(ParsedCommand.quote("A=b", true)).isEqualTo("'A=b'");
        assertThat(ParsedCommand.quote("A=b", false)).isEqualTo("A=b");
        assertThat(ParsedCommand.quote("~", false)).isEqualTo("'~'");
        assertThat(ParsedCommand.quote("{}", false)).isEqualTo("'{}'");
    }

    @Test
    void should_list_the_command_of_each_segment() {
        assertThat(ShellParser.parse("cat a | grep b && wc -l x").commands()).containsExactly("cat", "grep", "wc");
    }

    static String describe(List<List<String>> argvs) {
        return argvs.stream().map(a -> String.join(" ", a)).collect(Collectors.joining(" / "));
    }
}
