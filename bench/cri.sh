#!/usr/bin/env bash
# bench/cri.sh [RUNS]: a Kubernetes pod's start, as kubelet drives it over
# CRI: RunPodSandbox, CreateContainer and StartContainer, until the
# container's process has run (it writes a file to the pod's emptyDir),
# for containerd's `runc` and `moat` handlers in one run, with the
# containerd, bridge and images of tests/oci/cri/lib.sh. Prints one line
# per handler, `HANDLER NS` (the median of RUNS, 5, after one warm-up), or
# `HANDLER n/a REASON`. The pods are removed after each run, untimed.
# bench/oci.sh puts the lines into its table. Needs root.
. "$(dirname "$0")/../tests/e2e/lib.sh"
. "$(dirname "$0")/../tests/oci/cri/lib.sh"
. "$(dirname "$0")/lib.sh"
RUNS=${1:-5}

# pod_start H I: one timed start of pod I under H, and its removal; the
# start's wall time in ns on stdout.
pod_start()
{
	local h=$1 i=$2 t0 t1 cid
	rm -f "$CRI/vol/$h/empty/up"
	t0=$(date +%s%N)
	run_pod "$h" "bench$i"
	container "$h" job 'echo up >/data/up; exec sleep 1000'
	cid=$CID
	for _ in $(seq 3000); do
		[ -e "$CRI/vol/$h/empty/up" ] && break
		sleep 0.01
	done
	t1=$(date +%s%N)
	[ -e "$CRI/vol/$h/empty/up" ] || fail "the container under $h never ran"
	cri StopContainer "{\"containerId\":\"$cid\",\"timeout\":1}"
	cri RemoveContainer "{\"containerId\":\"$cid\"}"
	pod_down
	echo $((t1 - t0))
}

[ "$(id -u)" = 0 ] || { echo "runc n/a needs root"; echo "moat n/a needs root"; exit 0; }
for c in containerd ctr; do
	command -v $c >/dev/null || { echo "runc n/a $c is not installed"; echo "moat n/a $c is not installed"; exit 0; }
done
cri_start >"$E2E_TMP/start.log" 2>&1
for h in runc moat; do
	if ! (pod_start "$h" warm) >"$E2E_TMP/$h.warm" 2>&1; then
		echo "$h n/a $(grep -v '^$' "$E2E_TMP/$h.warm" | tail -1 | cut -c1-160)"
		continue
	fi
	for ((i = 0; i < RUNS; i++)); do
		pod_start "$h" "$i" || break
	done | median | sed "s/^/$h /"
done
