#!/usr/bin/env bash
# Sockets in the sentry: AF_UNIX names (paths, abstract, autobind) and
# AF_INET/AF_INET6 on the sandbox's own loopback.
. "$(dirname "$0")/lib.sh"

t_tcp_loopback_echo()
{
	capture moat do -- $PY -c '
import socket, threading
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0)); srv.listen(5)
port = srv.getsockname()[1]
def serve():
    c, addr = srv.accept()
    c.sendall(c.recv(100).upper() + str(addr[0]).encode())
    c.close()
th = threading.Thread(target=serve); th.start()
cl = socket.create_connection(("127.0.0.1", port))
cl.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
cl.sendall(b"hello")
print(cl.recv(100), cl.recv(100), cl.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
print(32768 <= cl.getsockname()[1] <= 60999, cl.getpeername() == ("127.0.0.1", port))
cl.close(); th.join()'
	assert_eq "b'HELLO127.0.0.1' b'' 1
True True" "$OUT" "a TCP echo over 127.0.0.1"
}

t_nonblocking_connect_and_asyncio()
{
	capture moat do -- $PY -c '
import asyncio, errno, select, socket
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen()
c = socket.socket(); c.setblocking(False)
print(errno.errorcode[c.connect_ex(srv.getsockname())])
select.select([], [c], [], 5)
print(c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR))
async def main():
    async def h(r, w):
        w.write((await r.readline()).upper()); await w.drain(); w.close()
    server = await asyncio.start_server(h, "127.0.0.1", 0)
    r, w = await asyncio.open_connection(*server.sockets[0].getsockname())
    w.write(b"async\n"); print(await r.readline()); w.close(); server.close()
asyncio.run(main())'
	assert_eq "EINPROGRESS
0
b'ASYNC\n'" "$OUT" "EINPROGRESS, SO_ERROR 0, and an asyncio server"
}

t_ipv6_and_dual_stack()
{
	capture moat do -- $PY -c '
import socket
s = socket.socket(socket.AF_INET6); s.bind(("::", 0)); s.listen()
port = s.getsockname()[1]
c4 = socket.create_connection(("127.0.0.1", port)); a4, p4 = s.accept()
c6 = socket.create_connection(("::1", port)); a6, p6 = s.accept()
print(p4[0], p6[0])
v6only = socket.socket(socket.AF_INET6)
v6only.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
v6only.bind(("::", 0)); v6only.listen()
try:
    socket.create_connection(("127.0.0.1", v6only.getsockname()[1]))
except ConnectionRefusedError:
    print("v6only refuses v4")'
	assert_eq "::ffff:127.0.0.1 ::1
v6only refuses v4" "$OUT" "an AF_INET6 listener on :: takes IPv4, unless IPV6_V6ONLY"
}

t_udp_loopback()
{
	capture moat do -- $PY -c '
import socket
a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); a.bind(("127.0.0.1", 0))
b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
b.sendto(b"one", a.getsockname())
d, frm = a.recvfrom(100)
print(d, frm == b.getsockname())
b.connect(a.getsockname()); b.send(b"two"); print(a.recv(100))
a.sendto(b"back", frm); print(b.recv(100))
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
print(c.sendto(b"lost", ("127.0.0.1", 9)))
try:
    a.bind(("127.0.0.1", 0))
except OSError as e:
    print("rebind", e.errno)'
	assert_eq "b'one' True
b'two'
b'back'
4
rebind 22" "$OUT" "UDP datagrams carry their sender; to an unused port they are lost"
}

t_unix_path_abstract_autobind()
{
	capture moat do -- $PY -c '
import os, socket, stat
p = "/tmp/moat.sock"
s = socket.socket(socket.AF_UNIX); s.bind(p); s.listen()
print(stat.S_ISSOCK(os.stat(p).st_mode), os.listdir("/tmp").count("moat.sock"))
try:
    socket.socket(socket.AF_UNIX).bind(p)
except OSError as e:
    print("in use", e.errno)
c = socket.socket(socket.AF_UNIX); c.connect(p); a, _ = s.accept()
c.send(b"path"); print(a.recv(10), a.getsockname(), c.getpeername())
try:
    open(p)
except OSError as e:
    print("open", e.errno)
s.close()
try:
    socket.socket(socket.AF_UNIX).connect(p)
except OSError as e:
    print("stale", e.errno)
os.unlink(p)
ab = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); ab.bind("\0moat-abstract")
x = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); x.bind("")
name = x.getsockname()
x.sendto(b"abs", "\0moat-abstract")
d, frm = ab.recvfrom(10)
print(d, len(name), frm == name, os.path.exists("/tmp/moat.sock"))'
	assert_eq "True 1
in use 98
b'path' /tmp/moat.sock /tmp/moat.sock
open 6
stale 111
b'abs' 6 True False" "$OUT" "path names are socket nodes; abstract names and autobind"
}

t_passcred_and_peercred()
{
	capture moat do -- $PY -c '
import os, socket, struct
a, b = socket.socketpair()
b.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
a.sendmsg([b"x"])
msg, anc, flags, _ = b.recvmsg(10, socket.CMSG_SPACE(12))
pid, uid, gid = struct.unpack("3i", anc[0][2])
print(msg, anc[0][1] == socket.SCM_CREDENTIALS, pid == os.getpid(), uid, gid)
print(struct.unpack("3i", a.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))[0] == os.getpid())
try:
    a.sendmsg([b"y"], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, struct.pack("3i", 1, 0, 0))])
    print("root may claim any pid")
except OSError as e:
    print(e.errno)'
	assert_eq "b'x' True True 0 0
True
root may claim any pid" "$OUT" "SCM_CREDENTIALS with SO_PASSCRED, SO_PEERCRED"
}

t_multiprocessing_forkserver()
{
	# A file, not -c: forkserver children import __main__ by path.
	cat >"$E2E_TMP/fs.py" <<'PY'
import multiprocessing as mp
def sq(x):
    return x * x
if __name__ == "__main__":
    ctx = mp.get_context("forkserver")
    with ctx.Pool(2) as p:
        print(p.map(sq, range(5)))
PY
	chmod 644 "$E2E_TMP/fs.py"
	capture moat do -- $PY "$E2E_TMP/fs.py"
	assert_eq "[0, 1, 4, 9, 16]" "$OUT" "multiprocessing's forkserver (AF_UNIX by path, SCM_RIGHTS)"
}

t_elsewhere_is_unreachable_and_audited()
{
	local audit=$E2E_TMP/audit-net.jsonl
	capture moat do --audit "$audit" -- $PY -c '
import socket
for fam, addr in ((socket.AF_INET, ("192.0.2.1", 80)), (socket.AF_INET6, ("2001:db8::1", 80))):
    try:
        socket.socket(fam).connect(addr)
    except OSError as e:
        print(e.errno)
try:
    socket.socket(socket.AF_INET).bind(("192.0.2.1", 0))
except OSError as e:
    print(e.errno)
try:
    socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
except OSError as e:
    print(e.errno)'
	assert_eq "101
101
99
97" "$OUT" "only loopback: ENETUNREACH, EADDRNOTAVAIL, EAFNOSUPPORT"
	assert_eq 2 "$(grep -c net-unreachable "$audit")" "one audit line per refused connect"
	assert_eq 1 "$(grep -c socket-refused "$audit")" "one audit line for the refused family"
}

t_interfaces_are_lo_only()
{
	capture moat do -- sh -c '
		ip -o addr | sed "s/  */ /g" | cut -d" " -f2-4
		ip route | wc -l
		python3 -c "import socket; print(socket.if_nameindex(), socket.if_nametoindex(\"lo\"))"
		ip link add dummy0 type dummy 2>&1 | head -1'
	assert_eq "lo inet 127.0.0.1/8
lo inet6 ::1/128
0
[(1, 'lo')] 1
RTNETLINK answers: Operation not permitted" "$OUT" "netlink and the interface ioctls describe lo alone; changes are refused"
}

t_ipv6_per_packet_ancillary_data()
{
	capture moat do -- $PY -c '
import socket, struct
a = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); a.bind(("::1", 0))
a.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVHOPLIMIT, 1)
a.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVTCLASS, 1)
b = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
b.sendmsg([b"x"], [(socket.IPPROTO_IPV6, socket.IPV6_HOPLIMIT, struct.pack("i", 7))], 0, a.getsockname())
msg, anc, flags, _ = a.recvmsg(10, 1024)
print(msg, sorted((t, struct.unpack("i", d)[0]) for l, t, d in anc) == sorted([(socket.IPV6_HOPLIMIT, 7), (socket.IPV6_TCLASS, 0)]))
b.sendto(b"y", a.getsockname())
msg, anc, flags, _ = a.recvmsg(10, socket.CMSG_LEN(4))
print(len(anc), bool(flags & socket.MSG_CTRUNC))'
	assert_eq "b'x' True
1 True" "$OUT" "IPV6_HOPLIMIT and IPV6_TCLASS, sent and received; a short buffer truncates"
}

t_tcp_send_after_peer_closed()
{
	local prog='
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
c = socket.create_connection(s.getsockname()); a, _ = s.accept()
c.close()
print(a.recv(10), a.send(b"first"))
for op in ("send", "recv", "send"):
    try:
        print(op, a.send(b"second") if op == "send" else a.recv(10))
    except OSError as e:
        print(op, type(e).__name__)'
	assert_same_as_native $PY -c "$prog"
	assert_eq "b'' 5
send BrokenPipeError
recv b''
send BrokenPipeError" "$OUT" "CLOSE_WAIT: the first send goes; the reset it meets fails the next, EPIPE, as natively"
}

t_empty_scm_rights_are_ignored()
{
	# cmsg_len == CMSG_LEN(0): no fds. Two of them once freed the file
	# array twice and killed the sentry.
	capture moat do -- $PY -c '
import socket
a, b = socket.socketpair()
print(a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, b"")] * 2))
print(b.recvmsg(10, 1024)[:2])'
	assert_eq "1
(b'x', [])" "$OUT" "empty SCM_RIGHTS messages are ignored, as on Linux"
}

t_stream_recvmsg_keeps_each_messages_files()
{
	# A zero-byte message with files, then two more with files: one
	# recvmsg took the first two and dropped the second's files. (Linux
	# queues nothing for a zero-byte stream send, and drops its files
	# there; the sentry carries them. Either way no recv drops any.)
	capture moat do -- $PY -c '
import array, os, socket
a, b = socket.socketpair()
r, w = os.pipe()
def fds(*f):
    return [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", f).tobytes())]
a.sendmsg([b""], fds(r)); a.sendmsg([b"1"], fds(w)); a.sendmsg([b"2"], fds(r, w))
got = []
try:
    while True:
        msg, anc, flags, _ = b.recvmsg(10, 1024, socket.MSG_DONTWAIT)
        got.append((msg, sum(len(d) // 4 for l, t, d in anc)))
except BlockingIOError:
    pass
print(got)'
	assert_eq "[(b'', 1), (b'1', 1), (b'2', 2)]" "$OUT" "no passed file is dropped by a stream recvmsg"
}

t_netlink_requests_never_read_overrun()
{
	# Replies to requests nobody reads: bounded by the socket's buffer,
	# then dropped with ENOBUFS on the next recv (netlink_overrun).
	capture moat do -- $PY -c '
import errno, socket, struct
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
# RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP
req = struct.pack("=LHHLLBxHiII", 32, 18, 0x301, 1, 0, 0, 0, 0, 0, 0)
for i in range(20000):
    s.send(req)
try:
    s.recv(65536, socket.MSG_DONTWAIT)
except OSError as e:
    print(errno.errorcode[e.errno])
held = 0
try:
    while True:
        held += len(s.recv(65536, socket.MSG_DONTWAIT))
except BlockingIOError:
    pass
print(0 < held <= 212992)
s.send(req); print(len(s.recv(65536)) > 0)'
	assert_eq "ENOBUFS
True
True" "$OUT" "a netlink flood ends in ENOBUFS, within the buffer, and the socket still works"
}

# recvmsg through libc, with iovec lengths of our choosing.
RECVMSG_PY='
import ctypes, errno, socket
libc = ctypes.CDLL(None, use_errno=True)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
class msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                ("iov", ctypes.POINTER(iovec)), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]
def recvmsg(fd, lens, flags):
    bufs = [ctypes.create_string_buffer(4096) for _ in lens]
    iov = (iovec * len(lens))(*[iovec(ctypes.addressof(b), l) for b, l in zip(bufs, lens)])
    m = msghdr(None, 0, iov, len(lens), None, 0, 0)
    r = libc.recvmsg(fd, ctypes.byref(m), flags | socket.MSG_DONTWAIT)
    return (r if r >= 0 else errno.errorcode[ctypes.get_errno()]), m, bufs
'

t_recvmsg_wrapping_iov_lengths_are_einval()
{
	# 2^63 + 2^63 + 16 is 16 in 64 bits: with MSG_TRUNC the sentry then
	# copied the whole datagram's length out of its shared buffer.
	capture moat do -- $PY -c "$RECVMSG_PY"'
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
a.send(b"d" * 1000)
print(recvmsg(b.fileno(), [1 << 63, 1 << 63, 16], socket.MSG_TRUNC)[0])
print(recvmsg(b.fileno(), [1 << 63, 16], 0)[0])
r, m, bufs = recvmsg(b.fileno(), [16], socket.MSG_TRUNC)
print(r, bufs[0].raw[:17] == b"d" * 16 + b"\0", m.flags == socket.MSG_TRUNC)'
	assert_eq "EINVAL
EINVAL
1000 True True" "$OUT" "iovec lengths past SSIZE_MAX are EINVAL; MSG_TRUNC writes only what fits"
}

t_msghdr_iovecs_up_to_uio_maxiov()
{
	# More than 64 iovecs were cut to 64, and msg_iovlen written back.
	capture moat do -- $PY -c "$RECVMSG_PY"'
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
a.send(b"e" * 300)
r, m, bufs = recvmsg(b.fileno(), [1] * 100 + [4096] * 100, 0)
print(r, m.iovlen, b"".join(x.raw[:1] for x in bufs[:100]) == b"e" * 100)
x, y = socket.socketpair()
x.sendmsg([b"%d" % (i % 10) for i in range(1024)])
bufs = [bytearray(1) for _ in range(1024)]
print(y.recvmsg_into(bufs, 0, socket.MSG_DONTWAIT)[0], b"".join(bufs) == b"0123456789" * 102 + b"0123")
try:
    y.recvmsg_into([bytearray(1) for _ in range(1025)])
except OSError as e:
    print(errno.errorcode[e.errno])'
	assert_eq "300 200 True
1024 True
EMSGSIZE" "$OUT" "up to 1024 iovecs each way, EMSGSIZE past; msg_iovlen left alone"
}

t_oversized_datagrams_are_emsgsize()
{
	# Datagrams past the protocol's limit were cut to 212992 bytes.
	capture moat do -- $PY -c '
import errno, socket
def send(fam, dst, rcv, sizes):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    out = []
    for n in sizes:
        for how in (lambda: s.sendto(b"u" * n, dst),
                    lambda: s.sendmsg([b"u" * (n // 2), b"u" * (n - n // 2)], [], 0, dst)):
            try:
                out.append(how())
                out.append(len(rcv.recv(1 << 20, socket.MSG_DONTWAIT)))
            except OSError as e:
                out.append(errno.errorcode[e.errno])
    return out
r4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); r4.bind(("127.0.0.1", 0))
print(send(socket.AF_INET, r4.getsockname(), r4, [65507, 65508, 300000]))
r6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); r6.bind(("::1", 0))
print(send(socket.AF_INET6, r6.getsockname()[:2], r6, [65527, 65528]))
ru = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); ru.bind("\0moat-big")
print(send(socket.AF_UNIX, "\0moat-big", ru, [212960, 212961, 300000]))'
	assert_eq "[65507, 65507, 65507, 65507, 'EMSGSIZE', 'EMSGSIZE', 'EMSGSIZE', 'EMSGSIZE']
[65527, 65527, 65527, 65527, 'EMSGSIZE', 'EMSGSIZE']
[212960, 212960, 212960, 212960, 'EMSGSIZE', 'EMSGSIZE', 'EMSGSIZE', 'EMSGSIZE']" "$OUT" \
		"UDP past 65507 (IPv4) or 65527 (IPv6), AF_UNIX past sndbuf - 32: EMSGSIZE"
}

t_dgram_connect_af_unspec_disconnects()
{
	capture moat do -- $PY -c '
import ctypes, errno, socket
libc = ctypes.CDLL(None, use_errno=True)
def unspec(s):
    sa = (ctypes.c_ushort * 8)(socket.AF_UNSPEC)
    r = libc.connect(s.fileno(), sa, ctypes.sizeof(sa))
    return r if r == 0 else errno.errorcode[ctypes.get_errno()]
def send(s):
    try:
        return s.send(b"x")
    except OSError as e:
        return errno.errorcode[e.errno]
rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); rx.bind("\0moat-unspec")
u = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); u.connect("\0moat-unspec")
print(send(u), unspec(u), send(u), u.sendto(b"y", "\0moat-unspec"))
r4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); r4.bind(("127.0.0.1", 0))
i = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); i.connect(r4.getsockname())
print(send(i), unspec(i), send(i))'
	assert_eq "1 0 ENOTCONN 1
1 0 EDESTADDRREQ" "$OUT" "connect(AF_UNSPEC) dissolves a datagram association"
}

t_ephemeral_ports_exhausted_fail_fast()
{
	# With every ephemeral port held, each bind(port 0) walked the bound
	# list once per port: seconds of sentry CPU per call.
	capture moat do -- $PY -c '
import errno, resource, socket
resource.setrlimit(resource.RLIMIT_NOFILE, (40000, 40000))
socks, errs = [], set()
while True:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind(("127.0.0.1", 0))
    except OSError as e:
        print(errno.errorcode[e.errno], len(socks)); s.close(); break
    socks.append(s)
for i in range(50):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(b"x", ("127.0.0.1", 9))
    except OSError as e:
        errs.add(errno.errorcode[e.errno])
    s.close()
port = socks[100].getsockname()[1]; socks[100].close()
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0))
print(sorted(errs), s.getsockname()[1] == port)'
	assert_eq "EADDRINUSE 28232
['EAGAIN'] True" "$OUT" "no ephemeral port left: EADDRINUSE (bind), EAGAIN (UDP autobind), at once"
}

run_test tcp_loopback_echo t_tcp_loopback_echo
run_test interfaces_are_lo_only t_interfaces_are_lo_only
run_test ipv6_per_packet_ancillary_data t_ipv6_per_packet_ancillary_data
run_test tcp_send_after_peer_closed t_tcp_send_after_peer_closed
run_test nonblocking_connect_and_asyncio t_nonblocking_connect_and_asyncio
run_test ipv6_and_dual_stack t_ipv6_and_dual_stack
run_test udp_loopback t_udp_loopback
run_test unix_path_abstract_autobind t_unix_path_abstract_autobind
run_test passcred_and_peercred t_passcred_and_peercred
run_test multiprocessing_forkserver t_multiprocessing_forkserver
run_test elsewhere_is_unreachable_and_audited t_elsewhere_is_unreachable_and_audited
run_test empty_scm_rights_are_ignored t_empty_scm_rights_are_ignored
run_test stream_recvmsg_keeps_each_messages_files t_stream_recvmsg_keeps_each_messages_files
run_test netlink_requests_never_read_overrun t_netlink_requests_never_read_overrun
run_test recvmsg_wrapping_iov_lengths_are_einval t_recvmsg_wrapping_iov_lengths_are_einval
run_test msghdr_iovecs_up_to_uio_maxiov t_msghdr_iovecs_up_to_uio_maxiov
run_test oversized_datagrams_are_emsgsize t_oversized_datagrams_are_emsgsize
run_test dgram_connect_af_unspec_disconnects t_dgram_connect_af_unspec_disconnects
run_test ephemeral_ports_exhausted_fail_fast t_ephemeral_ports_exhausted_fail_fast

t_rcvtimeo_matches_native()
{
	cp "$E2E_ROOT/tests/e2e/sock_timeo.py" "$E2E_TMP/sock_timeo.py"
	chmod 644 "$E2E_TMP/sock_timeo.py"
	assert_same_as_native $PY "$E2E_TMP/sock_timeo.py"
	assert_contains "$OUT" "accept EAGAIN"
}

run_test rcvtimeo_matches_native t_rcvtimeo_matches_native

t_waitall_matches_native()
{
	cp "$E2E_ROOT/tests/e2e/sock_waitall.py" "$E2E_TMP/sock_waitall.py"
	chmod 644 "$E2E_TMP/sock_waitall.py"
	assert_same_as_native $PY "$E2E_TMP/sock_waitall.py"
	assert_contains "$OUT" "5000 0"
}

run_test waitall_matches_native t_waitall_matches_native

t_tcp_info_and_congestion_match_native()
{
	cp "$E2E_ROOT/tests/e2e/sock_tcpinfo.py" "$E2E_TMP/sock_tcpinfo.py"
	chmod 644 "$E2E_TMP/sock_tcpinfo.py"
	assert_same_as_native $PY "$E2E_TMP/sock_tcpinfo.py"
	assert_contains "$OUT" "bad cc 2"
}

run_test tcp_info_and_congestion_match_native t_tcp_info_and_congestion_match_native

# A blocking sendfile to a socket whose peer closes mid-transfer: what was
# sent, then EPIPE and SIGPIPE, as natively; from a file of the rootfs (the
# host's, through the gofer) and from the sandbox's /tmp.
t_sendfile_peer_close_matches_native()
{
	gcc -O1 -Wall -o "$E2E_TMP/sendfile_peer_close" "$E2E_ROOT/tests/e2e/sendfile_peer_close.c" ||
		fail "cannot build sendfile_peer_close.c"
	chmod 755 "$E2E_TMP/sendfile_peer_close"
	head -c 32M /dev/urandom >"$E2E_TMP/big.dat"
	chmod 644 "$E2E_TMP/big.dat"
	capture native "$E2E_TMP/sendfile_peer_close" "$E2E_TMP/big.dat"
	local want=$OUT
	assert_contains "$want" "tcp, SIGPIPE SIG_IGN: part of it, then -1 Broken pipe" "natively: what was sent, then EPIPE"
	capture moat do -- "$E2E_TMP/sendfile_peer_close" "$E2E_TMP/big.dat"
	assert_eq "$want" "$OUT" "sendfile from the rootfs to a socket whose peer closes"
	capture moat do -- /bin/sh -c 'head -c 32M /dev/urandom >/tmp/big.dat && exec "$0" /tmp/big.dat' "$E2E_TMP/sendfile_peer_close"
	assert_eq "$want" "$OUT" "sendfile from /tmp to a socket whose peer closes"
}

# asyncio's loop.sock_sendfile (non-blocking sockets, os.sendfile in a
# loop) fails with EPIPE or ECONNRESET when the peer closes early, and
# delivers every byte when it does not.
t_sock_sendfile_asyncio_matches_native()
{
	cp "$E2E_ROOT/tests/e2e/sendfile_asyncio.py" "$E2E_TMP/sendfile_asyncio.py"
	chmod 644 "$E2E_TMP/sendfile_asyncio.py"
	head -c 16M /dev/urandom >"$E2E_TMP/big.dat"
	chmod 644 "$E2E_TMP/big.dat"
	assert_same_as_native $PY "$E2E_TMP/sendfile_asyncio.py" "$E2E_TMP/big.dat"
	local want="AF_UNIX closes early peer gone True
AF_UNIX reads all sent 16777216 True
AF_INET closes early peer gone True
AF_INET reads all sent 16777216 True"
	assert_eq "$want" "$OUT" "sock_sendfile from the rootfs"
	capture moat do -- $PY "$E2E_TMP/sendfile_asyncio.py" /tmp/big.dat
	assert_eq "$want" "$OUT" "sock_sendfile from /tmp"
}

run_test sendfile_peer_close_matches_native t_sendfile_peer_close_matches_native
run_test sock_sendfile_asyncio_matches_native t_sock_sendfile_asyncio_matches_native
