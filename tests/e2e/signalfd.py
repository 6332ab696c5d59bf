"""signalfd: a blocked signal read as struct signalfd_siginfo, SIGCHLD with
its status, epoll readiness, EAGAIN when empty. tests/e2e/test_signals.sh
compares the output inside with the native one."""
import os, signal, select, struct, time, ctypes
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1, signal.SIGCHLD])
libc = ctypes.CDLL(None, use_errno=True)
mask = ctypes.c_uint64((1 << (signal.SIGUSR1 - 1)) | (1 << (signal.SIGCHLD - 1)))
fd = libc.signalfd(-1, ctypes.byref(mask), 0)
os.kill(os.getpid(), signal.SIGUSR1)
d = os.read(fd, 128); signo, errno_, code, pid = struct.unpack_from("IiiI", d)
print("usr1", signo == signal.SIGUSR1, pid == os.getpid())
p = os.fork()
if p == 0:
    time.sleep(0.2); os._exit(7)
ep = select.epoll(); ep.register(fd, select.EPOLLIN)
print("epoll", len(ep.poll(5)))
d = os.read(fd, 128); signo = struct.unpack_from("I", d)[0]; status = struct.unpack_from("i", d, 40)[0]
print("chld", signo == signal.SIGCHLD, status, struct.unpack_from("I", d, 12)[0] == p)
os.set_blocking(fd, False)
try: os.read(fd, 128)
except BlockingIOError: print("empty")
