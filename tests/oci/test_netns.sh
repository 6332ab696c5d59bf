#!/usr/bin/env bash
# An OCI bundle's network namespace (linux.namespaces network path), as a
# Kubernetes pod's: the sandbox's link reaches the host there. With
# dev.moat.net=tap the TAP device is made in it and NATed onto its other
# interfaces; with slirp the helper's sockets live in it. The "pod"
# namespace and a peer are made here (veth 10.206.X.1 <-> .2) and removed
# on exit; the peer is reachable only from the pod's namespace, never from
# the host's, so reaching it proves the namespace was used.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib_oci.sh"

POD=moat-pod-$$
PEERNS=moat-peer-$$
SUB=10.206.$(($$ % 200 + 20))
PEER=$SUB.2
PORT=8089
RUNC=$(command -v runc || true)

ns_cleanup()
{
	[ -n "${SRV:-}" ] && kill "$SRV" 2>/dev/null
	ip netns del "$POD" 2>/dev/null
	ip netns del "$PEERNS" 2>/dev/null
	oci_cleanup
	e2e_cleanup
}
trap ns_cleanup EXIT

setup()
{
	ip netns add "$POD" && ip netns add "$PEERNS" &&
		ip link add mp$$a netns "$POD" type veth peer name mp$$b netns "$PEERNS" &&
		ip -n "$POD" addr add "$SUB.1/24" dev mp$$a &&
		ip -n "$PEERNS" addr add "$PEER/24" dev mp$$b &&
		ip -n "$POD" link set mp$$a up && ip -n "$POD" link set lo up &&
		ip -n "$PEERNS" link set mp$$b up && ip -n "$PEERNS" link set lo up || return 1
	mkdir -p "$E2E_TMP/www" && echo "peer says hi" >"$E2E_TMP/www/index.html"
	ip netns exec "$PEERNS" python3 -m http.server -b "$PEER" -d "$E2E_TMP/www" $PORT \
		>"$E2E_TMP/srv.log" 2>&1 &
	SRV=$!
	for _ in $(seq 50); do
		ip netns exec "$PEERNS" python3 -c "import socket; socket.create_connection(('$PEER', $PORT), 1)" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
	echo "test_netns.sh: needs root and iproute2" >&2
	E2E_FAILED=1
	e2e_done
fi
setup || {
	echo "test_netns.sh: cannot make the test namespaces" >&2
	exit 1
}

# bundle DIR MODE [PATH]: fetch the peer's page (busybox nc: Debian's
# static busybox wget crashes, natively too), in net MODE, in the pod's
# namespace when PATH is given.
bundle()
{
	local dir=$1 mode=$2 path=${3:-}
	local ns='[{"type":"pid"},{"type":"network"},{"type":"ipc"},{"type":"uts"},{"type":"mount"}]'
	[ -n "$path" ] && ns='[{"type":"pid"},{"type":"network","path":"'$path'"},{"type":"ipc"},{"type":"uts"},{"type":"mount"}]'
	make_bundle "$dir" "[\"sh\",\"-c\",\"printf 'GET /index.html HTTP/1.0\\\\r\\\\n\\\\r\\\\n' | nc -w 3 $PEER $PORT | tail -1\"]" \
		"c['linux']['namespaces']=json.loads('$ns')" \
		"c['annotations']={'dev.moat.net':'$mode','dev.moat.allow':'$PEER'}" || return 1
	ln -sf busybox "$dir/rootfs/bin/nc"
	ln -sf busybox "$dir/rootfs/bin/tail"
}

t_tap_in_the_pods_namespace()
{
	local root=$E2E_TMP/root
	bundle "$E2E_TMP/b" tap "/var/run/netns/$POD" || fail "bundle"
	capture moat --root "$root" run --bundle "$E2E_TMP/b" tap1
	assert_eq 0 "$STATUS" "fetch through a TAP device in the pod's namespace"
	assert_eq "peer says hi" "$OUT" "the peer's page"
	# The device went with the sandbox; its NAT table goes with the janitor.
	for _ in $(seq 50); do
		ip netns exec "$POD" nft list tables 2>/dev/null | grep -q moat_ || break
		sleep 0.1
	done
	assert_eq "" "$(ip netns exec "$POD" nft list tables 2>/dev/null | grep moat_)" "its NAT table is removed"
	assert_eq "" "$(ip -n "$POD" -o link show | grep -o ': moat[0-9]\+')" "its TAP device is gone"
}

t_slirp_in_the_pods_namespace()
{
	local root=$E2E_TMP/root
	bundle "$E2E_TMP/b2" slirp "/var/run/netns/$POD" || fail "bundle"
	capture moat --root "$root" run --bundle "$E2E_TMP/b2" slirp1
	assert_eq 0 "$STATUS" "fetch through slirp, its sockets in the pod's namespace"
	assert_eq "peer says hi" "$OUT" "the peer's page"
	# Without the path the helper's sockets are the host's, which has no
	# route to the peer.
	bundle "$E2E_TMP/b3" slirp || fail "bundle"
	capture moat --root "$root" run --bundle "$E2E_TMP/b3" slirp2
	assert_not_contains "$OUT" "peer says hi" "from the host's namespace the peer is unreachable"
}

t_other_namespaces_cannot_be_joined()
{
	make_bundle "$E2E_TMP/b4" '["true"]' \
		'c["linux"]["namespaces"][0]["path"]="/proc/'"$$"'/ns/pid"' || fail "bundle"
	capture moat --root "$E2E_TMP/root" create --bundle "$E2E_TMP/b4" j1
	assert_ne 0 "$STATUS" "a pid namespace path is refused"
	assert_contains "$ERR" "joining an existing pid namespace" "says why"
}

# A network namespace's path must be one: a namespace file of that type
# (runc's setns with CLONE_NEWNET refuses any other), named with its field
# at create, whatever the sandbox's link (none here, which uses no path).
t_a_namespace_path_must_be_of_its_type()
{
	local root=$E2E_TMP/root what path want
	mkdir -p "$E2E_TMP/adir" && echo x >"$E2E_TMP/afile"
	while IFS='|' read -r what path want; do
		make_bundle "$E2E_TMP/bt" '["true"]' \
			'c["linux"]["namespaces"][1]={"type":"network","path":"'"$path"'"}' || fail "bundle"
		capture moat --root "$root" create --bundle "$E2E_TMP/bt" t1
		assert_ne 0 "$STATUS" "$what: refused"
		assert_contains "$ERR" "linux.namespaces[1].path: \`$path\`: $want" "$what: says why, naming the field"
		[ -e "$root/t1" ] && fail "$what: state left behind"
		if [ -n "$RUNC" ]; then
			timeout 20 "$RUNC" --root "$E2E_TMP/runc-root" create --bundle "$E2E_TMP/bt" t1 >/dev/null 2>&1 </dev/null &&
				fail "$what: runc takes it"
			"$RUNC" --root "$E2E_TMP/runc-root" delete --force t1 >/dev/null 2>&1
		fi
	done <<END
an ipc namespace|/proc/self/ns/ipc|a namespace of type ipc, not network
a pid namespace|/proc/$$/ns/pid|a namespace of type pid, not network
a mount namespace|/proc/self/ns/mnt|a namespace of type mount, not network
a regular file|$E2E_TMP/afile|not a namespace file (a regular file)
a directory|$E2E_TMP/adir|not a namespace file (a directory)
a device|/dev/null|not a namespace file (a character device)
nothing|$E2E_TMP/nothing|No such file or directory
END
	# a network namespace's file is taken, by /proc or by its bind mount
	for path in /proc/self/ns/net "/var/run/netns/$POD"; do
		make_bundle "$E2E_TMP/bt" '["true"]' \
			'c["linux"]["namespaces"][1]={"type":"network","path":"'"$path"'"}' || fail "bundle"
		capture moat --root "$root" run --bundle "$E2E_TMP/bt" t2
		assert_eq 0 "$STATUS" "$path: a network namespace: $ERR"
	done
}

# The pid that create reports is in the pod's network namespace, as
# runc's is: containerd and other tools read /proc/PID/ns/net.
t_the_pid_is_in_the_pods_namespace()
{
	local root=$E2E_TMP/root want pid rt
	want=$(stat -L -c %i "/var/run/netns/$POD")
	[ "$want" != "$(stat -L -c %i /proc/self/ns/net)" ] || fail "the pod's namespace is the host's"
	for mode in none slirp; do
		bundle "$E2E_TMP/bp-$mode" $mode "/var/run/netns/$POD" || fail "bundle"
		python3 - "$E2E_TMP/bp-$mode/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["args"] = ["sleep", "30"]
json.dump(c, open(sys.argv[1], "w"))
PY
		for rt in moat ${RUNC:+runc}; do
			[ $rt = runc ] && [ $mode != none ] && continue
			if [ $rt = moat ]; then
				capture moat --root "$root" create --bundle "$E2E_TMP/bp-$mode" pid-$mode
				assert_eq 0 "$STATUS" "create in the pod's namespace ($mode): $ERR"
				capture moat --root "$root" state pid-$mode
			else
				capture timeout 20 "$RUNC" --root "$E2E_TMP/runc-root" create --bundle "$E2E_TMP/bp-$mode" pid-$mode
				assert_eq 0 "$STATUS" "runc create: $ERR"
				capture "$RUNC" --root "$E2E_TMP/runc-root" state pid-$mode
			fi
			pid=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["pid"])' "$OUT")
			assert_eq "$want" "$(stat -L -c %i /proc/$pid/ns/net)" \
				"$rt ($mode): /proc/PID/ns/net of the pid its state gives is the pod's"
			if [ $rt = moat ]; then
				moat --root "$root" delete --force pid-$mode
			else
				"$RUNC" --root "$E2E_TMP/runc-root" delete --force pid-$mode
			fi
		done
	done
}

run_test tap_in_the_pods_namespace t_tap_in_the_pods_namespace
run_test slirp_in_the_pods_namespace t_slirp_in_the_pods_namespace
run_test the_pid_is_in_the_pods_namespace t_the_pid_is_in_the_pods_namespace
run_test other_namespaces_cannot_be_joined t_other_namespaces_cannot_be_joined
run_test a_namespace_path_must_be_of_its_type t_a_namespace_path_must_be_of_its_type
e2e_done
