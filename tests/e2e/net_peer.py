"""A test host for the network tests, run inside a network namespace that
the test made: an HTTP server on :8080 (IPv4 and IPv6), a TCP echo server on :7007, UDP sinks on
:9998 and :9999 (which echo), a UDP flooder on :9997 ("flood N" gets N
empty datagrams back), and a
DNS server on :53 that knows the names given as NAME=ADDR arguments
(NAME/6=ADDR for an AAAA record; a NAME that begins with "slow." is
answered half a second late). NAME=REAL,FAKE answers with REAL, but
only after forged answers that carry FAKE: one with another id, one for
another name, one for another type, one for another class, one from
port 5353, and one from FAKE:53 (FAKE must be an address of this host).
It logs each query as "dns NAME TYPE ID PORT". Every
TCP connection and datagram it gets is logged to LOG (one line each), so a
test can show that a denied one never arrived. Prints "ready" when all
are listening.

    python3 net_peer.py LOG NAME=ADDR...
"""
import http.server
import socket
import socketserver
import struct
import sys
import threading
import time

log_path = sys.argv[1]
names = dict(a.split("=", 1) for a in sys.argv[2:])
lock = threading.Lock()


def log(line):
    with lock, open(log_path, "a") as f:
        f.write(line + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        addr = self.connection.getsockname()[0]
        log("http %s %s" % (addr.replace("::ffff:", ""), self.path))
        body = ("peer says hello to %s\n" % self.path).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    address_family = socket.AF_INET6  # and IPv4, mapped
    allow_reuse_address = True
    daemon_threads = True


def udp_sink(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", port))
    while True:
        data, addr = s.recvfrom(65535)
        log("udp %d %s" % (port, data[:40].decode(errors="replace")))
        s.sendto(b"echo:" + data, addr)


def udp_flood(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", port))
    while True:
        data, addr = s.recvfrom(65535)
        log("udp %d %s" % (port, data[:40].decode(errors="replace")))
        if data.startswith(b"flood "):
            for _ in range(min(int(data[6:]), 100000)):
                s.sendto(b"", addr)


def echo_server(port):
    """TCP echo: whatever arrives goes back, until the client closes."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(16)

    def serve(c):
        n = 0
        while True:
            data = c.recv(65536)
            if not data:
                break
            n += len(data)
            c.sendall(data)
        log("echo %d" % n)
        c.close()

    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


def qname(msg, off):
    labels = []
    while msg[off]:
        n = msg[off]
        labels.append(msg[off + 1:off + 1 + n].decode())
        off += 1 + n
    return ".".join(labels), off + 1


def forgeries(s, addr, qid, name, fake):
    """Answers a resolver must not take: each differs from the real one
    in one thing."""
    def msg(qid, qname, qtype=1, qclass=1):
        q = b"".join(bytes([len(l)]) + l.encode() for l in qname.split(".")) + b"\0"
        return (struct.pack(">HHHHHH", qid, 0x8180, 1, 1, 0, 0) + q +
                struct.pack(">HH", qtype, qclass) + b"\xc0\x0c" +
                struct.pack(">HHIH", 1, 1, 60, 4) + socket.inet_aton(fake))
    s.sendto(msg(qid ^ 0x5a5a, name), addr)
    s.sendto(msg(qid, "x" + name), addr)
    s.sendto(msg(qid, name, qtype=16), addr)
    s.sendto(msg(qid, name, qclass=3), addr)
    for src in (("0.0.0.0", 5353), (fake, 53)):
        f = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        f.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        f.bind(src)
        f.sendto(msg(qid, name), addr)
        f.close()


def dns():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", 53))
    while True:
        msg, addr = s.recvfrom(512)
        qid, flags, qd = struct.unpack(">HHH", msg[:6])
        name, end = qname(msg, 12)
        qtype = struct.unpack(">H", msg[end:end + 2])[0]
        log("dns %s %d %d %d" % (name, qtype, qid, addr[1]))
        question = msg[12:end + 4]
        if name.lower().startswith("slow."):
            time.sleep(0.5)
        ip = names.get(name.lower())
        ip6 = names.get(name.lower() + "/6")
        if ip and "," in ip and qtype == 1:
            ip, fake = ip.split(",")
            forgeries(s, addr, qid, name, fake)
            time.sleep(0.3)
            # the real one, its name in upper case: names compare
            # without case (label lengths are below 64: no letters)
            question = question[:end - 12].upper() + question[end - 12:]
        if ip and qtype == 1:
            ans = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + socket.inet_aton(ip)
            hdr = struct.pack(">HHHHHH", qid, 0x8180, 1, 1, 0, 0)
        elif ip6 and qtype == 28:
            ans = b"\xc0\x0c" + struct.pack(">HHIH", 28, 1, 60, 16) + \
                socket.inet_pton(socket.AF_INET6, ip6)
            hdr = struct.pack(">HHHHHH", qid, 0x8180, 1, 1, 0, 0)
        elif ip:
            ans = b""
            hdr = struct.pack(">HHHHHH", qid, 0x8180, 1, 0, 0, 0)
        else:
            ans = b""
            hdr = struct.pack(">HHHHHH", qid, 0x8183, 1, 0, 0, 0)
        s.sendto(hdr + question + ans, addr)


httpd = Server(("::", 8080), Handler)
for target in (httpd.serve_forever, dns, lambda: udp_sink(9998), lambda: udp_sink(9999),
               lambda: udp_flood(9997), lambda: echo_server(7007)):
    threading.Thread(target=target, daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
