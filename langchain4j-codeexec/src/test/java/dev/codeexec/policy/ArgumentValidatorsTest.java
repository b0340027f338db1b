package dev.codeexec.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.params.provider.Arguments.arguments;

import dev.codeexec.engine.PolicyViolationException;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each default argument validator, through a default policy: attacks (each a known route from the arguments to
 * another program or a file write) must be refused; the everyday uses next to them must pass.
 */
class ArgumentValidatorsTest {

    private static final CommandPolicy POLICY = CommandPolicy.builder().build();

    // ---------------------------------------------------------------- find

    static Stream<Arguments> findAttacks() {
        return Stream.of(
                arguments("find . -exec id \\;", "-exec"),
                arguments("find . -name x -execdir id {} +", "-execdir"),
                arguments("find . -ok id \\;", "-ok"),
                arguments("find . -okdir id \\;", "-okdir"),
                arguments("find work -delete", "-delete"),
                arguments("find . -fprint out/list", "-fprint"),
                arguments("find . -fprint0 out/list", "-fprint0"),
                arguments("find . -fprintf out/list %p", "-fprintf"),
                arguments("find . -fls out/list", "-fls"),
                arguments("/usr/bin/find . '-exec' id ';'", "-exec"),
                arguments("gfind . -exec id \\;", "-exec"));
    }

    static Stream<String> findControls() {
        return Stream.of("find . -name x.csv -type f", "find work -maxdepth 2 -print",
                "find . -newer a -printf '%p\\n'", "find . -path './out/*' -size +1k", "find");
    }

    // ---------------------------------------------------------------- awk

    static Stream<Arguments> awkAttacks() {
        return Stream.of(
                arguments("awk 'BEGIN{system(\"id\")}'", "system"),
                arguments("awk 'BEGIN{print | \"sh\"}'", "'|'"),
                arguments("awk 'BEGIN{\"id\" | getline x; print x}'", "'|'"),
                arguments("awk 'BEGIN{print \"x\" > \"/tmp/f\"}'", "'>'"),
                arguments("awk '{print >> \"f\"}' data", "'>'"),
                arguments("awk '{print $0 |||\"sh\"}' data", "'|'"),
                arguments("gawk 'BEGIN{\"id\" |& getline}'", "'|'"),
                arguments("gawk '@load \"filefuncs\"'", "'@'"),
                arguments("gawk 'BEGIN{f=\"sys\" \"tem\"; @f(\"id\")}'", "'@'"),
                arguments("awk -f prog.awk data", "'-f'"),
                arguments("awk -vx=1 -f prog.awk data", "'-f'"),
                arguments("gawk -E prog.awk", "'-E'"),
                arguments("gawk -i inc.awk 'BEGIN{}'", "'-i'"),
                arguments("gawk -l ./evil.so 'BEGIN{}'", "'-l'"),
                arguments("gawk --load=./evil.so 'BEGIN{}'", "'--load'"),
                arguments("gawk --include=x 'BEGIN{}'", "'--include'"),
                arguments("gawk --file=p.awk", "'--file'"),
                arguments("gawk --exec=p.awk", "'--exec'"),
                arguments("gawk --dump-variables=out/f '{}'", "'--dump-variables'"),
                arguments("mawk -W exec prog.awk", "'-W'"),
                arguments("gawk -W source='BEGIN{}'", "'-W'"),
                arguments("awk -e 'BEGIN{system(1)}'", "system"),
                arguments("gawk --source='BEGIN{system(1)}'", "system"),
                arguments("gawk --source 'BEGIN{system(1)}'", "system"),
                arguments("awk -- 'BEGIN{system(1)}'", "system"),
                arguments("awk -F, 'BEGIN{system(1)}'", "system"),
                arguments("nawk 'BEGIN{system(1)}'", "system"),
                arguments("mawk 'BEGIN{print | \"cat 1>&2\"}'", "'|'"),
                arguments("/usr/bin/awk 'BEGIN{system(1)}'", "system"));
    }

    static Stream<String> awkControls() {
        return Stream.of("awk '{print $1}' work/data.csv", "awk -F, '{s+=$2} END {print s}' work/d.csv",
                "awk -F '|' '{print $2}' f", "awk -F'|' '{print $2}' f", "awk -v n=3 'NR < n' f",
                "awk -vn=3 'NR <= n' f", "awk '$1 == \"a\" || $2 == \"b\"' f", "gawk --sandbox -e 'BEGIN{print 1}'",
                "awk -- '{print}' f", "awk 'BEGIN{printf \"%d\\n\", 100 < 3}'", "awk '{print}' x=1 f",
                "mawk -F: '{print $1}' f", "awk --version", "awk");
    }

    // ---------------------------------------------------------------- python

    static Stream<Arguments> pythonAttacks() {
        return Stream.of(
                arguments("python3 -c 'import os; os.system(\"id\")'", "'-c'"),
                arguments("python3 -Ic x", "'-c'"),
                arguments("python3 -Bc x", "'-c'"),
                arguments("python3 -c'x'", "'-c'"),
                arguments("python3 -m pip install requests", "'-m'"),
                arguments("python3 -m http.server", "'-m'"),
                arguments("python3 -Wignore -c x", "'-c'"),
                arguments("python3 -W ignore -c x", "'-c'"),
                arguments("python3 -X dev -c x", "'-c'"),
                arguments("python3 --check-hash-based-pycs always -c x", "'-c'"),
                arguments("python3 -", "stdin"),
                arguments("python3", "stdin"),
                arguments("python3 -u", "stdin"),
                arguments("python3 -i", "stdin"),
                arguments("python3 --unknown x.py", "not recognised"),
                arguments("python3 -j x.py", "not recognised"),
                arguments("python3.11 -c x", "'-c'"),
                arguments("python -c x", "'-c'"),
                arguments("/usr/bin/python3 -m venv v", "'-m'"),
                arguments("pypy3 -c x", "'-c'"));
    }

    static Stream<String> pythonControls() {
        return Stream.of("python3 work/script.py", "python3 -u work/s.py -c foo -m bar",
                "python3 -B -W ignore work/s.py", "python3 -X utf8 work/s.py", "python3 -- work/s.py",
                "python3 --version", "python3 -V", "python3.11 work/s.py", "python3 -OO -s work/s.py arg");
    }

    // ---------------------------------------------------------------- git

    static Stream<Arguments> gitAttacks() {
        return Stream.of(
                arguments("git -c core.pager='sh -c id' log", "'core.pager'"),
                arguments("git -c core.fsmonitor=x status", "'core.fsmonitor'"),
                arguments("git -c alias.x='!id' x", "'alias.x'"),
                arguments("git -c include.path=work/evil status", "'include.path'"),
                arguments("git -c Core.SshCommand=x fetch", "'Core.SshCommand'"),
                arguments("git -c", "''"),
                arguments("git --config-env=core.pager=X log", "--config-env"),
                arguments("git --exec-path=work/bin status", "--exec-path"),
                arguments("git -x status", "not recognised"),
                arguments("git config core.pager 'sh -c id'", "'core.pager'"),
                arguments("git config alias.st '!id'", "'alias.st'"),
                arguments("git config --add core.sshCommand x", "'core.sshCommand'"),
                arguments("git config --global core.hooksPath work/hooks", "'core.hooksPath'"),
                arguments("git config set core.editor x", "'core.editor'"),
                arguments("git config set --append core.editor x", "'core.editor'"),
                arguments("git config --file x --replace-all core.pager y", "'core.pager'"),
                arguments("git config --rename-section alias other", "'alias'"),
                arguments("git config --edit", "editor"),
                arguments("git config -e", "editor"),
                arguments("git config edit", "editor"),
                arguments("git clone --upload-pack='touch x' repo dst", "--upload-pack"),
                arguments("git clone --upload-p=x repo", "--upload-pack"),
                arguments("git clone -u 'touch x' repo", "clone -u"),
                arguments("git clone -qu x repo", "clone -u"),
                arguments("git clone -c core.fsmonitor=x repo", "'core.fsmonitor'"),
                arguments("git clone --config core.fsmonitor=x repo", "'core.fsmonitor'"),
                arguments("git clone --config=core.fsmonitor=x repo", "'core.fsmonitor'"),
                arguments("git clone --conf=core.fsmonitor=x repo", "--config"),
                arguments("git clone -qc core.fsmonitor=x repo", "separate option"),
                arguments("git clone --template=work/tpl repo", "--template"),
                arguments("git init --template work/tpl", "--template"),
                arguments("git fetch --upload-pack=x origin", "--upload-pack"),
                arguments("git push --receive-pack=x origin", "--receive-pack"),
                arguments("git ls-remote -u x origin", "ls-remote -u"),
                arguments("git ls-remote --upload-pack=x origin", "--upload-pack"),
                arguments("git archive --remote=x --exec=y HEAD", "--exec"),
                arguments("git rebase -x id HEAD~1", "rebase -x"),
                arguments("git rebase --exec id main", "--exec"),
                arguments("git rebase -ix id main", "rebase -x"),
                arguments("git grep -O id pattern", "grep -O"),
                arguments("git grep --open-files-in-pager=id x", "--open-files-in-pager"),
                arguments("git submodule foreach id", "submodule foreach"),
                arguments("git bisect run id", "bisect run"),
                arguments("git difftool", "external diff"),
                arguments("git mergetool", "merge tool"),
                arguments("git filter-branch --tree-filter id", "filters"),
                arguments("git hook run pre-commit", "hooks"),
                arguments("git daemon", "server"),
                arguments("git instaweb", "web server"),
                arguments("git send-email x", "mail"),
                arguments("git help -w log", "help -w"),
                arguments("git help --web log", "help -w"),
                arguments("git clone 'ext::sh -c id' dst", "transport that runs a command"),
                arguments("git fetch fd::17", "transport that runs a command"),
                arguments("git -C work/repo -c core.pager=x log", "'core.pager'"),
                // writes to a file the command line names, in every abbreviation getopt/parse-options accepts
                arguments("git diff --output=/home/u/.bashrc", "(--output)"),
                arguments("git log -p --output /tmp/x", "(--output)"),
                arguments("git show --outp=x HEAD", "(--output)"),
                arguments("git diff --no-index --o=x a b", "git's '--o'"),
                arguments("git archive --output=x.tar HEAD", "(--output)"),
                arguments("git archive -o x.tar HEAD", "archive -o"),
                arguments("git archive -vo x.tar HEAD", "archive -o"),
                // abbreviations of refused long options
                arguments("git config --global --ed", "editor"),
                arguments("git config --edi", "editor"),
                arguments("git fetch --upload-p=x origin", "--upload-pack"),
                arguments("git push --rec=x origin", "--receive-pack"),
                arguments("git rebase --exe=id main", "(--exec)"),
                arguments("git init --templ=work/tpl", "--template"),
                arguments("git grep --open-f x", "--open-files-in-pager"),
                arguments("git --exec-p=work/bin status", "not recognised"));
    }

    static Stream<String> gitControls() {
        return Stream.of("git status", "git log --oneline -n 5", "git -C work/repo status",
                "git -c user.name=Bot -c user.email=bot@example.com commit -m x", "git config user.name Bot",
                "git config --global user.email bot@example.com", "git config --get core.pager", "git config core.pager",
                "git config -l", "git config --list --show-origin", "git config get core.pager",
                "git config --unset user.email", "git clone https://example.com/r.git dst",
                "git clone -c user.name=x https://example.com/r.git", "git commit -c HEAD", "git add -u",
                "git push -u origin main", "git grep -n foo", "git log --exclude=refs/x --all", "git --no-pager log",
                "git --version", "git", "git -c color.ui=always log", "git -c advice.detachedHead=false checkout x",
                "git diff --ext-diff", "git --git-dir=work/r/.git log", "git init -b main work/r",
                "git diff --output-indicator-new=+ HEAD", "git checkout --ours f", "git log --oneline",
                "git format-patch -o out/patches HEAD~1", "git archive --format=tar HEAD", "git config --get-all x.y");
    }

    // ---------------------------------------------------------------- tar

    static Stream<Arguments> tarAttacks() {
        return Stream.of(
                arguments("tar -xf a.tar --to-command='sh -c id'", "--to-command"),
                arguments("tar -xf a.tar --to-command id", "--to-command"),
                arguments("tar --to-com=id -xf a.tar", "--to-command"),
                arguments("tar -cf a.tar --use-compress-program=evil work", "--use-compress-program"),
                arguments("tar -cf a.tar --use=evil work", "--use-compress-program"),
                arguments("tar -I evil -cf a.tar work", "'-I'"),
                arguments("tar -cIevil -f a.tar work", "'-I'"),
                arguments("tar cIf evil a.tar work", "'-I'"),
                arguments("tar -cf a.tar --checkpoint=1 --checkpoint-action=exec=id work", "--checkpoint-action"),
                arguments("tar -cf a.tar --checkpoint-a=exec=id work", "--checkpoint-action"),
                arguments("tar -c -F script -f a.tar work", "'-F'"),
                arguments("tar --info-script=x -cf a.tar work", "--info-script"),
                arguments("tar --new-volume-script=x -cf a.tar work", "--new-volume-script"),
                arguments("tar --rsh-command=x -xf a.tar", "--rsh-command"),
                arguments("tar --rmt-command=x -xf a.tar", "--rmt-command"),
                arguments("tar -cf a.tar -T list", "--files-from"),
                arguments("tar -cf a.tar --files-from=list", "--files-from"),
                arguments("tar -cf a.tar --files-from list --verbatim-files-from", "--files-from"),
                arguments("tar -cf a.tar --verbatim-files-from --no-verbatim-files-from -T list", "--files-from"),
                arguments("tar cTf list a.tar", "--files-from"),
                arguments("tar -xf host:/a.tar", "host:path"),
                arguments("tar --file=host:a.tar -x", "host:path"),
                arguments("tar --file host:a.tar -x", "host:path"),
                arguments("tar xf host:a.tar", "host:path"),
                arguments("tar -xvfhost:a.tar", "host:path"),
                arguments("bsdtar -cf a.tar --use-compress-program=evil work", "--use-compress-program"),
                // abbreviations getopt_long accepts
                arguments("tar -xf a.tar --to=id", "--to-command"),
                arguments("tar -cf a.tar --use-compress=evil work", "--use-compress-program"),
                arguments("tar -cf a.tar --checkpoint-act=exec=id work", "--checkpoint-action"),
                arguments("tar -cf a.tar --info=x work", "--info-script"),
                arguments("tar -cf a.tar --new-vol=x work", "--new-volume-script"),
                arguments("tar -xf a.tar --rsh=x", "--rsh-command"),
                arguments("tar -xf a.tar --rmt-c=x", "--rmt-command"),
                arguments("tar -cf a.tar --files=list", "--files-from"));
    }

    static Stream<String> tarControls() {
        return Stream.of("tar -czf out/a.tgz work", "tar xzf a.tgz -C work", "tar -xf a.tar --checkpoint=100",
                "tar -cf a.tar --verbatim-files-from -T list", "tar -xf host:a.tar --force-local",
                "tar -xf work/a:b.tar", "tar --zstd -cf a.tar.zst work", "tar -tf a.tar", "tar -tvf a.tar",
                "tar --file=a.tar -x", "tar cf - work", "tar -C work -xf a.tar --to-stdout");
    }

    // ---------------------------------------------------------------- sed

    static Stream<Arguments> sedAttacks() {
        return Stream.of(
                arguments("sed 'e id'", "'e' command"),
                arguments("sed '1e id' f", "'e' command"),
                arguments("sed -n '/x/e id' f", "'e' command"),
                arguments("sed 's/.*/id/e' f", "s///e"),
                arguments("sed 's/a/b/w out' f", "s///w"),
                arguments("sed 's/a/b/gw out' f", "s///w"),
                arguments("sed 's/a/b/ w out' f", "'w' command"),
                arguments("sed 'w out' f", "'w' command"),
                arguments("sed '$W out' f", "'W' command"),
                arguments("sed 'r /etc/passwd' f", "'r' command"),
                arguments("sed '1R x' f", "'R' command"),
                arguments("sed -e p -e 'e id' f", "'e' command"),
                arguments("sed -n -e 'p;e id' f", "'e' command"),
                arguments("sed -ne 'e id' f", "'e' command"),
                arguments("sed --expression='e id' f", "'e' command"),
                arguments("sed --expression 'e id' f", "'e' command"),
                arguments("sed 's/[/]/X/e' f", "s///e"),
                arguments("sed 's/[]/]/X/e' f", "s///e"),
                arguments("sed 's|a|b|;e id' f", "'e' command"),
                arguments("sed '1!e id' f", "'e' command"),
                arguments("sed '/a/,/b/ ! e id' f", "'e' command"),
                arguments("sed '\\,x,e id' f", "'e' command"),
                arguments("sed '/x/I e id' f", "'e' command"),
                arguments("sed ':a;e id' f", "'e' command"),
                arguments("sed 'y/abc/xyz/;e id' f", "'e' command"),
                arguments("sed '1{e id' f", "'e' command"),
                arguments("sed '1~2e id' f", "'e' command"),
                arguments("sed 'sxaxbxe' f", "delimiter"),
                arguments("sed 's[a[b[' f", "delimiter"),
                arguments("sed 's/a/b/z' f", "flag"),
                arguments("sed ': a b' f", "label"),
                arguments("sed 'b x;e id' f", "'e' command"),
                arguments("sed 's/a/b' f", "unterminated"),
                arguments("sed 's/[/X/' f", "unterminated"),
                arguments("sed 's/[[:alpha:/X/' f", "unterminated"),
                arguments("sed -f script.sed f", "'-f'"),
                arguments("sed --file=x f", "'-f'"),
                arguments("sed -i.bak/x 's/a/b/' f", "suffix"),
                arguments("sed --in-place=../x 's/a/b/' f", "suffix"),
                arguments("sed -x f", "'-x'"),
                arguments("sed --unknown f", "'--unknown'"),
                arguments("sed -i '' 'w /tmp/x' f", "'w' command"),
                arguments("gsed 'e id' f", "'e' command"),
                arguments("sed 'k' f", "not a sed command"));
    }

    static Stream<String> sedControls() {
        return Stream.of("sed 's/a/b/g' f", "sed -n '1,5p' f", "sed -E 's/(a|b)+/x/' f", "sed '/start/,/end/d' f",
                "sed -i 's/a/b/' work/f", "sed -i.bak 's/a/b/' f", "sed 's/[/]/X/' f", "sed 's/[]/]/X/' f",
                "sed 'y/abc/xyz/' f", "sed ':a;N;$!ba;s/\\n/ /g' f", "sed -e 's/a/b/' -e 's/c/d/' f",
                "sed '1~2d' f", "sed '0,/re/s//X/' f", "sed -n '$=' f", "sed 'a hello; e id' f",
                "sed --sandbox 's/a/b/' f", "sed 's/a/b/2' f", "sed '/x/I,+2d' f", "sed -z 's/\\n/,/g' f",
                "sed '\\,a/b,d' f", "sed 's,a,b,' f", "sed 5q f", "sed -n 'l 20' f", "sed '#n' f",
                "sed 's/a/\\//' f", "sed '1{p;p}' f", "sed 's/x/[/;s/y/]/' f", "sed -s -n '$p' a b",
                "sed --posix -n p f", "sed 'w' --help", "sed --version");
    }

    // ---------------------------------------------------------------- sort

    static Stream<Arguments> sortAttacks() {
        return Stream.of(
                arguments("sort -S 16K --compress-program=sh work/data.txt", "(--compress-program)"),
                arguments("sort --compress-program sh f", "(--compress-program)"),
                arguments("sort --compress-prog=sh f", "(--compress-program)"),
                arguments("sort --compress=sh f", "(--compress-program)"),
                arguments("sort --comp=sh f", "(--compress-program)"),
                arguments("sort --co=sh f", "(--compress-program)"),
                arguments("sort --c=sh f", "(--compress-program)"),
                arguments("sort -t -- --compress-program=sh f", "(--compress-program)"),
                arguments("sort f --compress-program=sh", "(--compress-program)"),
                arguments("/usr/bin/sort --compress-program=sh f", "(--compress-program)"),
                arguments("gsort --compress-program=sh f", "(--compress-program)"));
    }

    static Stream<String> sortControls() {
        return Stream.of("sort work/data.txt", "sort -n -k2,2 -t, f", "sort -u -r f", "sort --check f",
                "sort -c f", "sort -S 16K f", "sort -o out/sorted.txt work/data.txt",
                "sort --output=out/sorted.txt f", "sort -T work/tmp f", "sort --debug f", "sort --parallel=2 f",
                "sort --files0-from=list", "gsort -h f", "sort");
    }

    // ---------------------------------------------------------------- split

    static Stream<Arguments> splitAttacks() {
        return Stream.of(
                arguments("split --filter='sh -c id' f", "(--filter)"),
                arguments("split --filt=id f", "(--filter)"),
                arguments("split -l 1 --f=id f", "(--filter)"),
                arguments("gsplit --filter=id f", "(--filter)"),
                arguments("/usr/bin/split -b 1K f --filter=id", "(--filter)"));
    }

    static Stream<String> splitControls() {
        return Stream.of("split -l 100 work/data.csv out/part-", "split -b 1M -d f", "split --lines=10 f",
                "split -n 4 --additional-suffix=.csv f out/x", "split --verbose f");
    }

    // ---------------------------------------------------------------- interpreters other than python

    static Stream<Arguments> interpreterAttacks() {
        return Stream.of(
                // perl
                arguments("perl -e 'exec \"curl\"'", "'-e' runs program text"),
                arguments("perl -E 'say 1'", "'-E'"),
                arguments("perl -lne 'print' f", "'-e'"),
                arguments("perl -lnae 'print' f", "'-e'"),
                arguments("perl -0777ne 'print' f", "'-e'"),
                arguments("perl -l0 -ne 'print' f", "'-e'"),
                arguments("perl -de 0", "'-e'"),
                arguments("perl -CSDe 1", "'-e'"),
                arguments("perl -Ve 1", "'-e'"),
                arguments("perl -w -Mstrict -e 1", "'-e'"),
                arguments("perl -I lib -e 1", "'-e'"),
                arguments("perl -", "'-' reads the program from stdin"),
                arguments("perl", "without a script, perl reads its program from stdin"),
                arguments("perl -w", "without a script"),
                arguments("perl --", "without a script"),
                arguments("perl -S ldd", "'-S' looks the script up on PATH"),
                arguments("perl -Q script.pl", "perl option '-Q' is not recognised"),
                arguments("/usr/bin/perl5.36.0 -e 1", "'-e'"),
                // ruby
                arguments("ruby -e 'exec \"curl\"'", "'-e'"),
                arguments("ruby -ne 'print' f", "'-e'"),
                arguments("ruby -r json -e 1", "'-e'"),
                arguments("ruby", "without a script"),
                arguments("ruby -S rake", "'-S'"),
                arguments("ruby -Kue 1", "'-e'"),
                arguments("ruby -W0e 1", "'-e'"),
                arguments("ruby --weird x.rb", "ruby option '--weird' is not recognised"),
                // node
                arguments("node -e 'require(\"child_process\").execSync(\"curl\")'", "'-e'"),
                arguments("node --eval 'process.exit()'", "'--eval'"),
                arguments("node --eval='1'", "'--eval'"),
                arguments("node -p 1", "'-p'"),
                arguments("node -pe 1", "'-p'"),
                arguments("node --print 1", "'--print'"),
                arguments("node -i", "'-i' reads the program from stdin"),
                arguments("node --interactive", "'--interactive'"),
                arguments("node", "without a script, node reads its program from stdin"),
                arguments("node -", "'-'"),
                arguments("node --run build", "'--run' runs a package.json script"),
                arguments("node '--import=data:text/javascript,process.exit()' x.js", "'data:' URL"),
                arguments("node --import 'DATA:text/javascript,1' x.js", "'data:' URL"),
                arguments("node --loader https://example.com/x.mjs x.js", "'https:' URL"),
                arguments("node -r data:text/javascript,1 x.js", "'data:' URL"),
                arguments("node --title x -e 1", "'-e'"),
                arguments("node inspect -e 1", "'-e'"),
                arguments("node --trace-what x.js", "node option '--trace-what' is not recognised"),
                arguments("nodejs -e 1", "'-e'"),
                // php
                arguments("php -r 'system(\"curl\");'", "'-r'"),
                arguments("php -R 'echo 1;' f", "'-R'"),
                arguments("php -B 'x();' -F s.php", "'-B'"),
                arguments("php --run 'echo 1;'", "'--run'"),
                arguments("php -a", "'-a'"),
                arguments("php", "without a script"),
                arguments("php8.2 -d x=1 -r 1", "'-r'"),
                // lua, luajit
                arguments("lua -e 'os.execute(\"curl\")'", "'-e'"),
                arguments("lua -l socket -e 1", "'-e'"),
                arguments("lua -i script.lua", "'-i'"),
                arguments("lua", "without a script"),
                arguments("lua -", "'-'"),
                arguments("luajit -e 1", "'-e'"),
                // Rscript
                arguments("Rscript -e 'system(\"curl\")'", "'-e'"),
                arguments("Rscript --vanilla -e 1", "'-e'"),
                arguments("Rscript -", "'-'"),
                // tcl
                arguments("tclsh", "without a script, tclsh reads its program from stdin"),
                arguments("tclsh -encoding utf-8", "without a script"),
                arguments("tclsh -x", "tclsh option '-x' is not recognised"),
                arguments("tclsh -encoding=utf-8 s.tcl", "tclsh option '-encoding=utf-8' is not recognised"),
                arguments("wish -display :0", "without a script"));
    }

    static Stream<String> interpreterControls() {
        return Stream.of("perl work/script.pl a b", "perl -w -Mstrict -Ilib work/s.pl", "perl -I lib work/s.pl",
                "perl -0777 -n work/s.pl", "perl -CSDA work/s.pl", "perl -l -n work/s.pl", "perl -ie work/fix.pl f",
                "perl -dt:NonStop work/s.pl", "perl -i.bak -p work/fix.pl f", "perl -F: -lan work/s.pl", "perl -c work/s.pl",
                "perl -v", "perl -V", "perl -V:osname", "perl -x work/s.pl", "perl -- work/s.pl -e x",
                "perl work/s.pl -e 'print 1'",
                "ruby work/s.rb", "ruby -w -rjson work/s.rb", "ruby --yjit --enable=frozen-string-literal work/s.rb",
                "ruby --disable-gems work/s.rb", "ruby -W0 -Ku work/s.rb", "ruby -v", "ruby --version", "ruby -c work/s.rb",
                "node work/s.js", "node --test", "node -c work/s.js", "node -r ./setup.js work/s.js",
                "node --import=./register.mjs work/s.js", "node --require node:fs work/s.js",
                "node --max-old-space-size=4096 work/s.js", "node --enable-source-maps --watch work/s.js",
                "node --version", "node -v", "node --test --test-reporter spec work/t.js", "node inspect work/s.js",
                "node work/s.js -e 1", "nodejs work/s.js",
                "php work/s.php", "php -f work/s.php", "php -n -d memory_limit=1G work/s.php", "php -l work/s.php",
                "php -v", "php -m", "php --ini", "php --rf strlen",
                "lua work/s.lua", "lua -l socket work/s.lua", "lua -v", "lua5.4 work/s.lua", "luajit -O3 work/s.lua",
                "luajit -b work/s.lua out/s.o",
                "Rscript work/s.R", "Rscript --vanilla --default-packages=stats work/s.R", "Rscript --file=work/s.R",
                "Rscript", "Rscript --version",
                "tclsh work/s.tcl", "tclsh -encoding utf-8 work/s.tcl", "tclsh8.6 work/s.tcl",
                "wish -display :0 work/s.tcl");
    }

    // ---------------------------------------------------------------- the tests

    static Stream<Arguments> attacks() {
        return Stream.of(findAttacks(), awkAttacks(), pythonAttacks(), gitAttacks(), tarAttacks(), sedAttacks(),
                        sortAttacks(), splitAttacks(), interpreterAttacks())
                .flatMap(s -> s);
    }

    static Stream<String> controls() {
        return Stream.of(findControls(), awkControls(), pythonControls(), gitControls(), tarControls(),
                        sedControls(), sortControls(), splitControls(), interpreterControls())
                .flatMap(s -> s)
                // "sed 'w' --help" is only a parser control; --help makes GNU sed print usage, not run the script.
                .filter(s -> !s.equals("sed 'w' --help"));
    }

    @ParameterizedTest(name = "[{index}] {0} ~ {1}")
    @MethodSource("attacks")
    void should_refuse_when_arguments_run_another_program_or_write_files(String line, String expected) {
        assertThatThrownBy(() -> POLICY.check(line))
                .isInstanceOf(PolicyViolationException.class)
                .hasMessageContaining("was refused by its argument validator")
                .hasMessageContaining(expected);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("controls")
    void should_accept_when_arguments_are_everyday_uses(String line) {
        assertThatCode(() -> POLICY.check(line)).doesNotThrowAnyException();
    }

    @Test
    void should_allow_inline_python_when_opted_in() {
        CommandPolicy policy = CommandPolicy.builder()
                .validator("python", ArgumentValidators.pythonAllowingInlineCode())
                .build();

        assertThat(policy.check("python3 -c 'print(1)'").commands()).containsExactly("python3");
        assertThat(policy.check("python3 -m json.tool f").commands()).containsExactly("python3");
        assertThat(policy.check("python3 -").commands()).containsExactly("python3");
        assertThatThrownBy(() -> policy.check("python3 --weird x.py")).hasMessageContaining("not recognised");
        // positive control: the default refuses the same line
        assertThatThrownBy(() -> POLICY.check("python3 -c 'print(1)'")).hasMessageContaining("'-c'");
    }

    @Test
    void should_scan_multi_line_sed_scripts_when_given_directly() {
        // The parser refuses newlines in a command line, but a validator may be called by other code with any argv.
        ArgumentValidator sed = ArgumentValidators.sed();

        assertThatThrownBy(() -> sed.validate(List.of("sed", "1{\ne id\n}"))).hasMessageContaining("'e' command");
        assertThatThrownBy(() -> sed.validate(List.of("sed", "a\\\ntext\ne id"))).hasMessageContaining("'e'");
        assertThatThrownBy(() -> sed.validate(List.of("sed", "-e", "a\\", "-e", "text", "-e", "w x")))
                .hasMessageContaining("'w' command");
        assertThatCode(() -> sed.validate(List.of("sed", "a\\\ntext e id\\\nmore e id"))).doesNotThrowAnyException();
        assertThatCode(() -> sed.validate(List.of("sed", "#comment e id\np"))).doesNotThrowAnyException();
    }

    @Test
    void should_offer_the_defaults_as_a_fresh_map() {
        var defaults = ArgumentValidators.defaults();

        assertThat(defaults).containsKeys("find", "awk", "gawk", "mawk", "nawk", "python", "pypy", "git", "tar",
                "sed", "sort", "gsort", "split", "perl", "node");
        defaults.clear();
        assertThat(ArgumentValidators.defaults()).isNotEmpty();
        assertThat(ArgumentValidators.python()).hasToString("ArgumentValidators.python()");
        assertThat(ArgumentValidators.sort()).hasToString("ArgumentValidators.sort()");
        assertThat(ArgumentValidators.defaults()).containsKeys("split", "perl", "ruby", "node", "nodejs", "php",
                "lua", "luajit", "rscript", "tclsh", "wish");
        assertThat(ArgumentValidators.split()).hasToString("ArgumentValidators.split()");
        assertThat(ArgumentValidators.perl()).hasToString("ArgumentValidators.perl()");
        assertThat(ArgumentValidators.rscript()).hasToString("ArgumentValidators.rscript()");
    }
}
