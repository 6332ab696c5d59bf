#!/usr/bin/env python3
"""Guest side of tests/escape/test_host_fds.sh: make the sentry hold as
many host objects as a guest can, report, then wait to be told to stop.

  host_fds.py small N      N one-byte files in /tmp
  host_fds.py large N      N files of 100 KiB in /tmp (in the store)
  host_fds.py opens        every regular file under /usr, held open
  host_fds.py events N     N processes, each making eventfds until it
                           cannot (the sandbox's file table: ENFILE)

Prints "made N" (or "held N ERRNO"), then whether /etc/hostname opens,
then "ready", and sleeps until SIGTERM (moat kill NAME)."""
import errno
import os
import resource
import signal
import sys
import time

mode = sys.argv[1]
out = []
if mode in ("small", "large"):
    n = int(sys.argv[2])
    data = b"x" if mode == "small" else b"y" * 100 * 1024
    for i in range(n):
        with open("/tmp/f%d" % i, "wb") as f:
            f.write(data)
    out.append("made %d" % n)
elif mode == "events":
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    r, w = os.pipe()
    kids = []
    for k in range(int(sys.argv[2])):
        pid = os.fork()
        if pid == 0:
            os.close(r)
            n, err = 0, 0
            try:
                while True:
                    os.eventfd(0)
                    n += 1
            except OSError as e:
                err = e.errno
            os.write(w, b"%d %s\n" % (n, errno.errorcode.get(err, str(err)).encode()))
            time.sleep(60)
            os._exit(0)
        kids.append(pid)
    os.close(w)
    lines = []
    with os.fdopen(r) as f:
        for _ in kids:
            lines.append(f.readline().split())
    total = sum(int(l[0]) for l in lines)
    errs = sorted(set(l[1] for l in lines))
    out.append("events %d %s" % (total, ",".join(errs)))
    for pid in kids:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
else:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    held, err = [], 0
    try:
        for root, dirs, files in os.walk("/usr"):
            for name in files:
                p = os.path.join(root, name)
                try:
                    held.append(os.open(p, os.O_RDONLY | os.O_NOFOLLOW))
                except OSError as e:
                    if e.errno in (errno.EACCES, errno.ELOOP, errno.ENOENT,
                                   errno.ENXIO, errno.EPERM):
                        continue
                    err = e.errno
                    raise StopIteration
    except StopIteration:
        pass
    out.append("held %d %s" % (len(held), errno.errorcode.get(err, err)))
    for fd in held[:200]:
        os.close(fd)
try:
    with open("/etc/hostname") as f:
        f.read()
    out.append("hostname ok")
except OSError as e:
    out.append("hostname %s" % errno.errorcode.get(e.errno, e.errno))
print("\n".join(out), flush=True)
print("ready", flush=True)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
for _ in range(600):
    time.sleep(0.1)
sys.exit(3)
