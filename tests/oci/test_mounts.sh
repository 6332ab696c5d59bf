#!/usr/bin/env bash
# The mounts of an OCI bundle: tmpfs, directory and file binds at any
# depth Linux allows, and sources or destinations that are not a regular
# file or a directory (what runc binds, what moat serves, and what it
# refuses before anything starts).
. "$(dirname "$0")/../e2e/lib.sh"
. "$(dirname "$0")/lib_oci.sh"

RUNC=$(command -v runc || true)
HERE=$(cd "$(dirname "$0")" && pwd)

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
	capture timeout -k 5 30 "$MOAT" --root "$root" run --bundle "$b" deep1
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

# no_leftovers ROOT ID: neither state nor, after a while (the daemon's
# helpers end as it ends), a process of the container.
no_leftovers()
{
	local i
	[ -z "$(ls -A "$1")" ] || fail "state left behind: $(ls -A "$1")"
	for i in $(seq 50); do
		ps -eo args | grep -F -- " $2" | grep -vq grep || return 0
		sleep 0.1
	done
	ps -eo pid,args | grep -F -- " $2" | grep -v grep
	fail "a process of $2 is left"
}

t_bind_sources_that_are_not_files()
{
	# runc binds a FIFO, a socket or a device; the sentry's VFS can serve
	# none of them (the guest would need the host's node itself), so the
	# bundle is refused before anything starts, saying what the source is.
	local b=$E2E_TMP/src root=$E2E_TMP/root-src kind src id
	mkdir -p "$root"
	mkfifo "$E2E_TMP/fifo"
	python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' \
		"$E2E_TMP/sock" || fail "socket"
	for kind in FIFO socket "character device"; do
		case $kind in
		FIFO) src=$E2E_TMP/fifo ;;
		socket) src=$E2E_TMP/sock ;;
		*) src=/dev/null ;;
		esac
		id=src-$(random_token)
		make_bundle "$b" '["true"]' \
			"c['mounts'].append({'destination':'/x','type':'bind','source':'$src','options':['bind']})" ||
			fail "bundle"
		capture moat --root "$root" create --bundle "$b" "$id"
		assert_ne 0 "$STATUS" "$kind: refused"
		assert_contains "$ERR" "source \`$src\` is a $kind: moat binds regular files and directories only" "$kind: says what it is"
		assert_not_contains "$ERR" "Is a directory" "$kind: no false reason"
		no_leftovers "$root" "$id"
		capture moat do --mount "$src:/x" -- true
		assert_ne 0 "$STATUS" "moat do --mount $kind: refused"
		assert_contains "$ERR" "$src is a $kind: --mount binds a directory" "moat do --mount $kind: says what it is"
	done
}

t_file_bound_over_an_image_fifo_socket_or_device()
{
	# A FIFO, socket or device in the image where a file is bound: the
	# file takes its place, as the bind mount hides it under runc. Over a
	# directory, Linux refuses (ENOTDIR), and so does moat, truly.
	local b=$E2E_TMP/dst root=$E2E_TMP/root-dst r want
	echo bound >"$E2E_TMP/reg"
	chmod a+r "$E2E_TMP/reg"
	make_bundle "$b" '["sh","-c","cat /x /y /z; stat -c %F /x /y /z"]' \
		"c['mounts'].append({'destination':'/x','type':'bind','source':'$E2E_TMP/reg','options':['bind']})" \
		"c['mounts'].append({'destination':'/y','type':'bind','source':'$E2E_TMP/reg','options':['bind']})" \
		"c['mounts'].append({'destination':'/z','type':'bind','source':'$E2E_TMP/reg','options':['bind']})" ||
		fail "bundle"
	r=$b/rootfs
	mkfifo "$r/x"
	(cd "$r" && python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("y")') || fail "socket"
	mknod "$r/z" c 1 3 || fail "mknod (root is needed)"
	want="bound
bound
bound
regular file
regular file
regular file"
	capture timeout -k 5 30 "$MOAT" --root "$root" run --bundle "$b" dst1
	assert_eq 0 "$STATUS" "started: $ERR"
	assert_eq "$want" "$OUT" "the file replaced each node"
	[ -p "$r/x" ] && [ -S "$r/y" ] && [ -c "$r/z" ] || fail "the image was changed"
	if [ -n "$RUNC" ]; then
		capture timeout -k 5 30 "$RUNC" --root "$E2E_TMP/runc-root" run --bundle "$b" dst1
		assert_eq "$want" "$OUT" "runc says the same"
	fi
	make_bundle "$b.dir" '["true"]' \
		"c['mounts'].append({'destination':'/x','type':'bind','source':'$E2E_TMP/reg','options':['bind']})" ||
		fail "bundle"
	mkdir "$b.dir/rootfs/x"
	capture moat --root "$root" create --bundle "$b.dir" dst2
	assert_ne 0 "$STATUS" "a file over a directory: refused"
	assert_contains "$ERR" "the image has a directory there, and a file binds only over a file" "says why"
	no_leftovers "$root" dst2
}

# rep N STR: STR N times.
rep()
{
	python3 -c 'import sys; print(sys.argv[2] * int(sys.argv[1]), end="")' \
		"$1" "$2"
}

t_dotdot_in_a_deep_image_link()
{
	# An image's links 300 levels deep whose targets climb to "/" with
	# "..": one comes back down to itself (a loop, ELOOP after 40
	# follows), one leads to /real. Each ".." looked its parent up again
	# from "/", so the loop took minutes to refuse; runc takes a second
	# or two. The guest's own walk through the loop cost the sentry
	# as long. The timeout is a generous bound, not a benchmark.
	local b=$E2E_TMP/dotdot root=$E2E_TMP/root-dotdot src=$E2E_TMP/dotdot-src
	local D=300 d
	d=$(rep $D /d)
	mkdir -p "$src"
	echo fromhost >"$src/f"
	chmod -R a+rX "$src"
	make_bundle "$b" "[\"sh\",\"-c\",\"cat /real/m/f; cat $d/L/f || echo loop\"]" \
		"c['mounts'].append({'destination':'$d/L/m','type':'bind','source':'$src','options':['bind']})" ||
		fail "bundle"
	mkdir -p "$b/rootfs$d" "$b/rootfs/real"
	ln -s "$(rep $D ../)$(rep $D d/)L" "$b/rootfs$d/L"
	ln -s "$(rep $D ../)real" "$b/rootfs$d/R"
	capture timeout -k 5 30 "$MOAT" --root "$root" create --bundle "$b" loop1
	assert_eq 1 "$STATUS" "the loop is refused, in time"
	assert_contains "$ERR" "Too many levels of symbolic links" "says why"
	no_leftovers "$root" loop1
	python3 - "$b/config.json" <<-'PY' || fail "config"
		import json, sys
		c = json.load(open(sys.argv[1]))
		c["mounts"][-1]["destination"] = c["mounts"][-1]["destination"][:-4] + "/R/m"
		json.dump(c, open(sys.argv[1], "w"))
	PY
	capture timeout -k 5 30 "$MOAT" --root "$root" run --bundle "$b" up1
	assert_eq 0 "$STATUS" "started: $ERR"
	assert_eq "fromhost
loop" "$OUT" "the mount is where the link leads; the guest's walk of the loop ends"
	assert_contains "$ERR" "Too many levels of symbolic links" "the guest's walk: ELOOP"
}

t_mount_point_through_a_link_of_4095_bytes()
{
	# A link target may be 4,095 bytes long; the rest of the destination
	# after it makes a longer string to walk, but the real path is short
	# (the slashes collapse). runc resolves it; moat refused it.
	local b=$E2E_TMP/long-link root=$E2E_TMP/root-long-link z
	z=$(rep 200 z)
	make_bundle "$b" '["sh","-c","ls -d /z*/m"]' \
		"c['mounts'].append({'destination':'/l/m','type':'tmpfs','source':'tmpfs'})" ||
		fail "bundle"
	ln -s "$(rep 3895 /)$z" "$b/rootfs/l"
	capture timeout -k 5 30 "$MOAT" --root "$root" run --bundle "$b" long1
	assert_eq 0 "$STATUS" "started: $ERR"
	assert_eq "/$z/m" "$OUT" "the mount is where the link leads"
}

t_mounts_are_made_in_config_order()
{
	# Each mount goes onto or into what the ones before it made, as runc
	# makes them: a bind at a link to a tmpfs's directory is on top of
	# the tmpfs; a tmpfs hides the image's link that a later mount point
	# would have followed; a tmpfs over a bound file's directory hides
	# the file, and a bind below it. moat made every bind, then every
	# tmpfs, then every file, and no mount hid one made before it.
	local b=$E2E_TMP/order root=$E2E_TMP/root-order src=$E2E_TMP/order-src want
	mkdir -p "$src"
	echo two >"$src/f"
	echo file >"$E2E_TMP/order-file"
	chmod -R a+rX "$src" "$E2E_TMP/order-file"
	make_bundle "$b" '["sh","-c","cat /d/f /x/l/m/f; ls /e /y; test -e /y/m/f && echo a bind under a later tmpfs; true"]' \
		"c['mounts'].append({'destination':'/d','type':'tmpfs','source':'tmpfs'})" \
		"c['mounts'].append({'destination':'/l','type':'bind','source':'$src','options':['bind']})" \
		"c['mounts'].append({'destination':'/x','type':'tmpfs','source':'tmpfs'})" \
		"c['mounts'].append({'destination':'/x/l/m','type':'bind','source':'$src','options':['bind']})" \
		"c['mounts'].append({'destination':'/e/f','type':'bind','source':'$E2E_TMP/order-file','options':['bind']})" \
		"c['mounts'].append({'destination':'/e','type':'tmpfs','source':'tmpfs'})" \
		"c['mounts'].append({'destination':'/y/m','type':'bind','source':'$src','options':['bind']})" \
		"c['mounts'].append({'destination':'/y','type':'tmpfs','source':'tmpfs'})" ||
		fail "bundle"
	ln -s /d "$b/rootfs/l"
	mkdir "$b/rootfs/x"
	ln -s /etc "$b/rootfs/x/l"
	want="two
two
/e:

/y:"
	capture timeout -k 5 30 "$MOAT" --root "$root" run --bundle "$b" order1
	assert_eq 0 "$STATUS" "started: $ERR"
	assert_eq "$want" "$OUT" "each mount on what the earlier ones made"
	[ -L "$b/rootfs/l" ] && [ -L "$b/rootfs/x/l" ] && [ ! -e "$b/rootfs/e" ] &&
		[ ! -e "$b/rootfs/y" ] ||
		fail "the image was changed"
	if [ -n "$RUNC" ]; then
		capture timeout -k 5 30 "$RUNC" --root "$E2E_TMP/runc-root" run --bundle "$b" order1
		assert_eq "$want" "$OUT" "runc says the same"
	fi
}

# project_mounts FILE DEST...: the lines of a mountinfo in FILE for the
# mount points DEST (in the table's order), as "POINT FSTYPE SOURCE RO
# NOEXEC"; a DEST written bind:DEST is a bind, whose source is not shown
# (the host's device under runc; moat does not show it).
project_mounts()
{
	python3 - "$@" <<'PY'
import re, sys
unesc = lambda s: re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), s)
dests = [d.removeprefix("bind:") for d in sys.argv[2:]]
binds = [d[5:] for d in sys.argv[2:] if d.startswith("bind:")]
for line in open(sys.argv[1]):
    if " - " not in line:
        continue
    a, b = line.split(" - ")
    f, g = a.split(), b.split()
    point = unesc(f[4])
    if point not in dests:
        continue
    opts = f[5].split(",")
    bind = point in binds
    print(point, g[0], "-" if bind else unesc(g[1]), opts[0],
          "noexec" if "noexec" in opts else "exec")
PY
}

t_mount_table_of_a_bundle()
{
	# The config's mounts, each in /proc/self/mountinfo in its order with
	# its type, source, ro and noexec, as runc lists them (the bundle
	# mounts no sysfs, so there is none). A fixed table had none of them
	# and a root that was never ro.
	local b=$E2E_TMP/table root=$E2E_TMP/root-table src=$E2E_TMP/table-src want fs
	mkdir -p "$src"
	cp /bin/busybox "$src/bb"
	chmod -R a+rX "$src"
	fs=$(findmnt -n -o FSTYPE --target "$src")
	make_bundle "$b" '["sh","-c","cat /proc/self/mountinfo; cp /bin/busybox /n/bb; /n/bb true || echo tmpfs noexec; /bne/bb true || echo bind noexec; /b/bb true; echo bind exec $?"]' \
		'c["root"]["readonly"]=True' \
		'c["mounts"]=[m for m in c["mounts"] if m["destination"]!="/sys"]' \
		"c['mounts'].append({'destination':'/t','type':'tmpfs','source':'tmpfs','options':['nosuid','mode=755']})" \
		"c['mounts'].append({'destination':'/b','type':'bind','source':'$src','options':['rbind','rw']})" \
		"c['mounts'].append({'destination':'/br','type':'bind','source':'$src','options':['rbind','ro']})" \
		"c['mounts'].append({'destination':'/a b','type':'tmpfs','source':'my tmpfs','options':['ro']})" \
		"c['mounts'].append({'destination':'/n','type':'tmpfs','source':'tmpfs','options':['noexec']})" \
		"c['mounts'].append({'destination':'/bne','type':'bind','source':'$src','options':['rbind','noexec']})" ||
		fail "bundle"
	want="/ overlay overlay ro exec
/proc proc proc rw exec
/dev tmpfs tmpfs rw exec
/dev/pts devpts devpts rw noexec
/dev/shm tmpfs shm rw noexec
/t tmpfs tmpfs rw exec
/b $fs - rw exec
/br $fs - ro exec
/a b tmpfs my tmpfs ro exec
/n tmpfs tmpfs rw noexec
/bne $fs - rw noexec"
	capture timeout -k 5 30 "$MOAT" --root "$root" run --bundle "$b" table1
	assert_eq 0 "$STATUS" "started: $ERR"
	printf '%s\n' "$OUT" >"$E2E_TMP/table.moat"
	capture project_mounts "$E2E_TMP/table.moat" / /proc /dev /dev/pts /dev/shm /t bind:/b bind:/br "/a b" /n bind:/bne
	# /proc is noexec in the sandbox (nothing there can be run), where
	# runc mounts it as the config says
	assert_eq "$want" "$(sed 's|^/proc proc proc rw noexec$|/proc proc proc rw exec|' <<<"$OUT")" "the config's mounts, in order"
	assert_contains "$(cat "$E2E_TMP/table.moat")" "tmpfs noexec
bind noexec" "noexec is enforced"
	assert_contains "$(cat "$E2E_TMP/table.moat")" "bind exec 127" "exec elsewhere is not refused"
	if [ -n "$RUNC" ]; then
		capture timeout -k 5 30 "$RUNC" --root "$E2E_TMP/runc-root" run --bundle "$b" table1
		printf '%s\n' "$OUT" >"$E2E_TMP/table.runc"
		capture project_mounts "$E2E_TMP/table.runc" /proc /dev /dev/pts /dev/shm /t bind:/b bind:/br "/a b" /n bind:/bne
		assert_eq "$(sed 1d <<<"$want")" "$OUT" "runc lists them so"
		assert_eq "ro" "$(awk '$5 == "/" { print substr($6, 1, 2) }' "$E2E_TMP/table.runc")" \
			"runc's root is ro too"
	fi
}

# The host's / as a read-only rootfs (for python): the table agrees with
# stat and statvfs for every mount (tests/e2e/mount_table.py).
t_mount_table_agrees_with_stat_in_a_bundle()
{
	local b=$E2E_TMP/table2 root=$E2E_TMP/root-table2 src=$E2E_TMP/table2-src
	mkdir -p "$src"
	cp "$HERE/../e2e/mount_table.py" "$E2E_TMP/mount_table.py"
	chmod 644 "$E2E_TMP/mount_table.py"
	make_bundle "$b" "[\"/usr/bin/python3\",\"$E2E_TMP/mount_table.py\"]" \
		'c["root"]={"path":"/","readonly":True}' \
		'c["mounts"]=[m for m in c["mounts"] if m["destination"]!="/sys"]' \
		"c['mounts'].append({'destination':'/mnt/moat-t','type':'tmpfs','source':'tmpfs','options':['ro','mode=700']})" \
		"c['mounts'].append({'destination':'/mnt/moat-b','type':'bind','source':'$src','options':['rbind','ro','noexec']})" ||
		fail "bundle"
	capture timeout -k 5 30 "$MOAT" --root "$root" run --bundle "$b" table2
	assert_eq 0 "$STATUS" "started: $ERR"
	assert_eq ok "$(head -1 <<<"$OUT")" "st_dev and statvfs agree with the table: $OUT"
	assert_contains "$OUT" "/ overlay overlay ro,nosuid,nodev,relatime" "the root is ro"
	assert_contains "$OUT" "/mnt/moat-t tmpfs tmpfs ro,nosuid,nodev,relatime" "a ro tmpfs"
	assert_contains "$OUT" "none ro,nosuid,nodev,noexec,relatime" "a ro noexec bind"
}

# live_setup DIR: the host side of t_file_binds_are_mounts_not_copies:
# files kubelet binds (a termination log, an etc-hosts-like file, one
# bound read-only, one the host will replace by rename) and a configMap-
# like directory of symlinks into a timestamped directory.
live_setup()
{
	local d=$1
	rm -rf "$d"
	mkdir -p "$d/cfg/..2026_a"
	: >"$d/tl"
	echo host-v1 >"$d/hn"
	echo keep >"$d/ro"
	echo old >"$d/repl"
	echo v1 >"$d/cfg/..2026_a/token"
	ln -s ..2026_a "$d/cfg/..data"
	ln -s ..data/token "$d/cfg/token"
	chmod 666 "$d/tl" "$d/hn" "$d/ro" "$d/repl"
	chmod -R a+rX "$d"
}

# live_run RUNTIME ROOT BUNDLE ID DIR: run the container and, once it has
# written its termination message, change the files as kubelet does: a
# rewrite in place, a configMap update (the `..data` link swapped by an
# atomic rename), and a file replaced by rename. The container's output
# is in $OUT.
live_run()
{
	local rt=$1 root=$2 b=$3 id=$4 d=$5 pid i
	timeout -k 5 60 "$rt" --root "$root" run --bundle "$b" "$id" >"$d.out" 2>&1 &
	pid=$!
	for i in $(seq 300); do
		grep -q from-guest "$d/tl" && break
		sleep 0.1
	done
	grep -q from-guest "$d/tl" || fail "$rt: the container's write never reached the host file: $(cat "$d.out")"
	echo host-v2 >"$d/hn"
	echo new >"$d/repl.tmp"
	mv "$d/repl.tmp" "$d/repl"
	mkdir "$d/cfg/..2026_b"
	echo v2 >"$d/cfg/..2026_b/token"
	chmod -R a+rX "$d/cfg"
	ln -s ..2026_b "$d/cfg/..data_tmp"
	mv -T "$d/cfg/..data_tmp" "$d/cfg/..data"
	rm -rf "$d/cfg/..2026_a"
	wait $pid
	STATUS=$?
	OUT=$(cat "$d.out")
}

t_file_binds_are_mounts_not_copies()
{
	# kubelet binds /dev/termination-log rw and reads the message from the
	# host file; it binds /etc/hosts and friends, and directories of
	# symlinks (configMap, secret, projected token volumes) that it
	# updates in place. A file bind was a copy made at create: the
	# container's writes never reached the host, and the host's changes
	# were never seen. A file replaced on the host by rename is not seen
	# under runc either (the bind holds the old inode).
	local b=$E2E_TMP/live d=$E2E_TMP/live-host root=$E2E_TMP/root-live want
	make_bundle "$b" '["sh","-c","exec 2>&1; w() { i=0; until grep -q $2 $1; do i=$((i+1)); [ $i -gt 300 ] && echo timeout $1 && exit 1; sleep 0.1; done; }; cat /etc/hostname /cfg/token /etc/repl; echo from-guest > /dev/termination-log; w /etc/hostname host-v2; cat /etc/hostname; w /cfg/token v2; cat /cfg/token; ls -a /cfg; readlink /cfg/..data; cat /etc/repl; echo x > /etc/ro-file; cat /etc/ro-file; stat -c %F /dev/termination-log; ls /dev | grep termination"]' \
		"c['mounts'].append({'destination':'/dev/termination-log','type':'bind','source':'$d/tl','options':['rbind','rprivate','rw']})" \
		"c['mounts'].append({'destination':'/etc/hostname','type':'bind','source':'$d/hn','options':['rbind','rprivate','rw']})" \
		"c['mounts'].append({'destination':'/etc/ro-file','type':'bind','source':'$d/ro','options':['rbind','rprivate','ro']})" \
		"c['mounts'].append({'destination':'/etc/repl','type':'bind','source':'$d/repl','options':['rbind','ro']})" \
		"c['mounts'].append({'destination':'/cfg','type':'bind','source':'$d/cfg','options':['rbind','rprivate','ro']})" ||
		fail "bundle"
	want="host-v1
v1
old
host-v2
v2
.
..
..2026_b
..data
token
..2026_b
old
sh: can't create /etc/ro-file: Read-only file system
keep
regular file
termination-log"
	live_setup "$d"
	live_run "$MOAT" "$root" "$b" live1 "$d"
	assert_eq 0 "$STATUS" "the container ran"
	assert_eq "$want" "$OUT" "writes reach the host, host changes are seen"
	assert_eq from-guest "$(cat "$d/tl")" "the termination message is in the host file"
	assert_eq keep "$(cat "$d/ro")" "the ro file is unchanged"
	[ ! -e "$b/rootfs/dev/termination-log" ] && [ ! -e "$b/rootfs/etc/ro-file" ] ||
		fail "the image was changed"
	if [ -n "$RUNC" ]; then
		live_setup "$d"
		live_run "$RUNC" "$E2E_TMP/runc-root" "$b" live1 "$d"
		assert_eq "$want" "$OUT" "runc says the same"
		assert_eq from-guest "$(cat "$d/tl")" "runc: the message is in the host file"
	fi
}

t_mounts_in_dev()
{
	# In /dev, mounts go beside or over devfs's nodes, as kubelet's
	# termination log and an engine's /dev/shm do: a file, a directory, a
	# tmpfs, and /dev/shm a bind of the host's. /dev itself, /proc and
	# /sys stay the sandbox's own.
	local b=$E2E_TMP/indev root=$E2E_TMP/root-indev d=$E2E_TMP/indev-host want
	mkdir -p "$d/dir" "$d/shm"
	echo in-dir >"$d/dir/f"
	echo file >"$d/f"
	chmod -R a+rwX "$d"
	make_bundle "$b" '["sh","-c","cat /dev/myfile /dev/mydir/f; echo shm > /dev/shm/seg; echo t > /dev/mytmp/t && cat /dev/mytmp/t; ls /dev | grep my; stat -c %F /dev/myfile /dev/mydir /dev/mytmp"]' \
		"c['mounts']=[m for m in c['mounts'] if m['destination']!='/dev/shm']" \
		"c['mounts'].append({'destination':'/dev/myfile','type':'bind','source':'$d/f','options':['rbind','ro']})" \
		"c['mounts'].append({'destination':'/dev/mydir','type':'bind','source':'$d/dir','options':['rbind','ro']})" \
		"c['mounts'].append({'destination':'/dev/mytmp','type':'tmpfs','source':'tmpfs','options':['mode=755']})" \
		"c['mounts'].append({'destination':'/dev/shm','type':'bind','source':'$d/shm','options':['rbind','rw']})" ||
		fail "bundle"
	want="file
in-dir
t
mydir
myfile
mytmp
regular file
directory
directory"
	capture timeout -k 5 30 "$MOAT" --root "$root" run --bundle "$b" indev1
	assert_eq 0 "$STATUS" "started: $ERR"
	assert_eq "$want" "$OUT" "mounts in /dev"
	assert_eq shm "$(cat "$d/shm/seg")" "/dev/shm is the host's directory"
	if [ -n "$RUNC" ]; then
		rm -f "$d/shm/seg"
		capture timeout -k 5 30 "$RUNC" --root "$E2E_TMP/runc-root" run --bundle "$b" indev1
		assert_eq "$want" "$OUT" "runc says the same"
		assert_eq shm "$(cat "$d/shm/seg")" "runc: /dev/shm is the host's directory"
	fi
	for dst in /dev /proc/x /sys/x; do
		make_bundle "$b.bad" '["true"]' \
			"c['mounts'].append({'destination':'$dst','type':'bind','source':'$d/dir','options':['rbind']})" ||
			fail "bundle"
		capture moat --root "$root" create --bundle "$b.bad" indev2
		assert_ne 0 "$STATUS" "a bind at $dst: refused"
		assert_contains "$ERR" "a bind mount at $dst is not supported by moat" "$dst: says why"
		no_leftovers "$root" indev2
	done
}

run_test deep_mount_destinations t_deep_mount_destinations
run_test bind_sources_that_are_not_files t_bind_sources_that_are_not_files
run_test file_bound_over_an_image_fifo_socket_or_device t_file_bound_over_an_image_fifo_socket_or_device
run_test dotdot_in_a_deep_image_link t_dotdot_in_a_deep_image_link
run_test mount_point_through_a_link_of_4095_bytes t_mount_point_through_a_link_of_4095_bytes
run_test mounts_are_made_in_config_order t_mounts_are_made_in_config_order
run_test mount_table_of_a_bundle t_mount_table_of_a_bundle
run_test mount_table_agrees_with_stat_in_a_bundle t_mount_table_agrees_with_stat_in_a_bundle
run_test file_binds_are_mounts_not_copies t_file_binds_are_mounts_not_copies
run_test mounts_in_dev t_mounts_in_dev
e2e_done
