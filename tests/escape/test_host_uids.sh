#!/usr/bin/env bash
# Barrier: sandboxes do not share a host identity (sentry/hostids.h). Each
# running sandbox has a guest uid (its reaper and guests) and a helper uid
# (the gofer of the host's /, the slirp helper) of its own, from moat's
# range, never nobody's: so neither host nobody, nor a guest or helper of
# another sandbox, nor the sandbox's own helpers may signal its guests
# (the kernel's same-user check). A slot is freed when its sandbox ends,
# however it ends, and taken again. A guest's prctl(PR_SET_DUMPABLE) is
# the sentry's to keep (tests/escape/dumpable.py prints the same natively
# and inside); the host task's flag is not the guest's to change.
. "$(dirname "$0")/../e2e/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
NOBODY=$(id -u nobody)
UIDS=/run/moat/uids
GIDS=/run/moat/gids
BOXES=""

field()
{
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null
}

# start_box NAME MOAT-DO-ARGS...: `moat do ARGS -- python3` in the
# background, once its guest has said it is ready (and done what
# $GUEST_CODE says first). Sets NAME_cli, NAME_guests (the traced host
# processes: the reaper and the guest), NAME_helpers (the untraced ones
# that are not root: the gofer of the host's /, the slirp helper), and
# NAME_guid, NAME_huid: their one uid each ("mixed" when they differ).
start_box()
{
	local name=$1
	shift
	launch_box "$name" "$@"
	collect_box "$name"
}

# launch_box NAME MOAT-DO-ARGS...: start_box's start, without the wait.
# $BOX_WRAP, if set, is a command that runs moat (private_ids.sh DIR).
launch_box()
{
	local name=$1 out=$E2E_TMP/$1.out
	shift
	: >"$out" # now: the background job's own truncation may come late
	${BOX_WRAP:-} "$MOAT" do "$@" -- $PY -c "import time
${GUEST_CODE:-pass}
print('ready', flush=True)
time.sleep(120)" </dev/null >"$out" 2>&1 &
	printf -v "${name}_cli" %s "$!"
	BOXES="$BOXES $!"
}

# collect_box NAME: start_box's wait, and what it sets.
collect_box()
{
	local name=$1 out=$E2E_TMP/$1.out v=${1}_cli p g="" h="" guests="" helpers=""
	p=${!v}
	for _ in $(seq 600); do
		grep -q ready "$out" && break
		kill -0 "$p" 2>/dev/null || fail "sandbox $name did not start: $(cat "$out")"
		sleep 0.05
	done
	grep -q ready "$out" || fail "sandbox $name never said ready: $(cat "$out")"
	for q in $(descendants "$p"); do
		local u t
		u=$(field "$q" Uid)
		t=$(field "$q" TracerPid)
		[ -n "$u" ] || continue
		if [ -n "$t" ] && [ "$t" != 0 ]; then
			guests="$guests $q"
			[ -z "$g" ] || [ "$g" = "$u" ] || g=mixed
			[ "$g" = mixed ] || g=$u
		elif [ "$u" != 0 ]; then
			helpers="$helpers $q"
			[ -z "$h" ] || [ "$h" = "$u" ] || h=mixed
			[ "$h" = mixed ] || h=$u
		fi
	done
	[ -n "$guests" ] || fail "sandbox $name: no traced guest process found"
	[ -n "$helpers" ] || fail "sandbox $name: no helper process found"
	printf -v "${name}_guests" %s "$guests"
	printf -v "${name}_helpers" %s "$helpers"
	printf -v "${name}_guid" %s "$g"
	printf -v "${name}_huid" %s "$h"
}

# stop_box NAME: SIGTERM its moat, and wait until it is gone.
stop_box()
{
	local v=${1}_cli
	kill -TERM "${!v}" 2>/dev/null
	wait "${!v}" 2>/dev/null
}

stop_all()
{
	local p
	for p in $BOXES; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
}

# signal_as UID PID: kill(PID, 0) as host uid UID (its own gid, no
# groups, no capabilities): "delivered" or the errno's text.
signal_as()
{
	setpriv --reuid="$1" --regid="$1" --clear-groups --inh-caps=-all \
		--bounding-set=-all $PY -c '
import os, sys
try:
    os.kill(int(sys.argv[1]), 0)
    print("delivered")
except OSError as e:
    print(os.strerror(e.errno))' "$2"
}

# read_as UID FILE: the first bytes of FILE read as host uid UID, or the
# errno's text.
read_as()
{
	setpriv --reuid="$1" --regid="$1" --clear-groups --inh-caps=-all \
		--bounding-set=-all $PY -c '
import sys
try:
    open(sys.argv[1], "rb").read(1)
    print("read")
except OSError as e:
    print(e.strerror)' "$2"
}

# uid_procs UID: the live processes of UID (not zombies: this host's
# init may take seconds to reap the reparented ones; moat skips them too).
uid_procs()
{
	ps -e -o pid=,uid=,stat= | awk -v u="$1" '$2 == u && $3 !~ /^Z/'
}

in_range()
{
	[ "$1" != mixed ] && [ "$1" != 0 ] && [ "$1" != "$NOBODY" ]
}

t_own_ids()
{
	trap stop_all EXIT
	start_box A
	start_box B --net=slirp
	echo "A: guests $A_guests as $A_guid, helpers $A_helpers as $A_huid"
	echo "B: guests $B_guests as $B_guid, helpers $B_helpers as $B_huid"
	in_range "$A_guid" || fail "A's guests run as uid $A_guid"
	in_range "$A_huid" || fail "A's helpers run as uid $A_huid"
	in_range "$B_guid" || fail "B's guests run as uid $B_guid"
	in_range "$B_huid" || fail "B's helpers (gofer, slirp) run as uid $B_huid"
	assert_eq 4 "$(printf '%s\n' "$A_guid" "$A_huid" "$B_guid" "$B_huid" | sort -u | wc -l)" \
		"four different uids: each sandbox's guests and helpers"
	# and gids to go with them
	local p gids=""
	for p in $A_guests $A_helpers $B_guests $B_helpers; do
		gids="$gids $(field "$p" Gid)"
	done
	assert_eq 4 "$(printf '%s\n' $gids | sort -u | wc -l)" "four different gids"
	for p in $A_guests $A_helpers $B_guests $B_helpers; do
		[ "$(field "$p" Gid)" != 0 ] && [ "$(field "$p" Gid)" != "$(id -g nobody)" ] ||
			fail "pid $p runs as gid $(field "$p" Gid)"
	done
	# The locks that hold each slot's ids are root's, in directories of
	# root's: one per id.
	assert_eq "700 0" "$(stat -c '%a %u' "$UIDS")" "$UIDS is root's alone"
	assert_eq "700 0" "$(stat -c '%a %u' "$GIDS")" "$GIDS is root's alone"
	flock -n "$UIDS/$A_guid" true && fail "A's guest uid is not locked while A runs"
	flock -n "$UIDS/$A_huid" true && fail "A's helper uid is not locked while A runs"
	p=$(echo $A_guests | awk '{ print $1 }')
	flock -n "$GIDS/$(field "$p" Gid)" true && fail "A's guest gid is not locked while A runs"
	p=$(echo $A_helpers | awk '{ print $1 }')
	flock -n "$GIDS/$(field "$p" Gid)" true && fail "A's helper gid is not locked while A runs"
	return 0
}

# Sandboxes started at the same moment race for the lowest free slot:
# each gets one of its own.
t_concurrent_starts()
{
	trap stop_all EXIT
	local n all=""
	for n in C1 C2 C3 C4 C5; do launch_box $n; done
	for n in C1 C2 C3 C4 C5; do
		collect_box $n
		local g=${n}_guid h=${n}_huid
		in_range "${!g}" || fail "$n's guests run as uid ${!g}"
		all="$all ${!g} ${!h}"
	done
	assert_eq 10 "$(printf '%s\n' $all | sort -u | wc -l)" \
		"five sandboxes started at once: ten different uids ($all)"
}

t_no_signals_across()
{
	trap stop_all EXIT
	start_box A
	start_box B --net=slirp
	local ga gb ha p
	ga=$(echo $A_guests | awk '{ print $NF }')
	gb=$(echo $B_guests | awk '{ print $NF }')
	ha=$(echo $A_helpers | awk '{ print $1 }')
	for p in $A_guests; do
		assert_eq "Operation not permitted" "$(signal_as "$NOBODY" "$p")" \
			"host nobody signals A's guest $p"
	done
	assert_eq "Operation not permitted" "$(signal_as "$A_guid" "$gb")" \
		"A's guest uid signals B's guest"
	assert_eq "Operation not permitted" "$(signal_as "$A_huid" "$gb")" \
		"A's helper uid signals B's guest"
	assert_eq "Operation not permitted" "$(signal_as "$A_huid" "$ga")" \
		"A's helper uid (a compromised gofer) signals A's own guest"
	assert_eq "Operation not permitted" "$(signal_as "$A_guid" "$ha")" \
		"A's guest uid signals A's helper"
	assert_eq "Operation not permitted" "$(signal_as "$B_huid" "$ha")" \
		"B's helper signals A's helper"
	assert_eq "Operation not permitted" "$(signal_as "$NOBODY" "$ha")" \
		"host nobody signals A's helper"
	# The probe itself works: the same uid may.
	assert_eq delivered "$(signal_as "$A_guid" "$ga")" "the guest's own uid signals it"
	# Nor may they read what the kernel guards with ptrace's check.
	assert_eq "Permission denied" "$(read_as "$NOBODY" "/proc/$ga/environ")" \
		"host nobody reads A's guest's environ"
	assert_eq "Permission denied" "$(read_as "$B_guid" "/proc/$ga/environ")" \
		"B's guest uid reads A's guest's environ"
}

t_freed_and_reused()
{
	trap stop_all EXIT
	local g
	start_box A
	g=$A_guid
	in_range "$g" || fail "A's guests run as uid $g"
	stop_box A
	# SIGTERM ends the sentry at once; the kernel kills its guests
	# as it goes (PTRACE_O_EXITKILL), and they take a moment to go.
	for _ in $(seq 200); do
		[ -z "$(uid_procs "$g")" ] && break
		sleep 0.05
	done
	assert_eq "" "$(uid_procs "$g")" "no process of A's guest uid is left"
	flock -n "$UIDS/$g" true || fail "A's slot is still locked after A ended"
	# A process left as either uid (a sentry killed before its guests
	# were, or anything else of those ids).
	local left1 left2
	setpriv --reuid="$g" --regid="$g" --clear-groups sleep 300 &
	left1=$!
	setpriv --reuid="$A_huid" --regid="$A_huid" --clear-groups sleep 300 &
	left2=$!
	BOXES="$BOXES $left1 $left2"
	sleep 0.2
	start_box B
	# A slot whose uids something still runs as is skipped, and what runs
	# is left alone: nothing proves it moat's to kill (a moat not sharing
	# this /run/moat, a host user given ids of the range).
	assert_ne "$g" "$B_guid" "B took the uid that a process still runs as"
	in_range "$B_guid" || fail "B's guests run as uid $B_guid"
	kill -0 "$left1" 2>/dev/null || fail "what ran as A's guest uid was killed"
	kill -0 "$left2" 2>/dev/null || fail "what ran as A's helper uid was killed"
	kill -KILL "$left1" "$left2"
	wait "$left1" "$left2" 2>/dev/null
	# However the sandbox ends: its sentry killed at once frees it too.
	stop_box B
	start_box C
	g=$C_guid
	kill -KILL "$C_cli"
	wait "$C_cli" 2>/dev/null
	# Its guests die with it, a moment later; until then the slot is
	# skipped, as any slot that processes still use.
	for _ in $(seq 200); do
		[ -z "$(uid_procs "$g")$(uid_procs "$C_huid")" ] && break
		sleep 0.05
	done
	assert_eq "" "$(uid_procs "$g")$(uid_procs "$C_huid")" \
		"no process of C's uids is left"
	start_box D
	if [ "$D_guid" != "$g" ]; then
		flock -n "$UIDS/$g" true && fail "D got uid $D_guid although $g was free"
	fi
	in_range "$D_guid" || fail "D's guests run as uid $D_guid"
}

# Another guest's /proc/PID/environ is open to a caller whose fsuid and
# fsgid are the target's uids and gids (Linux's PTRACE_MODE_READ_FSCREDS),
# whatever its euid; the sentry once compared the euid alone and the uids
# alone (tests/escape/inspect_ids.py prints the same natively and inside).
t_proc_inspect_by_fsids()
{
	local want
	cp "$HERE/inspect_ids.py" "$E2E_TMP/inspect_ids.py"
	capture native $PY "$E2E_TMP/inspect_ids.py"
	want=$OUT
	assert_contains "$want" "same uids, other gids: Permission denied" "natively, the gids count"
	assert_contains "$want" "euid another, fsuid the target's: read" "natively, the fsuid decides"
	capture moat do -- $PY "$E2E_TMP/inspect_ids.py"
	assert_eq "$want" "$OUT" "who may read another process's environ, as natively"
}

t_dumpable()
{
	trap stop_all EXIT
	local want p
	# in $E2E_TMP: the guest's /tmp is its own, and a checkout may be there
	cp "$HERE/dumpable.py" "$E2E_TMP/dumpable.py"
	capture native $PY "$E2E_TMP/dumpable.py"
	want=$OUT
	assert_contains "$want" "after exec: dumpable 1" "the native run worked"
	capture moat do -- $PY "$E2E_TMP/dumpable.py"
	assert_eq 0 "$STATUS" "the program runs to the end"
	assert_eq "$want" "$OUT" "PR_SET_DUMPABLE and its effects as natively"
	# A guest's host task is dumpable (its exec of the stub made it so;
	# the uid is the sandbox's alone), and stays so when the guest asks
	# otherwise: only its virtual flag changes. Linux gives a task's
	# /proc files to root when it is not dumpable: that shows the flag.
	GUEST_CODE='import ctypes; ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)' start_box A
	p=$(echo $A_guests | awk '{ print $NF }')
	assert_eq "$A_guid" "$(stat -c %u "/proc/$p/status")" \
		"the owner of the guest's /proc/$p/status (host): still dumpable"
}

# A process that dropped root is not dumpable, so its /proc files are
# root's; it still lists and follows its own fd/ (Linux's
# proc_fd_permission), as closefrom(), ttyname() and close_fds need.
t_own_proc_after_drop()
{
	local want
	cp "$HERE/self_proc.py" "$E2E_TMP/"
	capture native $PY "$E2E_TMP/self_proc.py"
	want=$OUT
	assert_contains "$want" "listdir fd: has the pipe True" "the native run worked"
	assert_contains "$want" "listdir a sibling's fd Permission denied" \
		"the native run worked"
	capture moat do -- $PY "$E2E_TMP/self_proc.py"
	assert_eq 0 "$STATUS" "the program runs to the end"
	assert_eq "$want" "$OUT" "its own /proc/self as natively"
}

# mem_as UID PID: open /proc/PID/mem as host uid UID with no capability
# (uid 0 too: a hardened root service): "opened" or the errno's text.
mem_as()
{
	setpriv --reuid="$1" --regid="$1" --clear-groups --inh-caps=-all \
		--ambient-caps=-all --bounding-set=-all $PY -c '
import os, sys
try:
    os.close(os.open("/proc/%s/mem" % sys.argv[1], os.O_RDONLY))
    print("opened")
except OSError as e:
    print(os.strerror(e.errno))' "$2"
}

# Every helper is out of ptrace's reach of whatever shares its uid without
# CAP_SYS_PTRACE: a gofer that stays uid 0 with no capability would be any
# capless root process's to read and write (/proc/PID/mem: forged 9P
# replies to the sentry).
t_helpers_not_dumpable()
{
	trap stop_all EXIT
	start_box A --net=slirp
	local p u n=0 n0=0 probe
	for p in $(descendants "$A_cli"); do
		[ "$(field "$p" TracerPid)" = 0 ] || continue
		u=$(field "$p" Uid)
		[ -n "$u" ] || continue
		n=$((n + 1))
		[ "$u" = 0 ] && n0=$((n0 + 1))
		assert_eq "Permission denied" "$(mem_as "$u" "$p")" \
			"uid $u without capabilities opens /proc/$p/mem ($(tr '\0' ' ' <"/proc/$p/cmdline" | cut -c1-50))"
	done
	[ "$n0" -ge 1 ] || fail "no helper of uid 0 (the rootfs's gofer) found"
	echo "$n helpers, $n0 of uid 0: none open to their own uid"
	# The probe itself works: a capless process of uid 0 that stayed
	# dumpable is open to it.
	setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all sleep 60 &
	probe=$!
	BOXES="$BOXES $probe"
	sleep 0.2
	assert_eq opened "$(mem_as 0 "$probe")" "the probe opens a dumpable capless root process"
}

# private_range NAME START COUNT: a moat installation of its own for
# BOX_WRAP (private_ids.sh): its own /run/moat, and moat:START:COUNT in its
# /etc/subuid and /etc/subgid. Far from the host's range (and from its
# sandboxes, which other tests may run meanwhile).
PRIVATE_START=2120000000
private_range()
{
	mkdir -p "$E2E_TMP/$1"
	echo "moat:$2:$3" >"$E2E_TMP/$1/subuid"
	echo "moat:$2:$3" >"$E2E_TMP/$1/subgid"
}

# Two moats that do not share /run/moat (two mount namespaces: privileged
# containers without a user namespace, CI runners) see free locks for the
# same slot: the second must see the first's processes and take another
# slot, never kill them.
t_installs_not_sharing_run()
{
	trap stop_all EXIT
	local S=$PRIVATE_START p
	private_range one $S 4
	private_range two $S 4
	BOX_WRAP="sh $HERE/private_ids.sh $E2E_TMP/one" start_box A
	assert_eq "$S $((S + 1))" "$A_guid $A_huid" "A has its range's first slot"
	BOX_WRAP="sh $HERE/private_ids.sh $E2E_TMP/two" start_box B
	assert_eq "$((S + 2)) $((S + 3))" "$B_guid $B_huid" \
		"B, with a /run/moat of its own, skipped the slot A's processes use"
	sleep 0.5
	kill -0 "$A_cli" 2>/dev/null || fail "A's moat is gone: $(cat "$E2E_TMP/A.out")"
	for p in $A_guests $A_helpers; do
		kill -0 "$p" 2>/dev/null || fail "A's process $p was killed"
	done
	# Both slots taken, by processes if not by locks: a third is refused,
	# with a message that says why.
	capture sh "$HERE/private_ids.sh" "$E2E_TMP/two" "$MOAT" do -- /bin/true
	assert_ne 0 "$STATUS" "a third sandbox in a range of two slots"
	assert_contains "$ERR" "in use (1 of them by processes moat does not hold" \
		"the refusal says a slot is in use outside moat's locks"
	stop_box A
	stop_box B
	return 0
}

# A host user or group with an id in moat's range would share it with a
# sandbox: the range is refused, with a message that names the account.
# And a process of such an id that no account names (a directory
# service's user) keeps its slot from use, and is not killed.
t_range_with_host_accounts()
{
	trap stop_all EXIT
	local S=$((PRIVATE_START + 100)) d=$E2E_TMP/acct u
	private_range acct $S 4
	cp /etc/passwd "$d/passwd"
	cp /etc/group "$d/group"
	echo "r11user:x:$((S + 1)):100::/nonexistent:/usr/sbin/nologin" >>"$d/passwd"
	capture sh "$HERE/private_ids.sh" "$d" "$MOAT" do -- /bin/true
	assert_ne 0 "$STATUS" "a start with a host user in moat's range"
	assert_contains "$ERR" "\`r11user\` of /etc/passwd has uid $((S + 1)), in moat's range" \
		"the refusal names the user"
	cp /etc/passwd "$d/passwd"
	echo "r11group:x:$((S + 3)):" >>"$d/group"
	capture sh "$HERE/private_ids.sh" "$d" "$MOAT" do -- /bin/true
	assert_ne 0 "$STATUS" "a start with a host group in moat's range"
	assert_contains "$ERR" "\`r11group\` of /etc/group has gid $((S + 3))" \
		"the refusal names the group"
	cp /etc/group "$d/group"
	# No account, but a process: the slot is skipped, the process lives.
	setpriv --reuid=$S --regid=$S --clear-groups sleep 300 &
	u=$!
	BOXES="$BOXES $u"
	sleep 0.2
	BOX_WRAP="sh $HERE/private_ids.sh $d" start_box A
	assert_eq "$((S + 2)) $((S + 3))" "$A_guid $A_huid" \
		"A skipped the slot that uid $S runs in"
	kill -0 "$u" 2>/dev/null || fail "the process of uid $S was killed"
	assert_eq "Operation not permitted" "$(signal_as "$S" "$(echo $A_guests | awk '{ print $NF }')")" \
		"uid $S signals A's guest"
	return 0
}

# moat's range moved by one id while a sandbox runs: the new range's
# first slot has the running sandbox's helper uid as its guest uid. A
# --rootfs sandbox without --net=slirp has no process of its helper uid
# (its gofers are uid 0), so nothing in /proc shows that id taken: only
# the lock on each id keeps the new sandbox off it.
t_range_moved_while_running()
{
	trap stop_all EXIT
	local S=$((PRIVATE_START + 200)) d=$E2E_TMP/moved root=$E2E_TMP/bbroot a
	make_busybox_rootfs "$root"
	private_range moved $S 6
	sh "$HERE/private_ids.sh" "$d" "$MOAT" do --rootfs "$root" -- /bin/sleep 60 \
		</dev/null >"$E2E_TMP/A.out" 2>&1 &
	a=$!
	BOXES="$BOXES $a"
	for _ in $(seq 200); do
		[ -n "$(uid_procs $S)" ] && break
		sleep 0.05
	done
	[ -n "$(uid_procs $S)" ] || fail "A never ran as uid $S: $(cat "$E2E_TMP/A.out")"
	assert_eq "" "$(uid_procs $((S + 1)))" "no process of A's helper uid $((S + 1))"
	echo "moat:$((S + 1)):6" >"$d/subuid"
	echo "moat:$((S + 1)):6" >"$d/subgid"
	BOX_WRAP="sh $HERE/private_ids.sh $d" start_box B
	echo "A: uid $S (helper $((S + 1))), B after the move: $B_guid (helper $B_huid)"
	assert_eq "$((S + 3)) $((S + 4))" "$B_guid $B_huid" \
		"B skipped the slot whose guest uid is A's helper uid"
	kill -0 "$a" 2>/dev/null || fail "A is gone: $(cat "$E2E_TMP/A.out")"
	return 0
}

run_test "each sandbox: guests and helpers with host uids of their own" t_own_ids
run_test "sandboxes started at once get slots of their own" t_concurrent_starts
run_test "no signal across sandboxes, from nobody, or from the helpers" t_no_signals_across
run_test "a sandbox's uids are freed when it ends, and taken again" t_freed_and_reused
run_test "moats not sharing /run/moat: the second skips the first's slot" t_installs_not_sharing_run
run_test "a range that host accounts or processes use" t_range_with_host_accounts
run_test "the range moved while a sandbox runs: no id shared" t_range_moved_while_running
run_test "prctl(PR_SET_DUMPABLE): as natively, and not the host task's" t_dumpable
run_test "a process that dropped root still sees its own /proc/self/fd" t_own_proc_after_drop
run_test "another process's /proc files by its fsuid and fsgid, as natively" t_proc_inspect_by_fsids
run_test "no helper is open to its own uid without capabilities" t_helpers_not_dumpable
e2e_done
