"""MSG_WAITALL on a stream: one recv gets all it asked for, sent in five
pieces; at EOF it gets what there was (test_sockets.sh)."""
import os, socket, time

a, b = socket.socketpair()
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen()
c = socket.create_connection(l.getsockname()); s, _ = l.accept()
for x, y in ((a, b), (c, s)):
    if os.fork() == 0:
        for i in range(5):
            time.sleep(0.05)
            y.send(b"%d" % i * 1000)
        y.close()
        os._exit(0)
    y.close()
    print(len(x.recv(5000, socket.MSG_WAITALL)), len(x.recv(5000, socket.MSG_WAITALL)))
    os.wait()
