#!/usr/bin/env python3
"""Guest side of tests/escape/test_host_fds.sh: make the sentry hold as
many host objects as a guest can, report, then wait to be told to stop.

  host_fds.py small N      N one-byte files in /tmp
  host_fds.py large N      N files of 100 KiB in /tmp (in the store)
  host_fds.py opens        every regular file under /usr, held open

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
