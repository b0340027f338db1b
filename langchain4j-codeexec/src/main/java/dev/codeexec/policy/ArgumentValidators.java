package dev.codeexec.policy;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Ready-made {@link ArgumentValidator}s for common commands that can run other programs through their arguments.
 *
 * <p><b>Best effort, and only the command line.</b> Each validator refuses the known routes from the arguments of its
 * command to another program (or to writing files where that is the route) and, where the syntax is rich, accepts only
 * a subset it understands. None of them can see what the command reads from files: a python script, a
 * {@code .git/config} or hook, an awk program file (refused for that reason), a perl or node script, a
 * {@code Makefile}. None covers commands without a validator (npm, pip, cmake, ...); leave those off the allow list,
 * or write a validator. The backend's isolation is what bounds a command that gets through.
 *
 * <p>GNU tools accept any unambiguous prefix of a long option ({@code --compress-prog} for
 * {@code --compress-program}); the validators that refuse long options refuse every prefix of them, and those that
 * accept a list of options accept only the full names.
 *
 * <p>{@link #defaults()} is what {@link CommandPolicy#builder()} starts with.
 */
public final class ArgumentValidators {

    private static final ArgumentValidator FIND = new FindValidator();
    private static final ArgumentValidator AWK = new AwkValidator();
    private static final ArgumentValidator PYTHON = new PythonValidator(false);
    private static final ArgumentValidator PYTHON_INLINE = new PythonValidator(true);
    private static final ArgumentValidator GIT = new GitValidator();
    private static final ArgumentValidator TAR = new TarValidator();
    private static final ArgumentValidator SED = new SedValidator();
    private static final ArgumentValidator SORT = new SortValidator();
    private static final ArgumentValidator SPLIT = new SplitValidator();
    private static final ArgumentValidator PERL = InterpreterValidator.perl();
    private static final ArgumentValidator RUBY = InterpreterValidator.ruby();
    private static final ArgumentValidator NODE = InterpreterValidator.node();
    private static final ArgumentValidator PHP = InterpreterValidator.php();
    private static final ArgumentValidator LUA = InterpreterValidator.lua();
    private static final ArgumentValidator RSCRIPT = InterpreterValidator.rscript();
    private static final ArgumentValidator TCLSH = InterpreterValidator.tclsh();
    private static final ArgumentValidator WISH = InterpreterValidator.wish();

    private ArgumentValidators() {
    }

    /**
     * The default validators by command name: {@code find gfind} ({@link #find()}), {@code awk gawk mawk nawk}
     * ({@link #awk()}), {@code python pypy} ({@link #python()}; names match with versions and build variants, so
     * {@code python3.12} and {@code python3.13t} are covered), {@code git} ({@link #git()}), {@code tar gtar bsdtar}
     * ({@link #tar()}), {@code sed gsed} ({@link #sed()}), {@code sort gsort} ({@link #sort()}), {@code split gsplit}
     * ({@link #split()}), and the interpreters {@code perl} ({@link #perl()}), {@code ruby} ({@link #ruby()}),
     * {@code node nodejs} ({@link #node()}), {@code php php-cli} ({@link #php()}), {@code lua luajit}
     * ({@link #lua()}), {@code Rscript} ({@link #rscript()}), {@code tclsh} ({@link #tclsh()}) and {@code wish}
     * ({@link #wish()}); the option tables of tools that run a program named in their options ({@code make},
     * the C compilers and cross compilers, {@code rsync ssh scp zip sdiff diff3 install man wget nc ip sqlite3 java
     * cargo go deno bun}); and script-only validators for interpreters whose options are not tabled ({@code julia},
     * {@code raku}, {@code guile}, {@code elixir}, {@code groovy}, {@code jshell}, ...). See docs/command-policy.md.
     * A new modifiable map on every call.
     */
    public static Map<String, ArgumentValidator> defaults() {
        Map<String, ArgumentValidator> m = new LinkedHashMap<>();
        m.put("find", FIND);
        m.put("gfind", FIND);
        m.put("awk", AWK);
        m.put("gawk", AWK);
        m.put("mawk", AWK);
        m.put("nawk", AWK);
        m.put("python", PYTHON);
        m.put("pypy", PYTHON);
        m.put("git", GIT);
        m.put("tar", TAR);
        m.put("gtar", TAR);
        m.put("bsdtar", TAR);
        m.put("sed", SED);
        m.put("gsed", SED);
        m.put("sort", SORT);
        m.put("gsort", SORT);
        m.put("split", SPLIT);
        m.put("gsplit", SPLIT);
        m.put("perl", PERL);
        m.put("ruby", RUBY);
        m.put("node", NODE);
        m.put("nodejs", NODE);
        m.put("php", PHP);
        m.put("php-cli", PHP);
        m.put("lua", LUA);
        m.put("luajit", LUA);
        m.put("rscript", RSCRIPT);
        m.put("tclsh", TCLSH);
        m.put("wish", WISH);
        m.putAll(RouteOptionValidators.all());
        return m;
    }

    /**
     * find: refuses {@code -exec -execdir -ok -okdir} (run commands), {@code -delete}, and
     * {@code -fprint -fprint0 -fprintf -fls} (write files).
     */
    public static ArgumentValidator find() {
        return FIND;
    }

    /**
     * awk and its variants: accepts inline program text only, and only text without {@code system}, {@code |} (other
     * than {@code ||}), {@code >} and {@code @}. Conservative: {@code $3 > 100} is refused and must be written
     * {@code 100 < $3}; a regular expression with {@code |} is refused. Program files ({@code -f}), extensions
     * ({@code -l}, {@code @load}) and options other than {@code -F -v -e --source --sandbox} and a few
     * format flags are refused.
     */
    public static ArgumentValidator awk() {
        return AWK;
    }

    /**
     * python: refuses inline code ({@code -c}), modules run as programs ({@code -m}, e.g. {@code -m pip}) and
     * programs read from stdin ({@code -} or no script). Running a script file is allowed, and a script can do
     * anything: an allow-listed python is arbitrary code within the backend's isolation.
     */
    public static ArgumentValidator python() {
        return PYTHON;
    }

    /** python with {@code -c}, {@code -m} and stdin programs allowed; only unknown options are refused. */
    public static ArgumentValidator pythonAllowingInlineCode() {
        return PYTHON_INLINE;
    }

    /**
     * git: refuses {@code -c} and {@code git config} writes outside a few identity and display keys,
     * {@code --config-env}, {@code --exec-path}, {@code --upload-pack}, {@code --receive-pack}, {@code --exec},
     * {@code --template}, {@code --output} and {@code archive -o} (write to any file they name; every long option in
     * any abbreviation), {@code ext::} remotes, {@code rebase -x}, {@code grep -O}, {@code submodule foreach},
     * {@code bisect run}, and subcommands that run tools or servers ({@code difftool}, {@code mergetool},
     * {@code filter-branch}, {@code hook}, {@code daemon}, ...). It cannot see hooks, aliases or config in the
     * repository, which a model that writes files can create.
     */
    public static ArgumentValidator git() {
        return GIT;
    }

    /**
     * tar: refuses {@code --to-command}, {@code --use-compress-program}/{@code -I}, {@code --checkpoint-action},
     * {@code --info-script}/{@code --new-volume-script}/{@code -F}, {@code --rsh-command}, {@code --rmt-command} (any
     * abbreviation), {@code -T}/{@code --files-from} without {@code --verbatim-files-from}, and {@code host:path}
     * archives without {@code --force-local}.
     */
    public static ArgumentValidator tar() {
        return TAR;
    }

    /**
     * sed: parses the script and refuses the {@code e}, {@code r}, {@code R}, {@code w} and {@code W} commands and the
     * {@code s///e} and {@code s///w} flags (what GNU sed's {@code --sandbox} disables), script files ({@code -f}),
     * unknown options, and scripts it cannot parse.
     */
    public static ArgumentValidator sed() {
        return SED;
    }

    /**
     * sort: refuses {@code --compress-program} in any abbreviation ({@code --compress-prog}, {@code --co}, ...), which
     * runs a program on sort's temporary files. Allows {@code -o}/{@code --output} (under a policy there is no
     * redirection, so it is how sorted output reaches a file; the backend confines where it can write) and
     * {@code -T}.
     */
    public static ArgumentValidator sort() {
        return SORT;
    }

    /** split: refuses {@code --filter} in any abbreviation, which runs a shell command on every piece. */
    public static ArgumentValidator split() {
        return SPLIT;
    }

    /**
     * perl: refuses program text ({@code -e}, {@code -E}, also in clusters such as {@code -lne}), programs from stdin
     * ({@code -} or no script), {@code -S} (looks the script up on PATH) and switches it does not know. Running a
     * script file is allowed, with everything the script does. Remove it ({@code .validator("perl", null)}) to allow
     * one-liners.
     */
    public static ArgumentValidator perl() {
        return PERL;
    }

    /** ruby: refuses {@code -e}, programs from stdin, {@code -S} and unknown options; scripts are allowed. */
    public static ArgumentValidator ruby() {
        return RUBY;
    }

    /**
     * node: refuses {@code -e --eval -p --print}, {@code -i --interactive}, programs from stdin, {@code --run}
     * (package.json scripts run by a shell), module options ({@code -r --require --import --loader}) given a
     * {@code data:} or remote URL, and bare options it does not know; {@code --name=value} options and scripts are
     * allowed.
     */
    public static ArgumentValidator node() {
        return NODE;
    }

    /** php: refuses {@code -r -B -R -E} and their long forms, {@code -a}, programs from stdin and unknown options. */
    public static ArgumentValidator php() {
        return PHP;
    }

    /** lua and luajit: refuse {@code -e}, {@code -i}, programs from stdin and unknown options. */
    public static ArgumentValidator lua() {
        return LUA;
    }

    /** Rscript: refuses {@code -e} and {@code -} (stdin); scripts and R's options are allowed. */
    public static ArgumentValidator rscript() {
        return RSCRIPT;
    }

    /** tclsh: refuses running without a script (it then reads stdin) and unknown options. */
    public static ArgumentValidator tclsh() {
        return TCLSH;
    }

    /** wish: refuses running without a script (it then reads stdin) and options other than Tk's. */
    public static ArgumentValidator wish() {
        return WISH;
    }
}
