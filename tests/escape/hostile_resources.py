"""Requests that once broke the sentry: each must end with the error Linux
gives, and the sentry must live on to print the last line."""
import ctypes, errno, fcntl, os, resource, signal, struct, sys, time

libc = ctypes.CDLL(None, use_errno=True)
IPC_PRIVATE, IPC_NOWAIT, IPC_CREAT = 0, 0o4000, 0o1000


def err():
    return errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno())


# setitimer with an interval so large that it overflowed to a negative
# number of nanoseconds, and the timer loop never advanced
class timeval(ctypes.Structure):
    _fields_ = [("s", ctypes.c_long), ("us", ctypes.c_long)]


class itimerval(ctypes.Structure):
    _fields_ = [("interval", timeval), ("value", timeval)]


signal.signal(signal.SIGALRM, lambda *a: None)
it = itimerval(timeval(9223372037, 0), timeval(0, 1000))
print("setitimer", libc.setitimer(0, ctypes.byref(it), None))
time.sleep(0.05)
it = itimerval(timeval(0, 0), timeval(0, 0))
libc.setitimer(0, ctypes.byref(it), None)
print("after the timer fired: alive")

# zero-length messages are messages: a queue holds at most msg_qbytes
q = libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600)
buf = ctypes.create_string_buffer(struct.pack("l", 1), 16)
n = 0
while libc.msgsnd(q, buf, 0, IPC_NOWAIT) == 0:
    n += 1
    if n > 20000:
        break
print("zero-length msgsnd stops after", n, err())
# msgrcv with type LONG_MIN: the lowest type of all
r = libc.msgrcv(q, buf, ctypes.c_size_t(0), ctypes.c_long(-(1 << 63)), IPC_NOWAIT)
print("msgrcv LONG_MIN", r)
libc.msgctl(q, 0, None)  # IPC_RMID

# timerfd_create failing with EMFILE once freed its timer twice
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
fds = []
while True:
    fd = libc.timerfd_create(1, 0)
    if fd < 0:
        break
    fds.append(fd)
print("timerfd_create ends with", err())
for fd in fds:
    os.close(fd)
resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
fd = libc.timerfd_create(1, 0)
print("and works again", fd >= 0)
print("sentry alive")
