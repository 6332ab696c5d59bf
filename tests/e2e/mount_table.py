# The mount table as /proc shows it, checked against itself and against
# stat and statvfs: ids, parents, st_dev, the options statvfs reports, the
# same mounts in /proc/mounts, mountstats and /proc/<pid>/mountinfo. Prints
# "ok" or each disagreement, then "POINT FSTYPE SOURCE OPTS" per mount.
import os, re, sys

def unesc(s):
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), s)

def esc(s):
    return "".join("\\%03o" % ord(c) if c in " \t\n\\" else c for c in s)

FLAGS = {"ro": os.ST_RDONLY, "nosuid": os.ST_NOSUID, "nodev": os.ST_NODEV,
         "noexec": os.ST_NOEXEC, "relatime": os.ST_RELATIME,
         "noatime": os.ST_NOATIME, "nodiratime": os.ST_NODIRATIME}
MASK = 0
for v in FLAGS.values():
    MASK |= v

def mountinfo(path):
    out = []
    for line in open(path):
        a, b = line.rstrip("\n").split(" - ")
        f, g = a.split(" "), b.split(" ")
        out.append(dict(id=int(f[0]), parent=int(f[1]), dev=f[2],
                        root=unesc(f[3]), point=unesc(f[4]), opts=f[5],
                        fstype=unesc(g[0]), source=unesc(g[1]), sopts=g[2]))
    return out

text = open("/proc/self/mountinfo").read()
ents = mountinfo("/proc/self/mountinfo")
errs = []
if open("/proc/%d/mountinfo" % os.getpid()).read() != text:
    errs.append("/proc/<pid>/mountinfo differs from /proc/self's")
ids = [e["id"] for e in ents]
if len(set(ids)) != len(ids):
    errs.append("duplicate mount ids")
for i, e in enumerate(ents):
    p = e["point"]
    if p != "/" and e["parent"] not in ids:
        errs.append("%s: parent %d not listed" % (p, e["parent"]))
    # the mount seen at p: no later one on p or on a directory above it
    if any(x["point"] == p or p.startswith(x["point"].rstrip("/") + "/")
           for x in ents[i + 1:]):
        continue
    st = os.stat(p)
    if "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev)) != e["dev"]:
        errs.append("%s: listed %s, st_dev %d:%d" % (p, e["dev"],
                    os.major(st.st_dev), os.minor(st.st_dev)))
    want = 0
    for o in e["opts"].split(","):
        want |= FLAGS.get(o, 0)
    got = os.statvfs(p).f_flag & MASK
    if got != want:
        errs.append("%s: listed %s, statvfs f_flag %#x" % (p, e["opts"], got))
mounts = [l.split(" ") for l in open("/proc/mounts").read().splitlines()]
if len(mounts) != len(ents):
    errs.append("/proc/mounts: %d lines, mountinfo %d" % (len(mounts), len(ents)))
for m, e in zip(mounts, ents):
    extra = e["sopts"].split(",", 1)[1:]
    want = [e["source"], e["point"], e["fstype"],
            ",".join([e["opts"]] + extra), "0", "0"]
    if [unesc(x) for x in m] != want:
        errs.append("/proc/mounts: %s, mountinfo says %s" % (m, want))
stats = [l for l in open("/proc/self/mountstats").read().splitlines()
         if l.startswith("device ")]
for s, e in zip(stats, ents):
    want = "device %s mounted on %s with fstype %s" % tuple(
        esc(x) for x in (e["source"], e["point"], e["fstype"]))
    if not s.startswith(want):
        errs.append("mountstats: %r, want %r" % (s, want))
if len(stats) != len(ents):
    errs.append("mountstats: %d mounts, mountinfo %d" % (len(stats), len(ents)))
print("\n".join(errs) if errs else "ok")
for e in ents:
    print(e["point"], e["fstype"], e["source"], e["opts"])
