#!/usr/bin/env bash
# Real programs under `moat do` print what they print natively.
. "$(dirname "$0")/lib.sh"

t_busybox_echo()
{
	capture moat do -- /bin/busybox echo ok
	assert_eq 0 "$STATUS" "busybox echo exits 0"
	assert_eq "ok" "$OUT" "busybox echo ok"
}

t_sh_pipeline() { assert_same_as_native /bin/sh -c 'ls /usr/bin | sort | head -3'; }

t_bash_loop()
{
	assert_same_as_native /bin/bash -c 'for i in 1 2 3; do echo $i; done | wc -l'
}

t_coreutils_hash() { assert_same_as_native /usr/bin/sha256sum /etc/os-release; }

t_python_imports()
{
	capture moat do -- $PY -c \
		'import os, json, hashlib, sqlite3; print(os.getpid(), json.dumps([1]))'
	assert_eq 0 "$STATUS" "python exits 0"
	assert_eq "1 [1]" "$OUT" "python sees pid 1 and its stdlib works"
}

t_python_sqlite_hashlib()
{
	local prog='
import hashlib, sqlite3
db = sqlite3.connect(":memory:")
db.execute("create table t (x)")
db.executemany("insert into t values (?)", [(i,) for i in range(100)])
print(db.execute("select sum(x) from t").fetchone()[0])
print(hashlib.sha256(b"moat").hexdigest())'
	assert_same_as_native $PY -c "$prog"
}

# fork, exec, wait: the child's exit status comes back exactly.
t_python_fork_exec_wait()
{
	local prog='
import os, subprocess
pid = os.fork()
if pid == 0:
    os.execv("/bin/echo", ["echo", "child says hi"])
_, st = os.waitpid(pid, 0)
print("exec child:", os.waitstatus_to_exitcode(st))
pid = os.fork()
if pid == 0:
    os._exit(3)
_, st = os.waitpid(pid, 0)
print("exit child:", os.WIFEXITED(st), os.WEXITSTATUS(st))
pid = os.fork()
if pid == 0:
    os.kill(os.getpid(), 9)
_, st = os.waitpid(pid, 0)
print("killed child:", os.WIFSIGNALED(st), os.WTERMSIG(st))
print("subprocess:", subprocess.run(["/bin/sh", "-c", "exit 5"]).returncode)
print("output:", subprocess.check_output(["/bin/echo", "piped"]).decode().strip())'
	capture moat do -- $PY -c "$prog"
	assert_eq 0 "$STATUS" "python fork/exec/wait script exits 0"
	assert_eq "child says hi
exec child: 0
exit child: True 3
killed child: True 9
subprocess: 5
output: piped" "$OUT" "fork, exec and wait report exact statuses"
}

t_threads()
{
	local prog='
import threading
out = []
ts = [threading.Thread(target=lambda i=i: out.append(i * i)) for i in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
print(sorted(out))'
	assert_same_as_native $PY -c "$prog"
}

t_stdin_streams()
{
	local out
	out=$(printf 'hello\nworld\n' | moat do -- /bin/cat)
	assert_eq "hello
world" "$out" "stdin reaches the guest and its stdout comes back"
}

t_stderr_separate()
{
	capture moat do -- /bin/sh -c 'echo out; echo err >&2'
	assert_eq 0 "$STATUS" "sh exits 0"
	assert_eq "out" "$OUT" "stdout carries only stdout"
	assert_contains "$ERR" "err" "stderr carries the guest's stderr"
	assert_not_contains "$ERR" "out" "stdout does not leak into stderr"
}

# The sentry's loader follows #! (the script lives on the host, read-only).
t_shebang()
{
	printf '#!/bin/sh\necho from script "$1"\n' >"$E2E_TMP/script.sh"
	chmod +x "$E2E_TMP/script.sh"
	capture moat do -- "$E2E_TMP/script.sh" arg
	assert_eq 0 "$STATUS" "a #! script exits 0"
	assert_eq "from script arg" "$OUT" "a #! script runs with its argument"
}

t_large_output()
{
	local n
	n=$(moat do -- /bin/sh -c 'head -c 3000000 /dev/zero' | wc -c)
	assert_eq 3000000 "$n" "3 MB of output arrive intact"
}

run_test "busybox echo ok" t_busybox_echo
run_test "sh pipeline ls|sort|head matches native" t_sh_pipeline
run_test "bash loop | wc -l matches native" t_bash_loop
run_test "sha256sum of a host file matches native" t_coreutils_hash
run_test "python imports os json hashlib sqlite3, pid 1" t_python_imports
run_test "python sqlite3 and hashlib compute as native" t_python_sqlite_hashlib
run_test "python fork, exec and wait" t_python_fork_exec_wait
run_test "python threads" t_threads
run_test "stdin is streamed to the guest" t_stdin_streams
run_test "stdout and stderr stay separate" t_stderr_separate
run_test "#! script runs through its interpreter" t_shebang
run_test "large output is streamed intact" t_large_output
e2e_done
