"""Guest side of findings/stress.sh: brokered flows in every state while
the host changes the policy and kills the broker (run under ASan)."""
import http.client
import os
import socket
import ssl
import sys
import threading
import time

key = os.environ.get("API_KEY", "")
stop = time.time() + float(sys.argv[1] if len(sys.argv) > 1 else 8)
counts = {}


def bump(k):
    counts[k] = counts.get(k, 0) + 1


def tls_half():
    while time.time() < stop:
        try:
            c = http.client.HTTPSConnection("api.test", 443, timeout=3)
            c.request("GET", "/big?n=3000000",
                      headers={"Authorization": "Bearer " + key})
            r = c.getresponse()
            r.read(100000)
            c.sock.close()  # mid-body
            bump("tls-half")
        except Exception as e:
            bump("tls-err " + type(e).__name__)


def plain_half():
    while time.time() < stop:
        try:
            s = socket.create_connection(("plain.test", 80), timeout=3)
            s.sendall(b"GET /big?n=2000000 HTTP/1.1\r\nHost: plain.test\r\n\r\n")
            s.recv(50000)
            s.shutdown(socket.SHUT_WR)
            s.recv(50000)
            s.close()
            bump("plain-half")
        except Exception as e:
            bump("plain-err " + type(e).__name__)


held = []


def never_read():
    while time.time() < stop:
        try:
            s = socket.create_connection(("plain.test", 80), timeout=3)
            s.sendall(b"GET /big?n=5000000 HTTP/1.1\r\nHost: plain.test\r\n\r\n")
            held.append(s)
            if len(held) > 40:
                held.pop(0).close()
            bump("held")
        except Exception as e:
            bump("held-err " + type(e).__name__)
        time.sleep(0.05)


def upload():
    while time.time() < stop:
        try:
            ctx = ssl.create_default_context()
            s = ctx.wrap_socket(socket.create_connection(("api.test", 443),
                                                         timeout=3),
                                server_hostname="api.test")
            body = b"y" * 2000000
            s.sendall(b"POST /echo HTTP/1.1\r\nHost: api.test\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(body))
            s.sendall(body[:1000000])
            s.close()  # mid-upload
            bump("upload-half")
        except Exception as e:
            bump("upload-err " + type(e).__name__)


ts = [threading.Thread(target=f) for f in (tls_half, plain_half,
                                             never_read, upload, tls_half)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(sorted(counts.items()))
