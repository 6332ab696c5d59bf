"""Drive `moat do -t -- bash` through a pty of the host's, as a person at
a terminal would: type a command, interrupt one with Ctrl-C, resize the
window, exit. Prints what it saw, one check a line."""
import fcntl, os, pty, select, struct, sys, termios, time

moat = sys.argv[1]
pid, fd = pty.fork()
if pid == 0:
    os.execv(moat, ["moat", "do", "-t", "--", "bash", "--norc",
                    "--noprofile", "-i"])

buf = b""


def until(pat, timeout=20):
    global buf
    end = time.time() + timeout
    while time.time() < end:
        i = buf.find(pat)
        if i >= 0:
            out, buf = buf[:i + len(pat)], buf[i + len(pat):]
            return out
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            try:
                d = os.read(fd, 4096)
            except OSError:
                break
            if not d:
                break
            buf += d
    return None


def check(name, ok):
    print(name, "ok" if ok else "FAILED")


check("prompt", until(b"# ") is not None)
os.write(fd, b"echo hi $((6*7)); tty; [ -t 0 ] && echo inter''active\n")
out = until(b"interactive\r\n")
check("command", out is not None and b"hi 42\r\n" in out
      and b"/dev/pts/" in out)
until(b"# ")
os.write(fd, b"sleep 60; echo sl''ept\n")
time.sleep(1.5)
t0 = time.time()
os.write(fd, b"\x03")
out = until(b"# ")
check("ctrl-c", out is not None and b"slept\r" not in out
      and time.time() - t0 < 10)
os.write(fd, b"sleep 60; echo sl''ept\n")
time.sleep(1.5)
os.write(fd, b"\x1a")
out = until(b"# ")
check("ctrl-z", out is not None and b"Stopped" in out)
os.write(fd, b"jobs -l | wc -l; fg\n")
time.sleep(1.5)
os.write(fd, b"\x03")
out = until(b"# ")
check("fg, ctrl-c", out is not None and b"slept\r" not in out)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 111, 0, 0))
time.sleep(0.5)
os.write(fd, b"stty size\n")
check("winsize", until(b"33 111") is not None)
until(b"# ")
os.write(fd, b"exit 3\n")
until(b"zzz", 3)
_, st = os.waitpid(pid, 0)
check("exit", os.WIFEXITED(st) and os.WEXITSTATUS(st) == 3)
