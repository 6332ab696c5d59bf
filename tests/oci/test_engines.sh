#!/usr/bin/env bash
# moat under the engines people run containers with: podman (--runtime)
# and containerd (ctr run --runc-binary, the path Kubernetes' RuntimeClass
# takes through the runc v2 shim). Both run a busybox rootfs made here;
# no registry is reached. Each engine keeps its state in this test's
# temporary directory, and each case checks that nothing of the container
# is left behind: processes, mounts, runtime state.
. "$(dirname "$0")/../e2e/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd)
ROOTFS=$E2E_TMP/rootfs
make_busybox_rootfs "$ROOTFS"

# What the machine lacks (docs/oci.md): CAP_SYS_RESOURCE for podman's
# default rlimits, a systemd for its cgroup manager and events.
PODMAN_OPTS=(--root "$E2E_TMP/pm/storage" --runroot "$E2E_TMP/pm/run"
	--tmpdir "$E2E_TMP/pm/tmp" --cgroup-manager=cgroupfs
	--events-backend=file)
PODMAN_RUN=(--network=none --ulimit nofile=20000:20000
	--ulimit nproc=32768:32768)

podman_rt()
{
	local rt=$1
	shift
	timeout -k 5 60 podman "${PODMAN_OPTS[@]}" --runtime "$rt" "$@"
}

# nothing_left ROOT ID: no state, process or mount of container ID.
nothing_left()
{
	local root=$1 id=$2
	[ -e "$root/$id" ] && fail "runtime state of $id left in $root"
	pgrep -f "moat.*$id" >/dev/null && fail "a moat process of $id is left"
	grep -q "$id" /proc/self/mountinfo && fail "a mount of $id is left"
	return 0
}

t_podman_run_matches_runc()
{
	command -v podman >/dev/null || fail "podman is not installed (make deps)"
	local cmd='echo hi; id; hostname; cat /proc/self/comm'
	capture podman_rt "$MOAT" run --rm "${PODMAN_RUN[@]}" --rootfs "$ROOTFS:O" /bin/sh -c "$cmd"
	assert_eq 0 "$STATUS" "podman run with moat"
	local moat_out=$OUT
	echo "moat: $moat_out"
	assert_match "$(echo "$moat_out" | sed -n 3p)" '^[0-9a-f]{12}$' "the hostname is the container's"
	if command -v runc >/dev/null; then
		capture podman_rt "$(command -v runc)" run --rm "${PODMAN_RUN[@]}" --rootfs "$ROOTFS:O" /bin/sh -c "$cmd"
		assert_eq 0 "$STATUS" "podman run with runc"
		echo "runc: $OUT"
		# Line 3 is each container's own ID.
		assert_eq "$(echo "$OUT" | sed 3d)" "$(echo "$moat_out" | sed 3d)" "moat prints what runc prints"
	fi
	assert_eq "" "$(podman "${PODMAN_OPTS[@]}" ps -aq)" "--rm removed the container"
}

t_podman_exec_stop_rm()
{
	command -v podman >/dev/null || fail "podman is not installed (make deps)"
	local id
	id=$(podman_rt "$MOAT" run -d "${PODMAN_RUN[@]}" --rootfs "$ROOTFS:O" /bin/sh -c 'trap "exit 0" TERM; while :; do sleep 0.1; done') ||
		fail "podman run -d"
	capture podman_rt "$MOAT" exec "$id" sh -c 'echo in exec; exit 3'
	assert_eq 3 "$STATUS" "podman exec's exit code"
	assert_eq "in exec" "$OUT" "podman exec's output"
	capture podman "${PODMAN_OPTS[@]}" inspect -f '{{.State.Status}}' "$id"
	assert_eq running "$OUT" "podman sees it running"
	podman_rt "$MOAT" stop -t 5 "$id" >/dev/null || fail "podman stop"
	capture podman "${PODMAN_OPTS[@]}" inspect -f '{{.State.ExitCode}}' "$id"
	assert_eq 0 "$OUT" "it ended on SIGTERM, as its trap said"
	podman_rt "$MOAT" rm "$id" >/dev/null || fail "podman rm"
	nothing_left "$E2E_TMP/pm/run" "$id"
}

# A containerd of this test's own: its root, state and socket in E2E_TMP,
# the CRI plugin off; ctr talks to it in a namespace of the test's own.
CTD=$E2E_TMP/ctd
NSP=moat-test-$$
ctd_start()
{
	mkdir -p "$CTD"
	cat >"$CTD/config.toml" <<TOML
version = 2
root = "$CTD/root"
state = "$CTD/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$CTD/containerd.sock"
[ttrpc]
  address = "$CTD/containerd.sock.ttrpc"
TOML
	containerd --config "$CTD/config.toml" >"$CTD/log" 2>&1 &
	CTD_PID=$!
	for _ in $(seq 100); do
		ctr -a "$CTD/containerd.sock" version >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	cat "$CTD/log"
	return 1
}
ctd_stop()
{
	[ -n "${CTD_PID:-}" ] || return 0
	kill "$CTD_PID" 2>/dev/null
	wait "$CTD_PID" 2>/dev/null
	# its snapshots are overlay mounts under its root
	grep -o "$CTD[^ ]*" /proc/self/mountinfo | sort -r | xargs -r -n1 umount -l 2>/dev/null
	rm -rf "/run/containerd/runc/$NSP"
}
c()
{
	timeout -k 5 60 ctr -a "$CTD/containerd.sock" -n "$NSP" "$@"
}

t_containerd()
{
	command -v containerd >/dev/null || fail "containerd is not installed (make deps)"
	ctd_start || fail "containerd did not start"
	trap 'ctd_stop' EXIT
	python3 "$HERE/mkimage.py" "$ROOTFS" docker.io/library/moat-bb:1 "$E2E_TMP/bb.tar" || fail "image"
	c image import "$E2E_TMP/bb.tar" >/dev/null || fail "ctr image import"
	capture c run --rm --runc-binary "$MOAT" docker.io/library/moat-bb:1 ct1 sh -c 'echo hi from ctr; exit 6'
	assert_eq 6 "$STATUS" "ctr run's exit code is the container's"
	assert_eq "hi from ctr" "$OUT" "its output"
	c run -d --memory-limit $((64 << 20)) --runc-binary "$MOAT" docker.io/library/moat-bb:1 ct2 \
		sh -c 'trap "exit 0" TERM; while :; do sleep 0.1; done' >/dev/null || fail "ctr run -d"
	capture c task ls
	assert_match "$OUT" 'ct2 +[0-9]+ +RUNNING' "the task runs"
	# The shim reads the cgroups of the pid moat reports, the sentry's:
	# they are the sandbox's, with its limit (they were the caller's).
	capture c task metrics ct2
	assert_match "$OUT" 'memory.limit_in_bytes +67108864' "ctr task metrics shows the container's memory limit"
	capture c task exec --exec-id e1 ct2 sh -c 'echo in exec; exit 4'
	assert_eq 4 "$STATUS" "ctr task exec's exit code"
	assert_eq "in exec" "$OUT" "its output"
	capture c task ps ct2
	assert_match "$OUT" '[0-9]+' "ctr task ps"
	c task kill ct2 || fail "ctr task kill"
	for _ in $(seq 100); do
		c task ls | grep -q 'ct2 .*STOPPED' && break
		sleep 0.1
	done
	capture c task ls
	assert_match "$OUT" 'ct2 +[0-9]+ +STOPPED' "kill stopped it"
	c task delete ct2 >/dev/null || fail "ctr task delete"
	c container rm ct2 || fail "ctr container rm"
	nothing_left "/run/containerd/runc/$NSP" ct2
	pgrep -f "containerd-shim.*$NSP" >/dev/null && fail "a shim is left"
	return 0
}

run_test podman_run_matches_runc t_podman_run_matches_runc
run_test podman_exec_stop_rm t_podman_exec_stop_rm
run_test containerd t_containerd
e2e_done
