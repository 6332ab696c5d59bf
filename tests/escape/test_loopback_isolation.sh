#!/usr/bin/env bash
# The sandbox's loopback is its own: a service on the host's 127.0.0.1 (or
# ::1, or an abstract AF_UNIX name of the host's) cannot be reached from
# inside, and a port bound inside is not bound on the host.
. "$(dirname "$0")/../e2e/lib.sh"

t_host_loopback_services_are_unreachable()
{
	local log=$E2E_TMP/host-listener.log port port6 name
	name=$(random_token)
	# A host listener that records any connection it gets.
	native $PY -c '
import socket, sys, select
s4 = socket.socket(); s4.bind(("127.0.0.1", 0)); s4.listen()
s6 = socket.socket(socket.AF_INET6); s6.bind(("::1", 0)); s6.listen()
u = socket.socket(socket.AF_UNIX); u.bind("\0" + sys.argv[1]); u.listen()
print(s4.getsockname()[1], s6.getsockname()[1], flush=True)
r, _, _ = select.select([s4, s6, u], [], [], 20)
print("CONNECTED" if r else "quiet", flush=True)' "$name" >"$log" 2>&1 &
	local pid=$!
	for _ in $(seq 50); do [ -s "$log" ] && break; sleep 0.1; done
	read -r port port6 <"$log"
	case $port$port6 in '' | *[!0-9]*) fail "the host listener did not start: $(cat "$log")" ;; esac
	capture moat do -- $PY -c "
import socket
for fam, addr in ((socket.AF_INET, ('127.0.0.1', $port)), (socket.AF_INET6, ('::1', $port6)),
                  (socket.AF_UNIX, '\0$name')):
    try:
        socket.socket(fam).connect(addr)
        print('connected')
    except OSError as e:
        print(e.errno)
s = socket.socket(); s.bind(('127.0.0.1', $port)); s.listen(); print('bound inside')"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	assert_eq "111
111
111
bound inside" "$OUT" "the host's listeners are not the sandbox's; its port is free inside"
	[ "$(sed -n 2p "$log")" != CONNECTED ] || fail "a connection from the sandbox reached the host"
}

t_port_bound_inside_is_not_on_the_host()
{
	local port
	# A port free on the host right now.
	port=$(native $PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	capture moat do -- $PY -c "
import socket, time, sys
s = socket.socket(); s.bind(('127.0.0.1', $port)); s.listen()
print('listening', flush=True)
time.sleep(2)" &
	local mpid=$!
	sleep 1
	if native $PY -c "import socket; socket.create_connection(('127.0.0.1', $port), timeout=1)" 2>/dev/null; then
		kill $mpid
		fail "a port bound inside the sandbox accepted a host connection"
	fi
	wait $mpid
}

run_test host_loopback_services_are_unreachable t_host_loopback_services_are_unreachable
run_test port_bound_inside_is_not_on_the_host t_port_bound_inside_is_not_on_the_host
