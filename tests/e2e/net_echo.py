"""Guest side of test_net.sh echo_through_the_netstack: 4 MiB through the
TCP echo of the test host with a non-blocking selector loop (epoll), the
bytes compared by hash; then FIONREAD, MSG_WAITALL, a half close and the
socket names."""
import hashlib, os, selectors, socket, struct, sys, fcntl, termios, array
peer = sys.argv[1]
data = os.urandom(4 << 20)
s = socket.create_connection((peer, 7007), timeout=10)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
s.setblocking(False)
sel = selectors.DefaultSelector()
sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE)
sent = 0; got = bytearray()
while len(got) < len(data):
    for key, ev in sel.select(timeout=10):
        if ev & selectors.EVENT_WRITE and sent < len(data):
            try:
                sent += s.send(data[sent:sent + 65536])
            except BlockingIOError:
                pass
            if sent == len(data):
                sel.modify(s, selectors.EVENT_READ)
        if ev & selectors.EVENT_READ:
            chunk = s.recv(1 << 20)
            if not chunk:
                raise SystemExit("early EOF at %d" % len(got))
            got += chunk
print("echo ok" if hashlib.sha256(got).digest() == hashlib.sha256(data).digest() else "echo MISMATCH")
# MSG_WAITALL, FIONREAD, half close
s.setblocking(True)
s.sendall(b"x" * 10000)
import time; time.sleep(0.3)
buf = array.array('i', [0]); fcntl.ioctl(s, termios.FIONREAD, buf); print("fionread", buf[0] > 0)
print("waitall", len(s.recv(10000, socket.MSG_WAITALL)))
s.shutdown(socket.SHUT_WR)
print("eof", s.recv(10) == b"")
print("peer", s.getpeername()[0] == peer, "name", s.getsockname()[0])
s.close()
