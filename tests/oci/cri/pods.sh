#!/usr/bin/env bash
# Kubernetes' path into a runtime, as kubelet takes it: containerd's CRI
# plugin with a `moat` runtime handler (runtime_type io.containerd.runc.v2,
# BinaryName moat) beside a `runc` one, driven over CRI by
# tests/oci/cri/cri.py with the calls kubelet makes and the mounts it adds
# (an emptyDir, /dev/termination-log). The two-container pod runs under
# both handlers: runc's answer is the right one. The egress policy is
# moat's own: its case runs under moat, with a runc pod as the host its
# policy lets it reach in part.
#
# The containerd is this file's own: its root, state, sockets, CNI config
# and IPAM store under E2E_TMP; the pods' network is a bridge of this
# file's own (moatcri$KIT_X, 10.207.$KIT_X.0/24, no gateway, no masquerade:
# nothing routes off it). Images are made here (busybox-static, and
# tests/oci/cri/pause.c built static) and imported with ctr. Afterwards
# nothing of it may be left: processes, mounts, cgroups, state.
#
# `make test` runs it through tests/oci/test_cri_pods.sh; by hand:
# bash tests/oci/cri/pods.sh
. "$(dirname "$0")/../../e2e/lib.sh"

HERE=$(cd "$(dirname "$0")/.." && pwd)
CRI=$E2E_TMP/cri
BR=moatcri$KIT_X
NET=10.207.$KIT_X
CTD_PID=""
# the audit log a sandbox started by containerd writes (docs/oci.md)
AUDIT=/var/log/moat/audit.jsonl

cri_stop()
{
	local p
	# pods a failed case left: removed as kubelet would, so that their
	# network namespaces and containers go too
	if [ -n "$CTD_PID" ] && [ -s "$CRI/pods.list" ]; then
		while read -r p; do
			for m in StopPodSandbox RemovePodSandbox; do
				timeout -k 5 60 $PY "$HERE/cri/cri.py" "$CRI/gen" "$CRI/containerd.sock" \
					$m "{\"podSandboxId\":\"$p\"}" >/dev/null 2>&1
			done
		done <"$CRI/pods.list"
	fi
	if [ -n "$CTD_PID" ]; then
		kill "$CTD_PID" 2>/dev/null
		wait "$CTD_PID" 2>/dev/null
		CTD_PID=""
	fi
	# the shims outlive containerd; their containers were stopped by the
	# cases (a case that failed may leave one: it goes now)
	pkill -f "containerd-shim-runc-v2 -namespace k8s.io -address $CRI/" 2>/dev/null
	grep -o "$CRI[^ ]*" /proc/self/mountinfo 2>/dev/null | sort -r |
		xargs -r -n1 umount -l 2>/dev/null
	ip link del "$BR" 2>/dev/null
}
trap 'cri_stop; e2e_cleanup' EXIT

cri_start()
{
	local c
	for c in containerd ctr cc ip; do
		command -v $c >/dev/null || fail "$c is not installed (make deps)"
	done
	[ -x /usr/lib/cni/bridge ] || fail "the CNI plugins are not installed (containernetworking-plugins, make deps)"
	$PY -c 'import grpc, grpc_tools' 2>/dev/null ||
		fail "python3-grpcio and python3-grpc-tools are needed (make deps)"
	mkdir -p "$CRI/cni"
	cat >"$CRI/cni/10-moat-test.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "moat-cri-test",
  "plugins": [
    {"type": "bridge", "bridge": "$BR", "isGateway": false, "ipMasq": false,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$NET.0/24"}]],
              "dataDir": "$CRI/ipam"}},
    {"type": "loopback"}
  ]
}
EOF
	# restrict_oom_score_adj: a root without CAP_SYS_RESOURCE (a CI
	# machine's container) cannot give the pause container kubelet's -998
	cat >"$CRI/config.toml" <<EOF
version = 2
root = "$CRI/root"
state = "$CRI/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$CRI/containerd.sock"
[ttrpc]
  address = "$CRI/containerd.sock.ttrpc"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/moat-pause:1"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        Root = "$CRI/runc-root"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.moat]
      runtime_type = "io.containerd.runc.v2"
      pod_annotations = ["dev.moat.*"]
      container_annotations = ["dev.moat.*"]
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.moat.options]
        BinaryName = "$MOAT"
        Root = "$CRI/moat-root"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$CRI/cni"
EOF
	containerd --config "$CRI/config.toml" >"$CRI/containerd.log" 2>&1 &
	CTD_PID=$!
	for _ in $(seq 100); do
		ctr -a "$CRI/containerd.sock" version >/dev/null 2>&1 && break
		sleep 0.1
	done
	ctr -a "$CRI/containerd.sock" version >/dev/null 2>&1 ||
		fail "containerd did not start: $(tail -3 "$CRI/containerd.log")"

	# the images: the pod's pause, and busybox for its containers
	mkdir -p "$CRI/pause/dev" "$CRI/pause/proc" "$CRI/pause/etc"
	cc -static -O2 -o "$CRI/pause/pause" "$HERE/cri/pause.c" || fail "pause.c"
	make_busybox_rootfs "$CRI/bb"
	for c in nc mkdir; do ln -sf busybox "$CRI/bb/bin/$c"; done
	$PY "$HERE/mkimage.py" "$CRI/pause" localhost/moat-pause:1 "$CRI/pause.tar" '["/pause"]' &&
		$PY "$HERE/mkimage.py" "$CRI/bb" localhost/moat-bb:1 "$CRI/bb.tar" || fail "images"
	for c in pause bb; do
		ctr -a "$CRI/containerd.sock" -n k8s.io images import "$CRI/$c.tar" >/dev/null ||
			fail "ctr images import $c"
	done
}

# cri METHOD JSON: one call; its response in OUT, the gRPC error in ERR.
cri()
{
	capture timeout -k 5 150 $PY "$HERE/cri/cri.py" "$CRI/gen" "$CRI/containerd.sock" "$@"
}

# jget KEY.KEY... : a value of the JSON in OUT.
jget()
{
	$PY -c 'import json, sys
d = json.loads(sys.argv[2])
for k in sys.argv[1].split("."):
    d = d.get(k, "") if isinstance(d, dict) else ""
print(d)' "$1" "$OUT"
}

# pod_config H NAME [ANNOTATIONS-JSON]: what kubelet sends for a pod.
pod_config()
{
	mkdir -p "$CRI/pods/$1-$2"
	printf '{"metadata":{"name":"%s","uid":"uid-%s-%s","namespace":"default","attempt":0},' "$2" "$1" "$2"
	printf '"hostname":"%s","logDirectory":"%s","annotations":%s,' "$2" "$CRI/pods/$1-$2" "${3:-{\}}"
	printf '"linux":{"securityContext":{"namespaceOptions":{"network":"POD","pid":"CONTAINER","ipc":"POD"}}}}'
}

# run_pod H NAME [ANNOTATIONS]: RunPodSandbox; POD is its id, PODCFG its config.
run_pod()
{
	PODCFG=$(pod_config "$1" "$2" "${3:-}")
	cri RunPodSandbox "{\"config\":$PODCFG,\"runtimeHandler\":\"$1\"}"
	assert_eq 0 "$STATUS" "RunPodSandbox under $1: $ERR"
	POD=$(jget podSandboxId)
	echo "$POD" >>"$CRI/pods.list"
}

# container H NAME SCRIPT: CreateContainer and StartContainer, with the
# mounts kubelet gives every container (the pod's emptyDir at /data and its
# termination-log file) and its namespaces (the pod's network and IPC, a
# pid namespace of its own: no shareProcessNamespace); CID is its id.
container()
{
	local h=$1 name=$2 script=$3 vol=$CRI/vol/$1
	mkdir -p "$vol/empty"
	chmod 777 "$vol/empty"
	: >"$vol/$name.termlog"
	script=$($PY -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$script")
	cri CreateContainer "{\"podSandboxId\":\"$POD\",\"sandboxConfig\":$PODCFG,\"config\":{
		\"metadata\":{\"name\":\"$name\"},\"image\":{\"image\":\"localhost/moat-bb:1\"},
		\"command\":[\"/bin/sh\",\"-c\",$script],\"logPath\":\"$name.log\",
		\"mounts\":[{\"containerPath\":\"/data\",\"hostPath\":\"$vol/empty\"},
		{\"containerPath\":\"/dev/termination-log\",\"hostPath\":\"$vol/$name.termlog\"}],
		\"linux\":{\"securityContext\":{\"namespaceOptions\":{\"network\":\"POD\",\"pid\":\"CONTAINER\",\"ipc\":\"POD\"}}}}}"
	assert_eq 0 "$STATUS" "CreateContainer $name under $h: $ERR"
	CID=$(jget containerId)
	cri StartContainer "{\"containerId\":\"$CID\"}"
	assert_eq 0 "$STATUS" "StartContainer $name under $h: $ERR"
}

# state_of CID: CONTAINER_RUNNING, CONTAINER_EXITED, ...
state_of()
{
	cri ContainerStatus "{\"containerId\":\"$1\"}"
	assert_eq 0 "$STATUS" "ContainerStatus: $ERR"
	jget status.state
}

# wait_file FILE TEXT: until FILE holds TEXT (30 s at most).
wait_file()
{
	for _ in $(seq 300); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

pod_down()
{
	cri StopPodSandbox "{\"podSandboxId\":\"$POD\"}"
	assert_eq 0 "$STATUS" "StopPodSandbox: $ERR"
	cri RemovePodSandbox "{\"podSandboxId\":\"$POD\"}"
	assert_eq 0 "$STATUS" "RemovePodSandbox: $ERR"
}

# nothing_left H: no container of H's is left: state, processes, mounts,
# cgroups.
nothing_left()
{
	local h=$1 n
	n=$(find "$CRI/$h-root" -mindepth 2 2>/dev/null | wc -l)
	assert_eq 0 "$n" "no state left in $h's root: $(find "$CRI/$h-root" -mindepth 2 2>/dev/null | head -3)"
	for _ in $(seq 50); do
		pgrep -f "$CRI/$h-root" >/dev/null || break
		sleep 0.1
	done
	assert_eq "" "$(pgrep -af "$CRI/$h-root")" "no process of $h's left"
	assert_eq "" "$(grep "$CRI/state/io.containerd.runtime.v2.task/k8s.io" /proc/self/mountinfo)" "no rootfs left mounted"
	assert_eq "" "$(find /sys/fs/cgroup -path "*k8s.io*" -name "*$POD*" 2>/dev/null | head -3)" "no cgroup of the pod left"
}

# A pod of two containers, as kubelet runs one: they share the pod's
# loopback and an emptyDir; one leaves a termination message; ExecSync,
# logs, stop and remove.
t_two_container_pod()
{
	local h=$1 c1 c2
	run_pod "$h" pod2
	container "$h" server 'echo shared > /data/f
echo "server says bye" > /dev/termination-log
while :; do echo served | nc -l -p 8080; done'
	c1=$CID
	wait_file "$CRI/vol/$h/empty/f" shared || fail "the first container wrote the emptyDir"
	container "$h" client 'cat /data/f
for i in $(seq 100); do nc 127.0.0.1 8080 </dev/null && break; sleep 0.1; done
sleep 1000'
	c2=$CID
	assert_eq CONTAINER_RUNNING "$(state_of "$c2")" "the second container runs"
	wait_file "$CRI/pods/$h-pod2/client.log" served ||
		fail "the second reached the first over the pod's loopback: $(cat "$CRI/pods/$h-pod2/client.log")"
	assert_match "$(cat "$CRI/pods/$h-pod2/client.log")" '^[0-9T:.Z-]+ stdout F shared$' \
		"its log, in CRI's format, has what it read from the emptyDir"

	cri ExecSync "{\"containerId\":\"$c2\",\"cmd\":[\"sh\",\"-c\",\"cat /data/f; echo oops >&2; exit 3\"],\"timeout\":20}"
	assert_eq 0 "$STATUS" "ExecSync: $ERR"
	assert_eq 3 "$(jget exitCode)" "ExecSync's exit code"
	assert_eq "shared" "$(jget stdout | base64 -d)" "ExecSync's stdout"
	assert_eq "oops" "$(jget stderr | base64 -d)" "ExecSync's stderr"
	# a pid namespace of its own (no shareProcessNamespace): its first
	# process (sh, which exec'd its last command) is 1, and the other
	# container's (nc) are not there
	cri ExecSync "{\"containerId\":\"$c2\",\"cmd\":[\"sh\",\"-c\",\"cat /proc/1/comm; cat /proc/[0-9]*/comm | grep -c '^nc\$'\"],\"timeout\":20}"
	assert_eq "sleep
0" "$(jget stdout | base64 -d)" "the container's first process is its pid 1, and it sees no other's"

	cri StopContainer "{\"containerId\":\"$c1\",\"timeout\":2}"
	assert_eq 0 "$STATUS" "StopContainer: $ERR"
	assert_eq CONTAINER_EXITED "$(state_of "$c1")" "the first container exited"
	assert_eq "server says bye" "$(cat "$CRI/vol/$h/server.termlog")" \
		"its termination message reached the host file kubelet reads"
	for c in "$c1" "$c2"; do
		cri StopContainer "{\"containerId\":\"$c\",\"timeout\":2}"
		cri RemoveContainer "{\"containerId\":\"$c\"}"
		assert_eq 0 "$STATUS" "RemoveContainer: $ERR"
	done
	pod_down
	nothing_left "$h"
}

# A pod's egress policy, from its dev.moat.* annotations (containerd's
# pod_annotations): the sandbox reaches the one address and port allowed,
# and a connect to another port of the same host fails, with an audit
# line naming it. The host is a runc pod on this file's bridge, serving
# both ports, so that the denial is the policy's and not the network's.
t_egress_policy()
{
	local target tpod tcfg mpod ip before out
	run_pod runc target
	tpod=$POD tcfg=$PODCFG
	container runc target 'while :; do echo reached | nc -l -p 8080; done &
while :; do echo reached | nc -l -p 8081; done'
	target=$CID
	cri PodSandboxStatus "{\"podSandboxId\":\"$tpod\"}"
	ip=$($PY -c 'import json, sys; print(json.loads(sys.argv[1])["status"]["network"]["ip"])' "$OUT")
	assert_match "$ip" "^$NET\.[0-9]+$" "the target pod's address on the bridge"

	before=$(stat -c %s "$AUDIT" 2>/dev/null || echo 0)
	run_pod moat egress "{\"dev.moat.net\":\"slirp\",\"dev.moat.allow\":\"$ip:8080\"}"
	container moat client 'sleep 1000'
	# nc's stdin stays open a while: at its end busybox's nc may close
	# before the server's answer came back through the link
	cri ExecSync "{\"containerId\":\"$CID\",\"cmd\":[\"sh\",\"-c\",\"for i in 1 2 3 4 5; do sleep 2 | nc -w 5 $ip 8080 && break; sleep 1; done; echo allowed=\$?; nc -w 5 $ip 8081 </dev/null; echo denied=\$?\"],\"timeout\":60}"
	assert_eq 0 "$STATUS" "ExecSync: $ERR"
	out=$(jget stdout | base64 -d)
	assert_contains "$out" "reached" "the allowed port was reached"
	assert_contains "$out" "allowed=0"
	assert_not_contains "$out" "denied=0" "the connect to a port the policy does not allow failed"
	assert_eq 1 "$(grep -c reached <<<"$out")" "only the allowed port answered: $out"
	$PY - "$AUDIT" "$before" "$POD" "$ip:8081" <<'PY' || fail "no audit line of the denied connect: $(tail -c 800 "$AUDIT")"
import json, sys
log, off, sb, dest = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
with open(log, "rb") as f:
    f.seek(off if off <= f.seek(0, 2) else 0)
    rs = [json.loads(l) for l in f]
assert any(r.get("event") == "egress" and r.get("verdict") == "deny" and
           r.get("dest") == dest and r.get("sandbox") == sb for r in rs), rs[-5:]
PY
	cri StopContainer "{\"containerId\":\"$CID\",\"timeout\":2}"
	cri RemoveContainer "{\"containerId\":\"$CID\"}"
	pod_down
	mpod=$POD
	POD=$tpod PODCFG=$tcfg
	cri StopContainer "{\"containerId\":\"$target\",\"timeout\":2}"
	cri RemoveContainer "{\"containerId\":\"$target\"}"
	pod_down
	nothing_left runc
	POD=$mpod nothing_left moat
}

cri_start
for h in runc moat; do
	run_test "two_container_pod_$h" t_two_container_pod "$h"
done
run_test egress_policy_moat t_egress_policy
