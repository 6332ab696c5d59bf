#!/usr/bin/python3
"""A client of a sandbox's control socket for pod members (docs/control.md),
written the way cli/ speaks it, so that the sentry's side is tested alone.

    pod_client.py MOAT SOCK container NAME ROOTFS [opts] -- ARGV...
        opts: --ro, --bind SRC:DST[:rw], --tmpfs DST, --rdonly P, --mask P,
              --cwd D, --env K=V, --share-pids (the pod's pid namespace),
              --no-rootfs-fd (a malformed request)
    pod_client.py MOAT SOCK exec NAME -- ARGV...    (NAME "-": the sandbox)
    pod_client.py MOAT SOCK line 'REQUEST'          (a one-line request)
    pod_client.py MOAT SOCK raw 'HEAD' FIELD...     (a body as given, no fd)

Prints the answer's lines as they come ("ok PID", "exit STATUS", ...).
"""
import array
import os
import socket
import subprocess
import sys


def gofer(moat, root, rw=False):
    """A gofer of root, as the CLI starts one: its socket."""
    a, b = socket.socketpair()
    st = os.stat(root)
    subprocess.Popen(
        [moat, "gofer", "--root", root, "--fd", str(b.fileno()),
         "--expect", f"{st.st_dev}:{st.st_ino}"] + (["--rw"] if rw else []),
        pass_fds=(b.fileno(),))
    b.close()
    return a


def exec_fields(argv, cwd="/", env=("PATH=/bin:/usr/bin",)):
    return ([cwd, "0", "0", "0", str(len(argv))] + list(argv)
            + [str(len(env))] + list(env))


def send(sock_path, head, fields, fds):
    body = b"".join(f.encode() + b"\0" for f in fields)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    msg = head.replace("LEN", str(len(body))).encode() + b"\n" + body
    anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
            array.array("i", fds))] if fds else []
    s.sendmsg([msg], anc)
    return s


def container(moat, sock_path, name, rootfs, args):
    ro, binds, tmpfs, rdonly, mask = "0", [], [], [], []
    cwd, env, rootfs_fd, own_pids = "/", ["PATH=/bin:/usr/bin"], True, "1"
    while args and args[0] != "--":
        o = args.pop(0)
        if o == "--ro":
            ro = "1"
        elif o == "--no-rootfs-fd":
            rootfs_fd = False
        elif o == "--share-pids":
            own_pids = "0"
        elif o == "--bind":
            binds.append(args.pop(0))
        elif o == "--tmpfs":
            tmpfs.append(args.pop(0))
        elif o == "--rdonly":
            rdonly.append(args.pop(0))
        elif o == "--mask":
            mask.append(args.pop(0))
        elif o == "--cwd":
            cwd = args.pop(0)
        elif o == "--env":
            env.append(args.pop(0))
    argv = args[1:]
    socks = [gofer(moat, rootfs)] if rootfs_fd else []
    fields = [ro, str(len(binds) + len(tmpfs))]
    for d in tmpfs:
        fields += ["tmpfs", d, "0", "755", "0", "0", "0", "0", ""]
    for b in binds:
        src, dst, *mode = b.split(":")
        mode = mode[0] if mode else "ro"
        socks.append(gofer(moat, src, mode == "rw"))
        fields += ["bind", dst, mode, "0"]
    fields += [str(len(rdonly))] + rdonly + [str(len(mask))] + mask
    fields += [own_pids]
    fields += exec_fields(argv, cwd, env)
    s = send(sock_path, f"container LEN {name}", fields,
             [0, 1, 2] + [x.fileno() for x in socks])
    for x in socks:
        x.close()
    return s


def main():
    moat, sock_path, kind = sys.argv[1:4]
    rest = sys.argv[4:]
    if kind == "container":
        s = container(moat, sock_path, rest[0], rest[1], rest[2:])
    elif kind == "exec":
        name = "" if rest[0] == "-" else " " + rest[0]
        s = send(sock_path, "exec LEN" + name, exec_fields(rest[2:]),
                 [0, 1, 2])
    elif kind == "raw":
        s = send(sock_path, rest[0], rest[1:], [])
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sock_path)
        s.sendall(rest[0].encode() + b"\n")
    for line in s.makefile("r", errors="replace"):
        print(line.rstrip("\n"), flush=True)


main()
