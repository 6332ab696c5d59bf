#!/usr/bin/env bash
# The mounts of an OCI bundle: tmpfs, directory and file binds at any
# depth Linux allows.
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib_oci.sh"

# deep N NAME: the absolute path /NAME/NAME/... of N components.
deep()
{
	python3 -c 'import sys; print(("/" + sys.argv[2]) * int(sys.argv[1]))' \
		"$1" "$2"
}

t_deep_mount_destinations()
{
	# 2,000 levels: each mount point is made in one walk. Resolving every
	# prefix again from "/" took over 40 s per mount; runc is instant.
	# The timeout is a generous bound on a start, not a benchmark.
	local b=$E2E_TMP/deep root=$E2E_TMP/root src=$E2E_TMP/deep-src d1 d2 d3
	d1=$(deep 2000 a)
	d2=$(deep 2000 b)
	d3=$(deep 1999 c)/f
	mkdir -p "$src"
	echo dir >"$src/g"
	echo file >"$E2E_TMP/deep-file"
	chmod -R a+rX "$src"
	make_bundle "$b" "[\"sh\",\"-c\",\"echo tmpfs > $d1/f && cat $d1/f $d2/g $d3\"]" \
		"c['mounts'].append({'destination':'$d1','type':'tmpfs','source':'tmpfs'})" \
		"c['mounts'].append({'destination':'$d2','type':'bind','source':'$src','options':['bind']})" \
		"c['mounts'].append({'destination':'$d3','type':'bind','source':'$E2E_TMP/deep-file','options':['bind']})" ||
		fail "bundle"
	capture timeout -k 5 20 "$MOAT" --root "$root" run --bundle "$b" deep1
	assert_eq 0 "$STATUS" "the container started and ran: $ERR"
	assert_eq "tmpfs
dir
file" "$OUT" "a tmpfs, a directory and a file bound 2,000 levels deep"

	# Past PATH_MAX: no path of Linux is that long (runc fails with
	# ENAMETOOLONG); a clear refusal, never a crash.
	make_bundle "$b.long" '["true"]' \
		"c['mounts'].append({'destination':'$(deep 2100 a)','type':'tmpfs','source':'tmpfs'})" ||
		fail "bundle"
	capture moat --root "$root" create --bundle "$b.long" deep2
	assert_eq 1 "$STATUS" "an overlong destination is an error, not a crash"
	assert_contains "$ERR" "mounts[5].destination: 4200 bytes long: at most 4095" "says why"
	[ -e "$root/deep2" ] && fail "state left behind"
	capture moat do --mount "$E2E_TMP:$(deep 2100 a)" -- true
	assert_ne 0 "$STATUS" "moat do: refused"
	assert_contains "$ERR" "DST is 4200 bytes long: at most 4095" "moat do: says why"
}

run_test deep_mount_destinations t_deep_mount_destinations
e2e_done
