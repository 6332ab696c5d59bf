# tests/oci/caps_checks.py: privilege checks that ask a capability, not
# uid 0. Run as root (natively, and in `moat do`); prints one line per
# check, the same in both.
import ctypes
import os
import struct

libc = ctypes.CDLL(None, use_errno=True)
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_KILL = 1, 2, 5
SYS_capget, SYS_capset = 125, 126


def caps():
    hdr = ctypes.create_string_buffer(struct.pack("II", 0x20080522, 0), 8)
    data = ctypes.create_string_buffer(24)
    if libc.syscall(SYS_capget, hdr, data) < 0:
        raise OSError(ctypes.get_errno(), "capget")
    e0, p0, i0, e1, p1, i1 = struct.unpack("6I", data.raw)
    return e0 | e1 << 32, p0 | p1 << 32, i0 | i1 << 32


def capset(eff, prm, inh):
    hdr = ctypes.create_string_buffer(struct.pack("II", 0x20080522, 0), 8)
    data = ctypes.create_string_buffer(
        struct.pack("6I", eff & 0xFFFFFFFF, prm & 0xFFFFFFFF, inh & 0xFFFFFFFF,
                    eff >> 32, prm >> 32, inh >> 32), 24)
    if libc.syscall(SYS_capset, hdr, data) < 0:
        return os.strerror(ctypes.get_errno())
    return "ok"


def try_open(path):
    try:
        os.close(os.open(path, os.O_RDONLY))
        return "ok"
    except OSError as e:
        return e.strerror


d = "/tmp/caps-checks"
os.makedirs(d, exist_ok=True)
f = d + "/f"
open(f, "w").close()
os.chown(f, 1000, 1000)
os.chmod(f, 0o600)
eff, prm, inh = caps()
dac = 1 << CAP_DAC_OVERRIDE | 1 << CAP_DAC_READ_SEARCH
print("root opens another's 0600 file:", try_open(f))
print("drop DAC_OVERRIDE, DAC_READ_SEARCH:", capset(eff & ~dac, prm, inh))
print("without them:", try_open(f))
print("take them back (still permitted):", capset(eff, prm, inh))
print("with them again:", try_open(f))

# kill(2): another uid's process only with CAP_KILL
r, w = os.pipe()
child = os.fork()
if child == 0:
    os.close(w)
    os.read(r, 1)  # until the parent is gone
    os._exit(0)
os.close(r)
os.kill(child, 0)
print("root signals a root process: ok")
print("drop CAP_KILL:", capset(eff & ~(1 << CAP_KILL), prm, inh))
try:
    os.kill(child, 0)
    print("root without CAP_KILL signals a root process: ok")
except OSError as e:
    print("root without CAP_KILL signals a root process:", e.strerror)
os.setresuid(1000, 1000, 1000)
print("after setresuid(1000): caps %x %x %x" % caps())
try:
    os.kill(child, 0)
    print("uid 1000 signals root's process: ok")
except OSError as e:
    print("uid 1000 signals root's process:", e.strerror)
print("uid 1000 opens its own 0600 file:", try_open(f))
os.close(w)
os.waitpid(child, 0)
