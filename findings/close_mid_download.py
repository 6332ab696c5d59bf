"""Guest side of findings/uaf_recv.sh: brokered plain-HTTP downloads
closed right after their first bytes, many at once, so that the broker
ends the flow (its side of the upstream pair closed) while lwIP still
hands the relay a chain of segments."""
import socket
import sys
import threading
import time

stop = time.time() + float(sys.argv[1])


def run():
    while time.time() < stop:
        try:
            s = socket.create_connection(("plain.test", 80), timeout=3)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(b"GET /big?n=20000000 HTTP/1.1\r\nHost: plain.test\r\n\r\n")
            s.recv(1)
            s.close()
        except OSError:
            pass


ts = [threading.Thread(target=run) for _ in range(6)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("done")
