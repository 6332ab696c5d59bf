#!/usr/bin/env python3
"""A stand-in for a sandbox's control socket (tests/escape/test_control_socket.sh).

    ctl_peer.py MODE ADDR LOG [--as UID]

ADDR is a socket file, or @NAME for the abstract name NAME. MODE:
    stale    bind ADDR and exit without removing it: what a killed server
             leaves behind
    squat    listen, answer nothing
    answer   listen, answer "ok" to every request (a fake sandbox)
Every connection is logged to LOG as one line, "connection" and the
bytes it sent (what an impostor would have received). --as UID: bound as
the caller (root), then listening as UID: a server of another user (a
socket's SO_PEERCRED is who called listen). "ready" on stdout once it
listens.
"""
import os
import socket
import sys


def main():
    mode, addr, log = sys.argv[1:4]
    uid = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--as" else None
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
    if mode == "stale":
        os._exit(0)
    out = open(log, "ab", buffering=0)
    if uid is not None:
        os.chmod(addr, 0o777)
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    s.listen(8)
    print("ready", flush=True)
    while True:
        c, _ = s.accept()
        c.settimeout(1)
        data = b""
        try:
            while True:
                d = c.recv(65536)
                if not d:
                    break
                data += d
        except socket.timeout:
            pass
        out.write(b"connection " + repr(data).encode() + b"\n")
        if mode == "answer":
            try:
                c.sendall(b"ok\n")
            except OSError:
                pass
        c.close()


main()
