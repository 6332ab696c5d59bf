#!/usr/bin/env bash
# bench/oci.sh [--append FILE] [--update-readme]: container start-up, as an
# engine sees it: `RUNTIME run` of /bin/true from a busybox bundle, for
# moat, runc and gVisor's `runsc --platform=ptrace`, in one run (median of
# BENCH_OCI_RUNS, 20), with /bin/true spawned directly for scale. Each
# runtime gets a --root of its own in a temporary directory, removed on
# exit. Then a Kubernetes pod's start over containerd's CRI, under its
# runc and moat handlers (bench/cri.sh, median of BENCH_CRI_RUNS, 5).
# Needs root (runc and runsc do); without it every cell is n/a.
#
# bench/run.sh calls it after the network table; `make bench-oci` runs it
# alone. The table goes to build/bench/oci.md; --append FILE adds it to
# FILE too, --update-readme puts it into README.md's bench-oci block.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
. "$root/bench/lib.sh"

MOAT=${MOAT:-$root/build/moat}
RUNS=${BENCH_OCI_RUNS:-20}
OUTDIR=$root/build/bench
UPDATE_README=0
APPEND=""
while [ $# -gt 0 ]; do
	case $1 in
	--update-readme) UPDATE_README=1 ;;
	--append) APPEND=${2:?--append needs a file}; shift ;;
	*) echo "usage: bench/oci.sh [--append FILE] [--update-readme]" >&2; exit 2 ;;
	esac
	shift
done
mkdir -p "$OUTDIR"
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C

TMP=$(mktemp -d /var/tmp/moat-bench-oci.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
B=$TMP/bundle
mkdir -p "$B/rootfs/bin"
cp /bin/busybox "$B/rootfs/bin/busybox"
ln -s busybox "$B/rootfs/bin/true"
"$MOAT" spec --bundle "$B"
python3 - "$B/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/true"]
json.dump(c, open(sys.argv[1], "w"))
PY

declare -A RES NA
# start_ns NAME CMD...: median wall time of CMD (which gets a fresh
# container ID as its last argument), after one warm-up that must work.
start_ns()
{
	local name=$1 i t0 t1 vals=""
	shift
	if [ "$(id -u)" != 0 ] && [ "$name" != native ]; then
		NA[$name]="needs root"
		return
	fi
	if ! timeout 60 "$@" warm >/dev/null 2>"$TMP/$name.err"; then
		NA[$name]=$(grep -v '^$' "$TMP/$name.err" | head -1 | cut -c1-160)
		return
	fi
	for ((i = 0; i < RUNS; i++)); do
		t0=$(date +%s%N)
		timeout 60 "$@" "c$i" >/dev/null 2>&1
		t1=$(date +%s%N)
		vals+="$((t1 - t0))"$'\n'
	done
	RES[$name]=$(printf '%s' "$vals" | median)
}

echo "bench: container start-up: native /bin/true" >&2
start_ns native "$B/rootfs/bin/true"
echo "bench: container start-up: moat run" >&2
start_ns moat "$MOAT" --root "$TMP/moat" run --bundle "$B"
if command -v runc >/dev/null; then
	echo "bench: container start-up: runc run" >&2
	start_ns runc runc --root "$TMP/runc" run --bundle "$B"
else
	NA[runc]="runc is not installed"
fi
if command -v runsc >/dev/null; then
	echo "bench: container start-up: runsc run" >&2
	start_ns runsc runsc --root "$TMP/runsc" --platform=ptrace --network=none run --bundle "$B"
else
	NA[runsc]="runsc is not installed"
fi

# A Kubernetes pod's start over containerd's CRI (bench/cri.sh), under
# its runc and moat handlers.
CRI_RUNS=${BENCH_CRI_RUNS:-5}
echo "bench: pod start over CRI: runc and moat handlers" >&2
while read -r h v why; do
	case $v in
	n/a) NA[cri_$h]=$why ;;
	'') NA[cri_$h]="no result (bench/cri.sh)" ;;
	*) RES[cri_$h]=$v ;;
	esac
done < <(MOAT=$MOAT timeout 900 bash "$root/bench/cri.sh" "$CRI_RUNS" 2>"$TMP/cri.err")
for h in runc moat; do
	[ -n "${RES[cri_$h]:-}${NA[cri_$h]:-}" ] ||
		NA[cri_$h]=$(grep -v '^$' "$TMP/cri.err" | tail -1 | cut -c1-160)
done

ms() { awk -v ns="$1" 'BEGIN { if (ns == "") print "n/a"; else printf "%.1f ms\n", ns / 1e6 }'; }
table=$OUTDIR/oci.md
{
	echo "| container start-up: \`run\` of /bin/true | time | vs runc |"
	echo "|---|---:|---:|"
	for m in native moat runc runsc; do
		label=$m
		[ $m = native ] && label="/bin/true, no container"
		[ $m = runsc ] && label="runsc --platform=ptrace"
		[ $m = moat ] && label="moat run"
		[ $m = runc ] && label="runc run"
		echo "| $label | $(ms "${RES[$m]:-}") | $(fmt_ratio "${RES[$m]:-na}" "${RES[runc]:-na}") |"
	done
	echo
	echo "Median of $RUNS runs, wall time of the whole command (create, start, wait, delete)."
	echo "runc $(dpkg-query -W -f='${Version}' runc 2>/dev/null || echo n/a), runsc $(dpkg-query -W -f='${Version}' runsc 2>/dev/null || echo n/a)."
	echo
	echo "| pod start over CRI: RunPodSandbox, CreateContainer, StartContainer, until it runs | time | vs runc |"
	echo "|---|---:|---:|"
	for m in runc moat; do
		echo "| containerd, $m handler | $(ms "${RES[cri_$m]:-}") | $(fmt_ratio "${RES[cri_$m]:-na}" "${RES[cri_runc]:-na}") |"
	done
	echo
	echo "Median of $CRI_RUNS pods each (bench/cri.sh), containerd $(dpkg-query -W -f='${Version}' containerd 2>/dev/null || echo n/a); the container's first write to its emptyDir ends the time."
	for m in moat runc runsc cri_runc cri_moat; do
		[ -n "${NA[$m]:-}" ] && echo "- $m: n/a: ${NA[$m]}"
	done
} >"$table"
echo
cat "$table"
[ -n "$APPEND" ] && { echo; cat "$table"; } >>"$APPEND"
if [ "$UPDATE_README" = 1 ]; then
	readme_block bench-oci "$table"
fi
