"""/proc/sys against what the system does. Prints one line per check.

  proc_sys.py agree   checks that hold on any Linux, for any user:
                      tests/e2e/test_proc_dev.sh compares the output
                      inside with the native one.
  proc_sys.py limits  the sandbox's limits, tried where the sentry
                      enforces them (needs root: the guest's uid 0);
                      every line must end in "ok".
"""
import ctypes, errno, fcntl, os, socket, stat, sys

libc = ctypes.CDLL(None, use_errno=True)
libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
libc.msgsnd.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
IPC_PRIVATE, IPC_CREAT, IPC_RMID, IPC_NOWAIT, IPC_INFO = 0, 0o1000, 0, 0o4000, 3
PR_CAPBSET_READ, F_SETPIPE_SZ, NOBODY = 23, 1031, 65534


def rd(rel):
    with open("/proc/sys/" + rel) as f:
        return f.read()


def num(rel):
    return int(rd(rel))


def check(name, cond, detail=""):
    print(name, "ok" if cond else "BAD %s" % (detail,), flush=True)


def call(f, *a):
    """f(*a), and errno when it returned -1."""
    r = f(*a)
    return r, ctypes.get_errno() if r == -1 else 0


def as_nobody(fn):
    """fn() in a child that dropped to nobody (when root): its bool."""
    pid = os.fork()
    if pid == 0:
        ok = False
        try:
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            ok = fn()
        finally:
            os._exit(0 if ok else 1)
    return os.waitpid(pid, 0)[1] == 0


def is_uuid4(s):
    p = s.strip().split("-")
    return (len(s) == 37 and s.endswith("\n") and [len(x) for x in p] == [8, 4, 4, 4, 12]
            and all(c in "0123456789abcdef" for c in "".join(p))
            and p[2][0] == "4" and p[3][0] in "89ab")


def agree():
    u = os.uname()
    check("hostname is uname's", rd("kernel/hostname") == u.nodename + "\n")
    check("osrelease is uname's", rd("kernel/osrelease") == u.release + "\n")
    check("version is uname's", rd("kernel/version") == u.version + "\n")
    check("ostype", rd("kernel/ostype") == "Linux\n")
    check("sysconf(NGROUPS_MAX) is ngroups_max",
          os.sysconf("SC_NGROUPS_MAX") == num("kernel/ngroups_max"))

    last = num("kernel/cap_last_cap")
    r1 = call(libc.prctl, PR_CAPBSET_READ, last, 0, 0, 0)
    r2 = call(libc.prctl, PR_CAPBSET_READ, last + 1, 0, 0, 0)
    check("PR_CAPBSET_READ knows caps up to cap_last_cap",
          r1 == (1, 0) and r2 == (-1, errno.EINVAL), (last, r1, r2))

    # IPC_INFO reports what the sysctls say (Linux: the same variables)
    si = (ctypes.c_ulong * 9)()
    libc.shmctl(0, IPC_INFO, si)
    check("IPC_INFO shm is shmmax shmmni shmall",
          (si[0], si[2], si[4]) == (num("kernel/shmmax"), num("kernel/shmmni"),
                                    num("kernel/shmall")), list(si))
    mi = (ctypes.c_int * 8)()
    libc.msgctl(0, IPC_INFO, mi)
    check("IPC_INFO msg is msgmax msgmnb msgmni",
          (mi[2], mi[3], mi[4]) == (num("kernel/msgmax"), num("kernel/msgmnb"),
                                    num("kernel/msgmni")), list(mi))
    se = (ctypes.c_int * 10)()
    libc.semctl(0, 0, IPC_INFO, se)
    check("IPC_INFO sem is sem's SEMMSL SEMMNS SEMOPM SEMMNI",
          [se[4], se[2], se[5], se[1]] == [int(x) for x in rd("kernel/sem").split()],
          list(se))

    # sockets: buffers and the ports a bind to 0 and a connect take
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    check("a UDP socket's SO_RCVBUF is rmem_default",
          s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) == num("net/core/rmem_default"))
    check("a UDP socket's SO_SNDBUF is wmem_default",
          s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) == num("net/core/wmem_default"))
    s.close()
    lo, hi = (int(x) for x in rd("net/ipv4/ip_local_port_range").split())
    ports, socks = [], []
    for typ in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        for _ in range(16):
            s = socket.socket(socket.AF_INET, typ)
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
            socks.append(s)
    l = socket.socket()
    l.bind(("127.0.0.1", 0))
    l.listen(1)
    c = socket.create_connection(l.getsockname())
    ports.append(c.getsockname()[1])
    check("ephemeral ports are in ip_local_port_range",
          all(lo <= p <= hi for p in ports), (lo, hi, ports))
    for s in socks + [l, c]:
        s.close()

    a, b = rd("kernel/random/uuid"), rd("kernel/random/uuid")
    check("random/uuid: a new UUID each read", is_uuid4(a) and is_uuid4(b) and a != b, (a, b))
    a, b = rd("kernel/random/boot_id"), rd("kernel/random/boot_id")
    check("random/boot_id: one UUID", is_uuid4(a) and a == b, (a, b))

    # read-only ones, on Linux too (mode 0444): root cannot write them
    for rel in ("kernel/cap_last_cap", "kernel/ngroups_max", "fs/file-nr",
                "kernel/random/boot_id"):
        try:
            os.close(os.open("/proc/sys/" + rel, os.O_WRONLY))
            check("write to " + rel, False, "opened")
        except OSError as e:
            check("write to " + rel, e.errno == errno.EACCES, e)
        check("access(W_OK) of " + rel, not os.access("/proc/sys/" + rel, os.W_OK))


def every_file():
    for d, dirs, files in os.walk("/proc/sys"):
        for n in dirs:
            yield os.path.join(d, n), True
        for n in files:
            yield os.path.join(d, n), False


def limits():
    # every entry read-only, for root too, and nothing can be made
    modes, writes = [], []
    for path, isdir in every_file():
        st = os.stat(path)
        want = (stat.S_IFDIR | 0o555) if isdir else (stat.S_IFREG | 0o444)
        if st.st_mode != want or st.st_uid != 0:
            modes.append((path, oct(st.st_mode), st.st_uid))
        if isdir:
            continue
        for flags in (os.O_WRONLY, os.O_RDWR, os.O_WRONLY | os.O_TRUNC):
            try:
                os.close(os.open(path, flags))
                writes.append((path, flags, "opened"))
            except OSError as e:
                if e.errno != errno.EACCES:
                    writes.append((path, flags, e.errno))
        if os.access(path, os.W_OK):
            writes.append((path, "access W_OK"))
    check("files 0444, directories 0555, root's", not modes, modes)
    check("every write is EACCES", not writes, writes)
    made = []
    for f in (lambda: os.close(os.open("/proc/sys/kernel/new", os.O_CREAT | os.O_WRONLY)),
              lambda: os.mkdir("/proc/sys/kernel/newdir"),
              lambda: os.unlink("/proc/sys/kernel/hostname"),
              lambda: os.rename("/proc/sys/kernel/hostname", "/proc/sys/kernel/h")):
        try:
            f()
            made.append("succeeded")
        except OSError as e:
            pass
    check("nothing made, removed or renamed", not made, made)
    check("a non-root write is EACCES", as_nobody(lambda: not os.access(
        "/proc/sys/kernel/pid_max", os.W_OK)))

    # capabilities: root has them all, up to cap_last_cap
    last = num("kernel/cap_last_cap")
    full = (1 << (last + 1)) - 1
    bnd = [int(l.split()[1], 16) for l in open("/proc/self/status") if l.startswith("CapBnd:")]
    check("CapBnd ends at cap_last_cap", bnd == [full], (last, bnd))
    hdr = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    libc.capget(hdr, data)
    check("capget's effective set ends at cap_last_cap",
          data[0] | (data[3] << 32) == full, [hex(x) for x in data])

    ng = num("kernel/ngroups_max")
    def groups():
        os.setgroups(list(range(1, ng + 1)))
        try:
            os.setgroups(list(range(1, ng + 2)))
            return False
        except OSError as e:
            return e.errno == errno.EINVAL and len(os.getgroups()) == ng
    pid = os.fork()
    if pid == 0:
        os._exit(0 if groups() else 1)
    check("setgroups takes ngroups_max groups, no more", os.waitpid(pid, 0)[1] == 0)

    start = num("net/ipv4/ip_unprivileged_port_start")
    def ports():
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", start - 1))
            return False
        except OSError as e:
            if e.errno != errno.EACCES:
                return False
        s.bind(("127.0.0.1", start))
        return True
    check("a non-root bind below ip_unprivileged_port_start is EACCES", as_nobody(ports))

    pmax = num("fs/pipe-max-size")
    def pipes():
        r, w = os.pipe()
        if fcntl.fcntl(w, F_SETPIPE_SZ, pmax) != pmax:
            return False
        try:
            fcntl.fcntl(w, F_SETPIPE_SZ, pmax + 1)
            return False
        except OSError as e:
            return e.errno == errno.EPERM
    check("F_SETPIPE_SZ up to pipe-max-size, EPERM past it", as_nobody(pipes))

    shmmax = num("kernel/shmmax")
    a = call(libc.shmget, IPC_PRIVATE, shmmax, IPC_CREAT | 0o600)
    b = call(libc.shmget, IPC_PRIVATE, shmmax + 1, IPC_CREAT | 0o600)
    check("shmget up to shmmax, EINVAL past it", a[0] >= 0 and b == (-1, errno.EINVAL), (a, b))
    # shmall is shmmax's pages: with that segment, nothing more fits
    b = call(libc.shmget, IPC_PRIVATE, 4096, IPC_CREAT | 0o600)
    check("shmget past shmall is ENOSPC",
          num("kernel/shmall") * 4096 == shmmax and b == (-1, errno.ENOSPC), b)
    if a[0] >= 0:
        libc.shmctl(a[0], IPC_RMID, None)
    semmsl = int(rd("kernel/sem").split()[0])
    a = call(libc.semget, IPC_PRIVATE, semmsl, IPC_CREAT | 0o600)
    b = call(libc.semget, IPC_PRIVATE, semmsl + 1, IPC_CREAT | 0o600)
    if a[0] >= 0:
        libc.semctl(a[0], 0, IPC_RMID)
    check("semget up to SEMMSL, EINVAL past it", a[0] >= 0 and b == (-1, errno.EINVAL), (a, b))
    msgmax = num("kernel/msgmax")
    q = libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600)
    buf = ctypes.create_string_buffer(8 + msgmax + 1)
    ctypes.c_long.from_buffer(buf).value = 1
    a = call(libc.msgsnd, q, buf, msgmax, IPC_NOWAIT)
    b = call(libc.msgsnd, q, buf, msgmax + 1, IPC_NOWAIT)
    libc.msgctl(q, IPC_RMID, None)
    check("msgsnd up to msgmax, EINVAL past it", a == (0, 0) and b == (-1, errno.EINVAL), (a, b))

    inst = num("fs/inotify/max_user_instances")
    fds = []
    while len(fds) <= inst:
        fd, e = call(libc.inotify_init1, os.O_CLOEXEC)
        if fd < 0:
            break
        fds.append(fd)
    for fd in fds:
        os.close(fd)
    check("inotify_init up to max_user_instances, then EMFILE",
          len(fds) == inst and e == errno.EMFILE, (len(fds), e))

    before = int(rd("fs/file-nr").split()[0])
    fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(10)]
    after = int(rd("fs/file-nr").split()[0])
    for fd in fds:
        os.close(fd)
    check("file-nr counts the sandbox's open files", after - before == 10, (before, after))
    check("file-nr's maximum is file-max",
          rd("fs/file-nr").split()[2] == rd("fs/file-max").strip())

    check("ptrace is refused (yama/ptrace_scope 3)",
          num("kernel/yama/ptrace_scope") == 3 and call(libc.ptrace, 0, 0, 0, 0) == (-1, errno.EPERM))
    for rel, want in (("kernel/pid_max", "4194304"), ("net/core/somaxconn", "4096"),
                      ("kernel/random/entropy_avail", "256"), ("kernel/random/poolsize", "256"),
                      ("net/ipv4/ping_group_range", "0\t2147483647")):
        check(rel, rd(rel) == want + "\n", repr(rd(rel)))


{"agree": agree, "limits": limits}[sys.argv[1]]()
