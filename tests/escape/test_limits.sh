#!/usr/bin/env bash
# Limits: a fork bomb, a memory bomb, a runaway and a disk filler are
# contained under --pids, --memory, --timeout and --disk; moat says which
# limit ended the sandbox, and leaves no cgroup or process behind. Under
# moat do's default options too: a fork bomb and a memory bomb leave the
# host and a second sandbox working.
. "$(dirname "$0")/../e2e/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)

# What moat do's defaults must be on this host (sentry/limits.c). The bombs
# are capped a little above them (tests/escape/bomb.c), so a limit that is
# broken ends in "cap reached", never in a starved test machine.
HOST_RAM=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024))
DEF_MEMORY=$((HOST_RAM / 2 < 8 << 30 ? HOST_RAM / 2 : 8 << 30))
NCPU=$(getconf _NPROCESSORS_ONLN)
DEF_PIDS=$((NCPU > 32 ? NCPU * 32 : 1024))
# A bomb allocates for a while on a loaded machine: a hang guard, not a
# measure.
BOMB_TIMEOUT=300

build_bomb()
{
	[ -x "$E2E_TMP/bomb" ] ||
		gcc -O1 -o "$E2E_TMP/bomb" "$HERE/bomb.c" || fail "cannot build the bomb"
}

# wait_for FILE ERE: until a line of FILE matches (a hang guard).
wait_for()
{
	local i
	for i in $(seq $((BOMB_TIMEOUT * 10))); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# steady_start: a second sandbox doing small work whose result is known
# (a fork and exec, a 16 MiB buffer hashed) round after round, until a
# line on fd 7 (or its EOF, if the case fails) stops it.
steady_start()
{
	local want
	want=$($PY -c 'import hashlib; print(hashlib.sha256(bytes(16 << 20)).hexdigest())')
	cat >"$E2E_TMP/steady.py" <<'EOF'
import hashlib, select, subprocess, sys
want, rounds = sys.argv[1], 0
while not select.select([sys.stdin], [], [], 0.05)[0]:
    echo = subprocess.run(["/bin/echo", str(rounds)], capture_output=True, text=True)
    digest = hashlib.sha256(bytes(bytearray(16 << 20))).hexdigest()
    if echo.stdout != f"{rounds}\n" or digest != want:
        sys.exit(f"round {rounds}: wrong result {echo.stdout!r} {digest}")
    rounds += 1
    print(f"round {rounds} ok", flush=True)
print(f"steady: {rounds} rounds, all correct")
EOF
	rm -f "$E2E_TMP/steady.in"
	mkfifo "$E2E_TMP/steady.in"
	MOAT_TIMEOUT=$BOMB_TIMEOUT moat do -- $PY "$E2E_TMP/steady.py" "$want" \
		<"$E2E_TMP/steady.in" >"$E2E_TMP/steady.out" 2>"$E2E_TMP/steady.err" &
	STEADY=$!
	exec 7>"$E2E_TMP/steady.in"
	wait_for "$E2E_TMP/steady.out" '^round 1 ok' ||
		fail "the second sandbox never did its first round"
}

# steady_progresses: it does another round (while the bomb holds).
steady_progresses()
{
	local n
	n=$(grep -c '^round' "$E2E_TMP/steady.out")
	wait_for "$E2E_TMP/steady.out" "^round $((n + 1)) ok" ||
		fail "the second sandbox stopped working: $(tail -3 "$E2E_TMP/steady.err")"
}

# steady_finish: stop it; it must have got every round right.
steady_finish()
{
	echo stop >&7
	exec 7>&-
	wait "$STEADY"
	STATUS=$?
	OUT=$(tail -1 "$E2E_TMP/steady.out")
	ERR=$(cat "$E2E_TMP/steady.err")
	assert_eq 0 "$STATUS" "the second sandbox exits 0"
	assert_match "$OUT" '^steady: [0-9]+ rounds, all correct$' "the second sandbox's results are right"
}

# host_still_works: the host forks and allocates as usual.
host_still_works()
{
	local i out
	for i in $(seq 20); do
		/bin/true || fail "the host cannot fork"
	done
	out=$($PY -c 'x = b"x" * (512 << 20); print(len(x))') ||
		fail "the host cannot allocate 512 MiB"
	assert_eq $((512 << 20)) "$out" "the host allocates 512 MiB"
}

# bomb_start ARGS...: the bomb under moat do's default options, its stdin
# on fd 8 (a line lets it go on; EOF, if the case fails, too).
bomb_start()
{
	rm -f "$E2E_TMP/bomb.in"
	mkfifo "$E2E_TMP/bomb.in"
	MOAT_TIMEOUT=$BOMB_TIMEOUT moat do -- "$E2E_TMP/bomb" "$@" \
		<"$E2E_TMP/bomb.in" >"$E2E_TMP/bomb.out" 2>"$E2E_TMP/bomb.err" &
	BOMB=$!
	exec 8>"$E2E_TMP/bomb.in"
}

bomb_finish()
{
	echo go >&8
	exec 8>&-
	wait "$BOMB"
	STATUS=$?
	OUT=$(cat "$E2E_TMP/bomb.out")
	ERR=$(cat "$E2E_TMP/bomb.err")
}

# no_bomb_left: none of the bomb's processes outlives its sandbox.
no_bomb_left()
{
	local i
	for i in $(seq 50); do
		pgrep -f "$E2E_TMP/bomb" >/dev/null || return 0
		sleep 0.1
	done
	fail "$(pgrep -fc "$E2E_TMP/bomb") bomb processes outlived the sandbox"
}

t_timeout()
{
	local start end
	start=$(date +%s)
	capture moat do --timeout 1 -- /bin/sleep 30
	end=$(date +%s)
	assert_eq 137 "$STATUS" "the sandbox is killed (SIGKILL: 137)"
	assert_contains "$ERR" "time limit of 1 s" "moat names the limit"
	[ $((end - start)) -lt 10 ] || fail "it took $((end - start)) s"
}

t_pids()
{
	capture moat do --pids 20 -- $PY -c '
import os, time
n = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(2)
            os._exit(0)
        n += 1
except BlockingIOError:
    print("EAGAIN after", n)
'
	assert_eq 0 "$STATUS" "the program handles EAGAIN and exits"
	assert_contains "$OUT" "EAGAIN after 19" "fork fails with EAGAIN at the limit (19 children + itself)"
	assert_contains "$ERR" "process limit of 20" "moat names the limit"
}

# Linux's pids cgroup counts a zombie until it is reaped; the sentry's
# count once dropped a process at its exit, so children never waited for
# went on without bound (3000 under --pids 64). Natively, in a pids
# cgroup of the test's own with the same limit, where one can be made.
t_pids_count_zombies()
{
	local want="fork failed after 63 zombies: Resource temporarily unavailable
reaped 63
then fork: ok" cg=
	gcc -O1 -o "$E2E_TMP/zombie_fork" "$HERE/zombie_fork.c" || fail "cannot build zombie_fork"
	if [ -w /sys/fs/cgroup/pids ] && mkdir "/sys/fs/cgroup/pids/moat-test-$$" 2>/dev/null; then
		cg=/sys/fs/cgroup/pids/moat-test-$$
	elif grep -qw pids /sys/fs/cgroup/cgroup.controllers 2>/dev/null &&
		grep -qw pids /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null &&
		mkdir "/sys/fs/cgroup/moat-test-$$" 2>/dev/null; then
		cg=/sys/fs/cgroup/moat-test-$$
	fi
	if [ -n "$cg" ]; then
		echo 64 >"$cg/pids.max"
		capture native sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" 3000' _ "$cg" "$E2E_TMP/zombie_fork"
		rmdir "$cg" 2>/dev/null || { sleep 0.5; rmdir "$cg"; }
		assert_eq "$want" "$OUT" "natively, pids.max=64 counts the zombies"
	else
		echo "no pids cgroup of the test's own: the native run is skipped"
	fi
	capture moat do --pids 64 -- "$E2E_TMP/zombie_fork" 3000
	assert_eq 0 "$STATUS" "the program exits 0"
	assert_eq "$want" "$OUT" "--pids 64 counts the zombies, as Linux does"
	assert_contains "$ERR" "process limit of 64" "moat names the limit"
}

t_fork_bomb()
{
	local marker
	marker=moat-bomb-$(random_token)
	capture moat do --pids 64 --timeout 5 -- /bin/bash -c "b() { b | b & }; b; echo $marker"
	case $STATUS in
	124) fail "moat hung past its own --timeout" ;;
	esac
	sleep 0.5
	! pgrep -f "$marker" >/dev/null || fail "bomb processes survived the sandbox"
	capture moat do -- /bin/echo alive
	assert_eq "alive" "$OUT" "the host and moat still work"
}

t_memory_bomb()
{
	local pid
	# moat itself in the background (a simple command: $! is its pid, and
	# its cgroups are named for it); its own --timeout and a cap of 2 GiB
	# on the bomb guard against a broken limit.
	"$MOAT" do --memory 100M --timeout 60 -- $PY -c '
x = []
while len(x) < 200:
    x.append(bytearray(10 << 20))
' >"$E2E_TMP/out" 2>"$E2E_TMP/err" </dev/null &
	pid=$!
	wait "$pid"
	STATUS=$?
	OUT=$(cat "$E2E_TMP/out")
	ERR=$(cat "$E2E_TMP/err")
	assert_eq 137 "$STATUS" "the kernel kills the guest at the limit"
	assert_contains "$ERR" "memory limit of 104857600 bytes" "moat names the limit"
	# The janitor removes the cgroup once the last guest is gone. Only
	# this sandbox's: every moat do has one now, and others may run.
	local i
	for i in $(seq 40); do
		find /sys/fs/cgroup/memory -maxdepth 4 -name "moat-$pid" 2>/dev/null | grep -q . || return 0
		sleep 0.1
	done
	fail "a memory cgroup of moat's was left behind"
}

t_disk()
{
	capture moat do --disk 1M -- /bin/sh -c 'head -c 2000000 /dev/zero > /tmp/big; echo "status $?"; stat -c %s /tmp/big'
	assert_contains "$ERR" "No space left on device" "writing past --disk fails with ENOSPC"
	assert_contains "$OUT" "1048576" "tmpfs holds exactly the limit"
}

t_default_fork_bomb()
{
	asan_build && { echo "skipped under the ASan build: a load test; the plain e2e run covers it"; return 0; }
	build_bomb
	steady_start
	bomb_start fork $((DEF_PIDS + 512))
	wait_for "$E2E_TMP/bomb.out" '^forked ' || fail "the bomb never settled"
	# Every process the bomb could make is there, waiting.
	host_still_works
	steady_progresses
	bomb_finish
	assert_eq "forked $((DEF_PIDS - 1)), EAGAIN $DEF_PIDS, other errors 0" "$OUT" \
		"each of the bomb's processes gets EAGAIN at the default limit"
	assert_eq 0 "$STATUS" "the bomb handles EAGAIN and exits"
	assert_contains "$ERR" "process limit of $DEF_PIDS (moat do's default) reached" \
		"moat names the default limit"
	no_bomb_left
	steady_finish
}

t_default_memory_bomb()
{
	asan_build && { echo "skipped under the ASan build: a load test; the plain e2e run covers it"; return 0; }
	local mib=$((DEF_MEMORY >> 20)) guests
	# The guests' own limit: the default less the sentry's share (a
	# quarter, at most 64 MiB and a sixteenth).
	guests=$((mib - (mib / 4 < 64 + mib / 16 ? mib / 4 : 64 + mib / 16)))
	build_bomb
	steady_start
	# Hold 512 MiB below the guests' limit, then go on to 1 GiB above
	# the sandbox's.
	bomb_start mem $((guests - 512)) $((mib + 1024))
	wait_for "$E2E_TMP/bomb.out" '^holding ' ||
		fail "the bomb never reached $((guests - 512)) MiB: $(cat "$E2E_TMP/bomb.out" "$E2E_TMP/bomb.err")"
	host_still_works
	steady_progresses
	bomb_finish
	assert_not_contains "$OUT" "cap reached" "the bomb stops at the default limit"
	assert_eq 137 "$STATUS" "the kernel kills the bomb at the limit (SIGKILL: 137)"
	assert_contains "$ERR" "memory limit of $DEF_MEMORY bytes (moat do's default) reached" \
		"moat names the default limit"
	no_bomb_left
	steady_finish
}

# Where no cgroup can be made (here: read-only cgroup file systems, as in
# an unprivileged container), moat still runs: the default pids limit holds
# through the sentry's own count, exactly, and the missing memory limit is
# said, not silent.
t_defaults_without_cgroups()
{
	build_bomb
	unshare -m true 2>/dev/null || { echo "skipped: no mount namespace"; return 0; }
	# every cgroup mount (v1's per controller, or v2's one), read-only in
	# a mount namespace of the test's own
	capture unshare -m bash -c '
		for m in $(findmnt -rn -o TARGET -R /sys/fs/cgroup); do
			mount -o remount,bind,ro "$m" || exit 99
		done
		echo go | timeout -k 5 "$1" "$2" do -- "$3" fork "$4"' _ \
		"$BOMB_TIMEOUT" "$MOAT" "$E2E_TMP/bomb" $((DEF_PIDS + 512))
	[ "$STATUS" != 99 ] || fail "cannot make the cgroups read-only"
	assert_eq 0 "$STATUS" "moat runs without cgroups"
	assert_eq "forked $((DEF_PIDS - 1)), EAGAIN $DEF_PIDS, other errors 0" "$OUT" \
		"the sentry alone holds the default pids limit, exactly"
	assert_contains "$ERR" "warning: no default memory limit" \
		"moat says that the sandbox has no memory limit"
	no_bomb_left
}

t_defaults_lifted()
{
	build_bomb
	capture moat do -- /bin/grep MemTotal /proc/meminfo
	assert_eq "MemTotal: $((DEF_MEMORY >> 10)) kB" "$(echo $OUT)" "the guest's RAM is the default limit"
	capture moat do --memory unlimited -- /bin/grep MemTotal /proc/meminfo
	assert_eq "MemTotal: $((HOST_RAM >> 10)) kB" "$(echo $OUT)" "--memory unlimited: the host's RAM"
	echo go | MOAT_TIMEOUT=$BOMB_TIMEOUT moat do --pids unlimited -- \
		"$E2E_TMP/bomb" fork $((DEF_PIDS + 16)) >"$E2E_TMP/bomb.out" 2>&1
	assert_eq "forked $((DEF_PIDS + 15)), EAGAIN 0, other errors 0" "$(cat "$E2E_TMP/bomb.out")" \
		"--pids unlimited: past the default"
	capture moat do --pids 0 -- /bin/true
	assert_eq 2 "$STATUS" "--pids 0 is refused"
	assert_contains "$ERR" "or unlimited" "and the error names the way to lift the limit"
	capture moat do --memory 0 -- /bin/true
	assert_eq 2 "$STATUS" "--memory 0 is refused"
	assert_contains "$ERR" "or unlimited" "and the error names the way to lift the limit"
}

# ---- the sentry's work counts in the sandbox's limits ----------------------
# The sentry and its gofers are in the sandbox's memory and CPU cgroups
# (moat-PID; on v2 moat-PID/sentry), the guests below them (guest/): what
# the sentry holds and does for the guests counts against --memory and
# --cpus (sentry/limits.c, docs/limits.md).

# cg_dir PID CTL: the directory of PID's cgroup of controller CTL.
cg_dir()
{
	local line
	if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
		line=$(grep '^0::' "/proc/$1/cgroup")
		echo "/sys/fs/cgroup${line#0::}"
	else
		line=$(grep -E "^[0-9]+:([^:]*,)?$2(,[^:]*)?:" "/proc/$1/cgroup")
		echo "/sys/fs/cgroup/$2${line##*:}"
	fi
}

# sandbox_cg PID CTL: the sandbox's cgroup of CTL (moat-PID), wherever the
# sentry is.
sandbox_cg()
{
	local dir
	dir=$(cg_dir "$1" "$2")
	dir=${dir%/sentry}
	case $dir in
	*/moat-"$1") echo "$dir" ;;
	*) echo "$dir/moat-$1" ;;
	esac
}

# assert_in_sandbox_cg PID CTL: the sentry (moat's pid PID) is in the
# sandbox's cgroup of CTL, not its caller's.
assert_in_sandbox_cg()
{
	local dir
	dir=$(cg_dir "$1" "$2")
	assert_match "$dir" "/moat-$1(/sentry)?\$" "the sentry is in the sandbox's $2 cgroup"
}

# limits_sandbox ARGS...: moat do ARGS in the background (pid in SBX), its
# stdin on fd 9 (a line, or EOF if the case fails, ends the guest).
limits_sandbox()
{
	rm -f "$E2E_TMP/sbx.in"
	mkfifo "$E2E_TMP/sbx.in"
	"$MOAT" do --timeout 120 "$@" <"$E2E_TMP/sbx.in" >"$E2E_TMP/sbx.out" 2>"$E2E_TMP/sbx.err" &
	SBX=$!
	exec 9>"$E2E_TMP/sbx.in"
}

# sandbox_says ERE: until a line of the sandbox's stdout matches, or the
# sandbox has ended (a hang guard: 1 if it never came).
sandbox_says()
{
	local i
	for i in $(seq $((BOMB_TIMEOUT * 10))); do
		grep -Eq -- "$1" "$E2E_TMP/sbx.out" 2>/dev/null && return 0
		kill -0 "$SBX" 2>/dev/null || break
		sleep 0.1
	done
	grep -Eq -- "$1" "$E2E_TMP/sbx.out" 2>/dev/null
}

# limits_sandbox_end [killed]: let it end (killed: it has, and its stdin
# has no reader left to write to), and capture how.
limits_sandbox_end()
{
	[ "${1-}" = killed ] || echo go >&9
	exec 9>&-
	wait "$SBX"
	STATUS=$?
	OUT=$(cat "$E2E_TMP/sbx.out")
	ERR=$(cat "$E2E_TMP/sbx.err")
}

# peak_within PID LIMIT: the sandbox's memory peak (the cgroup's, the
# sentry's work included) and the sentry's own peak RSS are within LIMIT
# (the cgroup's within a MiB of it: the kernel forces a few charges past a
# limit, a dying task's, some of its own allocations).
peak_within()
{
	local dir peak hwm
	dir=$(sandbox_cg "$1" memory)
	peak=$(cat "$dir/memory.max_usage_in_bytes" 2>/dev/null || cat "$dir/memory.peak")
	hwm=$(($(awk '/^VmHWM:/ { print $2 }' "/proc/$1/status") * 1024))
	[ "$peak" -le $(($2 + (1 << 20))) ] || fail "the sandbox's memory peaked at $peak bytes, past $2"
	# The sentry's own RSS under ASan is ASan's too (its runtime, shadow
	# and quarantine, with the text of a binary twice the size): that
	# build's is no measure of the sentry's, and the plain run asserts it.
	# The cgroup's peak above holds for both.
	asan_build ||
		[ "$hwm" -le "$2" ] || fail "the sentry's RSS peaked at $hwm bytes, past the sandbox's limit of $2"
	echo "sandbox peak $((peak >> 20)) MiB, the sentry's $((hwm >> 20)) MiB"
}

# 256 MiB of 64 KiB files in /tmp under --memory 32M: such files stay
# inline, in the sentry's heap, up to 64 MiB in all, which no limit saw.
# Now the sentry keeps them within its share of the limit, the rest goes
# to the store on disk, until --disk says ENOSPC.
t_memory_counts_tmpfs_in_the_sentry()
{
	limits_sandbox --memory 32M --disk 128M -- $PY -c '
import errno, sys
done, err = 0, "none"
try:
    while done < 256 << 20:
        with open(f"/tmp/f{done >> 16}", "wb") as f:
            f.write(b"x" * 65536)
        done += 65536
except OSError as e:
    err = errno.errorcode[e.errno]
print(f"wrote {done >> 20} MiB, then {err}", flush=True)
sys.stdin.readline()
'
	wait_for "$E2E_TMP/sbx.out" '^wrote ' || { limits_sandbox_end; fail "no answer: $ERR"; }
	assert_in_sandbox_cg "$SBX" memory
	peak_within "$SBX" $((32 << 20))
	limits_sandbox_end
	assert_eq 0 "$STATUS" "the guest exits 0: $ERR"
	assert_match "$OUT" '^wrote 1[0-2][0-9] MiB, then ENOSPC$' "writing past --disk fails with ENOSPC, no OOM kill"
}

# A pipe-buffer bomb: pipes grown to 1 MiB (F_SETPIPE_SZ) and filled, as
# many as the guest may make. The sentry held them (256 MiB at most) past
# any --memory; now their capacity is within its share of the limit, and
# the sandbox still answers moat kill.
t_memory_counts_pipes_in_the_sentry()
{
	limits_sandbox --memory 32M -- $PY -c '
import errno, fcntl, os, sys
held, pipes, err = 0, [], "none"
try:
    while held < 512 << 20:
        r, w = os.pipe()
        pipes.append((r, w))
        try:
            fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ
        except OSError:
            pass
        os.set_blocking(w, False)
        try:
            while True:
                held += os.write(w, b"x" * 65536)
        except BlockingIOError:
            pass
except OSError as e:
    err = errno.errorcode[e.errno]
print(f"holding {held >> 20} MiB in {len(pipes)} pipes, then {err}", flush=True)
sys.stdin.readline()
'
	wait_for "$E2E_TMP/sbx.out" '^holding ' || { limits_sandbox_end; fail "no answer: $ERR"; }
	assert_in_sandbox_cg "$SBX" memory
	peak_within "$SBX" $((32 << 20))
	capture timeout 30 "$MOAT" kill "$SBX" KILL
	assert_eq 0 "$STATUS" "moat kill is answered: $ERR"
	limits_sandbox_end killed
	assert_eq 137 "$STATUS" "the sandbox ends by the kill"
	assert_match "$OUT" '^holding [0-9]+ MiB in [0-9]+ pipes, then (ENFILE|EMFILE)$' "pipes past the limit: ENFILE"
}

# A FIFO opened for writing with O_NONBLOCK and no reader (ENXIO), then
# unlinked, 20,000 times: the pipe made for each open was never freed, its
# capacity stayed charged, and every pipe and FIFO open then failed ENFILE
# for the sandbox's life: under --memory 32M after about 1,567 of them,
# under the 64M here (room for python in the guests' 48 MiB, under ASan
# too) after about 3,100. Natively (and now) pipe() still works and gets a
# full 64 KiB.
t_fifo_enxio_gives_its_pipe_back()
{
	capture "$MOAT" do --timeout 300 --memory 64M -- $PY -c '
import errno, fcntl, os
for i in range(20000):
    os.mkfifo("/tmp/fifo")
    try:
        os.open("/tmp/fifo", os.O_WRONLY | os.O_NONBLOCK)
        raise SystemExit("opened a FIFO with no reader")
    except OSError as e:
        if e.errno != errno.ENXIO:
            raise SystemExit(f"iteration {i}: {errno.errorcode[e.errno]}")
    os.unlink("/tmp/fifo")
r, w = os.pipe()
print("pipe ok,", fcntl.fcntl(r, 1032))  # F_GETPIPE_SZ
os.mkfifo("/tmp/fifo")
r = os.open("/tmp/fifo", os.O_RDONLY | os.O_NONBLOCK)
w = os.open("/tmp/fifo", os.O_WRONLY | os.O_NONBLOCK)
print("fifo ok,", os.write(w, b"x") + len(os.read(r, 1)))
'
	assert_eq 0 "$STATUS" "the guest exits 0: $ERR"
	assert_eq "pipe ok, 65536
fifo ok, 2" "$OUT" "pipes and FIFOs still open, at full size"
}

# A guest whose pipes hold the sentry's share of --memory, then a blocking
# msgsnd to an empty queue: it waited for memory that the guest itself
# held, for ever. Linux blocks a sender only on the queue, and gives
# ENOMEM when the message's memory is refused; once the pipes are closed
# the same msgsnd goes through.
t_msgsnd_past_the_budget_is_enomem()
{
	capture "$MOAT" do --timeout 60 --memory 32M -- $PY -c '
import ctypes, errno, fcntl, os
libc = ctypes.CDLL(None, use_errno=True)
fds = []
try:
    while len(fds) < 4000:
        r, w = os.pipe()
        fds += [r, w]
        fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ
except OSError:
    pass
try:
    while len(fds) < 4000:
        r, w = os.pipe()
        fds += [r, w]
except OSError as e:
    print("pipes:", errno.errorcode[e.errno])
class Msg(ctypes.Structure):
    _fields_ = [("type", ctypes.c_long), ("text", ctypes.c_char * 8000)]
m = Msg(1, b"hello")
q = libc.msgget(0, 0o600)  # IPC_PRIVATE
def send():
    if libc.msgsnd(q, ctypes.byref(m), 8000, 0) == 0:
        return "ok"
    return errno.errorcode[ctypes.get_errno()]
print("msgsnd to an empty queue:", send(), flush=True)
for fd in fds:
    os.close(fd)
print("with the pipes closed:", send())
libc.msgctl(q, 0, None)  # IPC_RMID
'
	assert_eq 0 "$STATUS" "the guest exits 0, never stuck in msgsnd: $ERR"
	assert_eq "pipes: ENFILE
msgsnd to an empty queue: ENOMEM
with the pipes closed: ok" "$OUT" "msgsnd past the budget: ENOMEM, then ok"
}

# The sentry's heap that guests multiply, past the budget that pipes,
# inline files and messages already had: AF_UNIX queues (64 MiB in all
# whatever the limit) and tmpfs nodes (each keeps its full path). Under
# --memory 48M a guest that itself stays small made the sentry hold the
# whole limit, and the kernel's OOM killer took the sentry (moat do ended
# 137 without a word). Now each is within the sentry's share of the
# limit: a full sandbox's sockets say EAGAIN, a full tmpfs ENOSPC, and the
# guest ends as it chooses.
t_unix_queues_count_in_the_budget()
{
	limits_sandbox --memory 48M -- $PY -c '
import errno, socket, sys
pairs, total, err = [], 0, "none"
buf = b"x" * 65536
try:
    while len(pairs) < 400:
        a, b = socket.socketpair()
        a.setblocking(False)
        pairs.append((a, b))
        here = 0
        try:
            while True:
                here += a.send(buf)
        except BlockingIOError:
            pass
        total += here
        if here == 0:
            err = "EAGAIN"
            break
except OSError as e:
    err = errno.errorcode[e.errno]
print(f"queued {total >> 20} MiB, then {err}", flush=True)
sys.stdin.readline()
'
	sandbox_says '^queued ' || { limits_sandbox_end killed; fail "no answer (status $STATUS): $ERR"; }
	peak_within "$SBX" $((48 << 20))
	limits_sandbox_end
	assert_eq 0 "$STATUS" "the guest exits 0, the sentry alive: $ERR"
	assert_match "$OUT" '^queued ([0-9]|1[0-2]) MiB, then EAGAIN$' "the queues hold the sentry's share (12 MiB) at most, then EAGAIN"
}

t_tmpfs_nodes_count_in_the_budget()
{
	limits_sandbox --memory 48M -- $PY -c '
import errno, os, sys
os.chdir("/tmp")
for i in range(15):
    os.mkdir("d" * 240)
    os.chdir("d" * 240)
n, err = 0, "none"
try:
    while n < 1000000:
        os.close(os.open("f" * 190 + "%010d" % n, os.O_CREAT | os.O_WRONLY, 0o600))
        n += 1
except OSError as e:
    err = errno.errorcode[e.errno]
print(f"made {n} files, then {err}", flush=True)
sys.stdin.readline()
'
	sandbox_says '^made ' || { limits_sandbox_end killed; fail "no answer (status $STATUS): $ERR"; }
	peak_within "$SBX" $((48 << 20))
	limits_sandbox_end
	assert_eq 0 "$STATUS" "the guest exits 0, the sentry alive: $ERR"
	assert_match "$OUT" '^made [0-9]+ files, then ENOSPC$' "empty files past the sentry's share: ENOSPC"
}

# A large limit is mostly the guests': the sentry's share is a quarter of
# a small one, 64 MiB and a sixteenth of a large one.
t_a_large_limit_is_mostly_the_guests()
{
	local dir
	limits_sandbox --memory 2G -- $PY -c 'import sys; print("holding", flush=True); sys.stdin.readline()'
	sandbox_says '^holding' || { limits_sandbox_end killed; fail "no answer (status $STATUS): $ERR"; }
	dir=$(sandbox_cg "$SBX" memory)
	assert_eq $(((2048 - 64 - 128) << 20)) \
		"$(cat "$dir/guest/memory.limit_in_bytes" 2>/dev/null || cat "$dir/guest/memory.max")" \
		"guest/ has 2 GiB less 192 MiB"
	limits_sandbox_end
	assert_eq 0 "$STATUS" "the guest exits 0: $ERR"
}

# The guests' own memory meets a limit of their own (guest/: the sandbox's
# less the sentry's share), so that the OOM killer chooses among guests:
# a memory bomb while the sentry holds its whole share in pipes is killed,
# and the sentry says so.
t_guests_have_their_own_memory_limit()
{
	local dir lim
	limits_sandbox --memory 64M -- $PY -c '
import fcntl, os, sys
fds = []
try:
    while len(fds) < 4000:
        r, w = os.pipe()
        fds += [r, w]
        fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ
        os.set_blocking(w, False)
        try:
            while True:
                os.write(w, b"x" * 65536)
        except BlockingIOError:
            pass
except OSError:
    pass
print("holding", flush=True)
sys.stdin.readline()
x = []
while len(x) < 100:
    x.append(b"\1" * (10 << 20))
'
	sandbox_says '^holding' || { limits_sandbox_end killed; fail "no answer (status $STATUS): $ERR"; }
	dir=$(sandbox_cg "$SBX" memory)
	lim=$(cat "$dir/guest/memory.limit_in_bytes" 2>/dev/null || cat "$dir/guest/memory.max")
	assert_eq $((48 << 20)) "$lim" "guest/'s limit is the sandbox's less the sentry's quarter"
	limits_sandbox_end
	assert_eq 137 "$STATUS" "the kernel kills the bomb, the first guest: $ERR"
	assert_contains "$ERR" "memory limit of 67108864 bytes reached; the kernel killed a guest process" "the sentry, alive, says so"
}

# If the kernel's OOM killer takes the sentry anyway (here made the one
# to go: it holds its share of the limit in the guest's pipes, its score
# is raised to 1000, as the guests', and a host process of the test's,
# smaller, allocates past the limit in the sandbox's cgroup),
# moat do, which is the sentry, ended by SIGKILL without a word; now its
# janitor says what happened.
t_sentry_oom_kill_is_said()
{
	local dir i sub=""
	limits_sandbox --memory 32M -- $PY -c '
import fcntl, os, sys
fds = []
try:
    while len(fds) < 4000:
        r, w = os.pipe()
        fds += [r, w]
        fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ
        os.set_blocking(w, False)
        try:
            while True:
                os.write(w, b"x" * 65536)
        except BlockingIOError:
            pass
except OSError:
    pass
print("up", flush=True)
sys.stdin.readline()
'
	sandbox_says '^up' || { limits_sandbox_end killed; fail "no answer (status $STATUS): $ERR"; }
	dir=$(sandbox_cg "$SBX" memory)
	[ -e /sys/fs/cgroup/cgroup.controllers ] && sub=/sentry
	echo 1000 >"/proc/$SBX/oom_score_adj"
	(
		echo "$BASHPID" >"$dir$sub/cgroup.procs" &&
			exec $PY -c 'x = b"\1" * (64 << 20)'
	) 2>/dev/null
	for i in $(seq 100); do
		grep -q 'OOM killer' "$E2E_TMP/sbx.err" && break
		sleep 0.1
	done
	limits_sandbox_end killed
	assert_eq 137 "$STATUS" "the sentry was killed"
	assert_contains "$ERR" "moat: the sandbox's sentry was killed by the kernel's OOM killer (memory limit of 33554432 bytes)" "its janitor says so"
}

# --pids counts the guests alone: its kernel bound is guest/'s, and the
# sentry and its gofers, in moat-PID above it, never take a slot, so a
# guest that holds every one stops none of theirs.
t_pids_count_the_guests_alone()
{
	local dir p
	limits_sandbox --pids 20 -- $PY -c '
import os, sys, time
n = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
except BlockingIOError:
    print("holding", n + 1, flush=True)
sys.stdin.readline()
'
	wait_for "$E2E_TMP/sbx.out" '^holding ' || { limits_sandbox_end; fail "no answer: $ERR"; }
	assert_in_sandbox_cg "$SBX" pids
	dir=$(sandbox_cg "$SBX" pids)
	assert_eq 22 "$(cat "$dir/guest/pids.max")" "the kernel's bound (a little above --pids 20) is the guests'"
	assert_eq max "$(cat "$dir/pids.max")" "the sandbox's own cgroup has none"
	for p in $(pgrep -P "$SBX" -f 'moat gofer'); do
		assert_match "$(cg_dir "$p" pids)" "/moat-$SBX(/sentry)?\$" "gofer $p is with the sentry, not the guests"
	done
	limits_sandbox_end
	assert_eq "holding 20" "$OUT" "the guests hold all 20 slots"
}

# cpu_ticks SENTRY: the CPU time (clock ticks) of the sentry and of every
# process in its sandbox's cpu cgroup, guests and helpers.
cpu_ticks()
{
	local dir p
	dir=$(sandbox_cg "$1" cpu)
	for p in $({ echo "$1"; find "$dir" -name cgroup.procs -exec cat {} +; } | sort -u); do
		awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null
	done | awk '{ s += $1 } END { print s + 0 }'
}

# --cpus 0.1 and a guest whose every pread traps: the sentry did the work
# on a core of its own, outside the quota (96 % of a core measured on an
# idle machine, 30 % on a loaded one). Now the quota is the sandbox's: over
# 3 s, the sentry and the guests together use a quarter of a core at most
# (a bound, not a timing: the kernel holds them to 0.1, and a loaded
# machine gives them less).
t_cpu_counts_the_sentry()
{
	local t0 t1 hz used
	limits_sandbox --cpus 0.1 -- $PY -c '
import os, select, sys
fd = os.open("/etc/passwd", os.O_RDONLY)
print("looping", flush=True)
while not select.select([sys.stdin], [], [], 0)[0]:
    for _ in range(1000):
        os.pread(fd, 64, 0)
'
	wait_for "$E2E_TMP/sbx.out" '^looping' || { limits_sandbox_end; fail "no answer: $ERR"; }
	assert_in_sandbox_cg "$SBX" cpu
	hz=$(getconf CLK_TCK)
	t0=$(cpu_ticks "$SBX")
	sleep 3
	t1=$(cpu_ticks "$SBX")
	limits_sandbox_end
	used=$(((t1 - t0) * 100 / (3 * hz)))
	echo "the sandbox used $used % of a core under --cpus 0.1"
	[ "$used" -le 25 ] || fail "the sentry and the guest used $used % of a core under --cpus 0.1"
	assert_eq 0 "$STATUS" "the guest ends when told: $ERR"
}

run_test "--timeout kills a runaway" t_timeout
run_test "--pids refuses forks past the limit" t_pids
run_test "zombies count against --pids until reaped, as natively" t_pids_count_zombies
run_test "a fork bomb is contained" t_fork_bomb
run_test "a memory bomb is contained" t_memory_bomb
run_test "--disk bounds /tmp" t_disk
run_test "a fork bomb under the defaults leaves the host and a sandbox working" t_default_fork_bomb
run_test "a memory bomb under the defaults leaves the host and a sandbox working" t_default_memory_bomb
run_test "without cgroups the default pids limit holds, and no memory limit is said" t_defaults_without_cgroups
run_test "--memory unlimited and --pids unlimited lift the defaults" t_defaults_lifted
run_test "--memory counts what the sentry holds of /tmp" t_memory_counts_tmpfs_in_the_sentry
run_test "--memory counts the pipes' buffers, and moat kill still answers" t_memory_counts_pipes_in_the_sentry
run_test "--cpus counts the sentry's work for the guests" t_cpu_counts_the_sentry
run_test "--pids counts the guests alone" t_pids_count_the_guests_alone
run_test "a FIFO that gets ENXIO gives its pipe back" t_fifo_enxio_gives_its_pipe_back
run_test "msgsnd past the heap budget gives ENOMEM, never waits" t_msgsnd_past_the_budget_is_enomem
run_test "AF_UNIX queues count in the sentry's share of --memory" t_unix_queues_count_in_the_budget
run_test "tmpfs nodes count in the sentry's share of --memory" t_tmpfs_nodes_count_in_the_budget
run_test "a large limit is mostly the guests'" t_a_large_limit_is_mostly_the_guests
run_test "the guests have a memory limit of their own" t_guests_have_their_own_memory_limit
run_test "a sentry killed by the OOM killer is said" t_sentry_oom_kill_is_said
e2e_done
