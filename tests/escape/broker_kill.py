"""The guest's side of test_broker_barrier.sh's broker_killed case: a
brokered flow open when the broker dies, and one started after it."""
import socket
import sys

host = sys.argv[1]
s = socket.create_connection((host, 80))
# a request line and a header, no end of the head: the broker holds it
s.sendall(b"GET /echo HTTP/1.1\r\nHost: " + host.encode() + b"\r\n")
print("sent", flush=True)
sys.stdin.readline()  # the test kills the broker, then says so
for name, sock in (("open", s), ("new", None)):
    try:
        if sock is None:
            sock = socket.create_connection((host, 80))
            sock.sendall(b"GET /echo HTTP/1.1\r\nHost: " + host.encode() +
                         b"\r\n\r\n")
        d = sock.recv(4096)
        print(name, "eof" if not d else "data %d" % len(d))
    except OSError as e:
        print(name, "error", e.errno == 104 and "ECONNRESET" or e)
