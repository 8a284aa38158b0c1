# The watchdog of a command that `dlock exec` or `dlock elect` runs (docs/CLI.md, "When dlock itself
# dies or freezes"). It lives outside the JVM so that the command never outlives its lease, even
# when dlock is killed (SIGKILL, the OOM killer) or frozen (SIGSTOP, a very long GC pause). dlock
# runs it as
#
#     setsid /bin/sh -c "<this script>" dlock-watchdog FIFO GRACE_MS CMD [ARG...]
#
# (a session of its own: no signal meant for dlock's terminal or process group reaches it), with
# dlock's standard input, output and error. FIFO is a named pipe in a directory of its own, and
# dlock holds the only end that writes to it. Over it dlock sends a line "b T K" whenever the
# deadlines move: SIGTERM in T milliseconds, SIGKILL in K milliseconds (T <= K), counted from when
# the line is read; "b 0 K" asks to stop the command now. The watchdog
#
#   - starts CMD once the first line has come, in a session and process group of its own
#     (setsid), with dlock's standard input, output and error;
#   - sends SIGTERM (then SIGCONT, for a stopped process) to that group when T passes without a
#     newer line, and SIGKILL when K passes;
#   - at the end of the pipe (dlock died: the kernel closes its end at once) sends SIGTERM now and
#     SIGKILL after GRACE_MS, or when K passes if that comes first;
#   - exits with CMD's status once CMD has exited, and, if the watchdog stopped it, once nothing is
#     left in its process group.
#
# The event loop runs in the background and CMD in the foreground: a background job of a
# non-interactive shell ignores SIGINT and SIGQUIT for good, and CMD must not inherit that. The
# loop's helpers (timers, the wrapper that starts CMD, the group poller) report back through the
# same pipe, opening it only to write one line, so one loop sees every event in order (and a
# helper's writing end delays the end of the pipe by no more than the moment it takes to write).
#
# Needs a POSIX sh, sleep with a fraction of a second, setsid (util-linux or BusyBox) and /proc.

fifo=$1
grace=$2
shift 2
dir=${fifo%/*}
dlock=$PPID
label=$1

exec 5<&0 </dev/null
# the reading end; opening it read-write first means this open cannot block, even if dlock is gone
exec 3<>"$fifo" 4<"$fifo" 3>&-
# Nothing needs the name any more: the helpers open the pipe as this shell's fd 4 (Linux's /proc),
# so nothing is left behind even if this shell is killed.
rm -f "$fifo"
rmdir "$dir" 2>/dev/null
pipe=/proc/$$/fd/4

say() {
    printf 'dlock: watchdog: %s\n' "$*" >&2
}

secs() {
    printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000))
}

# timer MS EVENT: posts EVENT after MS milliseconds, unless sent SIGTERM first
timer() {
    (
        # with exec, not on the subshell: the shell undoes a subshell's redirections before a trap runs
        exec </dev/null >/dev/null 2>&1 4<&- 5<&- 6>&-
        trap 'kill $! 2>/dev/null; wait $!; exit 0' TERM
        sleep "$(secs "$1")" &
        wait $! && printf '%s\n' "$2" 1<>"$pipe"
    ) &
}

if ! read -r ev first_t first_k <&4 || [ "$ev" != b ]; then
    exit 1 # dlock is gone before the command started
fi

(
    exec >/dev/null 5<&-
    gen=0 timers= others= cmd= termed= killed= mine= gone= exited=

    signal() { # to CMD's process group, or to CMD alone while the group is not made yet
        kill -"$1" -"$cmd" 2>/dev/null || kill -"$1" "$cmd" 2>/dev/null
    }
    stop() {
        [ "$termed" ] && return
        termed=1
        [ "$cmd" ] && signal TERM && signal CONT
    }
    kill9() {
        if [ -z "$killed" ] && [ "$mine" ] && [ "$cmd" ] && kill -0 -"$cmd" 2>/dev/null; then
            say "sending SIGKILL to process group $cmd ('$label')"
        fi
        killed=1
        [ "$cmd" ] && signal KILL
    }
    arm() { # arm T K
        gen=$((gen + 1))
        [ "$timers" ] && kill $timers 2>/dev/null
        timers=
        if [ "$1" -le 0 ]; then
            stop
        elif [ -z "$termed" ]; then
            timer "$1" "t $gen"
            timers=$!
        fi
        if [ "$2" -le 0 ]; then
            kill9
        else
            timer "$2" "k $gen"
            timers="$timers $!"
        fi
    }

    arm "$first_t" "$first_k"
    while :; do
        if ! read -r ev a b <&4; then
            # every writer is gone: dlock died; the helpers can still post, so keep a writer open
            exec 4<>"$pipe"
            gone=1
            mine=1
            say "dlock (pid $dlock) is gone; stopping '$label': SIGTERM now, SIGKILL in $(secs "$grace") s" \
                "or when its lease's validity ends, whichever comes first"
            stop
            timer "$grace" g
            others="$others $!"
            continue
        fi
        case $ev in
        b)
            [ "$gone" ] || arm "$a" "$b"
            ;;
        t)
            if [ "$a" = "$gen" ] && [ -z "$termed" ]; then
                mine=1
                say "no word from dlock (pid $dlock) in time to keep the lease; stopping '$label' before its" \
                    "validity ends: SIGTERM now, SIGKILL when the validity ends"
                stop
            fi
            ;;
        k)
            [ "$a" = "$gen" ] || continue
            kill9
            [ "$exited" ] && break
            ;;
        g)
            kill9
            [ "$exited" ] && break
            ;;
        c)
            cmd=$a
            [ "$termed" ] && signal TERM && signal CONT
            [ "$killed" ] && signal KILL
            ;;
        x)
            # CMD has exited. If it was stopped, wait until nothing of its process group is left, or
            # until SIGKILL has been sent (a SIGKILLed process runs no more code; and an exited
            # process whose parent died stays in the group as a zombie until init reaps it, which
            # some containers' init never does)
            exited=1
            [ "$termed" ] || break
            [ "$killed" ] && break
            (
                exec </dev/null >/dev/null 2>&1 4<&-
                while kill -0 -"$cmd"; do
                    sleep 0.05
                done
                printf 'e\n' 1<>"$pipe"
            ) &
            others="$others $!"
            ;;
        e)
            break
            ;;
        esac
    done
    kill $timers $others 2>/dev/null
) &
loop=$!

# A shell reports a foreground job that a signal ended ("Terminated") on its standard error: the
# subshell, whose standard error is /dev/null, takes that report and exits with CMD's status. CMD
# gets dlock's standard error back as it starts (fd 6), after its process group is made.
exec 6>&2
(
    setsid /bin/sh -c 'exec 2>&6 6>&-; printf "c %s\n" $$ 1<>"$1"; shift; exec "$@"' dlock-command "$pipe" "$@" \
        <&5 4<&- 5<&-
    exit $?
) 2>/dev/null
status=$?
exec 5<&- 6>&-
printf 'x %s\n' "$status" 1<>"$pipe"
wait $loop
exit "$status"
