#!/usr/bin/env bash
# Barrier tests for an OCI bundle's linux.maskedPaths and readonlyPaths:
# the container's processes cannot undo them (umount, mount over, rename
# over or away, other names through /proc/self/fd, hard links, chmod,
# writes by every way in). The same program runs under runc first, when
# it is installed, so the expected answer is Linux's own.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/../oci/lib_oci.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

RUNC=$(command -v runc || true)
PROBE=$E2E_TMP/masked_paths
gcc -O1 -static -o "$PROBE" "$HERE/masked_paths.c" || {
	echo "FAIL  test_masked_paths.sh: cannot build masked_paths.c"
	exit 1
}

EXPECTED="start held
umount held
mount held
rename held
other-names held
link held
chmod held
write held
masked-dir held
masked-file held"

# masked_bundle DIR TOKEN: the probe's bundle (see masked_paths.c).
masked_bundle()
{
	local b=$1 tok=$2
	make_bundle "$b" "[\"/masked_paths\",\"$tok\"]" \
		'c["root"]["readonly"]=False' \
		"c['mounts'].append({'destination':'/w','type':'bind','source':'$b/w','options':['rbind','rw']})" \
		'c["linux"]["maskedPaths"]=["/etc/secret","/hidden","/not/there","/w/d/secret"]' \
		'c["linux"]["readonlyPaths"]=["/ro","/nor/this"]' || return 1
	rm -rf "$b/w"
	mkdir -p "$b/w/d"
	echo "$tok" >"$b/w/d/secret"
	cp "$PROBE" "$b/rootfs/masked_paths"
	echo "$tok" >"$b/rootfs/etc/secret"
	mkdir -p "$b/rootfs/hidden" "$b/rootfs/ro/sub"
	echo "$tok" >"$b/rootfs/hidden/inner"
	echo keep >"$b/rootfs/ro/f"
	chmod 0644 "$b/rootfs/ro/f" "$b/rootfs/etc/secret"
	chmod 0755 "$b/rootfs/ro"
}

t_masks_and_readonly_paths_hold()
{
	local b=$E2E_TMP/masked tok
	tok=$(random_token)
	masked_bundle "$b" "$tok" || fail "bundle"
	if [ -n "$RUNC" ]; then
		capture timeout -k 5 60 "$RUNC" --root "$E2E_TMP/runc-root" run --bundle "$b" masked-runc
		assert_eq "$EXPECTED" "$OUT" "runc: the probe's own answer: $ERR"
		masked_bundle "$b" "$tok" || fail "bundle again"
	fi
	capture timeout -k 5 60 "$MOAT" --root "$E2E_TMP/root" run --bundle "$b" masked-moat
	assert_eq "$EXPECTED" "$OUT" "no trick undoes a mask or a read-only path: $ERR"
	assert_eq 0 "$STATUS" "the container ran to its end"
	[ "$(cat "$b/rootfs/ro/f")" = keep ] || fail "the host's /ro/f changed"
	[ "$(cat "$b/rootfs/etc/secret")" = "$tok" ] || fail "the host's secret changed"
	[ "$(cat "$b/w/d/secret")" = "$tok" ] || fail "the host's /w/d/secret changed or moved"
}

run_test masks_and_readonly_paths_hold t_masks_and_readonly_paths_hold
e2e_done
