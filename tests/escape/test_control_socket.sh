#!/usr/bin/env bash
# Barrier (control): a sandbox's control socket is a file in a directory
# only its owner can write (/run/moat for root, $XDG_RUNTIME_DIR/moat
# otherwise), and each end checks the other's uid before it trusts it. A
# local user who binds the old abstract name `moat/NAME`, or tries to put
# a socket or a symbolic link where the socket goes, neither stops the
# sandbox from starting nor hears what `moat policy set` and `moat kill`
# send it; a server of another user is refused by the client, a client
# of another user by the server.
. "$(dirname "$0")/../e2e/lib.sh"

PEER=$E2E_ROOT/tests/escape/ctl_peer.py
RUN=/run/moat

# as UID CMD...: CMD as UID (its own group, no others).
as()
{
	local uid=$1
	shift
	setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"
}

NOBODY=$(id -u nobody)

name_for()
{
	printf '%s-%s' "$1" "$(random_token | tail -c 12)"
}

# peer [as UID] ctl_peer.py-ARGS...: a peer in the background (in PIDS),
# once it listens.
peer()
{
	local out
	out=$(mktemp "$E2E_TMP/peer.XXXXXX")
	if [ "$1" = as ]; then
		# setpriv itself, not the function: $! is then the peer's pid
		setpriv --reuid="$2" --regid="$2" --clear-groups $PY "$PEER" "${@:3}" >"$out" 2>&1 &
	else
		$PY "$PEER" "$@" >"$out" 2>&1 &
	fi
	PIDS="$PIDS $!"
	for _ in $(seq 100); do grep -q ready "$out" && return 0; sleep 0.05; done
	fail "the peer did not start: $(cat "$out")"
}

# heard LOG: what the connections logged in LOG sent (none, or empty:
# nothing).
heard()
{
	grep -v "^connection b''$" "$1"
}

# wait_sandbox NAME PID OUT: until `moat policy show NAME` answers, while
# moat (PID, its output in OUT) still runs.
wait_sandbox()
{
	for _ in $(seq 100); do
		kill -0 "$2" 2>/dev/null || fail "the sandbox did not start: $(cat "$3")"
		SHOWN=$(timeout 5 "$MOAT" policy show "$1" 2>/dev/null) && return 0
		sleep 0.1
	done
	fail "the sandbox never answered: $(cat "$3")"
}

# A client's view of a socket file: "errno" when it cannot connect,
# "refused" when it is hung up on, else what it was answered.
probe_py='
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print(e.errno); sys.exit()
try:
    s.sendall(b"policy-show\n"); s.settimeout(5); d = b""
    while len(d) < 4096:  # the whole answer: its header and body may
        c = s.recv(4096)  # come in two reads
        if not c:
            break
        d += c
except OSError:
    d = b""
print(repr(d) if d else "refused")'

# PIDS: processes a case started, ended when it ends however it ends.
PIDS=
FILES=
case_cleanup()
{
	[ -z "$PIDS" ] || kill -KILL $PIDS 2>/dev/null
	[ -z "$FILES" ] || rm -rf $FILES
}

t_abstract_squatter_is_not_the_sandbox()
{
	local name log=$E2E_TMP/squat.log pol=$E2E_TMP/p.json pid
	trap case_cleanup EXIT
	name=$(name_for sq)
	: >"$log"
	chmod 666 "$log"
	# Another user holds the abstract name the sandbox used to listen on
	peer as "$NOBODY" squat "@moat/$name" "$log"
	# and cannot put anything where the socket file goes.
	capture as "$NOBODY" $PY -c '
import os, socket, sys
for f in (lambda p: socket.socket(socket.AF_UNIX).bind(p), lambda p: os.symlink("/tmp", p)):
    try:
        f(sys.argv[1]); print("planted")
    except OSError as e:
        print(e.errno in (13, 2))' "$RUN/$name"
	assert_eq "True
True" "$OUT" "nobody else can plant a socket or a symlink in $RUN"
	"$MOAT" do --timeout 60 --name "$name" --allow example.com -- sleep 30 >"$E2E_TMP/do.out" 2>&1 &
	pid=$!
	PIDS="$PIDS $pid"
	FILES="$RUN/$name"
	wait_sandbox "$name" "$pid" "$E2E_TMP/do.out"
	assert_contains "$SHOWN" '"example.com"' "moat policy show reached the sandbox"
	echo '{"egress": {"allow": ["example.org:443"]}}' >"$pol"
	assert_status 0 moat policy set "$name" "$pol"
	capture moat policy show "$name"
	assert_contains "$OUT" '"example.org:443"' "moat policy set reached the sandbox"
	assert_status 0 moat kill "$name" TERM
	wait "$pid"
	assert_eq 143 "$?" "moat kill reached the sandbox"
	assert_eq "" "$(cat "$log")" "the squatter heard nothing, not even a connection"
}

t_server_of_another_user_is_refused()
{
	local name log=$E2E_TMP/other.log pol=$E2E_TMP/p.json
	trap case_cleanup EXIT
	name=$(name_for other)
	mkdir -p -m 0711 "$RUN"
	: >"$log"
	# A socket in root's directory, but served by nobody (bound by root,
	# listened on after a drop of privileges).
	FILES="$RUN/$name"
	peer squat "$RUN/$name" "$log" --as "$NOBODY"
	echo '{"egress": {"allow": ["example.org:443"]}}' >"$pol"
	assert_status 1 moat policy set "$name" "$pol"
	assert_contains "$ERR" "is served by uid $NOBODY, not by you (uid 0) or root: refused" "policy set says why"
	assert_status 1 moat kill "$name" TERM
	assert_contains "$ERR" "is served by uid $NOBODY" "kill says why"
	assert_status 1 moat policy show "$name"
	assert_contains "$ERR" "is served by uid $NOBODY" "policy show says why"
	assert_eq "" "$(heard "$log")" "nothing was sent to it"
}

t_client_of_another_user_is_refused()
{
	local name pid s
	trap case_cleanup EXIT
	name=$(name_for cli)
	"$MOAT" do --timeout 60 --name "$name" -- sleep 30 >"$E2E_TMP/do.out" 2>&1 &
	pid=$!
	PIDS="$PIDS $pid"
	FILES="$RUN/$name"
	wait_sandbox "$name" "$pid" "$E2E_TMP/do.out"
	s=$RUN/$name
	assert_eq "socket 600 root" "$(stat -c '%F %a %U' "$s")" "a socket file only root may use"
	assert_eq "directory root" "$(stat -c '%F %U' "$RUN")" "in a directory of root's"
	assert_eq 0 "$(($(stat -c %#a "$RUN") & 022))" "that nobody else can write"
	assert_not_contains "$(cat /proc/net/unix)" "@moat/$name" "no abstract name"
	capture as "$NOBODY" $PY -c "$probe_py" "$s"
	assert_eq 13 "$OUT" "another user cannot connect"
	# Even through modes opened up (the directory is 0700 now, as the
	# OCI runtime's --root), the server serves only its own user or root.
	chmod 666 "$s"
	chmod 0711 "$RUN"
	capture as "$NOBODY" $PY -c "$probe_py" "$s"
	chmod 0700 "$RUN"
	assert_eq refused "$OUT" "another user's request is not answered"
	capture $PY -c "$probe_py" "$s"
	assert_contains "$OUT" "egress" "root's is"
	assert_status 0 moat kill "$name" TERM
	wait "$pid"
	assert_eq 143 "$?" "the sandbox ended by moat kill"
}

t_dead_sandbox_socket_is_taken_over()
{
	local name pid s
	trap case_cleanup EXIT
	name=$(name_for stale)
	s=$RUN/$name
	FILES="$s"
	mkdir -p -m 0711 "$RUN"
	# what a server killed before it could clean up leaves behind
	$PY "$PEER" stale "$s" /dev/null
	[ -S "$s" ] || fail "no stale socket to start from"
	"$MOAT" do --timeout 60 --name "$name" -- sleep 30 >"$E2E_TMP/do.out" 2>&1 &
	pid=$!
	PIDS="$PIDS $pid"
	wait_sandbox "$name" "$pid" "$E2E_TMP/do.out"
	capture $PY -c "$probe_py" "$s"
	assert_contains "$OUT" "egress" "the new sandbox serves the file"
	capture "$MOAT" do --name "$name" -- true
	assert_eq 125 "$STATUS" "a second sandbox of a live one's name is refused"
	assert_contains "$ERR" "a sandbox of that name runs" "and says why"
	[ -S "$s" ] || fail "the refused one removed the live one's socket"
	# SIGKILL: the sentry cleans nothing up; its janitor removes the file.
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	for _ in $(seq 100); do [ -e "$s" ] || break; sleep 0.05; done
	[ ! -e "$s" ] || fail "the socket of a killed sandbox stays"
	$PY "$PEER" stale "$s" /dev/null
	capture moat do --name "$name" -- true
	assert_eq 0 "$STATUS" "a sandbox of a dead one's name starts"
	for _ in $(seq 100); do [ -e "$s" ] || break; sleep 0.05; done
	[ ! -e "$s" ] || fail "the socket of a sandbox that ended stays"
}

t_names_stay_in_the_directory()
{
	local name bad
	trap case_cleanup EXIT
	name=$(name_for oci)
	mkdir -p -m 0711 "$RUN"
	# An OCI container's state directory (cli/oci.c) holds the name.
	mkdir -m 0711 "$RUN/$name"
	FILES="$RUN/$name"
	capture moat do --name "$name" -- true
	assert_eq 125 "$STATUS" "a name an OCI container has is refused"
	assert_contains "$ERR" "an OCI container of that name exists" "and says why"
	for bad in ../x a/b .. . .lock "$RUN/x"; do
		capture moat do --name "$bad" -- true
		assert_eq 2 "$STATUS" "--name $bad is refused"
		capture moat kill "$bad"
		assert_eq 2 "$STATUS" "moat kill $bad is refused"
		capture moat policy show "$bad"
		assert_eq 1 "$STATUS" "moat policy show $bad is refused"
		assert_contains "$ERR" "is not a sandbox name" "and says why"
	done
}

# Not root: the socket is in $XDG_RUNTIME_DIR/moat, checked before use. (A
# fake sandbox answers: the sentry itself needs root on this machine.)
t_non_root_private_runtime_dir()
{
	local x=$E2E_TMP/xdg name log=$E2E_TMP/fake.log log2=$E2E_TMP/other.log pol=$E2E_TMP/p.json
	trap case_cleanup EXIT
	name=$(name_for nr)
	mkdir -m 700 "$x"
	chown "$NOBODY" "$x"
	as "$NOBODY" mkdir -m 700 "$x/moat"
	: >"$log"
	: >"$log2"
	chmod 666 "$log" "$log2"
	echo '{"egress": {"allow": ["example.org:443"]}}' >"$pol"
	chmod 644 "$pol"
	peer as "$NOBODY" answer "$x/moat/$name" "$log"
	nmoat() { as "$NOBODY" env XDG_RUNTIME_DIR="$x" timeout -k 5 30 "$MOAT" "$@"; }
	assert_status 0 nmoat kill "$name" USR1
	assert_status 0 nmoat policy set "$name" "$pol"
	assert_contains "$(cat "$log")" "connection b'kill USR1\\n'" "moat kill reached the user's sandbox"
	assert_contains "$(cat "$log")" "connection b'policy-set " "moat policy set did"
	# A server of another user in it (root put it there): refused before
	# a byte is sent.
	peer squat "$x/moat/other" "$log2" --as 65533
	assert_status 1 nmoat policy set other "$pol"
	assert_contains "$ERR" "is served by uid 65533, not by you (uid $NOBODY) or root: refused" "says who serves it"
	assert_eq "" "$(heard "$log2")" "nothing was sent to it"
	# The directory is checked: open to others, a symbolic link, another
	# user's; so is XDG_RUNTIME_DIR.
	chmod 777 "$x/moat"
	assert_status 1 nmoat kill "$name"
	assert_contains "$ERR" "control directory \`$x/moat\` is open to others (mode 0777)" "a directory others can write"
	chmod 700 "$x/moat"
	mv "$x/moat" "$x/real"
	ln -s real "$x/moat"
	chown -h "$NOBODY" "$x/moat"
	assert_status 1 nmoat kill "$name"
	assert_contains "$ERR" "is a symbolic link, not a directory" "a symbolic link"
	rm "$x/moat"
	mv "$x/real" "$x/moat"
	chown 65533 "$x/moat"
	assert_status 1 nmoat kill "$name"
	assert_contains "$ERR" "is owned by uid 65533, not by uid $NOBODY" "another user's directory"
	chown "$NOBODY" "$x/moat"
	chmod 777 "$x"
	assert_status 1 nmoat kill "$name"
	assert_contains "$ERR" "XDG_RUNTIME_DIR: control directory \`$x\` is open to others" "XDG_RUNTIME_DIR itself"
	chmod 700 "$x"
	assert_eq "2" "$(grep -c connection "$log")" "only the two requests reached the fake sandbox"
}

# Not root, no XDG_RUNTIME_DIR: /tmp/moat-UID, the caller's own or refused.
t_no_runtime_dir_fallback_is_checked()
{
	local u=64123 other=64124 d=/tmp/moat-64123 log=$E2E_TMP/fb.log
	trap case_cleanup EXIT
	rm -rf "$d"
	FILES="$d"
	: >"$log"
	chmod 666 "$log"
	# another user made it first
	as "$other" mkdir -m 700 "$d"
	capture as "$u" env -u XDG_RUNTIME_DIR "$MOAT" kill fb
	assert_eq 1 "$STATUS" "a squatted fallback directory is refused"
	assert_contains "$ERR" "control directory \`$d\` is owned by uid $other, not by uid $u" "and says why"
	rm -rf "$d"
	as "$u" mkdir -m 755 "$d"
	capture as "$u" env -u XDG_RUNTIME_DIR "$MOAT" kill fb
	assert_contains "$ERR" "is open to others (mode 0755)" "the fallback must be private"
	chmod 700 "$d"
	peer as "$u" answer "$d/fb" "$log"
	capture as "$u" env -u XDG_RUNTIME_DIR "$MOAT" kill fb
	assert_eq 0 "$STATUS" "the user's own fallback directory is used"
	assert_contains "$(cat "$log")" "kill TERM" "the request reached it"
}

# A request sends the sandbox fds only where it takes them (exec's stdio,
# secret-rotate's one value): any other request that carries one is
# refused and the fd is closed at once, never kept or read. The fd sent
# is a pipe's write end: once the sentry has closed it (and this side
# has too), its read end sees EOF.
fds_py='
import array, os, select, socket, sys
def ask(req, nfds):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    r, w = os.pipe()
    fds = [w] * nfds
    s.sendmsg([req], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else [])
    os.close(w)
    s.settimeout(10)
    d = b""
    while True:
        c = s.recv(4096)
        if not c:
            break
        d += c
    closed = select.select([r], [], [], 5)[0] and os.read(r, 1) == b""
    os.close(r)
    s.close()
    print(req.split(b" ")[0].decode().strip(), nfds, d.decode().strip(), "closed" if closed else "KEPT")
ask(b"policy-show\n", 1)
ask(b"state\n", 1)
ask(b"kill 0\n", 1)
ask(b"policy-set 2\n{}", 1)
ask(b"secret-revoke API_KEY\n", 1)
ask(b"secret-rotate API_KEY\n", 2)
ask(b"secret-rotate API_KEY\n", 0)
# the right number, but a pipe, not a sealed memfd, and no broker here
ask(b"secret-rotate API_KEY\n", 1)
'

t_fds_only_where_asked_for()
{
	local name pid
	trap case_cleanup EXIT
	name=$(name_for fds)
	"$MOAT" do --timeout 60 --name "$name" -- sleep 30 >"$E2E_TMP/do.out" 2>&1 &
	pid=$!
	PIDS="$PIDS $pid"
	wait_sandbox "$name" "$pid" "$E2E_TMP/do.out"
	capture $PY -c "$fds_py" "$RUN/$name"
	assert_eq 0 "$STATUS" "the client ran: $ERR"
	assert_eq "policy-show 1 error: this request takes no file descriptors closed
state 1 error: this request takes no file descriptors closed
kill 1 error: this request takes no file descriptors closed
policy-set 1 error: this request takes no file descriptors closed
secret-revoke 1 error: secret-revoke takes no file descriptors closed
secret-rotate 2 error: secret-rotate: exactly one file descriptor (the value's) expected closed
secret-rotate 0 error: secret-rotate: exactly one file descriptor (the value's) expected closed
secret-rotate 1 error: this sandbox has no broker: it was started without credentials (\`moat do --broker\` starts one for secrets set later) closed" \
		"$OUT" "each was refused, its fds closed"
	# nothing of it reached the guests: the first process still runs
	assert_status 0 moat policy show "$name"
	assert_status 0 moat kill "$name" KILL
	wait "$pid"
	assert_eq 137 "$?" "moat kill reached the sandbox"
}

run_test abstract_squatter_is_not_the_sandbox t_abstract_squatter_is_not_the_sandbox
run_test server_of_another_user_is_refused t_server_of_another_user_is_refused
run_test client_of_another_user_is_refused t_client_of_another_user_is_refused
run_test dead_sandbox_socket_is_taken_over t_dead_sandbox_socket_is_taken_over
run_test names_stay_in_the_directory t_names_stay_in_the_directory
run_test non_root_private_runtime_dir t_non_root_private_runtime_dir
run_test no_runtime_dir_fallback_is_checked t_no_runtime_dir_fallback_is_checked
run_test fds_only_where_asked_for t_fds_only_where_asked_for
e2e_done
