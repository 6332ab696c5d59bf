#!/usr/bin/env bash
# Terminals: `moat do -t` gives the command a pty of the sandbox's own,
# relayed to the caller's terminal; guests make ptys of their own.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

t_interactive_bash()
{
	capture timeout 60 $PY "$HERE/tty_driver.py" "$MOAT"
	assert_eq "prompt ok
command ok
ctrl-c ok
ctrl-z ok
fg, ctrl-c ok
winsize ok
exit ok" "$OUT" "an interactive bash under -t: a command, Ctrl-C, Ctrl-Z and fg, a resize, exit 3"
}

t_guest_ptys()
{
	capture moat do -- $PY -c '
import os, pty, termios
m, s = os.openpty()
print(os.ttyname(s), os.isatty(m), sorted(os.listdir("/dev/pts")))
os.write(m, b"line\n"); print(os.read(s, 100))
os.write(s, b"out\n"); print(os.read(m, 100))
t = termios.tcgetattr(s); t[3] &= ~(termios.ICANON | termios.ECHO); termios.tcsetattr(s, termios.TCSANOW, t)
os.write(m, b"ab"); print(os.read(s, 10), flush=True)
pid, fd = pty.fork()
if pid == 0:
    print("child", os.ttyname(0), os.getsid(0) == os.getpid(), os.tcgetpgrp(0) == os.getpid(), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
print(os.read(fd, 100))
try:
    os.read(fd, 100)
except OSError as e:
    print("EIO" if e.errno == 5 else e)
try:
    open("/dev/tty")
except OSError as e:
    print("no ctty", e.errno)'
	assert_eq "/dev/pts/0 True ['0', 'ptmx']
b'line\n'
b'line\r\nout\r\n'
b'ab'
b'child /dev/pts/1 True True\r\n'
EIO
no ctty 6" "$OUT" "openpty, canonical and raw reads, echo, forkpty's controlling terminal"
}

# /dev/ptmx is a link to pts/ptmx, as in runc's containers and on hosts
# that mount devpts with newinstance: posix_openpt(3) opens it through
# the link, and /dev/pts/ptmx itself is a master too.
t_ptmx_is_a_link_to_pts()
{
	cat >"$E2E_TMP/ptmx.py" <<'PY'
import ctypes, os, stat
libc = ctypes.CDLL(None)
libc.ptsname.restype = ctypes.c_char_p
print(os.readlink("/dev/ptmx"), stat.S_ISLNK(os.lstat("/dev/ptmx").st_mode))
st = os.stat("/dev/pts/ptmx")
print(oct(stat.S_IMODE(st.st_mode)), stat.S_ISCHR(st.st_mode),
      os.major(st.st_rdev), os.minor(st.st_rdev))
for path in ("/dev/ptmx", "/dev/pts/ptmx"):
    m = libc.posix_openpt(os.O_RDWR | os.O_NOCTTY)
    if path != "/dev/ptmx":
        os.close(m)
        m = os.open(path, os.O_RDWR | os.O_NOCTTY)
    libc.grantpt(m), libc.unlockpt(m)
    name = libc.ptsname(m).decode()
    s = os.open(name, os.O_RDWR | os.O_NOCTTY)
    os.write(s, b"hi\n")
    print(path, name.startswith("/dev/pts/"), os.read(m, 10))
PY
	capture moat do -- $PY "$E2E_TMP/ptmx.py"
	assert_eq "pts/ptmx True
0o666 True 5 2
/dev/ptmx True b'hi\r\n'
/dev/pts/ptmx True b'hi\r\n'" "$OUT" "/dev/ptmx links to pts/ptmx; both open a master: $ERR"
}

# A master written to while its slave reads nothing: the input queue fills
# and drops what does not fit, as n_tty does; it never writes past its
# record table (a full table once wrote a record over its own count).
t_pty_full_input_queue_drops_lines()
{
	capture moat do -- $PY -c '
import errno, fcntl, os
def drain(s):
    got = []
    while True:
        try:
            got.append(os.read(s, 100))
        except OSError as e:
            assert e.errno == errno.EAGAIN, e
            return got
m, s = os.openpty()
fcntl.fcntl(s, fcntl.F_SETFL, os.O_NONBLOCK)
for i in range(300):
    os.write(m, b"a\n")
got = drain(s)
print(len(got), set(got))
for i in range(3000):
    os.write(m, b"a\n")
got = drain(s)
print(len(got) >= 2048, set(got))
os.write(m, b"\x04" * 5000)
got = drain(s)
print(len(got) >= 256, set(got))
os.write(m, b"still\n")
print(drain(s))'
	assert_eq "300 {b'a\n'}
True {b'a\n'}
True {b''}
[b'still\n']" "$OUT" "300 lines queued unread all reach the slave; a flood is cut at the queue's size, never corrupts it"
}

# A controlling terminal freed (every master and slave closed) is no
# longer the session's: /dev/tty fails ENXIO, and never opens the pty
# that later takes the same number, in another session.
t_pty_freed_ctty_is_not_reused()
{
	capture moat do -- $PY -c '
import fcntl, os, signal, struct
TIOCSPTLCK, TIOCGPTN = 0x40045431, 0x80045430
r, w = os.pipe()      # the new session: its pty is made
r2, w2 = os.pipe()    # the old one: it tried /dev/tty
if os.fork() == 0:
    os.setsid()
    m = os.open("/dev/ptmx", os.O_RDWR)
    fcntl.ioctl(m, TIOCSPTLCK, struct.pack("i", 0))
    n = struct.unpack("i", fcntl.ioctl(m, TIOCGPTN, b"xxxx"))[0]
    s = os.open("/dev/pts/%d" % n, os.O_RDWR)      # becomes its ctty
    os.close(os.open("/dev/tty", os.O_RDWR))
    print("ctty", flush=True)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)   # the hangup of the close
    os.close(s)
    os.close(m)
    if os.fork() == 0:
        os.setsid()                                # another session
        m2 = os.open("/dev/ptmx", os.O_RDWR)
        fcntl.ioctl(m2, TIOCSPTLCK, struct.pack("i", 0))
        n2 = struct.unpack("i", fcntl.ioctl(m2, TIOCGPTN, b"xxxx"))[0]
        print("same number", n2 == n, flush=True)
        os.write(w, b"x")
        os.read(r2, 1)
        os._exit(0)
    os.read(r, 1)
    try:
        os.open("/dev/tty", os.O_RDWR)
        print("opened another session'"'"'s pty", flush=True)
    except OSError as e:
        print("ENXIO" if e.errno == 6 else e, flush=True)
    os.write(w2, b"x")
    os.wait()
    os._exit(0)
os.wait()'
	assert_eq "ctty
same number True
ENXIO" "$OUT" "a freed controlling terminal is gone for its session"
}

# Job control on a controlling terminal (Linux's __tty_check_change): a
# background reader that ignores or blocks SIGTTIN, or whose group is
# orphaned, reads EIO (it used to be restarted for ever); with TOSTOP a
# background writer that ignores SIGTTOU writes.
t_pty_background_read_eio()
{
	capture moat do -- $PY -c '
import fcntl, os, signal, struct, termios, time
TIOCSPTLCK, TIOCGPTN = 0x40045431, 0x80045430
m = os.open("/dev/ptmx", os.O_RDWR)
fcntl.ioctl(m, TIOCSPTLCK, struct.pack("i", 0))
n = struct.unpack("i", fcntl.ioctl(m, TIOCGPTN, b"xxxx"))[0]
os.write(m, b"line\n")
def job(fn):
    # fn, run in a background group of the session
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        signal.alarm(5)          # a busy restart loop dies here, not the test
        try:
            print(fn(), flush=True)
        except OSError as e:
            print(os.strerror(e.errno), flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
if os.fork() == 0:
    os.setsid()
    s = os.open("/dev/pts/%d" % n, os.O_RDWR)
    t = termios.tcgetattr(s); t[3] |= termios.TOSTOP
    termios.tcsetattr(s, termios.TCSANOW, t)
    def ign_read():
        signal.signal(signal.SIGTTIN, signal.SIG_IGN)
        return os.read(s, 10)
    def blocked_read():
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTTIN])
        return os.read(s, 10)
    def ign_write():
        signal.signal(signal.SIGTTOU, signal.SIG_IGN)
        return os.write(s, b"bg\n")
    job(ign_read)
    job(blocked_read)
    job(ign_write)
    # an orphaned group: the parent of its only member has gone
    if os.fork() == 0:
        os.setpgid(0, 0)
        if os.fork() == 0:
            time.sleep(0.5)
            signal.alarm(5)
            try:
                os.read(s, 10)
                print("read")
            except OSError as e:
                print("orphaned", os.strerror(e.errno), flush=True)
            os._exit(0)
        os._exit(0)
    os.wait()
    time.sleep(1.5)
    os._exit(0)
os.wait()
print(os.read(m, 100))'
	assert_eq "Input/output error
Input/output error
3
orphaned Input/output error
b'line\r\nbg\r\n'" "$OUT" "background reads that cannot stop fail EIO; an ignored SIGTTOU lets the write through"
}

run_test interactive_bash t_interactive_bash
run_test guest_ptys t_guest_ptys
run_test ptmx_is_a_link_to_pts t_ptmx_is_a_link_to_pts
run_test pty_full_input_queue_drops_lines t_pty_full_input_queue_drops_lines
run_test pty_freed_ctty_is_not_reused t_pty_freed_ctty_is_not_reused
run_test pty_background_read_eio t_pty_background_read_eio
