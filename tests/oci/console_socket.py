#!/usr/bin/python3
"""An engine's --console-socket, as tests/oci's cases need one:

    console_socket.py SOCK UNTIL

listens on SOCK, takes the pty master the runtime sends, and prints what
the container writes to its terminal until that matches the regular
expression UNTIL, the terminal closes, or 20 s pass."""
import array
import os
import re
import socket
import sys
import time

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1])
s.listen(1)
c, _ = s.accept()
fds = array.array("i")
_, anc, _, _ = c.recvmsg(64, socket.CMSG_SPACE(4))
for level, typ, data in anc:
    fds.frombytes(data[:4])
until = re.compile(sys.argv[2].encode())
out = b""
end = time.time() + 20
while time.time() < end and not until.search(out):
    try:
        d = os.read(fds[0], 4096)
    except OSError:
        break
    if not d:
        break
    out += d
print(out.decode(errors="replace"))
