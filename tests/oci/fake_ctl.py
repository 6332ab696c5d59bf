#!/usr/bin/env python3
"""A sentry that lies, on a container's control socket
(tests/oci/test_lifecycle.sh, ps_names_only_the_containers).

    fake_ctl.py ADDR PS_REPLY_FILE

Listens on the socket file ADDR; answers "state" with "running", "ps"
with the bytes PS_REPLY_FILE holds then (a lie, a cut-off answer),
"kill ..." with a cut-off "o", anything else with "error: fake"; but
"kill ..." and "state" with what PS_REPLY_FILE.kill and .state hold when
they exist, and with "dribble" there: "running", a byte every 2 s.
Prints "ready" once it listens; runs until killed.
"""
import os
import socket
import sys
import time


def override(ps_file, what):
    """What PS_REPLY_FILE.what holds, or None."""
    try:
        return open(ps_file + "." + what, "rb").read()
    except OSError:
        return None


def main():
    addr, ps_file = sys.argv[1:3]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(addr)
    os.chmod(addr, 0o600)
    s.listen(8)
    print("ready", flush=True)
    while True:
        c, _ = s.accept()
        c.settimeout(2)
        req = b""
        try:
            while not req.endswith(b"\n"):
                d = c.recv(4096)
                if not d:
                    break
                req += d
        except socket.timeout:
            pass
        what = req.split(b" ")[0].strip().decode(errors="replace")
        out = override(ps_file, what) if what in ("kill", "state") else None
        if out == b"dribble":
            try:
                for b in b"running\n":
                    c.send(bytes([b]))
                    time.sleep(2)
            except OSError:
                pass
            c.close()
            continue
        if out is not None:
            pass
        elif req == b"state\n":
            out = b"running\n"
        elif req == b"ps\n":
            out = open(ps_file, "rb").read()
        elif req.startswith(b"kill "):
            out = b"o"
        else:
            out = b"error: fake\n"
        try:
            c.sendall(out)
        except OSError:
            pass
        c.close()


main()
