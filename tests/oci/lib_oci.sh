# tests/oci/lib_oci.sh: bundles for the OCI runtime tests (sourced after
# tests/e2e/lib.sh). A bundle is a busybox-static rootfs and a config.json
# made by `moat spec`, changed with python's json module.

# make_bundle DIR ARGS_JSON [PYTHON_EXPR...]: DIR/rootfs and DIR/config.json
# whose process.args is ARGS_JSON (a JSON list); each PYTHON_EXPR is run
# with the config as `c` (e.g. 'c["hostname"]="h1"').
make_bundle()
{
	local dir=$1 args=$2
	shift 2
	mkdir -p "$dir"
	make_busybox_rootfs "$dir/rootfs"
	rm -f "$dir/config.json"
	"$MOAT" spec --bundle "$dir" || return 1
	python3 - "$dir/config.json" "$args" "$@" <<'PY'
import json, sys
path, args = sys.argv[1], json.loads(sys.argv[2])
c = json.load(open(path))
c["process"]["terminal"] = False
c["process"]["args"] = args
for expr in sys.argv[3:]:
    exec(expr)
json.dump(c, open(path, "w"), indent=1)
PY
}

# wait_status RUNTIME ROOT ID WANT: poll `state` until status is WANT (5 s).
wait_status()
{
	local rt=$1 root=$2 id=$3 want=$4 i
	for i in $(seq 100); do
		[ "$(oci_status "$rt" "$root" "$id")" = "$want" ] && return 0
		sleep 0.05
	done
	return 1
}

# oci_status RUNTIME ROOT ID: the status field of `state`, or "none".
oci_status()
{
	local out
	out=$(timeout 10 "$1" --root "$2" state "$3" 2>/dev/null) || {
		echo none
		return
	}
	python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])' <<<"$out"
}

# Containers a failed case left running: deleted when the file ends.
oci_cleanup()
{
	local root id
	for root in "$E2E_TMP"/*root* "$E2E_TMP"/*/*root*; do
		[ -d "$root" ] || continue
		for id in $(ls "$root" 2>/dev/null); do
			timeout 20 "$MOAT" --root "$root" delete --force "$id" >/dev/null 2>&1
		done
	done
}
trap 'oci_cleanup; e2e_cleanup' EXIT
