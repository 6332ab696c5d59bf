"""An HTTP/1.1 echo server for the credential broker's tests (python3
stdlib only), run in a test host's network namespace by echo_up
(tests/e2e/lib.sh):

    python3 https_echo.py --record FILE [--name LABEL] [--cert PEM --key KEY]
                          [--tls-port 443] [--http-port 80] [--bind ADDR]

TLS on --tls-port (with --cert/--key; ALPN http/1.1 only), plain HTTP on
--http-port (0: none). Keep-alive, chunked request bodies and
`Expect: 100-continue` work. Each request is one JSON line appended to
FILE, as received:

    {"server": LABEL, "tls": true, "sni": "api.test", "alpn": "http/1.1",
     "port": 443, "client": "10.221.X.1", "conn": 3, "seq": 1,
     "method": "POST", "path": "/x?y=1", "version": "HTTP/1.1",
     "headers": [["Host", "api.test"], ...], "body": "...",
     "chunked": false}

(conn numbers connections, seq the requests on one). The answer is JSON
too: the same method, path, headers, body and sni, with "authorization",
the Authorization header's value (null if none). By path (the query
aside):

    /chunked          the answer in chunks
    /gzip             the answer gzip-encoded, whatever Accept-Encoding says
    /sse              text/event-stream: three events (each the answer),
                      flushed one by one, chunked
    /header           X-Echo: the Authorization value, in a response header
    /redirect?to=URL  302 to URL
    /status?code=N    status N with the answer
    /slow?ms=N        the answer after N ms
    /big?n=N          N bytes of "x", text/plain
    /close            the answer, then the connection closes

Prints "ready" when it listens.
"""
import argparse
import gzip
import http.server
import json
import socket
import ssl
import sys
import threading
import time
import urllib.parse

lock = threading.Lock()
conn_ids = iter(range(1, 1 << 62))


def record(path, entry):
    line = json.dumps(entry, separators=(",", ":")) + "\n"
    with lock, open(path, "a") as f:
        f.write(line)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    server_version = "moat-echo"
    sys_version = ""

    def setup(self):
        super().setup()
        with lock:
            self.conn = next(conn_ids)
        self.seq = 0
        sock = self.connection
        self.tls = isinstance(sock, ssl.SSLSocket)
        self.sni = getattr(sock, "moat_sni", None) if self.tls else None
        self.alpn = sock.selected_alpn_protocol() if self.tls else None

    def log_message(self, *a):
        pass

    def read_body(self):
        te = (self.headers.get("Transfer-Encoding") or "").lower()
        if "chunked" in te:
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return data, True
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b"", False

    def handle_one(self):
        self.seq += 1
        body, chunked = self.read_body()
        entry = {
            "server": self.server.label,
            "tls": self.tls,
            "sni": self.sni,
            "alpn": self.alpn,
            "port": self.server.server_address[1],
            "client": self.client_address[0],
            "conn": self.conn,
            "seq": self.seq,
            "method": self.command,
            "path": self.path,
            "version": self.request_version,
            "headers": [[k, v] for k, v in self.headers.raw_items()],
            "body": body.decode("utf-8", "replace"),
            "chunked": chunked,
        }
        record(self.server.record, entry)
        answer = {k: entry[k] for k in ("method", "path", "headers", "body", "sni")}
        answer["authorization"] = self.headers.get("Authorization")
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        mode = url.path
        data = (json.dumps(answer) + "\n").encode()
        status = 200
        extra = []
        if mode == "/redirect":
            self.send_response(302)
            self.send_header("Location", q.get("to", "/"))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode == "/status":
            status = int(q.get("code", "200"))
        if mode == "/slow":
            time.sleep(int(q.get("ms", "1000")) / 1000)
        if mode == "/header":
            extra.append(("X-Echo", answer["authorization"] or ""))
        if mode == "/close":
            extra.append(("Connection", "close"))
            self.close_connection = True
        ctype = "application/json"
        if mode == "/big":
            data = b"x" * int(q.get("n", "0"))
            ctype = "text/plain"
        if mode == "/gzip":
            data = gzip.compress(data)
            extra.append(("Content-Encoding", "gzip"))
        if mode in ("/chunked", "/sse"):
            self.send_response(status)
            self.send_header("Content-Type",
                             "text/event-stream" if mode == "/sse" else ctype)
            self.send_header("Transfer-Encoding", "chunked")
            for k, v in extra:
                self.send_header(k, v)
            self.end_headers()
            if mode == "/sse":
                parts = [b"event: echo\ndata: " + data.rstrip(b"\n") + b"\n\n"
                         for _ in range(3)]
            else:
                step = max(1, len(data) // 4)
                parts = [data[i:i + step] for i in range(0, len(data), step)]
            for p in parts:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(p), p))
                self.wfile.flush()
                if mode == "/sse":
                    time.sleep(0.05)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            return
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = \
        do_OPTIONS = handle_one


class Server(http.server.ThreadingHTTPServer):
    allow_reuse_address = True
    daemon_threads = True

    def __init__(self, addr, label, record_path, ctx):
        super().__init__(addr, Handler)
        self.label = label
        self.record = record_path
        self.ctx = ctx

    def finish_request(self, request, client_address):
        # The handshake in the connection's own thread, not in accept:
        # a client that stalls it holds up no one else.
        if self.ctx is not None:
            try:
                request.settimeout(10)
                request = self.ctx.wrap_socket(request, server_side=True)
                request.settimeout(None)
            except (ssl.SSLError, OSError) as e:
                print("tls handshake from %s: %s" % (client_address[0], e),
                      file=sys.stderr, flush=True)
                return
        super().finish_request(request, client_address)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--record", required=True)
    ap.add_argument("--name", default="echo")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--tls-port", type=int, default=443)
    ap.add_argument("--http-port", type=int, default=80)
    ap.add_argument("--bind", default="0.0.0.0")
    a = ap.parse_args()
    servers = []
    if a.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.cert, a.key)
        ctx.set_alpn_protocols(["http/1.1"])

        def sni(sock, name, _ctx):
            sock.moat_sni = name
        ctx.sni_callback = sni
        servers.append(Server((a.bind, a.tls_port), a.name, a.record, ctx))
    if a.http_port:
        servers.append(Server((a.bind, a.http_port), a.name, a.record, None))
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    print("ready", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main()
