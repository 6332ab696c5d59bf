#!/usr/bin/python3
"""bench/net.py: the two small programs of bench/net.sh.

  net.py accept ADDR PORT        accept connections and close each at once
                                 (the test host's side, runs until killed)
  net.py connect ADDR PORT N     N connect + close to it, after 10 unmeasured;
                                 prints "connect_us MEDIAN P90" (microseconds)

Only the standard library, so that the same file runs natively, under moat
(which serves the host's / read-only) and in the user-space stacks'
namespaces.
"""
import socket
import sys
import time


def accept(addr, port):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((addr, port))
    srv.listen(128)
    while True:
        conn, _ = srv.accept()
        conn.close()


def connect(addr, port, n):
    # The socket is made before the clock starts: what is measured is the
    # handshake through the stack under test (connect returns once the
    # peer's SYN-ACK is back) and the close.
    def once():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        t0 = time.perf_counter()
        s.connect((addr, port))
        s.close()
        return time.perf_counter() - t0

    for _ in range(10):
        once()
    v = sorted(once() for _ in range(n))
    med = (v[(n - 1) // 2] + v[n // 2]) / 2
    p90 = v[min(n - 1, int(n * 0.9))]
    print("connect_us %.1f %.1f" % (med * 1e6, p90 * 1e6))


def main(argv):
    if len(argv) == 4 and argv[1] == "accept":
        accept(argv[2], int(argv[3]))
    elif len(argv) == 5 and argv[1] == "connect":
        connect(argv[2], int(argv[3]), max(1, int(argv[4])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
