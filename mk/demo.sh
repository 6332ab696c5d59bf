#!/usr/bin/env bash
# `make demo`: untrusted Python and a shell pipeline, run by moat's sentry.
set -euo pipefail
cd "$(dirname "$0")/.."
MOAT=${MOAT:-build/moat}
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

bold='' plain=''
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; fi
# show CMD...: print CMD as one would type it (relative to the repo), run it.
show() {
	local a line=""
	for a in "$@"; do
		a=${a#"$PWD/"}
		if [[ "$a" =~ ^[A-Za-z0-9_./=:,+@%-]+$ ]]; then
			line+="$a "
		else
			line+="'${a//\'/\'\\\'\'}' "
		fi
	done
	printf '\n%s$ %s%s\n' "$bold" "${line% }" "$plain"
	"$@"
}

# Untrusted code: it believes it is pid 1 on a machine called moat-demo, and
# its /proc holds only the sandbox's own processes.
show "$MOAT" do --hostname moat-demo -- python3 -c '
import os
print("pid:", os.getpid(), " parent:", os.getppid())
print("hostname:", os.uname().nodename)
print("pids in /proc:", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
try:
    open("/etc/moat-demo", "w").write("written by the guest")
    print("wrote /etc/moat-demo, inside the sandbox only")
except OSError as e:
    print("cannot write /etc/moat-demo:", e.strerror)
'
if [ -e /etc/moat-demo ]; then
	echo "demo: FAILED: /etc/moat-demo reached the host" >&2
	rm -f /etc/moat-demo
	exit 1
fi
echo "(host: /etc/moat-demo does not exist)"

# A static busybox shell pipeline, and the exit status coming back.
show "$MOAT" do -- /bin/busybox sh -c \
	'echo "sh is pid $$"; busybox ls /usr/bin | busybox head -3 | busybox wc -l; exit 3' ||
	status=$?
echo "(exit status ${status:-0})"
if [ "${status:-0}" != 3 ]; then
	echo "demo: FAILED: expected the guest's exit status 3" >&2
	exit 1
fi
