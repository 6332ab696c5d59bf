"""SO_RCVTIMEO on recv and accept: EAGAIN after the timeout (test_sockets.sh)."""
import socket, struct, time, errno
a, b = socket.socketpair()
a.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack('ll', 0, 150000))
print(struct.unpack('ll', a.getsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, 16))[1] // 10000)
t0 = time.time()
try: a.recv(1)
except OSError as e: print(errno.errorcode[e.errno], round(time.time() - t0, 1))
l = socket.socket(); l.bind(('127.0.0.1', 0)); l.listen()
l.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack('ll', 0, 100000))
try: l.accept()
except OSError as e: print('accept', errno.errorcode[e.errno])
b.send(b'z'); print(a.recv(1))
