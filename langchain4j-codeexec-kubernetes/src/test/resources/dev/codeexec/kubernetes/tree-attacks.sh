# Runs one attack on the pod scripts, as PID 1 of a PID namespace of its own (unshare --pid --fork --mount-proc), in
# a pids cgroup. Usage: sh tree-attacks.sh <scenario> <dir> <reaper: python|perl|none> <cgroup dir>
# <dir> holds the scripts: run, kill, signal, py, pl. Prints key=value lines; the test reads them.
scenario=$1; D=$2; reaper=$3; cg=$4
c=$D/ctl; out=$D/out; mkdir -p "$out" "$D/rundir"
RUN=$(cat "$D/run"); KILL=$(cat "$D/kill"); SIGNAL=$(cat "$D/signal")
read -r max <"$cg/pids.max"; echo "pidsmax=$max"

state() { # prints dead or alive for pid $1
  st=
  { while read -r k a b; do case $k in State:) st=$a; break ;; esac; done; } 2>/dev/null <"/proc/$1/status"
  case $st in ''|Z) echo dead ;; *) echo alive ;; esac
}
wrapper() { # starts the wrapper with program argv "$@" in the background; w = its pid
  case $reaper in
    python) python3 -c "$(cat "$D/py")" sh -c "$RUN" sh "$c" "$D/rundir" raw / "- - -" 0 - - - - - env -i PATH="$PATH" "$@" </dev/null >"$out/stdout" 2>"$out/stderr" & ;;
    perl) perl -e "$(cat "$D/pl")" sh -c "$RUN" sh "$c" "$D/rundir" raw / "- - -" 0 - - - - - env -i PATH="$PATH" "$@" </dev/null >"$out/stdout" 2>"$out/stderr" & ;;
    *) sh -c "$RUN" sh "$c" "$D/rundir" raw / "- - -" 0 - - - - - env -i PATH="$PATH" "$@" </dev/null >"$out/stdout" 2>"$out/stderr" & ;;
  esac
  w=$!
}
awaitfile() { while [ ! -s "$1" ]; do sleep 0.01; done; }
# A program that starts a setsid double-forked daemon (its pid goes to $1), then does $2.
DAEMON='setsid sh -c "sleep 1000 & echo \$! >\"\$1\"" sh "$1" & while [ ! -s "$1" ]; do sleep 0.01; done; eval "$2"'

case $scenario in
  daemon-leftover)
    wrapper sh -c "$DAEMON" prog "$out/daemon" 'exit 3'
    wait "$w"; echo "wrapper=$?"
    read -r d <"$out/daemon"; echo "daemon=$(state "$d")"
    ;;
  daemon-kill)
    wrapper sh -c "$DAEMON" prog "$out/daemon" 'sleep 1000'
    awaitfile "$out/daemon"; awaitfile "$c/pid"
    sh -c "$KILL" sh "$c"; echo "kill=$?"
    wait "$w"; echo "wrapper=$?"
    read -r d <"$out/daemon"; echo "daemon=$(state "$d")"
    ;;
  forkloop)
    mkfifo "$D/go"
    # The killer starts before the loop fills the pids limit: at the limit no new process can start.
    sh -c "read x <\"\$2\"
$KILL" sh "$c" "$D/go" &
    k=$!
    # Every process forks forever and outlives a failed fork (a shell would exit on one).
    wrapper /usr/bin/python3 -c 'import os
while True:
    try:
        os.fork()
    except OSError:
        pass'
    awaitfile "$c/pid"
    while read -r cur <"$cg/pids.current" && [ "$cur" -lt "$max" ]; do :; done
    echo "reached=$cur"
    echo go >"$D/go"
    wait "$k"; echo "kill=$?"
    wait "$w"; echo "wrapper=$?"
    left=0
    for p in /proc/[0-9]*; do
      n=${p#/proc/}; [ "$n" = 1 ] && continue
      [ "$(state "$n")" = alive ] && left=$((left+1))
    done
    echo "left=$left"
    ;;
  signal)
    # A stand-in wrapper whose child is the program; then the program's pid file names a stranger.
    mkdir -p "$c"
    sh -c 'sleep 1000 & echo $! >"$1/pid"; echo $$ >"$1/shell"; wait' sh "$c" &
    awaitfile "$c/pid"; awaitfile "$c/shell"
    read -r prog <"$c/pid"
    sleep 1000 &
    stranger=$!
    echo "$stranger" >"$c/pid"
    sh -c "$SIGNAL" sh "$c" KILL; echo "signal=$?"
    echo "stranger=$(state "$stranger")"
    echo "$prog" >"$c/pid"
    sh -c "$SIGNAL" sh "$c" KILL; echo "signal=$?"
    while [ "$(state "$prog")" = alive ]; do sleep 0.01; done
    echo "program=$(state "$prog")"
    ;;
esac
