"""Guest side of test_net.sh net_edges: cases a review found broken (each
printed line is checked; the sentry must live to print the last)."""
import socket, sys, time

peer, peer6 = sys.argv[1], sys.argv[2]
mapped = "::ffff:" + peer

# shutdown(SHUT_RDWR), close, and the server's FIN arriving afterwards
s = socket.create_connection((peer, 7007), timeout=5)
s.sendall(b"bye")
s.shutdown(socket.SHUT_RDWR)
s.close()
time.sleep(0.3)
print("shutdown-close ok")

# the sandbox's own address is its own: a listener on "any" answers it
l = socket.socket(); l.bind(("0.0.0.0", 0)); l.listen()
c = socket.create_connection(("10.0.2.15", l.getsockname()[1]), timeout=5)
a, _ = l.accept()
c.sendall(b"self"); print("self", a.recv(4).decode())
try:
    socket.create_connection(("10.0.2.15", 1), timeout=5)
except OSError as e:
    print("self closed port", e.errno)

# a name rule matches the v4-mapped form of the name's address
s6 = socket.socket(socket.AF_INET6)
s6.settimeout(5)
socket.gethostbyname("peer.moat.test")
s6.connect((mapped, 8080))
print("mapped by name ok")

# one flow, one decision, for datagrams to a v4-mapped destination; and
# the same socket then sends over IPv6 too
u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
for i in range(20):
    u.sendto(b"m%d" % i, (mapped, 9999))
u.sendto(b"six", (peer6, 9999))
print("udp mapped and v6 ok")

# larger than the link's MTU: refused, never silently lost
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x" * 4000, (peer, 9999))
    print("big sent")
except OSError as e:
    print("big", e.errno)
print("alive")
