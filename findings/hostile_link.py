#!/usr/bin/python3
"""findings/hostile_link.py: a hostile upstream (and guest) against a real
`moat broker`, driven over its link the way tests/e2e/broker_link.py does
(this file plays the sentry). Reproducers of the review of issue 12.

    hostile_link.py MOAT CERTDIR CASE

CERTDIR holds testca.crt and api.test.{crt,key} (tests/e2e/test_broker.sh
make_certs makes them; findings/run.sh does it too). Prints `key: value`
lines; the value S is in $BRK_SECRET.

Cases:
  bomb N        N flows; each upstream answers a 2 KiB zstd body that
                decodes to 63 MiB; the guests never read. The broker's
                VmRSS/VmHWM after.
  ce-double     the upstream echoes Authorization gzip'd twice with
                `Content-Encoding: gzip, gzip`; does the guest, decoding,
                find S?
  basic-echo    the guest sends Basic base64(user:P); the upstream echoes
                the Authorization header it got; does the guest, decoding
                base64, find S?
  ws            Upgrade: websocket with Bearer P, and a first frame sent
                at once; the upstream answers 101 then echoes what it got
                (like a WebSocket server's first message). Does the guest
                see S; did the early frame reach upstream?
  rotate-old    a request swapped with S; the secret rotated while its
                response is on the way; the response echoes the old S.
"""
import base64
import gzip
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
FLOW_FMT = "<QiBBH16s256s256sH6x"

moat, work, case = sys.argv[1], sys.argv[2], sys.argv[3]
S = os.environ["BRK_SECRET"]


def say(k, v):
    print(f"{k}: {v}", flush=True)


def send(sock, typ, payload=b"", fds=()):
    socket.send_fds(sock, [struct.pack("<II", typ, len(payload)) + payload],
                    list(fds))


def recv(sock, timeout=20):
    sock.settimeout(timeout)
    try:
        msg, fds, _, _ = socket.recv_fds(sock, 300000, 8)
    except socket.timeout:
        return None, None, []
    if not msg:
        return 0, b"", fds
    typ, ln = struct.unpack("<II", msg[:8])
    return typ, msg[8:], fds


def start():
    ctl, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    os.set_inheritable(child.fileno(), True)
    proc = subprocess.Popen([moat, "broker", "--ctl", str(child.fileno()),
                             "--as", "65534:65534", "--id", "rev"],
                            env={"REAL_KEY": S}, pass_fds=[child.fileno()],
                            stderr=open(os.path.join(work, "broker.err"),
                                        "w"))
    child.close()
    js = os.environ.get("BRK_JSON") or \
        '{"credentials":[{"name":"API_KEY","from":"env:REAL_KEY",' \
        '"hosts":["api.test"],"in":["header:authorization","basic"]}]}'
    send(ctl, BRK_CONFIG, js.encode() + b"\0" +
         os.path.join(work, "testca.crt").encode())
    ph = None
    while True:
        typ, p, _ = recv(ctl)
        if typ == BRK_CA:
            with open(os.path.join(work, "ca.pem"), "wb") as f:
                f.write(p)
        elif typ == BRK_PLACEHOLDER:
            ph = p.split(b"\0")[1].decode()
        elif typ == BRK_READY:
            return proc, ctl, ph
        else:
            say("fail", p)
            sys.exit(1)


def flow_msg(sni="api.test", names=("api.test",)):
    f = struct.pack(FLOW_FMT, 7, 4242, KIND_TLS, socket.AF_INET, 443,
                    socket.inet_aton("10.0.0.5") + b"\0" * 12,
                    b"/usr/bin/curl", sni.encode(), len(names))
    return f + b"".join(n.encode() + b"\0" for n in names)


def open_flow(ctl):
    g, gt = socket.socketpair()
    u, ut = socket.socketpair()
    send(ctl, BRK_FLOW, flow_msg(), [gt.fileno(), ut.fileno()])
    gt.close()
    ut.close()
    return g, u


def up_tls(u):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(work, os.environ.get("UP_CERT",
                                                          "api.test.crt")),
                        os.path.join(work, os.environ.get("UP_KEY",
                                                          "api.test.key")))
    u.settimeout(30)
    return ctx.wrap_socket(u, server_side=True)


def guest_tls(g):
    ctx = ssl.create_default_context(cafile=os.path.join(work, "ca.pem"))
    g.settimeout(30)
    return ctx.wrap_socket(g, server_hostname="api.test")


def read_head(s):
    data = b""
    while b"\r\n\r\n" not in data:
        c = s.recv(4096)
        if not c:
            break
        data += c
    return data


def auth_of(req):
    for line in req.split(b"\r\n"):
        if line.lower().startswith(b"authorization:"):
            return line.split(b":", 1)[1].strip()
    return b""


def read_all(s):
    out = b""
    try:
        while True:
            c = s.recv(65536)
            if not c:
                break
            out += c
    except (ssl.SSLError, OSError):
        pass
    return out


def dechunk(body):
    out = b""
    while body:
        line, body = body.split(b"\r\n", 1)
        n = int(line.split(b";")[0], 16)
        if n == 0:
            break
        out += body[:n]
        body = body[n + 2:]
    return out


def one(ctl, request, answer_fn):
    """A flow: the guest sends request, upstream answers answer_fn(req);
    the guest's whole answer."""
    g, u = open_flow(ctl)
    got = {}

    def server():
        try:
            s = up_tls(u)
            req = read_head(s)
            got["req"] = req
            s.sendall(answer_fn(req, s))
            time.sleep(0.3)
            s.close()
        except (ssl.SSLError, OSError) as e:
            got["err"] = str(e)
    th = threading.Thread(target=server)
    th.start()
    gs = guest_tls(g)
    gs.sendall(request)
    ans = read_all(gs)
    th.join(30)
    return ans, got


proc, ctl, P = start()
say("pid", proc.pid)
REQ = (f"GET /echo HTTP/1.1\r\nHost: api.test\r\n"
       f"Authorization: Bearer {P}\r\nConnection: close\r\n\r\n").encode()

if case == "bomb":
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    with open(os.environ.get("BOMB", "/tmp/bomb.zst"), "rb") as f:
        bomb = f.read()
    held = []

    def status():
        st = {}
        with open(f"/proc/{proc.pid}/status") as f:
            for line in f:
                k, v = line.split(":", 1)
                st[k] = v.strip()
        return st["VmRSS"], st["VmHWM"]
    say("before", status())
    for i in range(n):
        g, u = open_flow(ctl)

        def server(u=u):
            s = up_tls(u)
            read_head(s)
            s.settimeout(None)
            ce = os.environ.get("CE", "zstd").encode()
            s.sendall(b"HTTP/1.1 200 OK\r\n" +
                      (b"Content-Encoding: " + ce + b"\r\n" if ce else b"") +
                      b"Content-Length: %d\r\n\r\n" % len(bomb) + bomb)
            held.append(s)
        th = threading.Thread(target=server, daemon=True)
        th.start()
        gs = guest_tls(g)
        gs.sendall(REQ)
        time.sleep(0.3)
        held.append(gs)  # never read
    time.sleep(2)
    say("after", status())
elif case == "ce-double":
    def ans(req, s):
        body = gzip.compress(gzip.compress(b"you sent: " + auth_of(req)))
        return (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip, gzip\r\n"
                b"Content-Length: %d\r\nConnection: close\r\n\r\n"
                % len(body) + body)
    a, got = one(ctl, REQ, ans)
    say("upstream_got_S", S.encode() in got.get("req", b""))
    head, _, body = a.partition(b"\r\n\r\n")
    say("guest_head", head.split(b"\r\n")[0])
    if b"chunked" in head.lower():
        body = dechunk(body)
    try:
        plain = gzip.decompress(gzip.decompress(body))
    except Exception as e:
        plain = repr(e).encode()
    say("guest_decoded_has_S", S.encode() in plain)
elif case == "basic-echo":
    tok = base64.b64encode(f"user:{P}".encode()).decode()
    req = (f"GET /headers HTTP/1.1\r\nHost: api.test\r\n"
           f"Authorization: Basic {tok}\r\nConnection: close\r\n\r\n"
           ).encode()

    def ans(req, s):
        body = b'{"headers":{"Authorization":"' + auth_of(req) + b'"}}\n'
        return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\nConnection: close\r\n\r\n"
                % len(body) + body)
    a, got = one(ctl, req, ans)
    say("upstream_got_S", S.encode() in
        base64.b64decode(auth_of(got.get("req", b""))[6:] or b"=="))
    body = a.partition(b"\r\n\r\n")[2]
    say("guest_body", body.strip())
    tok2 = body.split(b"Basic ")[1].split(b'"')[0] if b"Basic " in body \
        else b""
    say("guest_decoded_has_S", S.encode() in base64.b64decode(tok2 + b"=="))
elif case == "ws":
    req = (f"GET /ws HTTP/1.1\r\nHost: api.test\r\nUpgrade: websocket\r\n"
           f"Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
           f"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
           f"Authorization: Bearer {P}\r\n\r\n").encode() + b"EARLY-FRAME"

    def ans(req, s):
        time.sleep(0.5)   # the guest's early frame is held meanwhile
        out = (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
               b"Connection: Upgrade\r\n\r\n")
        out += b"hello, you are " + auth_of(req) + b"\n"
        return out

    g, u = open_flow(ctl)
    got = {}

    def server():
        s = up_tls(u)
        req = read_head(s)
        got["req"] = req
        s.sendall(ans(req, s))
        s.settimeout(2)
        try:
            got["after"] = s.recv(100)
        except (ssl.SSLError, OSError) as e:
            got["after"] = repr(e).encode()
        s.close()
    th = threading.Thread(target=server)
    th.start()
    gs = guest_tls(g)
    gs.sendall(req)
    gs.settimeout(3)
    a = b""
    try:
        while True:
            c = gs.recv(4096)
            if not c:
                break
            a += c
    except (ssl.SSLError, OSError):
        pass
    th.join(10)
    say("guest_saw_S", S.encode() in a)
    say("upstream_early_frame", got.get("req", b"").endswith(b"EARLY-FRAME")
        or b"EARLY" in got.get("after", b""))
    say("upstream_after", got.get("after"))
elif case == "rotate-old":
    g, u = open_flow(ctl)
    got = {}
    rotated = threading.Event()

    def server():
        s = up_tls(u)
        req = read_head(s)
        got["req"] = req
        rotated.wait(10)
        body = b"you sent: " + auth_of(req) + b"\n"
        s.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
                  b"Connection: close\r\n\r\n" % len(body) + body)
        time.sleep(0.3)
        s.close()
    th = threading.Thread(target=server)
    th.start()
    gs = guest_tls(g)
    gs.sendall(REQ)
    while "req" not in got:
        time.sleep(0.05)
    r, w = os.pipe()
    os.write(w, b"sk-new-" + os.urandom(12).hex().encode() + b"\n")
    os.close(w)
    send(ctl, BRK_SECRET, struct.pack("<II", 2, 0) + b"API_KEY\0", [r])
    os.close(r)
    while True:
        typ, p, _ = recv(ctl)
        if typ == BRK_SECRET_DONE:
            say("rotate", p[4:].rstrip(b"\0").decode())
            break
    rotated.set()
    a = read_all(gs)
    th.join(10)
    say("upstream_got_S", S.encode() in got["req"])
    say("guest_saw_old_S", S.encode() in a)
elif case == "cert":
    # the upstream presents $UP_CERT: is the flow refused before the
    # request goes up?
    a, got = one(ctl, REQ, lambda req, s: b"HTTP/1.1 200 OK\r\n"
                 b"Content-Length: 2\r\n\r\nok")
    say("guest_answer", a[:120])
    say("upstream_got", got.get("req", b"")[:60])
    say("upstream_err", got.get("err"))
elif case == "bridge":
    # One flow; its guest end bridged to 127.0.0.1:PORT, its upstream a
    # keep-alive echo (the request head back as the body). argv[4:] is
    # a command run with {port} replaced; its output is printed.
    g, u = open_flow(ctl)
    lst = socket.socket()
    lst.bind(("127.0.0.1", 0))
    lst.listen(1)
    port = lst.getsockname()[1]
    up_log = []

    def pump(a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
        except OSError:
            pass
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def bridge():
        c_, _ = lst.accept()
        threading.Thread(target=pump, args=(c_, g), daemon=True).start()
        pump(g, c_)

    def echo():
        try:
            s_ = up_tls(u)
            buf = b""
            while True:
                while b"\r\n\r\n" not in buf:
                    d = s_.recv(65536)
                    if not d:
                        return
                    buf += d
                head, buf = buf.split(b"\r\n\r\n", 1)
                up_log.append(head)
                n = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        n = int(line.split(b":")[1])
                while len(buf) < n:
                    buf += s_.recv(65536)
                buf = buf[n:]
                body = head + b"\n"
                s_.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n"
                           % len(body) + body)
        except (ssl.SSLError, OSError) as e:
            up_log.append(repr(e).encode())
    threading.Thread(target=bridge, daemon=True).start()
    threading.Thread(target=echo, daemon=True).start()
    cmd = [a.replace("{port}", str(port)).replace("{P}", P)
           .replace("{ca}", os.path.join(work, "ca.pem"))
           for a in sys.argv[4:]]
    r = subprocess.run(cmd, input=os.environ.get("BRIDGE_IN", "").replace("{P}", P).encode()
                       .decode("unicode_escape").encode("latin-1"),
                       capture_output=True, timeout=60)
    out = r.stdout + r.stderr
    say("cmd_rc", r.returncode)
    say("cmd_out_has_S", S.encode() in out)
    sys.stdout.write(out.decode("latin-1")[-3000:] + "\n")
    time.sleep(0.5)
    for h in up_log:
        say("upstream_head", repr(h))
    say("upstream_has_S", any(S.encode() in h for h in up_log))
else:
    say("unknown_case", case)

ctl.close()
try:
    proc.wait(10)
    say("exit", proc.returncode)
except subprocess.TimeoutExpired:
    proc.kill()
    say("exit", "hung")
with open(os.path.join(work, "broker.err")) as f:
    err = f.read()
if err:
    say("broker_stderr", err.strip())
