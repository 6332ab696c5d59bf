"""System V IPC: a shared segment seen across fork, semaphores that block
and IPC_NOWAIT, message queues by type. Prints one line per check;
tests/e2e/test_ipc.sh compares the output inside with the native one."""
import ctypes, os, struct, time, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
IPC_PRIVATE, IPC_CREAT, IPC_RMID, IPC_NOWAIT = 0, 0o1000, 0, 0o4000
shm = libc.shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0o600)
p = libc.shmat(shm, None, 0)
ctypes.memmove(p, b"hello", 5)
pid = os.fork()
if pid == 0:
    ctypes.memmove(p + 5, b" world", 6); os._exit(0)
os.waitpid(pid, 0)
print(ctypes.string_at(p, 11))
ds = ctypes.create_string_buffer(128); libc.shmctl(shm, 2, ds)  # IPC_STAT
print(libc.shmdt(ctypes.c_void_p(p)), libc.shmctl(shm, IPC_RMID, None))
# semaphores
sem = libc.semget(IPC_PRIVATE, 1, IPC_CREAT | 0o600)
class sembuf(ctypes.Structure): _fields_ = [("num", ctypes.c_ushort), ("op", ctypes.c_short), ("flg", ctypes.c_short)]
print("setval", libc.semctl(sem, 0, 16, 0))   # SETVAL 0
print("nowait", libc.semop(sem, ctypes.byref(sembuf(0, -1, IPC_NOWAIT)), 1), ctypes.get_errno() == errno.EAGAIN)
pid = os.fork()
if pid == 0:
    time.sleep(0.3); libc.semop(sem, ctypes.byref(sembuf(0, 1, 0)), 1); os._exit(0)
t0 = time.monotonic(); libc.semop(sem, ctypes.byref(sembuf(0, -1, 0)), 1); print("waited", time.monotonic() - t0 > 0.2)
os.waitpid(pid, 0); print("getval", libc.semctl(sem, 0, 12))  # GETVAL
libc.semctl(sem, 0, IPC_RMID)
# messages
q = libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600)
for ty, text in ((2, b"two"), (1, b"one")):
    m = struct.pack("l", ty) + text; libc.msgsnd(q, m, len(text), 0)
buf = ctypes.create_string_buffer(64)
n = libc.msgrcv(q, buf, 56, 1, 0); print("type1", buf.raw[8:8+n])
n = libc.msgrcv(q, buf, 56, 0, 0); print("any", buf.raw[8:8+n])
print("empty", libc.msgrcv(q, buf, 56, 0, IPC_NOWAIT), ctypes.get_errno() == errno.ENOMSG)
libc.msgctl(q, IPC_RMID, None)
