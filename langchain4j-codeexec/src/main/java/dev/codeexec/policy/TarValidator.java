package dev.codeexec.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * tar (GNU tar, bsdtar): refuses the options that run a program: {@code --to-command}, {@code --use-compress-program}
 * / {@code -I}, {@code --checkpoint-action}, {@code --info-script} / {@code --new-volume-script} / {@code -F},
 * {@code --rsh-command}, {@code --rmt-command}, in any abbreviation getopt accepts; file lists ({@code -T},
 * {@code --files-from}) unless {@code --verbatim-files-from} comes before them, because GNU tar otherwise reads options
 * from them; and remote archives ({@code host:file}, opened through rsh or ssh) unless {@code --force-local} is given.
 */
final class TarValidator implements ArgumentValidator {

    private static final Map<String, String> DANGEROUS = Map.of(
            "--to-command", "pipes every extracted file into a command",
            "--use-compress-program", "runs a program as the compressor",
            "--checkpoint-action", "can run a command at each checkpoint",
            "--info-script", "runs a script at the end of each volume",
            "--new-volume-script", "runs a script at the end of each volume",
            "--rsh-command", "runs a remote shell command",
            "--rmt-command", "runs a remote tape command");

    /** Exact option names that are also prefixes of a dangerous one: getopt picks the exact match. */
    private static final List<String> EXACT_SAFE = List.of("--checkpoint", "--file");

    /** Short options that take a value; in a cluster the rest of the cluster, or the next word, is the value. */
    private static final String VALUE_LETTERS = "bCfFgHIKLNTVX";

    @Override
    public void validate(List<String> argv) {
        List<String> args = argv.subList(1, argv.size());
        // --verbatim-files-from is positional: it applies to the -T lists after it, until --no-verbatim-files-from.
        boolean verbatim = false;
        boolean forceLocal = false;
        for (String a : args) {
            forceLocal |= Validation.selects(a, "--force-local");
        }
        List<String> archives = new ArrayList<>();
        int i = 0;
        // Old-style first argument ("tar xzf a.tgz"): option letters whose values follow as separate words.
        if (!args.isEmpty() && !args.get(0).startsWith("-")) {
            String letters = args.get(0);
            int next = 1;
            for (int k = 0; k < letters.length(); k++) {
                char c = letters.charAt(k);
                checkLetter(argv, c, verbatim);
                if (VALUE_LETTERS.indexOf(c) >= 0) {
                    if (c == 'f' && next < args.size()) {
                        archives.add(args.get(next));
                    }
                    next++;
                }
            }
            i = next;
        }
        for (; i < args.size(); i++) {
            String a = args.get(i);
            String name = Validation.longName(a);
            if (name != null) {
                if (Validation.selects(a, "--verbatim-files-from")) {
                    verbatim = true;
                } else if (Validation.selects(a, "--no-verbatim-files-from")) {
                    verbatim = false;
                }
                if (!EXACT_SAFE.contains(name)) {
                    for (Map.Entry<String, String> d : DANGEROUS.entrySet()) {
                        if (Validation.selects(a, d.getKey())) {
                            throw Validation.refuse(argv, "tar's '" + Validation.abbreviate(name) + "' ("
                                    + d.getKey() + ") " + d.getValue() + ", which the command policy does not allow");
                        }
                    }
                }
                if (Validation.selects(a, "--files-from") && !name.equals("--file") && !verbatim) {
                    throw refuseFilesFrom(argv);
                }
                if (name.equals("--file")) {
                    if (a.length() > name.length()) {
                        archives.add(a.substring(name.length() + 1));
                    } else if (i + 1 < args.size()) {
                        archives.add(args.get(++i));
                    }
                }
                continue;
            }
            if (Validation.isShortCluster(a)) {
                for (int k = 1; k < a.length(); k++) {
                    char c = a.charAt(k);
                    checkLetter(argv, c, verbatim);
                    if (VALUE_LETTERS.indexOf(c) >= 0) {
                        String value = k + 1 < a.length() ? a.substring(k + 1) : (i + 1 < args.size() ? args.get(++i)
                                : "");
                        if (c == 'f') {
                            archives.add(value);
                        }
                        break;
                    }
                }
            }
        }
        if (!forceLocal) {
            for (String archive : archives) {
                int colon = archive.indexOf(':');
                int slash = archive.indexOf('/');
                if (colon >= 0 && (slash < 0 || colon < slash)) {
                    throw Validation.refuse(argv, "the archive name '" + Validation.abbreviate(archive) + "' looks"
                            + " like host:path, which tar opens on another machine through a remote shell; add"
                            + " --force-local if it is a local file");
                }
            }
        }
    }

    private static void checkLetter(List<String> argv, char c, boolean verbatim) {
        if (c == 'I') {
            throw Validation.refuse(argv, "tar's '-I' (--use-compress-program) runs a program as the compressor,"
                    + " which the command policy does not allow; use -z, -j, -J or --zstd");
        }
        if (c == 'F') {
            throw Validation.refuse(argv, "tar's '-F' (--info-script) runs a script, which the command policy does"
                    + " not allow");
        }
        if (c == 'T' && !verbatim) {
            throw refuseFilesFrom(argv);
        }
    }

    private static RuntimeException refuseFilesFrom(List<String> argv) {
        return Validation.refuse(argv, "tar reads options, not only names, from a --files-from (-T) list, which the"
                + " command policy does not allow; add --verbatim-files-from, or name the files on the command line");
    }

    @Override
    public String toString() {
        return "ArgumentValidators.tar()";
    }
}
