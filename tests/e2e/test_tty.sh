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

run_test interactive_bash t_interactive_bash
run_test guest_ptys t_guest_ptys
