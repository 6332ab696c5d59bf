"""POSIX message queues made and filled until the limits: each ends with
the error Linux gives, nothing is lost or leaked on the way, and the
sentry lives on to print the last line. With "raised", the guest first
lifts its RLIMIT_MSGQUEUE as far as it may (only the sandbox lets root do
so), and the limits that remain must still bound it."""
import ctypes, errno, os, resource, select, sys

rt = ctypes.CDLL("librt.so.1", use_errno=True)
rt.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                       ctypes.c_void_p]
rt.mq_unlink.argtypes = [ctypes.c_char_p]
rt.mq_send.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t,
                       ctypes.c_uint]
rt.mq_receive.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t,
                          ctypes.c_void_p]
RAISED = len(sys.argv) > 1 and sys.argv[1] == "raised"


class attr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long),
                ("msgsize", ctypes.c_long), ("curmsgs", ctypes.c_long),
                ("pad", ctypes.c_long * 4)]


def err():
    return errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno())


def mq_open(name, flags=os.O_CREAT | os.O_RDWR, maxmsg=0, msgsize=0):
    a = attr(0, maxmsg, msgsize, 0) if maxmsg else None
    return rt.mq_open(name.encode(), flags, 0o666,
                      ctypes.byref(a) if a else None)


def fill(prefix, maxmsg=0, msgsize=0, most=100000):
    fds = []
    while len(fds) < most:
        fd = mq_open("/%s%d" % (prefix, len(fds)), maxmsg=maxmsg,
                     msgsize=msgsize)
        if fd < 0:
            break
        fds.append(fd)
    return fds, err()


def drop(prefix, fds):
    for i, fd in enumerate(fds):
        os.close(fd)
        rt.mq_unlink(("/%s%d" % (prefix, i)).encode())


# RLIMIT_MSGQUEUE counts per real uid, across IPC namespaces: a real uid
# of this run's own (root still, by the effective one) keeps other queues
# of the host's root out of the count.
os.setresuid(40000 + os.getpid() % 20000, 0, 0)
if RAISED:
    resource.setrlimit(resource.RLIMIT_MSGQUEUE,
                       (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

# as many of the smallest queues as the namespace takes: queues_max
fds, e = fill("tiny", 1, 1)
print("tiny queues:", len(fds), e)
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    os.setgid(4242)
    os.setuid(4242)
    fd = mq_open("/other")
    print("another user, then:", fd, err())
    sys.stdout.flush()
    os._exit(0)
os.waitpid(pid, 0)
# unlinked but open, a queue still counts
for i in range(len(fds)):
    rt.mq_unlink(("/tiny%d" % i).encode())
print("unlinked, still open:", mq_open("/more"), err())
for fd in fds:
    os.close(fd)
fd = mq_open("/more")
print("all closed:", fd >= 0)
os.close(fd)
rt.mq_unlink(b"/more")

# the largest queues, until RLIMIT_MSGQUEUE (or queues_max) says no
fds, e = fill("big", 10, 8192)
print("largest queues:", len(fds), e)
buf = ctypes.create_string_buffer(b"m" * 8192, 8192)
sent = 0
for fd in fds:
    os.set_blocking(fd, False)
    while rt.mq_send(fd, buf, 8192, 1) == 0:
        sent += 1
print("8 KiB messages queued:", sent, err())
print("a bad buffer:", rt.mq_send(fds[0], 1, 1, 0), err())
got = 0
for fd in fds:
    while rt.mq_receive(fd, buf, 8192, None) == 8192:
        got += 1
print("received back:", got, err())
drop("big", fds)

# blocked receivers in many processes: every one is woken, none twice
q = mq_open("/wake", maxmsg=10, msgsize=8)
kids = []
for i in range(20):
    r, w = os.pipe()
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        b = ctypes.create_string_buffer(8)
        n = rt.mq_receive(q, b, 8, None)
        os.write(w, b"1" if n == 1 else b"0")
        os._exit(0)
    os.close(w)
    kids.append((pid, r))
ok = 0
for i in range(20):
    while rt.mq_send(q, b"x", 1, 0) != 0:
        select.select([], [], [], 0.01)
for pid, r in kids:
    ok += os.read(r, 1) == b"1"
    os.close(r)
    os.waitpid(pid, 0)
print("woken receivers:", ok, "left:", os.pread(q, 80, 0).split()[0].decode())
os.close(q)
rt.mq_unlink(b"/wake")
print("sentry alive")
