#!/usr/bin/python3
"""tests/e2e/broker_link.py: plays the sentry's side of prot/broker.h to a
real `moat broker`, for tests/e2e/test_broker.sh.

    broker_link.py MOAT WORKDIR CASE

The case's setup is in the environment (BRK_JSON: the BRK_CONFIG JSON;
BRK_UPCA: the --upstream-ca path; BRK_ENV: NAME=VALUE pairs for the
broker's environment, separated by newlines; BRK_FDVALS: values to give
as fd: sources, in order, separated by newlines). It prints what it saw,
one `key: value` line each, and the shell script asserts on them.
"""
import os
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time

BRK_CONFIG, BRK_CA, BRK_PLACEHOLDER, BRK_READY, BRK_FAIL, BRK_FLOW, \
    BRK_AUDIT, BRK_SECRET, BRK_SECRET_DONE = range(1, 10)
KIND_TLS, KIND_HTTP = 1, 2
FLOW_FMT = "<QiBBH16s256s256sH6x"   # struct brk_flow, 552 bytes
assert struct.calcsize(FLOW_FMT) == 552

moat, work, case = sys.argv[1], sys.argv[2], sys.argv[3]


def say(k, v):
    print(f"{k}: {v}", flush=True)


def send(sock, typ, payload=b"", fds=()):
    msg = struct.pack("<II", typ, len(payload)) + payload
    socket.send_fds(sock, [msg], list(fds))


def recv(sock, timeout=20):
    sock.settimeout(timeout)
    try:
        msg, fds, _, _ = socket.recv_fds(sock, 300000, 8)
    except socket.timeout:
        return None, None, []
    if not msg:
        return 0, b"", fds
    typ, ln = struct.unpack("<II", msg[:8])
    assert ln == len(msg) - 8, "bad length"
    return typ, msg[8:], fds


def start():
    ctl, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    env = {}
    for kv in filter(None, os.environ.get("BRK_ENV", "").split("\n")):
        k, v = kv.split("=", 1)
        env[k] = v
    os.set_inheritable(child.fileno(), True)
    args = [moat, "broker", "--ctl", str(child.fileno()), "--as",
            "65534:65534", "--id", "t1"]
    proc = subprocess.Popen(args, env=env, pass_fds=[child.fileno()])
    child.close()
    fds, keep = [], []
    for v in filter(None, os.environ.get("BRK_FDVALS", "").split("\n")):
        r, w = os.pipe()
        os.write(w, v.encode() + b"\n")
        os.close(w)
        fds.append(r)
        keep.append(r)
    payload = os.environ["BRK_JSON"].encode() + b"\0" + \
        os.environ.get("BRK_UPCA", "").encode()
    send(ctl, BRK_CONFIG, payload, fds)
    for fd in keep:
        os.close(fd)
    placeholders = {}
    while True:
        typ, p, _ = recv(ctl)
        if typ == BRK_CA:
            with open(os.path.join(work, "ca.pem"), "wb") as f:
                f.write(p)
            say("ca", "yes")
        elif typ == BRK_PLACEHOLDER:
            name, ph, rest = p.split(b"\0")
            assert rest == b""
            placeholders[name.decode()] = ph.decode()
            say("placeholder", f"{name.decode()}={ph.decode()}")
        elif typ == BRK_READY:
            say("ready", "yes")
            break
        elif typ == BRK_FAIL:
            say("fail", p.rstrip(b"\0").decode())
            proc.wait(10)
            say("exit", proc.returncode)
            sys.exit(0)
        else:
            say("unexpected", typ)
            sys.exit(1)
    return proc, ctl, placeholders


def status(pid):
    st = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, v = line.split(":", 1)
            st[k] = v.split()
    say("uid", st["Uid"][0])
    say("gid", st["Gid"][0])
    say("nonewprivs", st["NoNewPrivs"][0])
    say("seccomp", st["Seccomp"][0])
    # A process that is not dumpable has the files of its /proc directory
    # owned by root, whatever uid it runs as.
    say("proc_owner", os.stat(f"/proc/{pid}/status").st_uid)
    with open(f"/proc/{pid}/environ", "rb") as f:
        environ = f.read()
    secret = os.environ.get("BRK_SECRET", "")
    say("environ_has_secret", "yes" if secret and
        secret.encode() in environ else "no")
    say("fds", " ".join(sorted(os.listdir(f"/proc/{pid}/fd"))))


def flow_msg(sni, names, kind=KIND_TLS, port=443):
    f = struct.pack(FLOW_FMT, 7, 4242, kind, socket.AF_INET, port,
                    socket.inet_aton("10.0.0.5") + b"\0" * 12,
                    b"/usr/bin/curl", sni.encode(), len(names))
    return f + b"".join(n.encode() + b"\0" for n in names)


def upstream_server(sock, certdir, host, got):
    """A TLS server on the upstream end: records the request, answers it
    with its Authorization header as the body."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(certdir, f"{host}.crt"),
                        os.path.join(certdir, f"{host}.key"))
    ctx.set_alpn_protocols(["h2", "http/1.1"])
    ctx.sni_callback = lambda s, name, c: got.__setitem__("sni", name)
    sock.settimeout(20)
    try:
        s = ctx.wrap_socket(sock, server_side=True)
    except (ssl.SSLError, OSError) as e:
        got["server_error"] = str(e)
        return
    got["alpn"] = s.selected_alpn_protocol()
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    got["request"] = data
    auth = b""
    for line in data.split(b"\r\n"):
        if line.lower().startswith(b"authorization:"):
            auth = line.split(b":", 1)[1].strip()
    body = b"you sent: " + auth + b"\n"
    try:
        s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
                  b"Connection: close\r\n\r\n" % len(body) + body)
        s.unwrap()
    except (ssl.SSLError, OSError):
        pass
    s.close()


def do_flow(ctl, sni, names, server_host, auth, kind=KIND_TLS,
            guest_sni=None, quiet=False, header="Authorization"):
    g_mine, g_theirs = socket.socketpair()
    u_mine, u_theirs = socket.socketpair()
    send(ctl, BRK_FLOW, flow_msg(sni, names, kind),
         [g_theirs.fileno(), u_theirs.fileno()])
    g_theirs.close()
    u_theirs.close()
    got = {}
    if kind == KIND_TLS:
        th = threading.Thread(target=upstream_server,
                              args=(u_mine, work, server_host, got))
    else:
        th = threading.Thread(target=plain_server, args=(u_mine, got))
    th.start()
    req = (f"GET /v1/x HTTP/1.1\r\nHost: {sni or names[0]}\r\n"
           f"{header}: {auth}\r\nConnection: close\r\n\r\n").encode()
    answer = b""
    g_mine.settimeout(20)
    try:
        if kind == KIND_TLS:
            ctx = ssl.create_default_context(
                cafile=os.path.join(work, "ca.pem"))
            ctx.set_alpn_protocols(["h2", "http/1.1"])
            s = ctx.wrap_socket(g_mine, server_hostname=guest_sni or sni)
            say("guest_alpn", s.selected_alpn_protocol())
            cert = s.getpeercert()
            say("guest_cert_san",
                ",".join(v for k, v in cert.get("subjectAltName", ())))
        else:
            s = g_mine
        s.sendall(req)
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
        s.close()
    except (ssl.SSLError, OSError) as e:
        say("guest_error", type(e).__name__ + " " + str(e))
    th.join(20)
    if quiet:
        return answer
    if kind == KIND_TLS:
        say("upstream_sni", got.get("sni"))
        say("upstream_alpn", got.get("alpn"))
    say("upstream_request", repr(got.get("request", b"")))
    if "server_error" in got:
        say("upstream_error", got["server_error"])
    say("guest_answer", repr(answer))
    # the audit records the flow made
    while True:
        typ, p, _ = recv(ctl, timeout=0.5)
        if typ != BRK_AUDIT:
            break
        say("audit", p.rstrip(b"\0").decode())


def plain_server(sock, got):
    data = b""
    sock.settimeout(20)
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    got["request"] = data
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n"
                 b"Connection: close\r\n\r\nok\n")
    sock.close()


proc, ctl, ph = start()
say("pid", proc.pid)
P = next(iter(ph.values()), "")

if case == "start":
    status(proc.pid)
elif case == "flow":
    do_flow(ctl, "api.test", ["api.test"], "api.test", f"Bearer {P}")
elif case == "flow-http":
    # no placeholder: over plain HTTP one would be blocked (the engine)
    do_flow(ctl, "", ["api.test"], None, "Bearer not-a-secret",
            kind=KIND_HTTP)
elif case == "confusion":
    # the ClientHello names a brokered host the address was not resolved
    # from
    do_flow(ctl, "api.test", ["other.test"], "api.test", f"Bearer {P}")
elif case == "untrusted":
    # the upstream's certificate is from a CA the broker does not trust
    do_flow(ctl, "api.test", ["api.test"], "api.test", f"Bearer {P}")
elif case == "blocked":
    # the placeholder in a header its credential does not enable
    do_flow(ctl, "api.test", ["api.test"], "api.test", P, header="X-Other")
elif case == "sni-mismatch":
    # the sentry read one name, the ClientHello the broker gets names
    # another: the handshake fails
    do_flow(ctl, "api.test", ["api.test"], "api.test", f"Bearer {P}",
            guest_sni="other.test")
elif case == "two-flows":
    # a flow whose guest sends nothing holds only its own thread
    g1, g1t = socket.socketpair()
    u1, u1t = socket.socketpair()
    send(ctl, BRK_FLOW, flow_msg("api.test", ["api.test"]),
         [g1t.fileno(), u1t.fileno()])
    g1t.close()
    u1t.close()
    do_flow(ctl, "api.test", ["api.test"], "api.test", f"Bearer {P}")
    g1.close()
    u1.close()
elif case == "parallel":
    # flows at once, each on its own thread in the broker
    answers = []

    def one_flow():
        answers.append(do_flow(ctl, "api.test", ["api.test"], "api.test",
                               f"Bearer {P}", quiet=True))
    ths = [threading.Thread(target=one_flow)
           for _ in range(int(os.environ.get("BRK_PAR", "24")))]
    for t in ths:
        t.start()
    for t in ths:
        t.join(60)
    say("parallel_ok", sum(b"200 OK" in a for a in answers))
elif case == "revoke-closes":
    # an idle keep-alive flow to the secret's host ends at its revoke
    g, gt = socket.socketpair()
    u, ut = socket.socketpair()
    send(ctl, BRK_FLOW, flow_msg("api.test", ["api.test"]),
         [gt.fileno(), ut.fileno()])
    gt.close()
    ut.close()
    up = {}

    def idle_server():
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(work, "api.test.crt"),
                            os.path.join(work, "api.test.key"))
        u.settimeout(20)
        try:
            s_ = ctx.wrap_socket(u, server_side=True)
            up["eof"] = s_.recv(100) == b""
        except (ssl.SSLError, OSError) as e:
            up["eof"] = type(e).__name__
    th = threading.Thread(target=idle_server)
    th.start()
    ctx = ssl.create_default_context(cafile=os.path.join(work, "ca.pem"))
    gs = ctx.wrap_socket(g, server_hostname="api.test")
    gs.settimeout(20)
    name = next(iter(ph))
    send(ctl, BRK_SECRET, struct.pack("<II", 3, 0) + name.encode() + b"\0")
    typ, p, _ = recv(ctl)
    msg = p[4:].rstrip(b"\0").decode()
    say("revoke", f"{struct.unpack('<i', p[:4])[0]} {msg}")
    try:
        say("guest_after_revoke", repr(gs.recv(100)))
    except (ssl.SSLError, OSError) as e:
        say("guest_after_revoke", type(e).__name__)
    th.join(20)
    say("upstream_after_revoke", up.get("eof"))
elif case == "big":
    # 8 MiB each way through one flow: queues fill, and drain
    import hashlib
    size = 8 << 20
    blob = os.urandom(size // 2).hex().encode()
    g, gt = socket.socketpair()
    u, ut = socket.socketpair()
    send(ctl, BRK_FLOW, flow_msg("api.test", ["api.test"]),
         [gt.fileno(), ut.fileno()])
    gt.close()
    ut.close()
    up = {}

    def big_server():
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(work, "api.test.crt"),
                            os.path.join(work, "api.test.key"))
        u.settimeout(60)
        s_ = ctx.wrap_socket(u, server_side=True)
        data = b""
        while b"\r\n\r\n" not in data:
            data += s_.recv(65536)
        head, body = data.split(b"\r\n\r\n", 1)
        while len(body) < size:
            chunk = s_.recv(65536)
            if not chunk:
                break
            body += chunk
        up["got"] = hashlib.sha256(body).hexdigest()
        s_.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
                   b"Connection: close\r\n\r\n" % size + blob)
        try:
            s_.unwrap()
        except (ssl.SSLError, OSError):
            pass
    th = threading.Thread(target=big_server)
    th.start()
    ctx = ssl.create_default_context(cafile=os.path.join(work, "ca.pem"))
    gs = ctx.wrap_socket(g, server_hostname="api.test")
    gs.settimeout(60)
    gs.sendall(b"POST /up HTTP/1.1\r\nHost: api.test\r\n"
               b"Content-Length: %d\r\n\r\n" % size + blob)
    answer = b""
    while True:
        chunk = gs.recv(65536)
        if not chunk:
            break
        answer += chunk
    gs.close()
    th.join(60)
    want = hashlib.sha256(blob).hexdigest()
    say("big_up", up.get("got") == want)
    say("big_down", hashlib.sha256(answer.split(b"\r\n\r\n", 1)[-1])
        .hexdigest() == want)
elif case == "too-many":
    # flows whose upstream never answers hold their threads (for the
    # handshake's bound, 30 s): past 256 at once a flow is refused
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    held = []
    for i in range(260):
        g, gt = socket.socketpair()
        u, ut = socket.socketpair()
        send(ctl, BRK_FLOW, flow_msg("api.test", ["api.test"]),
             [gt.fileno(), ut.fileno()])
        gt.close()
        ut.close()
        held += [g, u]
    refused = 0
    while True:
        typ, p, _ = recv(ctl, timeout=3)
        if typ != BRK_AUDIT:
            break
        refused += b'"reason":"too-many-flows"' in p
    say("too_many", refused)
    for s_ in held:
        s_.close()
elif case == "ws-early":
    # a WebSocket client's first frame sent with its upgrade, before the
    # 101: held by the broker until the upgrade takes, then sent up
    g, gt = socket.socketpair()
    u, ut = socket.socketpair()
    send(ctl, BRK_FLOW, flow_msg("api.test", ["api.test"]),
         [gt.fileno(), ut.fileno()])
    gt.close()
    ut.close()
    up = {}

    def ws_server():
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(work, "api.test.crt"),
                            os.path.join(work, "api.test.key"))
        u.settimeout(20)
        s_ = ctx.wrap_socket(u, server_side=True)
        data = b""
        while b"\r\n\r\n" not in data:
            data += s_.recv(4096)
        up["extra"] = data.split(b"\r\n\r\n", 1)[1]
        time.sleep(0.3)
        s_.sendall(b"HTTP/1.1 101 Switching Protocols\r\n"
                   b"Upgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
        s_.settimeout(5)
        while len(up["extra"]) < 11:
            try:
                c_ = s_.recv(100)
            except (ssl.SSLError, OSError):
                break
            if not c_:
                break
            up["extra"] += c_
        s_.sendall(b"bye")
        s_.close()
    th = threading.Thread(target=ws_server)
    th.start()
    ctx = ssl.create_default_context(cafile=os.path.join(work, "ca.pem"))
    gs = ctx.wrap_socket(g, server_hostname="api.test")
    gs.settimeout(20)
    gs.sendall(b"GET /ws HTTP/1.1\r\nHost: api.test\r\n"
               b"Upgrade: websocket\r\nConnection: Upgrade\r\n"
               b"Sec-WebSocket-Version: 13\r\n"
               b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
               b"EARLY-FRAME")
    answer = b""
    try:
        while b"bye" not in answer:
            c_ = gs.recv(4096)
            if not c_:
                break
            answer += c_
    except (ssl.SSLError, OSError):
        pass
    th.join(20)
    say("ws_status", answer.split(b"\r\n", 1)[0].decode())
    say("ws_early", repr(up.get("extra")))
elif case == "rotate-under-way":
    # a request went up with the value; the secret rotates before its
    # response, which echoes the value it got: the guest sees P
    g, gt = socket.socketpair()
    u, ut = socket.socketpair()
    send(ctl, BRK_FLOW, flow_msg("api.test", ["api.test"]),
         [gt.fileno(), ut.fileno()])
    gt.close()
    ut.close()
    up = {}
    rotated = threading.Event()

    def slow_server():
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(work, "api.test.crt"),
                            os.path.join(work, "api.test.key"))
        u.settimeout(20)
        s_ = ctx.wrap_socket(u, server_side=True)
        data = b""
        while b"\r\n\r\n" not in data:
            data += s_.recv(4096)
        up["request"] = data
        rotated.wait(20)
        auth = b""
        for line in data.split(b"\r\n"):
            if line.lower().startswith(b"authorization:"):
                auth = line.split(b":", 1)[1].strip()
        body = b"you sent: " + auth + b"\n"
        s_.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
                   b"Connection: close\r\n\r\n" % len(body) + body)
        s_.close()
    th = threading.Thread(target=slow_server)
    th.start()
    ctx = ssl.create_default_context(cafile=os.path.join(work, "ca.pem"))
    gs = ctx.wrap_socket(g, server_hostname="api.test")
    gs.settimeout(20)
    gs.sendall(f"GET / HTTP/1.1\r\nHost: api.test\r\n"
               f"Authorization: Bearer {P}\r\n\r\n".encode())
    for _ in range(400):
        if "request" in up:
            break
        time.sleep(0.05)
    r, w = os.pipe()
    os.write(w, os.environ["BRK_NEW"].encode() + b"\n")
    os.close(w)
    send(ctl, BRK_SECRET, struct.pack("<II", 2, 0) +
         next(iter(ph)).encode() + b"\0", [r])
    os.close(r)
    typ, p, _ = recv(ctl)
    while typ == BRK_AUDIT:
        typ, p, _ = recv(ctl)
    say("rotate", p[4:].rstrip(b"\0").decode())
    rotated.set()
    answer = b""
    while True:
        c_ = gs.recv(4096)
        if not c_:
            break
        answer += c_
    th.join(20)
    say("upstream_request", repr(up.get("request", b"")))
    say("guest_answer", repr(answer))
elif case == "bad-flow":
    # one fd instead of two: the end of the link
    a, b = socket.socketpair()
    send(ctl, BRK_FLOW, flow_msg("api.test", ["api.test"]), [a.fileno()])
    proc.wait(10)
    say("exit", proc.returncode)
    sys.exit(0)
elif case == "rotate":
    r, w = os.pipe()
    os.write(w, os.environ["BRK_NEW"].encode() + b"\n")
    os.close(w)
    name = next(iter(ph))
    send(ctl, BRK_SECRET, struct.pack("<II", 2, 0) + name.encode() + b"\0",
         [r])
    os.close(r)
    typ, p, _ = recv(ctl)
    msg = p[4:].rstrip(b"\0").decode()
    say("rotate", f"{typ == BRK_SECRET_DONE} "
        f"{struct.unpack('<i', p[:4])[0]} {msg}")
    send(ctl, BRK_SECRET, struct.pack("<II", 3, 0) + b"NOPE\0")
    typ, p, _ = recv(ctl)
    say("revoke_unknown", struct.unpack('<i', p[:4])[0])
else:
    say("unknown_case", case)

# the sentry is gone: the broker follows
ctl.close()
try:
    proc.wait(10)
    say("exit", proc.returncode)
except subprocess.TimeoutExpired:
    proc.kill()
    say("exit", "hung")
