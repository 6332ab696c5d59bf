"""loop.sock_sendfile of a large file to a loopback peer (AF_UNIX and TCP)
that reads 300 000 bytes and closes: the transfer fails with EPIPE or
ECONNRESET (which of the two is the scheduler's), and a peer that reads
everything gets every byte (test_sockets.sh). argv[1]: the file, made
when it does not exist."""
import asyncio
import hashlib
import os
import socket
import sys

SIZE = 16 << 20


def pair(family):
    if family == socket.AF_UNIX:
        return socket.socketpair()
    srv = socket.socket(family)
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    a = socket.create_connection(srv.getsockname())
    b, _ = srv.accept()
    srv.close()
    return a, b


async def run(family, path, early):
    loop = asyncio.get_running_loop()
    a, b = pair(family)
    a.setblocking(False)
    b.setblocking(False)

    async def reader():
        h, got = hashlib.sha256(), 0
        while not early or got < 300000:
            d = await loop.sock_recv(b, 65536)
            if not d:
                break
            h.update(d)
            got += len(d)
        b.close()
        return h.hexdigest(), got

    rt = asyncio.ensure_future(reader())
    with open(path, "rb") as f:
        try:
            n = await asyncio.wait_for(loop.sock_sendfile(a, f), 30)
            res = "sent %d" % n
        except (BrokenPipeError, ConnectionResetError):
            res = "peer gone"
        finally:
            a.close()
    digest, got = await rt
    with open(path, "rb") as f:
        want = hashlib.sha256(f.read()).hexdigest()
    return res, (got >= 300000) if early else (digest == want)


path = sys.argv[1]
if not os.path.exists(path):
    with open(path, "wb") as f:
        f.write(os.urandom(1 << 20) * (SIZE >> 20))
for fam in (socket.AF_UNIX, socket.AF_INET):
    for early in (True, False):
        print(fam.name, "closes early" if early else "reads all",
              *asyncio.run(run(fam, path, early)))
