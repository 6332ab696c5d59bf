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
# The containerd, its bridge and images are this file's own
# (tests/oci/cri/lib.sh). Afterwards nothing of it may be left: processes,
# mounts, cgroups, state.
#
# `make test` runs it through tests/oci/test_cri_pods.sh; by hand:
# bash tests/oci/cri/pods.sh
. "$(dirname "$0")/../../e2e/lib.sh"
. "$(dirname "$0")/lib.sh"

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
