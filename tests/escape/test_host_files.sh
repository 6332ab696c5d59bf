#!/usr/bin/env bash
# Barrier (host files): what the OCI runtime writes or removes on the host,
# as root, never follows a link another user planted. A user who can write
# the directory of a --pid-file or a --log (here: nobody, in a directory of
# its own) plants symbolic links at every name the runtime could use there,
# pointing at a file of root's; a --root of another user's, or one others
# may write, is refused; a state directory that is a link is removed as a
# link; a console socket another user listens on is not sent the
# container's terminal. After each, root's file is as it was.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../oci/lib_oci.sh"

NOBODY=$(id -u nobody)
NOGROUP=$(id -g nobody)

as_nobody()
{
	setpriv --reuid="$NOBODY" --regid="$NOGROUP" --clear-groups "$@"
}

# W: this case's directory; TARGET: a file only root may write; DIR: a
# directory of nobody's to plant in.
setup()
{
	W=$(mktemp -d "$E2E_TMP/case.XXXXXX")
	chmod 0755 "$W"
	TARGET=$W/precious
	printf 'precious\n' >"$TARGET"
	chmod 0644 "$TARGET"
	DIR=$W/users
	mkdir -m 0755 "$DIR"
	chown "$NOBODY:$NOGROUP" "$DIR"
}

target_intact()
{
	assert_eq "precious" "$(cat "$TARGET")" "$1: root's file is untouched"
}

# plant NAME...: nobody's links at DIR/NAME to TARGET.
plant()
{
	local n
	for n in "$@"; do
		as_nobody ln -sfn "$TARGET" "$DIR/$n" || fail "plant $n"
	done
}

t_pid_file_does_not_follow_links()
{
	local b root pid
	setup
	b=$W/b root=$W/root
	make_bundle "$b" '["sleep","30"]' || fail "bundle"
	# The old temporary name, runc's, and the path itself.
	plant pid.tmp .pid pid
	moat --root "$root" create --bundle "$b" --pid-file "$DIR/pid" pf1 || fail "create"
	target_intact "create --pid-file"
	[ -L "$DIR/pid" ] && fail "the pid file is still the planted link"
	pid=$(cat "$DIR/pid")
	assert_eq "$pid" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$root/pf1/state.json")" \
		"the pid file names the daemon"
	moat --root "$root" start pf1 || fail "start"
	plant epid.tmp .epid epid
	moat --root "$root" exec -d --pid-file "$DIR/epid" pf1 sleep 20 || fail "exec -d"
	target_intact "exec -d --pid-file"
	[ -L "$DIR/epid" ] && fail "exec's pid file is still the planted link"
	kill -0 "$(cat "$DIR/epid")" || fail "exec's pid file names its stand-in"
	moat --root "$root" delete --force pf1 || fail "delete"
	target_intact "delete"
	return 0
}

t_log_does_not_follow_links()
{
	setup
	plant log.json
	capture moat --root "$W/none" --log "$DIR/log.json" state nosuch
	assert_eq 1 "$STATUS" "state of an unknown container"
	target_intact "--log"
	assert_contains "$ERR" "--log \`$DIR/log.json\`: a symbolic link: not followed" "says why it is not written"
	assert_contains "$ERR" "container does not exist" "the error itself still reaches stderr"
	# A file of its own is appended to, as before.
	rm -f "$DIR/log.json"
	capture moat --root "$W/none" --log "$DIR/log.json" state nosuch
	assert_contains "$(cat "$DIR/log.json")" "container does not exist" "a plain --log file is written"
	assert_eq 600 "$(stat -c %a "$DIR/log.json")" "--log is made 0600"
}

# moat do's --audit is root's append to a path the caller named: a link or
# a hard link planted there is not written through.
t_audit_does_not_follow_links()
{
	# a call moat lacks: an audit record
	local NOSYS='import ctypes; ctypes.CDLL(None).syscall(180)'
	setup
	plant audit.jsonl
	capture moat do --audit "$DIR/audit.jsonl" -- python3 -c "$NOSYS"
	assert_eq 0 "$STATUS" "the sandbox still runs"
	target_intact "--audit"
	assert_contains "$ERR" "audit log \`$DIR/audit.jsonl\`: a symbolic link" "says why it is not written"
	rm -f "$DIR/audit.jsonl"
	ln "$TARGET" "$DIR/audit.jsonl" || fail "hard link"
	capture moat do --audit "$DIR/audit.jsonl" -- python3 -c "$NOSYS"
	target_intact "--audit (a hard link)"
	rm -f "$DIR/audit.jsonl"
	capture moat do --audit "$DIR/audit.jsonl" -- python3 -c "$NOSYS"
	assert_contains "$(cat "$DIR/audit.jsonl")" '"event"' "a plain --audit file is written"
	assert_eq 600 "$(stat -c %a "$DIR/audit.jsonl")" "--audit is made 0600"
	capture moat do --audit /dev/stderr -- python3 -c "$NOSYS"
	assert_contains "$ERR" '"event"' "--audit /dev/stderr is the caller's stderr"
}

t_root_of_another_user_is_refused()
{
	local b root victim
	setup
	b=$W/b root=$DIR/root victim=$W/victim
	make_bundle "$b" '["sleep","30"]' || fail "bundle"
	mkdir -m 0755 "$victim"
	echo keep >"$victim/keep"
	# nobody owns the --root an engine was told to use, and has put a
	# "state directory" there that is a link to a directory of root's.
	as_nobody mkdir -m 0755 "$root" || fail "nobody's root"
	as_nobody ln -s "$victim" "$root/c9" || fail "plant c9"
	capture moat --root "$root" delete --force c9
	assert_ne 0 "$STATUS" "delete in another user's --root is refused"
	assert_contains "$ERR" "--root \`$root\` is owned by uid $NOBODY, not by uid 0" "and says why"
	assert_eq keep "$(cat "$victim/keep" 2>/dev/null)" "the link's target is untouched"
	capture moat --root "$root" create --bundle "$b" c10
	assert_ne 0 "$STATUS" "create in another user's --root is refused"
	[ -e "$root/c10" ] && fail "a state directory was made there"
	capture moat --root "$root" list
	assert_ne 0 "$STATUS" "list of another user's --root is refused"
	# root's own, but open to everyone: entries may be anyone's.
	mkdir -m 0777 "$W/open"
	chmod 0777 "$W/open"
	capture moat --root "$W/open" create --bundle "$b" c11
	assert_ne 0 "$STATUS" "a --root others may write is refused"
	assert_contains "$ERR" "is open to others (mode 0777)" "and says why"
	# A --root that is a link is not followed.
	mkdir -m 0700 "$W/real"
	ln -s "$W/real" "$W/rootlink"
	capture moat --root "$W/rootlink" list
	assert_ne 0 "$STATUS" "a --root that is a link is refused"
	assert_contains "$ERR" "is a symbolic link" "and says why"
	return 0
}

# nobody's link before --root's last component, to a directory of root's
# that has a `moat` of its own (another runtime's state, say): not
# followed, so nothing there is listed, made or removed.
t_root_through_a_link_of_another_user()
{
	local b victim
	setup
	b=$W/b victim=$W/victim
	make_bundle "$b" '["sleep","30"]' || fail "bundle"
	mkdir -p -m 0700 "$victim/moat/other" "$victim/moat/empty"
	echo '{"id":"other"}' >"$victim/moat/other/state.json"
	as_nobody ln -s "$victim" "$DIR/p" || fail "plant"
	capture moat --root "$DIR/p/moat" list
	assert_ne 0 "$STATUS" "list through nobody's link is refused"
	assert_contains "$ERR" "Too many levels of symbolic links" "and says why"
	capture moat --root "$DIR/p/moat" delete --force empty
	capture moat --root "$DIR/p/moat" delete --force other
	[ -d "$victim/moat/empty" ] && [ -f "$victim/moat/other/state.json" ] ||
		fail "delete --force removed another runtime's state"
	capture moat --root "$DIR/p/new/moat" create --bundle "$b" rl1
	assert_ne 0 "$STATUS" "create through nobody's link is refused"
	[ -e "$victim/new" ] && fail "a --root was made in root's directory"
	# root's own link on the way is followed
	mkdir -m 0700 "$W/real"
	ln -s "$W/real" "$W/rootlink"
	moat --root "$W/rootlink/moat" create --bundle "$b" rl2 || fail "create through root's link"
	[ -f "$W/real/moat/rl2/state.json" ] || fail "the state is not where root's link leads"
	moat --root "$W/rootlink/moat" delete --force rl2 || fail "delete"
	return 0
}

t_state_removal_does_not_follow_links()
{
	local root victim
	setup
	root=$W/root victim=$W/victim
	mkdir -m 0755 "$victim"
	echo keep >"$victim/keep"
	mkdir -m 0700 "$root"
	# A state directory that is a link (left by anything: the runtime
	# never makes one) is removed as a link, not emptied through.
	ln -s "$victim" "$root/c9"
	capture moat --root "$root" delete --force c9
	assert_eq 1 "$STATUS" "delete --force of a link is refused"
	assert_contains "$ERR" "is not a container's state directory: left as it is" "and says why"
	assert_eq keep "$(cat "$victim/keep" 2>/dev/null)" "the link's target is untouched"
	[ -L "$root/c9" ] || fail "the link is removed"
	# What a create that died early leaves is removed.
	mkdir -m 0700 "$root/c8"
	echo '{}' >"$root/c8/config.json"
	capture moat --root "$root" delete --force c8
	assert_eq 0 "$STATUS" "delete --force of an early create's state"
	[ -e "$root/c8" ] && fail "an early create's state is left"
	return 0
}

# `moat do --name X` of root listens at /run/moat/X, beside the default
# --root's state directories: `delete --force X` finds no state there and
# must leave the live sandbox's socket alone.
t_delete_force_spares_a_do_socket()
{
	local name=hostfiles$$ do_pid
	moat do --name "$name" -- sleep 30 >/dev/null 2>&1 &
	do_pid=$!
	for _ in $(seq 200); do [ -S "/run/moat/$name" ] && break; sleep 0.05; done
	[ -S "/run/moat/$name" ] || fail "no control socket"
	capture moat delete --force "$name"
	assert_eq 1 "$STATUS" "delete --force of a sandbox's socket is refused"
	assert_contains "$ERR" "is not a container's state directory" "and says why"
	[ -S "/run/moat/$name" ] || fail "the live sandbox's socket is gone"
	capture moat kill "$name" KILL
	assert_eq 0 "$STATUS" "the sandbox is still reached by its name: $ERR"
	wait $do_pid
	return 0
}

# nobody's link in nobody's directory, before the last component of a
# --log, --pid-file or --console-socket, to a directory of root's (the
# one that holds root's file): not followed, so root's file stays and
# nothing is made there. A link of root's on the way is followed.
t_links_before_the_last_component()
{
	local b root
	setup
	b=$W/b root=$W/root
	make_bundle "$b" '["sleep","30"]' || fail "bundle"
	as_nobody ln -s "$W" "$DIR/up" || fail "plant"
	capture moat --root "$W/none" --log "$DIR/up/precious" state nosuch
	target_intact "--log through nobody's link"
	assert_contains "$ERR" "a symbolic link: not followed" "says why --log is not written"
	capture moat --root "$W/none" --log "$DIR/up/new.log" state nosuch
	[ -e "$W/new.log" ] && fail "a --log was made in root's directory"
	capture moat --root "$root" create --bundle "$b" --pid-file "$DIR/up/precious" lp1
	assert_eq 1 "$STATUS" "create with a pid file through nobody's link fails"
	assert_contains "$ERR" "Too many levels of symbolic links" "and says why"
	target_intact "--pid-file through nobody's link"
	[ -e "$root/lp1" ] && fail "state left"
	make_bundle "$W/bt" '["true"]' 'c["process"]["terminal"]=True' || fail "bundle"
	capture moat --root "$root" create --bundle "$W/bt" --console-socket "$DIR/up/x.sock" lp2
	assert_contains "$ERR" "Too many levels of symbolic links" "--console-socket through nobody's link"
	# root's own link, in nobody's directory too: followed
	mkdir -m 0700 "$W/mine"
	ln -s "$W/mine" "$DIR/root-link"
	capture moat --root "$W/none" --log "$DIR/root-link/ok.log" state nosuch
	assert_contains "$(cat "$W/mine/ok.log")" "container does not exist" "a --log through root's link is written"
	return 0
}

# hold_full_fifo PATH: nobody makes a FIFO at PATH and holds it open
# read-write with its buffer full, never reading. Sets HOLD (its pid).
hold_full_fifo()
{
	as_nobody mkfifo -m 0666 "$1" || fail "mkfifo"
	as_nobody python3 - "$1" "$1.full" <<'PY' &
import os, sys, fcntl, time
fd = os.open(sys.argv[1], os.O_RDWR)          # a reader and a writer
fcntl.fcntl(fd, 1031, 4096)                    # F_SETPIPE_SZ: one page
os.set_blocking(fd, False)
try:
    while True: os.write(fd, b"x" * 4096)
except BlockingIOError: pass
open(sys.argv[2], "w").close()
time.sleep(120)                                # never read
PY
	HOLD=$!
	for _ in $(seq 100); do [ -e "$1.full" ] && return 0; sleep 0.05; done
	fail "the FIFO is not full"
}

# A FIFO at --log or --audit whose reader never reads: the lines it
# cannot take are dropped; root is not held in write(2).
t_full_fifo_log_does_not_block()
{
	setup
	hold_full_fifo "$DIR/log"
	capture timeout -k 5 20 "$MOAT" --root "$W/none" --log "$DIR/log" state nosuch
	assert_eq 1 "$STATUS" "state ends (124: blocked on the FIFO)"
	assert_contains "$ERR" "container does not exist" "the error reaches stderr"
	kill $HOLD
	wait $HOLD 2>/dev/null
	return 0
}

t_full_fifo_audit_does_not_block()
{
	local NOSYS='import ctypes; ctypes.CDLL(None).syscall(180); print("ran")'
	setup
	hold_full_fifo "$DIR/audit"
	capture timeout -k 5 60 "$MOAT" do --audit "$DIR/audit" -- python3 -c "$NOSYS"
	assert_eq 0 "$STATUS" "the sandbox ends (124: blocked on the FIFO)"
	assert_eq ran "$OUT" "the guest ran past its audited call"
	kill $HOLD
	wait $HOLD 2>/dev/null
	return 0
}

# exec -d whose pid file cannot be written (nobody made it a directory)
# fails, and leaves nothing of the exec running, as runc does.
t_exec_d_pid_file_failure_ends_the_process()
{
	local b root n
	setup
	b=$W/b root=$W/root
	make_bundle "$b" '["sleep","60"]' || fail "bundle"
	moat --root "$root" create --bundle "$b" xd1 || fail "create"
	moat --root "$root" start xd1 || fail "start"
	as_nobody mkdir "$DIR/epid" || fail "mkdir"
	capture moat --root "$root" exec -d --pid-file "$DIR/epid" xd1 sleep 1234
	assert_eq 1 "$STATUS" "exec -d fails"
	assert_contains "$ERR" "--pid-file \`$DIR/epid\`" "and says why"
	pgrep -f "pid-file $DIR/epid" >/dev/null && fail "its stand-in runs on"
	for _ in $(seq 100); do
		capture moat --root "$root" ps --format json xd1
		[[ $OUT =~ ^\[[0-9]+\]$ ]] && break
		sleep 0.05
	done
	assert_match "$OUT" '^\[[0-9]+\]$' "only the first process is left"
	moat --root "$root" delete --force xd1 || fail "delete"
	return 0
}

# --root "" is refused, not read past its end.
t_empty_root_is_refused()
{
	capture moat --root "" list
	assert_eq 1 "$STATUS" "--root \"\" is refused"
	assert_contains "$ERR" "--root: an empty path" "and says why"
}

# The daemon (the sentry) and its helpers hold no fd of --root (every
# container's state) or of --log: only their own ROOT/ID/exit, for the
# exit code.
t_daemon_holds_no_runtime_fd()
{
	local b root pid p f l
	setup
	b=$W/b root=$W/root
	make_bundle "$b" '["sleep","30"]' || fail "bundle"
	: >"$W/log"
	moat --root "$root" --log "$W/log" --debug create --bundle "$b" fd1 || fail "create"
	pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$root/fd1/state.json")
	for p in $pid $(pgrep -P "$pid"); do
		for f in /proc/$p/fd/*; do
			l=$(readlink "$f") || continue
			case $l in
			"$root/fd1/exit") ;;
			"$root" | "$root"/* | "$W/log") fail "pid $p holds $l" ;;
			esac
		done
	done
	moat --root "$root" delete --force fd1 || fail "delete"
	return 0
}

t_console_socket_of_another_user()
{
	local b root sock py
	setup
	b=$W/b root=$W/root sock=$DIR/console.sock
	make_bundle "$b" '["true"]' 'c["process"]["terminal"]=True' || fail "bundle"
	cat >"$W/listen.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1); s.settimeout(30)
c, _ = s.accept()
msg, anc, _, _ = c.recvmsg(64, socket.CMSG_SPACE(4))
print("got a terminal" if anc else "no fd")
PY
	chmod 0644 "$W/listen.py"
	as_nobody python3 "$W/listen.py" "$sock" >"$W/listen.out" 2>&1 &
	py=$!
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	capture moat --root "$root" create --bundle "$b" --console-socket "$sock" cs1
	assert_ne 0 "$STATUS" "a console socket of another user is refused"
	assert_contains "$ERR" "is owned by uid $NOBODY, neither root nor uid 0" "and says why"
	[ -e "$root/cs1" ] && fail "state left"
	# A socket file of root's (made so by chown) whose listener is
	# nobody: the listener's uid is checked too.
	chown 0:0 "$sock"
	capture moat --root "$root" create --bundle "$b" --console-socket "$sock" cs1
	wait $py
	assert_not_contains "$(cat "$W/listen.out")" "got a terminal" "nobody got the container's terminal"
	assert_ne 0 "$STATUS" "a listener of another user is refused"
	assert_contains "$ERR" "its listener is uid $NOBODY" "and says why"
	[ -e "$root/cs1" ] && fail "state left"
	return 0
}

# nobody plants a link at the console socket's name to a socket that a
# root process (another engine) listens on where nobody cannot reach:
# the link is not followed, and that listener gets nothing.
t_console_socket_link_is_not_followed()
{
	local b root sock py
	setup
	b=$W/b root=$W/root sock=$W/private/other.sock
	make_bundle "$b" '["true"]' 'c["process"]["terminal"]=True' || fail "bundle"
	mkdir -m 0700 "$W/private"
	cat >"$W/listen.py" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(1); s.settimeout(3)
try:
    c, _ = s.accept()
    msg, anc, _, _ = c.recvmsg(64, socket.CMSG_SPACE(4))
    print("got a terminal" if anc else "a connection")
except socket.timeout:
    print("nothing came")
PY
	python3 "$W/listen.py" "$sock" >"$W/listen.out" 2>&1 &
	py=$!
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	as_nobody ln -s "$sock" "$DIR/console.sock" || fail "plant"
	capture timeout -k 5 20 "$MOAT" --root "$root" create --bundle "$b" --console-socket "$DIR/console.sock" cl1
	wait $py
	assert_eq "nothing came" "$(cat "$W/listen.out")" "root's other listener got nothing"
	assert_eq 1 "$STATUS" "create through a planted link fails"
	assert_contains "$ERR" "is a symlink, not a socket" "and says why"
	[ -e "$root/cl1" ] && fail "state left"
	return 0
}

# A console socket of root's whose listener never accepts (its backlog
# full): create fails at once, as runc's does, not blocked in connect(2).
t_console_socket_that_never_accepts()
{
	local b root sock py
	setup
	b=$W/b root=$W/root sock=$W/stuck.sock
	make_bundle "$b" '["true"]' 'c["process"]["terminal"]=True' || fail "bundle"
	cat >"$W/stuck.py" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); s.listen(0)
fill = []
for _ in range(4):        # fill the queue: a backlog of 0 takes 1
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.setblocking(False)
    try: c.connect(sys.argv[1]); fill.append(c)
    except BlockingIOError: break
open(sys.argv[2], "w").close()
time.sleep(60)
PY
	python3 "$W/stuck.py" "$sock" "$W/full" &
	py=$!
	for _ in $(seq 100); do [ -e "$W/full" ] && break; sleep 0.05; done
	capture timeout -k 5 20 "$MOAT" --root "$root" create --bundle "$b" --console-socket "$sock" cb1
	kill $py
	wait $py 2>/dev/null
	assert_eq 1 "$STATUS" "create fails, not blocked until killed (124)"
	assert_contains "$ERR" "Resource temporarily unavailable" "and says why"
	[ -e "$root/cb1" ] && fail "state left"
	return 0
}

run_test pid_file_does_not_follow_links t_pid_file_does_not_follow_links
run_test log_does_not_follow_links t_log_does_not_follow_links
run_test audit_does_not_follow_links t_audit_does_not_follow_links
run_test root_of_another_user_is_refused t_root_of_another_user_is_refused
run_test root_through_a_link_of_another_user t_root_through_a_link_of_another_user
run_test state_removal_does_not_follow_links t_state_removal_does_not_follow_links
run_test console_socket_of_another_user t_console_socket_of_another_user
run_test console_socket_link_is_not_followed t_console_socket_link_is_not_followed
run_test console_socket_that_never_accepts t_console_socket_that_never_accepts
run_test delete_force_spares_a_do_socket t_delete_force_spares_a_do_socket
run_test links_before_the_last_component t_links_before_the_last_component
run_test full_fifo_log_does_not_block t_full_fifo_log_does_not_block
run_test full_fifo_audit_does_not_block t_full_fifo_audit_does_not_block
run_test exec_d_pid_file_failure_ends_the_process t_exec_d_pid_file_failure_ends_the_process
run_test empty_root_is_refused t_empty_root_is_refused
run_test daemon_holds_no_runtime_fd t_daemon_holds_no_runtime_fd
e2e_done
