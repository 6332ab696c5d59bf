"""TCP_INFO state and TCP_CONGESTION (test_sockets.sh)."""
import socket, struct
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen()
print("listen state", l.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)[0])
c = socket.create_connection(l.getsockname())
print("state", c.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)[0])
print("cc", c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0") in (b"cubic", b"reno", b"bbr"))
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"reno")
print("cc set", c.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0"))
try:
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, b"nosuch")
except OSError as e: print("bad cc", e.errno)
