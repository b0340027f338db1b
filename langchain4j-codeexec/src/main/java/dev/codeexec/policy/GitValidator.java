package dev.codeexec.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * git: refuses the command-line routes by which git runs other programs.
 * <ul>
 *   <li>global {@code -c key=value} and {@code git config} writes, except for a few identity and display keys
 *       ({@code user.name}, {@code user.email}, {@code init.defaultBranch}, {@code color.*}, {@code advice.*}, ...):
 *       keys such as {@code core.pager}, {@code core.sshCommand}, {@code core.fsmonitor}, {@code alias.*},
 *       {@code include.path} name commands or files to run; {@code --config-env}; {@code --exec-path};
 *       {@code git config --edit};</li>
 *   <li>{@code --upload-pack}, {@code --receive-pack}, {@code --exec}, {@code --template}, {@code --config} (in any
 *       abbreviation), {@code clone -u}, {@code ls-remote -u}, {@code rebase -x}, {@code grep -O},
 *       {@code help -w}; {@code ext::} and {@code fd::} remote URLs;</li>
 *   <li>{@code --output} in any abbreviation ({@code diff}, {@code log}, {@code show}, {@code archive}, ...) and
 *       {@code archive -o}: they replace any file they name with git's output, which a model seldom needs (the
 *       output comes back on stdout) and which overwrites files outside the workspace on a backend that does not
 *       confine writes. Other writes, such as {@code clone <url> <dir>} or {@code format-patch -o <dir>}, create
 *       new files and are left to the backend;</li>
 *   <li>{@code git config --edit} in any abbreviation ({@code --ed});</li>
 *   <li>subcommands that exist to run commands or servers: {@code submodule foreach}, {@code bisect run},
 *       {@code difftool}, {@code mergetool}, {@code filter-branch}, {@code hook}, {@code daemon}, {@code instaweb},
 *       {@code send-email}, {@code imap-send}, {@code shell}, {@code web--browse}, {@code upload-pack},
 *       {@code receive-pack}, {@code upload-archive}, {@code http-backend}, {@code p4}, {@code svn} and the
 *       {@code cvs*} / {@code archimport} importers.</li>
 * </ul>
 *
 * <p><b>What it cannot stop:</b> git reads {@code .git/config}, {@code .git/hooks/} and {@code .gitattributes} from
 * the repository. If the model can write files in the workspace, it can write a hook or a config that git runs on the
 * next commit or status, and aliases defined there are invisible here. Allowing git where the model writes files is
 * allowing arbitrary code within the backend's isolation.
 */
final class GitValidator implements ArgumentValidator {

    /** Config keys that only name the author or change display; nothing in them is run or read as a path. */
    private static final Set<String> SAFE_KEYS = Set.of("user.name", "user.email", "author.name", "author.email",
            "committer.name", "committer.email", "init.defaultbranch", "pull.rebase", "push.default",
            "merge.conflictstyle");
    private static final List<String> SAFE_KEY_PREFIXES = List.of("color.", "advice.");

    /** Global options that take the next word as their value. */
    private static final Set<String> GLOBAL_WITH_VALUE = Set.of("-C", "--git-dir", "--work-tree", "--namespace",
            "--super-prefix", "--attr-source", "--list-cmds");

    /** Global options without a value that run nothing. */
    private static final Set<String> GLOBAL_FLAGS = Set.of("-p", "--paginate", "-P", "--no-pager", "--bare",
            "--no-replace-objects", "--no-lazy-fetch", "--literal-pathspecs", "--glob-pathspecs",
            "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks", "--no-advice", "--html-path",
            "--man-path", "--info-path", "--version", "-v", "--help", "-h");

    private static final Map<String, String> REFUSED_SUBCOMMANDS = Map.ofEntries(
            Map.entry("difftool", "runs an external diff tool"),
            Map.entry("mergetool", "runs an external merge tool"),
            Map.entry("filter-branch", "runs shell filters"),
            Map.entry("hook", "runs repository hooks"),
            Map.entry("daemon", "starts a server"),
            Map.entry("instaweb", "starts a web server and a browser"),
            Map.entry("send-email", "runs mail commands"),
            Map.entry("imap-send", "runs a tunnel command"),
            Map.entry("shell", "is a restricted login shell"),
            Map.entry("web--browse", "starts a browser"),
            Map.entry("upload-pack", "is a server-side program"),
            Map.entry("receive-pack", "is a server-side program that runs hooks"),
            Map.entry("upload-archive", "is a server-side program"),
            Map.entry("http-backend", "is a server-side program"),
            Map.entry("p4", "runs the p4 client"),
            Map.entry("svn", "runs the svn tools"),
            Map.entry("cvsimport", "runs cvs tools"),
            Map.entry("cvsserver", "is a server-side program"),
            Map.entry("cvsexportcommit", "runs cvs tools"),
            Map.entry("archimport", "runs arch tools"));

    /** Long options refused wherever they appear (any abbreviation), with what each does. */
    private static final Map<String, String> REFUSED_LONG = Map.of(
            "--upload-pack", "runs a program instead of git-upload-pack",
            "--receive-pack", "runs a program instead of git-receive-pack",
            "--exec", "runs a command (rebase --exec) or a program instead of a git helper",
            "--template", "copies hooks from a template directory into the repository",
            "--open-files-in-pager", "runs a pager command",
            "--extcmd", "runs an external diff command",
            "--sendmail-cmd", "runs a mail command",
            "--output", "writes to any file it names, replacing what is there");

    @Override
    public void validate(List<String> argv) {
        int i = 1;
        while (i < argv.size() && argv.get(i).startsWith("-")) {
            String a = argv.get(i);
            if (a.equals("-c")) {
                checkAssignment(argv, i + 1 < argv.size() ? argv.get(i + 1) : "", "-c");
                i += 2;
                continue;
            }
            String name = Validation.longName(a);
            if (name != null && (name.equals("--config-env") || name.equals("--exec-path"))) {
                throw Validation.refuse(argv, "git's '" + name + "' " + (name.equals("--exec-path")
                        ? "makes git run its helper programs from another directory"
                        : "sets configuration, which can name commands to run") + ", which the command policy does"
                        + " not allow");
            }
            if (GLOBAL_WITH_VALUE.contains(a)) {
                i += 2;
                continue;
            }
            if ((name != null && GLOBAL_WITH_VALUE.contains(name)) || GLOBAL_FLAGS.contains(a)) {
                i++;
                continue;
            }
            throw Validation.refuse(argv, "git option '" + Validation.abbreviate(a) + "' before the subcommand is"
                    + " not recognised by the command policy");
        }
        if (i >= argv.size()) {
            return;
        }
        String sub = argv.get(i);
        List<String> args = argv.subList(i + 1, argv.size());
        String why = REFUSED_SUBCOMMANDS.get(sub);
        if (why != null) {
            throw Validation.refuse(argv, "'git " + sub + "' " + why + ", which the command policy does not allow");
        }
        for (String a : args) {
            if (a.regionMatches(true, 0, "ext::", 0, 5) || a.regionMatches(true, 0, "fd::", 0, 4)) {
                throw Validation.refuse(argv, "the remote '" + Validation.abbreviate(a) + "' uses a transport that"
                        + " runs a command, which the command policy does not allow");
            }
            for (Map.Entry<String, String> r : REFUSED_LONG.entrySet()) {
                if (Validation.selects(a, r.getKey())) {
                    throw Validation.refuse(argv, "git's '" + Validation.abbreviate(Validation.longName(a)) + "' ("
                            + r.getKey() + ") " + r.getValue() + ", which the command policy does not allow");
                }
            }
        }
        switch (sub) {
            case "config" -> checkConfig(argv, args);
            case "clone" -> {
                refuseShort(argv, args, 'u', "clone -u names the upload-pack program to run");
                for (int k = 0; k < args.size(); k++) {
                    String a = args.get(k);
                    if (a.equals("-c") || a.equals("--config")) {
                        checkAssignment(argv, k + 1 < args.size() ? args.get(k + 1) : "", "clone " + a);
                        k++;
                    } else if (a.startsWith("--config=")) {
                        checkAssignment(argv, a.substring("--config=".length()), "clone --config");
                    } else if (Validation.selects(a, "--config")) {
                        throw Validation.refuse(argv, "write 'git clone --config' in full");
                    } else if (Validation.isShortCluster(a) && a.indexOf('c') > 0) {
                        throw Validation.refuse(argv, "write 'git clone -c key=value' as a separate option");
                    }
                }
            }
            case "ls-remote" -> refuseShort(argv, args, 'u', "ls-remote -u names the upload-pack program to run");
            case "archive" -> refuseShort(argv, args, 'o', "archive -o writes to any file it names");
            case "rebase" -> refuseShort(argv, args, 'x', "rebase -x runs a shell command after each commit");
            case "grep" -> refuseShort(argv, args, 'O', "grep -O runs a pager command on the matching files");
            case "help" -> {
                refuseShort(argv, args, 'w', "help -w starts a web browser");
                for (String a : args) {
                    if (Validation.selects(a, "--web")) {
                        throw Validation.refuse(argv, "help -w (--web) starts a web browser, which the command policy"
                                + " does not allow");
                    }
                }
            }
            case "submodule" -> {
                if (args.contains("foreach")) {
                    throw Validation.refuse(argv, "'git submodule foreach' runs a shell command in each submodule,"
                            + " which the command policy does not allow");
                }
            }
            case "bisect" -> {
                if (!args.isEmpty() && args.get(0).equals("run")) {
                    throw Validation.refuse(argv, "'git bisect run' runs a command at each step, which the command"
                            + " policy does not allow");
                }
            }
            default -> {
                // Other subcommands have no command-line route to another program that is known here.
            }
        }
    }

    private static void refuseShort(List<String> argv, List<String> args, char letter, String what) {
        for (String a : args) {
            if (Validation.isShortCluster(a) && a.indexOf(letter) > 0) {
                throw Validation.refuse(argv, what + ", which the command policy does not allow");
            }
        }
    }

    private static void checkConfig(List<String> argv, List<String> args) {
        boolean read = false;
        boolean write = false;
        List<String> operands = new ArrayList<>();
        for (int k = 0; k < args.size(); k++) {
            String a = args.get(k);
            String name = Validation.longName(a);
            if (a.equals("-e") || (name != null && Validation.selects(a, "--edit"))) {
                throw Validation.refuse(argv, "'git config --edit' opens an editor, which the command policy does"
                        + " not allow");
            }
            if (a.equals("-l") || Set.of("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list",
                    "--get-color", "--get-colorbool").contains(a)) {
                read = true;
            } else if (Set.of("--add", "--replace-all", "--unset", "--unset-all", "--rename-section",
                    "--remove-section").contains(a)) {
                write = true;
            } else if (Set.of("-f", "--file", "--blob", "--type", "-t", "--default", "--comment", "--value")
                    .contains(a)) {
                k++;
            } else if (!a.startsWith("-")) {
                operands.add(a);
            }
        }
        if (!operands.isEmpty()) {
            switch (operands.get(0)) {
                case "get", "list" -> {
                    read = true;
                    operands.remove(0);
                }
                case "set", "unset", "rename-section", "remove-section" -> {
                    write = true;
                    operands.remove(0);
                }
                case "edit" -> throw Validation.refuse(argv, "'git config edit' opens an editor, which the command"
                        + " policy does not allow");
                default -> {
                    // the old syntax: git config <key> [<value>]
                }
            }
        }
        if (!read && operands.size() >= 2) {
            write = true;
        }
        if (write && !operands.isEmpty() && !isSafeKey(operands.get(0))) {
            throw Validation.refuse(argv, "'git config' may only change " + safeKeys() + "; '"
                    + Validation.abbreviate(operands.get(0)) + "' can make git run commands or read other files");
        }
    }

    private static void checkAssignment(List<String> argv, String assignment, String option) {
        int eq = assignment.indexOf('=');
        String key = eq < 0 ? assignment : assignment.substring(0, eq);
        if (!isSafeKey(key)) {
            throw Validation.refuse(argv, "'git " + option + "' may only set " + safeKeys() + "; '"
                    + Validation.abbreviate(key) + "' can make git run commands or read other files");
        }
    }

    private static boolean isSafeKey(String key) {
        String k = key.toLowerCase(Locale.ROOT);
        if (SAFE_KEYS.contains(k)) {
            return true;
        }
        for (String p : SAFE_KEY_PREFIXES) {
            if (k.startsWith(p) && k.length() > p.length() && k.indexOf('.', p.length()) < 0) {
                return true;
            }
        }
        return false;
    }

    private static String safeKeys() {
        return "user.name, user.email, author.*, committer.*, init.defaultBranch, pull.rebase, push.default,"
                + " merge.conflictStyle, color.* and advice.*";
    }

    @Override
    public String toString() {
        return "ArgumentValidators.git()";
    }
}
