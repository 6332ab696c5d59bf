# tests/oci/cri/lib.sh: a containerd of its own with CRI, `moat` and `runc`
# handlers, and the calls kubelet makes, for tests/oci/cri/pods.sh and
# bench/cri.sh (sourced after tests/e2e/lib.sh, whose E2E_TMP, KIT_X,
# capture and assertions it uses).
#
# The containerd's root, state, sockets, CNI config and IPAM store are
# under E2E_TMP; the pods' network is a bridge of its own (moatcri$KIT_X,
# 10.207.$KIT_X.0/24, no gateway, no masquerade: nothing routes off it).
# Images are made here (busybox-static, and tests/oci/cri/pause.c built
# static) and imported with ctr. cri_stop, on exit, removes what a case
# left: its pods, shims, mounts and the bridge.

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
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
