package dev.codeexec.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.codeexec.engine.Capabilities;
import dev.codeexec.engine.CommandAllowListEnforcement;
import dev.codeexec.engine.PolicyViolationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The option tables of tools that run a program named in their options, the script-only interpreters and the code
 * URLs of interpreter options: each refusal next to the everyday use of the same tool, which passes. (The corpus that
 * runs the attacks for real is {@code CommandIdentityAttackIT}.)
 */
class RouteOptionValidatorsTest {

    private static final CommandPolicy POLICY = CommandPolicy.builder().build();

    @ParameterizedTest
    @ValueSource(strings = {
        "make SHELL=/bin/sh x", "make CC=curl work/a", "make 'CFLAGS=-wrapper x' all", "make '--eval=x: ; @id' x",
        "make --ev=x x", "make -sE x x", "make -f - x", "make --file=/dev/stdin", "make -f/dev/stdin",
        "gcc -wrapper curl,x -c a.c", "gcc -Bwork/t/ a.c", "gcc -B work/t a.c", "cc -fplugin=work/p.so a.c",
        "clang -fpass-plugin=work/p.so a.c", "gcc -specs=work/s a.c", "gcc --specs=work/s a.c",
        "clang -fuse-ld=/usr/bin/curl a.c", "clang --ld-path=work/ld a.c", "clang -Xclang -load a.c",
        "gcc -Wl,-plugin,work/p.so a.c", "gcc -Xlinker -plugin a.c", "gcc @work/opts a.c",
        "x86_64-linux-gnu-gcc-12 -wrapper x a.c", "aarch64-linux-gnu-g++ -Bwork a.c", "clang-18 -Bwork a.c",
        "clang --prefix=work/ a.c", "gcc -ccc-gcc-name x a.c",
        "rsync -e sh a b", "rsync -avze sh a b", "rsync --rsh=sh a b", "rsync --rs=sh a b", "rsync --rsync-path=x a b",
        "rsync -M--x a b", "rsync host:a b", "rsync a user@host:b", "rsync --daemon",
        "ssh -o ProxyCommand=curl h", "ssh -oProxyCommand=curl h", "ssh -o 'proxycommand curl' h",
        "ssh -o LocalCommand=x -o PermitLocalCommand=yes h", "ssh -F work/cfg h", "ssh -I work/p.so h",
        "ssh -vo KnownHostsCommand=x h", "ssh -o Match=exec h",
        "scp -S curl h:x y", "scp -o ProxyCommand=x h:x y", "scp -F work/c h:x y",
        "zip -TT curl z.zip a", "zip -T -TT=curl z.zip a", "zip --unzip-command=curl z.zip a",
        "sdiff --diff-program=curl a b", "diff3 --diff-prog=curl a b c",
        "install --strip-program=curl -s a b", "install --strip-prog=curl a b",
        "man -P curl ls", "man -Pcurl ls", "man --pager=curl ls", "man -H ls", "man -C work/c ls",
        "wget -e use_askpass=curl http://x", "wget --execute=x http://x", "wget --use-askpass=curl http://x",
        "wget -qe x http://x",
        "nc -e /bin/sh h 1", "nc -c id h 1", "ncat --sh-exec id h 1", "ncat --exec=/bin/sh h 1",
        "nc.traditional -e sh h 1",
        "ip netns exec ns curl", "ip vrf exec v curl", "ip -b work/batch", "ip -batch work/batch",
        "sqlite3 db '.shell id'", "sqlite3 -cmd '.system id' db",
        "java -XX:OnError=curl -jar x.jar", "java -XX:OnOutOfMemoryError=curl X", "java @work/args X",
        "cargo --config target.x.runner=curl run", "cargo -Zunstable-options build",
        "go run -exec curl .", "go test --exec=curl .", "go build -toolexec=curl .",
        "deno eval 1", "deno run https://x/y.ts", "deno run data:text/javascript,1", "bun -e 1", "bun x cowsay",
        "bun exec 'curl x'", "deno task build", "deno run npm:cowsay",
        "julia -e 1", "julia --eval=1", "julia", "guile -c 1", "elixir -e 1", "groovy -e 1", "jshell",
        "raku -e 1", "racket -e 1", "erl -eval 1", "sbcl --eval 1", "ipython -c 1", "osascript -e 1",
        "perl '-d:Foo;system(1)' work/x.pl", "perl '-F/x/;system(1);/' -ane1 work/x.pl", "perl '-M-x;1' work/x.pl",
        "ruby -rdata:x work/x.rb", "php -d auto_prepend_file=data://text/plain,x work/x.php",
        "php -d auto_prepend_file=php://stdin work/x.php", "node --loader=https://x/y.mjs work/x.js",
        "node --test-reporter=data:x --test", "node --experimental-loader data:x work/x.js",
        "node --import=DATA:x work/x.js",
    })
    void should_refuse_when_an_option_runs_a_program_or_carries_code(String line) {
        assertThatThrownBy(() -> POLICY.check(line)).isInstanceOf(PolicyViolationException.class)
                .hasMessageContaining("was refused by its argument validator");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "make -f work/Makefile x", "make -C work -j4 all", "make -n", "make -k test",
        "gcc -c work/a.c -o work/a.o -O2 -Wall -Iinc", "cc -fuse-ld=lld a.c", "clang -Xclang -ast-dump a.c",
        "gcc -Wl,--as-needed a.c", "x86_64-linux-gnu-gcc-12 -c a.c",
        "rsync -av work/a/ work/b/", "rsync -a host::module/x work/", "rsync -a rsync://host/m/x work/",
        "ssh -o BatchMode=yes h true", "ssh -p 2222 h", "scp -o BatchMode=yes h:x work/",
        "zip -r z.zip work", "zip -T z.zip a", "sdiff a b", "install -m 644 -s a b", "install --strip a b",
        "man ls", "man 5 passwd", "wget -q -O out http://x", "nc -z h 1", "ip addr", "ip route show",
        "sqlite3 -safe db 'select 1'", "java -jar x.jar", "java work/Main.java", "cargo build --release",
        "cargo run", "go build ./...", "go test -run X .", "deno run work/x.ts", "bun work/x.js",
        "julia work/x.jl", "julia --version", "raku work/x.raku", "elixir work/x.exs",
        "perl -d:Trace work/x.pl", "perl -MO=Deparse work/x.pl", "perl -Mstrict=vars work/x.pl",
        "perl -F, -an work/x.pl", "perl -F/,/ -an work/x.pl", "ruby -rjson work/x.rb", "php -d memory_limit=1G"
                + " work/x.php", "node --test-reporter=spec --test", "node --import=./work/r.mjs work/x.js",
        "node --inspect=127.0.0.1:9229 work/x.js",
    })
    void should_pass_the_everyday_use_of_the_same_tools(String line) {
        assertThatCode(() -> POLICY.check(line)).doesNotThrowAnyException();
    }

    @Test
    void should_declare_text_level_allow_list_enforcement_by_default() {
        Capabilities c = Capabilities.builder().build();

        assertThat(c.commandAllowListEnforcement()).isEqualTo(CommandAllowListEnforcement.TEXT);
        assertThat(c.toBuilder().commandAllowListEnforcement(CommandAllowListEnforcement.KERNEL).build()
                .commandAllowListEnforcement()).isEqualTo(CommandAllowListEnforcement.KERNEL);
        assertThat(c.toBuilder().commandAllowListEnforcement(null).build().commandAllowListEnforcement())
                .isEqualTo(CommandAllowListEnforcement.TEXT);
    }

    @Test
    void should_be_equal_when_two_default_policies_are_built() {
        assertThat(CommandPolicy.builder().build()).isEqualTo(CommandPolicy.builder().build());
    }
}
