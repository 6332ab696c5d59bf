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
	assert_eq "/dev/pts/0 True ['0']
b'line\n'
b'line\r\nout\r\n'
b'ab'
b'child /dev/pts/1 True True\r\n'
EIO
no ctty 6" "$OUT" "openpty, canonical and raw reads, echo, forkpty's controlling terminal"
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

run_test interactive_bash t_interactive_bash
run_test guest_ptys t_guest_ptys
run_test pty_full_input_queue_drops_lines t_pty_full_input_queue_drops_lines
