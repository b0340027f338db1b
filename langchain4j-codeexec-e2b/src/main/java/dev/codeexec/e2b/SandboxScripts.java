package dev.codeexec.e2b;

import dev.codeexec.spi.RunListing;
import java.nio.charset.StandardCharsets;

/**
 * The small POSIX shell programs the engine runs in a sandbox. Every path, id and argv travels as a positional
 * argument or in an uploaded manifest, never as text spliced into a script. They need a POSIX {@code sh} and
 * util-linux and coreutils ({@code unshare}, {@code setpriv}, {@code prlimit}, {@code id}, {@code chown},
 * {@code chmod}, {@code mv}, {@code touch}, {@code rm}), which E2B's Debian-based templates have.
 */
final class SandboxScripts {

    private SandboxScripts() {
    }

    /**
     * Prepares the sandbox and a workspace, as root: {@code base} and its private staging directory
     * ({@code base/.codeexec}, mode 0700); with {@code probe} = 1, the workspace user's ids and a check that PID
     * namespaces work (exit 12 if not); with a workspace id, the workspace and its layout, owned by the user, and its
     * real path. Arguments: base user workspace probe uid gid layout-dir...
     */
    static final String SETUP = ""
            + "base=$1 user=$2 ws=$3 probe=$4 uid=$5 gid=$6; shift 6\n"
            + "mkdir -p -- \"$base\" || exit 10\n"
            // Create first, check after: two workspaces set up at once in one sandbox must not race a check.
            + "mkdir -m 0700 -- \"$base/.codeexec\" 2>/dev/null"
            + " || { [ -d \"$base/.codeexec\" ] && [ ! -L \"$base/.codeexec\" ]; } || exit 10\n"
            + "if [ \"$probe\" = 1 ]; then\n"
            + "  uid=$(id -u -- \"$user\") && gid=$(id -g -- \"$user\") || exit 11\n"
            + "  unshare --pid --fork --kill-child -- setpriv --reuid=\"$uid\" --regid=\"$gid\" --init-groups -- true"
            + " || exit 12\n"
            + "  echo \"codeexec-ids $uid $gid\"\n"
            + "fi\n"
            + "if [ -n \"$ws\" ]; then\n"
            + "  root=$base/$ws\n"
            + "  mkdir -- \"$root\" || exit 13\n"
            + "  for d in \"$@\"; do mkdir -p -- \"$root/$d\" || exit 13; done\n"
            + "  chown -R -- \"$uid:$gid\" \"$root\" || exit 13\n"
            + "  echo \"codeexec-root $(cd -- \"$root\" && pwd -P)\"\n"
            + "fi\n";

    /**
     * A shell function {@code walk root rel}: resolves the workspace-relative {@code rel} from {@code root} one
     * component at a time without following links, resolving each link itself ({@code realpath -e}) and refusing one
     * that leaves the workspace; leaves the resolved path in {@code cur}. Returns 20 when a link leads out of the
     * workspace, 21 when a link does not resolve, 22 when a component is missing.
     */
    static final String WALK = ""
            + "walk() {\n"
            + "  cur=$1 rest=$2\n"
            + "  while [ -n \"$rest\" ]; do\n"
            + "    case $rest in */*) c=${rest%%/*} rest=${rest#*/} ;; *) c=$rest rest= ;; esac\n"
            + "    next=$cur/$c\n"
            + "    if [ -L \"$next\" ]; then\n"
            + "      t=$(realpath -e -- \"$next\" 2>/dev/null && echo x) || return 21\n"
            + "      t=${t%?x}\n"
            + "      case $t in \"$1\"|\"$1\"/*) ;; *) return 20 ;; esac\n"
            + "      next=$t\n"
            + "    elif [ ! -e \"$next\" ]; then\n"
            + "      return 22\n"
            + "    fi\n"
            + "    cur=$next\n"
            + "  done\n"
            + "}\n";

    /** What {@link #NS_INIT} writes on stderr when it cannot enter the run's working directory. */
    static final String CWD_REFUSED = "[codeexec] the working directory is not a directory of the workspace";

    /** {@link #NS_INIT}'s exit status when it cannot enter the run's working directory (nothing ran). */
    static final int CWD_REFUSED_STATUS = 125;

    /**
     * PID 1 of a run's PID namespace, as the workspace user: creates the run's directory, enters the run's working
     * directory (a workspace-relative path, resolved by {@link #WALK}: it must be a directory inside the workspace,
     * else it writes {@link #CWD_REFUSED} on stderr and exits {@link #CWD_REFUSED_STATUS} before anything runs),
     * starts the program with the namespace's stdin, forwards TERM and INT to it, and exits with its status, which
     * ends the namespace and kills whatever the program left behind. When asked for a listing, it first kills the
     * rest of the namespace (nothing of the run writes any more) and lists the folders on stdout from the workspace
     * root ({@link RunListing#FUNCTION}), with the program's status. Arguments: run-dir root cwd nonce max-entries
     * max-bytes folders argv... ({@code cwd} empty for the workspace root; the four listing arguments {@code -} for
     * none).
     */
    static final String NS_INIT = WALK + RunListing.FUNCTION
            + "mkdir -p -- \"$1\" 2>/dev/null\n"
            + "if [ -n \"$3\" ]; then\n"
            + "  walk \"$2\" \"$3\" && [ -d \"$cur\" ] && cd -P -- \"$cur\" 2>/dev/null"
            + " && [ \"$(pwd -P)\" = \"$cur\" ] || { echo '" + CWD_REFUSED + "' >&2; exit " + CWD_REFUSED_STATUS
            + "; }\n"
            + "fi\n"
            + "root=$2 ln=$4 lm=$5 lb=$6 lf=$7; shift 7\n"
            + "exec 3<&0\n"
            + "\"$@\" 0<&3 3<&- &\n"
            + "p=$!\n"
            + "exec 3<&-\n"
            + "trap 't=1; kill -TERM \"$p\" 2>/dev/null' TERM\n"
            + "trap 't=1; kill -INT \"$p\" 2>/dev/null' INT\n"
            + "while :; do\n"
            + "  t=0\n"
            + "  wait \"$p\"\n"
            + "  s=$?\n"
            + "  if [ \"$t\" = 0 ] || ! kill -0 \"$p\" 2>/dev/null; then break; fi\n"
            + "done\n"
            + "if [ \"$ln\" != - ]; then\n"
            + "  kill -s KILL -1 2>/dev/null\n"
            + "  cd -- \"$root\" && listfolders \"$s\" \"$ln\" \"$lm\" \"$lb\" \"$lf\"\n"
            + "fi\n"
            + "exit \"$s\"\n";

    /**
     * Sends a signal to the children of a process (a run's namespace PID 1, the only child of its {@code unshare}),
     * as root, found by their parent in {@code /proc}. Arguments: parent-pid signal-name.
     */
    static final String SIGNAL = ""
            + "pid=$1 sig=$2\n"
            + "for d in /proc/[0-9]*; do\n"
            + "  read -r st 2>/dev/null < \"$d/stat\" || continue\n"
            + "  st=${st##*) }\n"
            + "  set -f; set -- $st; set +f\n"
            + "  [ \"$2\" = \"$pid\" ] && kill -s \"$sig\" \"${d#/proc/}\" 2>/dev/null\n"
            + "done\n"
            + "exit 0\n";

    /**
     * Moves uploaded files into place, as root, checking every target first: for each manifest line {@code <mode>
     * <blob> <dest>} (dest an absolute path below {@code root}, encoded, see {@link #encode}) it resolves the parent of
     * {@code dest} with {@link #WALK} (a link that leaves the workspace or does not resolve stops it, exit 20 or 21;
     * a component that is not a directory, exit 5; a {@code dest} that is a directory, exit 3; each with
     * {@code codeexec-refused <line>}, or {@code codeexec-isdir <line>} for 3), and only when every line passed, it
     * creates the missing parents as the workspace user, gives each blob to the user, sets its mode and renames it
     * over its resolved target, so a reader sees the old file or the new, and a link at the target is replaced, never
     * written through (a failure there: exit 4, {@code codeexec-failed <line>}). A workspace root that is gone: exit
     * 25. The staging directory is removed in any case. Arguments: uid gid staging-dir root.
     */
    static final String FINISH_WRITES = WALK
            + "uid=$1 gid=$2 stage=$3 root=$4\n"
            + "trap 'rm -rf -- \"$stage\"' EXIT\n"
            + "[ -d \"$root\" ] && [ ! -L \"$root\" ] || exit 25\n"
            + "parent() {\n"
            + "  x=$(printf '%bx' \"$1\"); rel=${x%x}; rel=${rel#\"$root\"/}; name=${rel##*/}; dir=${rel%/*}\n"
            + "  [ \"$dir\" = \"$rel\" ] && dir=\n"
            + "  miss=\n"
            + "  walk \"$root\" \"$dir\"; r=$?\n"
            + "  case $r in 0) ;; 22) miss=$c${rest:+/$rest} ;; *) return $r ;; esac\n"
            + "  [ -d \"$cur\" ] || return 5\n"
            + "  if [ -z \"$miss\" ] && [ -d \"$cur/$name\" ] && [ ! -L \"$cur/$name\" ]; then return 3; fi\n"
            + "  return 0\n"
            + "}\n"
            + "refuse() {\n"
            + "  if [ \"$1\" = 3 ]; then echo \"codeexec-isdir $n\"; else echo \"codeexec-refused $n\"; fi; exit \"$1\"\n"
            + "}\n"
            + "n=0\n"
            + "while read -r m b p; do\n"
            + "  parent \"$p\" || refuse $?\n"
            + "  n=$((n+1))\n"
            + "done < \"$stage/manifest\"\n"
            + "n=0\n"
            + "while read -r m b p; do\n"
            + "  parent \"$p\" || refuse $?\n"
            + "  if [ -n \"$miss\" ]; then\n"
            + "    setpriv --reuid=\"$uid\" --regid=\"$gid\" --init-groups -- mkdir -p -- \"$cur/$miss\""
            + " || { echo \"codeexec-failed $n\"; exit 4; }\n"
            + "    cur=$cur/$miss\n"
            + "  fi\n"
            + "  chown -- \"$uid:$gid\" \"$stage/$b\" && chmod -- \"$m\" \"$stage/$b\""
            + " && mv -f -T -- \"$stage/$b\" \"$cur/$name\" || { echo \"codeexec-failed $n\"; exit 4; }\n"
            + "  n=$((n+1))\n"
            + "done < \"$stage/manifest\"\n";

    /**
     * Builds an imported tree from uploaded files, as root, and moves it over the destination: for each manifest line
     * {@code d <mode> - - <path>} or {@code f <mode> <mtime> <blob> <path>} (path relative to the tree, encoded,
     * {@code .} for its root) it creates the directory or places the file with its mode and modification time, then
     * gives the tree to the workspace user, removes what was at the destination (a link there is removed, not
     * followed) and renames the tree into place. A failure removes the tree and leaves the destination as it was
     * (exit 4). The staging directory is removed in any case. Arguments: uid gid staging-dir destination.
     */
    static final String FINISH_IMPORT = ""
            + "uid=$1 gid=$2 stage=$3 dest=$4; tree=$stage/tree\n"
            + "trap 'rm -rf -- \"$stage\"' EXIT\n"
            + "fail() { echo \"codeexec-failed $1\"; exit 4; }\n"
            + "while read -r t m ts b p; do\n"
            + "  x=$(printf '%bx' \"$p\"); p=${x%x}\n"
            + "  if [ \"$p\" = . ]; then at=$tree; else at=$tree/$p; fi\n"
            + "  case $t in\n"
            + "    d) mkdir -p -- \"$at\" && chmod -- \"$m\" \"$at\" || fail mkdir ;;\n"
            + "    f) mv -f -T -- \"$stage/$b\" \"$at\" && chmod -- \"$m\" \"$at\" && touch -m -d \"@$ts\" -- \"$at\""
            + " || fail file ;;\n"
            + "  esac\n"
            + "done < \"$stage/manifest\"\n"
            + "[ -e \"$tree\" ] || fail empty\n"
            + "chown -R -h -- \"$uid:$gid\" \"$tree\" || fail chown\n"
            + "rm -rf -- \"$dest\" && mv -f -T -- \"$tree\" \"$dest\" || fail replace\n";

    /**
     * Reads a workspace file as the workspace user, checking and reading in one step, so that a link swapped in
     * meanwhile can never redirect the read: it walks {@code rel} from {@code root} one component at a time without
     * following links, resolving each link itself ({@code realpath -e}) and refusing one that leaves the workspace;
     * opens the file it found; then checks that the file it opened is that file ({@code /proc/$$/fd/3} names the path
     * of the opened file, which a link cannot fake: a link swapped in before the open makes it name the link's
     * target). Only then it prints {@code codeexec-file <size>} (the opened file's size) and the bytes from
     * {@code offset}, {@code length} of them ({@code -}: to the end). Exit status: 20 a link leads out of the
     * workspace, 21 a link does not resolve, 22 nothing there, 23 not a regular file, 24 the path changed while it was
     * being read (nothing was printed), 25 the workspace is gone, 27 not readable. Arguments: root rel offset length.
     */
    static final String READ_FILE = WALK
            + "root=$1 rel=$2 off=$3 len=$4\n"
            + "[ -d \"$root\" ] && [ ! -L \"$root\" ] || exit 25\n"
            + "walk \"$root\" \"$rel\" || exit $?\n"
            + "if [ ! -f \"$cur\" ] || [ -L \"$cur\" ]; then [ -e \"$cur\" ] && exit 23; exit 22; fi\n"
            + "[ -r \"$cur\" ] || exit 27\n"
            + "command exec 3<\"$cur\" || exit 24\n"
            + "got=$(readlink -- \"/proc/$$/fd/3\" && echo x) || exit 24\n"
            + "got=${got%?x}\n"
            + "[ \"$got\" = \"$cur\" ] || [ \"$got\" = \"$cur (deleted)\" ] || exit 24\n"
            + "[ -f \"/proc/$$/fd/3\" ] || exit 23\n"
            + "size=$(stat -L -c %s -- \"/proc/$$/fd/3\") || exit 24\n"
            + "printf 'codeexec-file %s\\n' \"$size\"\n"
            + "if [ \"$len\" = - ]; then exec cat <&3; fi\n"
            + "exec dd bs=64K iflag=skip_bytes,count_bytes skip=\"$off\" count=\"$len\" status=none <&3\n";

    /**
     * A path as the manifests carry it: letters, digits and {@code . _ / -} as they are, every other byte of its UTF-8
     * form as {@code \0ooo}, which {@code printf '%b'} turns back into the byte. So spaces, newlines, quotes and
     * non-ASCII names travel intact through a line-based manifest.
     */
    static String encode(String path) {
        StringBuilder sb = new StringBuilder();
        for (byte b : path.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xFF;
            if (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_'
                    || c == '/' || c == '-') {
                sb.append((char) c);
            } else {
                sb.append(String.format("\\0%03o", c));
            }
        }
        return sb.toString();
    }
}
