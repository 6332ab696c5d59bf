"""Guest side of test_net.sh ping cases: an ICMP echo through a ping
socket to the loopback (answered by the sentry) and to the test host."""
import socket, struct, sys, time
peer = sys.argv[1]
def ping(host):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
    s.settimeout(3)
    s.sendto(struct.pack(">BBHHH", 8, 0, 0, 0, 7) + b"moat-ping", (host, 0))
    data, addr = s.recvfrom(1500)
    t, c, _, _, seq = struct.unpack(">BBHHH", data[:8])
    return t, seq, data[8:].decode(), addr[0]
print(ping("127.0.0.1"))
try:
    print(ping(peer))
except OSError as e:
    print("peer", e.errno)
