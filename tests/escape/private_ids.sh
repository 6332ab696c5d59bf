#!/bin/sh
# private_ids.sh DIR CMD...: run CMD in a mount namespace of its own where
# /run/moat is DIR/run, /etc/subuid and /etc/subgid are DIR/subuid and
# DIR/subgid, and /etc/passwd and /etc/group are DIR/passwd and DIR/group
# where those exist: as a moat installation of its own sees the host (a
# privileged container without a user namespace, a CI runner), or a host
# whose moat range the test chooses. Two commands given the same DIR share
# the locks of /run/moat, as two moats of one installation do. CMD keeps
# the caller's pid (exec all the way), so the caller may wait on it.
# Used by tests/escape/test_host_uids.sh.
if [ "$1" != --inside ]; then
	exec unshare -m --propagation private sh "$0" --inside "$@"
fi
shift
d=$1
shift
mkdir -p "$d/run"
mount --bind "$d/run" /run/moat 2>/dev/null ||
	{ mkdir -p /run/moat && mount --bind "$d/run" /run/moat; } || exit 125
for f in subuid subgid passwd group; do
	[ -e "$d/$f" ] || continue
	mount --bind "$d/$f" "/etc/$f" || exit 125
done
exec "$@"
