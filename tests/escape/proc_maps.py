"""Every device and inode number in this process's /proc/self/maps (and
smaps, numa_maps and map_files, where they exist) against what stat()
says of the same path here: a file mapping must show the stat()'s
dev:ino, anything else 00:00 0. Prints one line per mapped path
("map PATH MAJ:MIN INO") for the caller to compare with the host, then
"bad ..." lines, then "checked N"."""
import mmap, os, sys

path = sys.argv[1] if len(sys.argv) > 1 else "/tmp/maps-probe"
with open(path, "wb") as f:
    f.write(b"x" * 8192)
f = open(path, "r+b")
m = mmap.mmap(f.fileno(), 0)  # a shared mapping of a file of /tmp
ro = open(path, "rb")
mr = mmap.mmap(ro.fileno(), 0, prot=mmap.PROT_READ, flags=mmap.MAP_PRIVATE)

bad, seen, checked = [], {}, 0


def check(where, line):
    global checked
    parts = line.split(None, 5)
    if len(parts) < 5 or "-" not in parts[0]:
        return
    dev, ino = parts[3], int(parts[4])
    name = parts[5].strip() if len(parts) > 5 else ""
    maj, mi = (int(x, 16) for x in dev.split(":"))
    checked += 1
    if name.startswith("/") and not name.endswith("(deleted)"):
        try:
            st = os.stat(name)
        except OSError as e:
            bad.append(f"{where}: {name}: stat: {e}")
            return
        want = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
        if (maj, mi, ino) != want:
            bad.append(f"{where}: {line!r} but stat says "
                       f"{want[0]:02x}:{want[1]:02x} {want[2]}")
        seen[name] = f"{maj:02x}:{mi:02x} {ino}"
    elif not name.startswith("/") and (maj, mi, ino) != (0, 0, 0):
        bad.append(f"{where}: not a file, yet {line!r}")


for line in open("/proc/self/maps"):
    check("maps", line)
if path not in seen:
    bad.append(f"maps: no line for {path}")
for extra in ("smaps", "numa_maps"):
    try:
        text = open(f"/proc/self/{extra}").read()
    except FileNotFoundError:
        print("absent", extra)
        continue
    for line in text.splitlines():
        if line[:1].isdigit() or line[:1] in "abcdef":
            if extra == "smaps":
                check(extra, line)
try:
    for e in os.listdir("/proc/self/map_files"):
        target = os.readlink(f"/proc/self/map_files/{e}")
        if target.startswith("/") and not os.path.exists(target):
            bad.append(f"map_files: {e} -> {target}, no such guest file")
except FileNotFoundError:
    print("absent map_files")
for name, v in sorted(seen.items()):
    print("map", name, v)
for b in bad:
    print("bad", b)
print("checked", checked)
