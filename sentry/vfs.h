/* sentry/vfs.h: vnodes, the mount table, path resolution, open files and
 * fd tables.
 *
 * Paths are resolved by the sentry, one component at a time: symlinks (40
 * at most, ELOOP past that), "." and "..", which is clamped at the root, and
 * mount points. The gofer is asked only for single components the sentry has
 * already checked. Every vnode carries its canonical absolute guest path;
 * ".." is its dirname, which is sound because symlinks are resolved before a
 * path becomes canonical.
 *
 * The root filesystem is read-only for the sandbox's life, so gofer vnodes
 * (and failed lookups) are cached for good: python's import system probes
 * hundreds of missing paths, each a round trip otherwise.
 */
#ifndef MOAT_VFS_H
#define MOAT_VFS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/types.h>

#include "sentry/sentry.h"

enum vn_kind {
	VN_GOFER, /* a file of the rootfs, served by the gofer */
	VN_PROC,  /* procfs (sentry/fs_proc.c) */
	VN_DEV,	  /* devfs (sentry/fs_dev.c) */
	VN_TMPFS, /* tmpfs in the sentry's memory (sentry/fs_tmpfs.c) */
	VN_HOST,  /* a host directory bound ro or rw (sentry/fs_host.c) */
	VN_MQUEUE, /* /dev/mqueue and its POSIX message queues (sentry/mqueue.c) */
	VN_SYS,	   /* sysfs, read-only (sentry/fs_sys.c, sentry/sysfs.c) */
};

/* `--mount SRC:DST:MODE`: a host directory, served by a gofer of its own
 * (read-write only for MNT_RW). MNT_CLONE trees are not mounted over the
 * namespace: they are grafted into the overlay's lower layer at DST, so
 * the guest changes a copy in memory and the host never sees it. */
enum mnt_mode {
	MNT_RO,
	MNT_RW,
	MNT_CLONE
};

/* st_dev of every filesystem the sentry serves: one per mount, so that
 * stat() and the mount table (vfs_mount_table) agree on which mount a
 * file is in. */
#define VFS_DEV_ROOT makedev(0, 30)
#define VFS_DEV_PROC makedev(0, 20)
#define VFS_DEV_DEV makedev(0, 5)
#define VFS_DEV_PTS makedev(0, 0x18)
#define VFS_DEV_MQUEUE makedev(0, 0x2a)
#define VFS_DEV_SYS makedev(0, 0x15)
#define VFS_DEV_TMP makedev(0, 0x30)
#define VFS_DEV_SHM makedev(0, 0x31)
#define VFS_DEV_MOUNT(i) makedev(0, 0x40 + (unsigned)(i)) /* mounts[i] */

/* What a mount-table entry is. */
enum vmount_kind {
	VMOUNT_HOST, /* a host directory, a gofer's tree (mode: ro, rw, clone) */
	VMOUNT_TMPFS, /* a tmpfs of its own (p9 NULL); a masked directory too */
	VMOUNT_NULL,  /* a masked file (linux.maskedPaths): /dev/null over it */
	/* linux.readonlyPaths: the path bound over itself, read-only, as
	 * runc's `mount --rbind P P` then a read-only remount of P alone:
	 * root NULL, since lookups go on below as before (vfs_bound_ro) */
	VMOUNT_BIND,
};

struct vmount {
	char *path; /* canonical guest path of the mount point */
	enum vmount_kind kind;
	enum mnt_mode mode;
	bool noexec;	    /* execve EACCES, mmap PROT_EXEC EPERM */
	const char *source; /* tmpfs: the mount's source as given, or NULL */
	long magic;	    /* statfs f_type: the host's for a bind */
	struct p9_client *p9;
	uint32_t rootfid;
	dev_t dev; /* st_dev of every file under it */
	struct vnode *root;
};

/* A mount namespace: a root filesystem (an overlay over its gofer's tree)
 * with its own mounts. The sandbox has one; each member of a pod (a
 * workload container, docs/kubernetes.md) has one of its own. procfs,
 * devfs, /dev/shm, /dev/mqueue and sysfs are the sandbox's, in every one.
 * A member's namespace lives while a process is in it or a file opened
 * in it is open (vfs_ns_check). */
#define VFS_MOUNTS_MAX 64
struct mntns {
	int refs;    /* processes in it (and the sandbox's hold on ns0) */
	long nfiles; /* open file descriptions made in it */
	char *name;  /* a member's container ID; NULL: the sandbox's own */
	struct p9_client *p9; /* the rootfs's gofer */
	uint32_t rootfid;
	/* root_vn: the rootfs's "/" (the overlay's lower root); top_vn:
	 * the "/" that paths start from, the merged one; tmp_vn: /tmp */
	struct vnode *root_vn, *top_vn, *tmp_vn;
	/* mounts in the order made (a later one may sit inside an earlier);
	 * nbinds of them VMOUNT_BIND */
	struct vmount mounts[VFS_MOUNTS_MAX];
	size_t nmounts, nbinds;
	/* the overlay's (sentry/overlay.c): its upper layer's root, and
	 * whether the rootfs is read-only */
	struct vnode *upper_root;
	bool ovl_ro;
	/* the pid namespace of the processes in it, which its /proc shows
	 * (as Linux's procfs mount has one): a member's own, or NULL */
	struct pidns *pidns;
	bool ended; /* its member's processes are gone: a new one is refused */
	struct mntns *next; /* the members' list */
};

/* The namespace that walks and mount-table changes are in now. A syscall
 * enters its task's (syscall_dispatch); setup enters the one it builds. */
struct mntns *vfs_ns(void);
void vfs_ns_enter(struct mntns *ns);
/* The sandbox's own namespace. */
struct mntns *vfs_ns0(void);
/* A new namespace for member name over the rootfs gofer p9 (its root
 * fid rootfid; both the namespace's from now on), entered: its mounts
 * are then made with vfs_add_mount, vfs_add_tmpfs and the rest, as at
 * boot. A reference in *out. 0, or -1 and err. */
int vfs_ns_new(const char *name, struct p9_client *p9, uint32_t rootfid,
	       struct mntns **out, struct moat_error *err);
/* The live namespace of member name, or NULL. */
struct mntns *vfs_ns_find(const char *name);
struct mntns *vfs_ns_get(struct mntns *ns);
/* A process leaves it. A member's namespace that no process is in and no
 * open file was made in ends: its gofers' clients are closed (each gofer
 * then ends). */
void vfs_ns_put(struct mntns *ns);
/* Has ns come to that end (a file made in it closed)? */
void vfs_ns_check(struct mntns *ns);

struct vnode {
	int refs;
	struct mntns *ns; /* the namespace it was made in */
	enum vn_kind kind;
	mode_t mode;   /* S_IFMT bits and permissions */
	char *path;    /* canonical absolute guest path */
	bool cached;   /* owned by the dentry cache, never freed */
	bool negative; /* cached "does not exist" */
	/* VN_GOFER, VN_HOST */
	struct vmount *mnt; /* NULL: the rootfs */
	uint32_t fid;
	struct stat st;
	char *link; /* symlink target, read once */
	int hostfd; /* shared O_RDONLY host fd of a regular file, or -1 */
	int nopen;  /* open files using hostfd */
	/* LRU of unused host fds: of cached gofer files (vfs.c), of stored
	 * tmpfs files (fs_tmpfs.c) */
	struct vnode *idle_prev, *idle_next;
	/* VN_PROC / VN_DEV */
	int pk;		  /* node kind inside the synthetic fs */
	int pid;	  /* procfs: virtual pid the node is about */
	int num;	  /* procfs: fd number; devfs: minor */
	struct tnode *tn; /* VN_TMPFS: the node's data (fs_tmpfs.c) */
	struct mqueue *mq; /* VN_MQUEUE: the queue (a reference); NULL: the dir */
	struct vnode *hash_next;
};

/* Host fds of closed files kept for reuse, at most (an LRU). */
#define VFS_IDLE_FDS_MAX 256

struct vnode *vnode_get(struct vnode *vn);
void vnode_put(struct vnode *vn);
/* Allocate a synthetic vnode (procfs/devfs); path is copied. NULL on ENOMEM. */
struct vnode *vnode_new(enum vn_kind kind, mode_t mode, const char *path);
/* The shared host fd of a regular gofer file: opened on first use, kept
 * while files use it, and kept a while longer on a bounded LRU after. */
int vnode_hostfd_get(struct vnode *vn);
void vnode_hostfd_put(struct vnode *vn);

int vfs_init(uint32_t rootfid, struct moat_error *err);
/* Add a mount (after vfs_init, before the first task): dst must be a
 * canonical absolute path; noexec: its files may not be executed. The
 * client is the mount's from now on. A
 * mount point missing from the rootfs is made in the overlay, so that
 * listings of its parent show it; the mount goes where dst resolves
 * (symlinks followed inside the sandbox, vfs_mkdir_p). The gofer's root
 * may be a regular file (a file bind mount, not MNT_CLONE): its mount
 * point is then a file, and a lookup of that path finds the host file.
 * Directly in /dev nothing is made: the mount shadows devfs's node of
 * that name, or adds one (vfs_dev_mounts). */
int vfs_add_mount(const char *dst, enum mnt_mode mode, bool noexec,
		  struct p9_client *p9, uint32_t rootfid,
		  struct moat_error *err);
/* The mounts directly in /dev (a file bound at /dev/termination-log, a
 * tmpfs at /dev/x) that are no devfs node of their own: emit(ctx, name,
 * mode) for each, in mount order, until it returns false (then false).
 * devfs's listing of /dev ends with them. */
bool vfs_dev_mounts(bool (*emit)(void *ctx, const char *name, mode_t mode),
		    void *ctx);
/* Make directory path exist in the merged view (setup: mount points,
 * copied files), in one walk from the sandbox's "/" that follows symlinks
 * inside the sandbox and makes what is missing (a dangling link's target
 * too, as runc does). last: the attributes of its last component if it is
 * made, or NULL. 0 and, if out, a reference to the directory (its path is
 * the canonical one); or -errno (ENAMETOOLONG past PATH_MAX, ENOTDIR,
 * ELOOP, EROFS in a read-only mount). */
int vfs_mkdir_p(const char *path, const struct stat *last, struct vnode **out);
/* A tmpfs of its own at ts->dst, with its mode, owner and ro (sharing
 * the sandbox's --disk budget). */
struct tmpfs_spec;
int vfs_add_tmpfs(const struct tmpfs_spec *ts, struct moat_error *err);
/* The end of setup: the ro ones among them become read-only. */
void vfs_seal_tmpfs(void);
/* OCI linux.maskedPaths (after the mounts and readonlyPaths, as runc):
 * path, resolved in the sandbox with its symlinks followed, gets an empty
 * read-only tmpfs over it if it is a directory, /dev/null if it is
 * anything else. A path that does not exist is no error, as runc's. 0, or
 * -1 and err (a path through a non-directory, ENOTDIR, as runc's; "/"). */
int vfs_mask_path(const char *path, struct moat_error *err);
/* OCI linux.readonlyPaths: path, resolved as above, becomes a read-only
 * bind of itself (VMOUNT_BIND): EROFS for any change at or under it, but
 * for mounts made over it before, which keep their own mode (runc's
 * read-only remount is not recursive). "/" makes the rootfs read-only.
 * Missing: no error. 0, or -1 and err. */
int vfs_readonly_path(const char *path, struct moat_error *err);
/* Is vn at or under a readonlyPaths bind, not in a mount made over it?
 * (Each filesystem's write paths ask, through their read-only checks.) */
bool vfs_bound_ro(const struct vnode *vn);
/* A host directory's vnode (VN_HOST) that takes no change: its mount is
 * ro, or it lies under a readonlyPaths bind. */
bool vfs_host_readonly(const struct vnode *vn);
/* Do a and b lie in one mount (link(2) and rename(2) need it: EXDEV)? */
bool vfs_same_mount(struct vnode *a, struct vnode *b);
/* Is there a mount point strictly below the canonical directory path?
 * Mounts are kept by path, so such a directory is not renamed (EBUSY):
 * its mounts, a mask among them, would stay where it was. */
bool vfs_mounts_below(const char *path);
/* The 9P client of a gofer-served vnode (the rootfs's, or its mount's). */
struct p9_client *vn_p9(const struct vnode *vn);
/* Close every mount's client (at exit). */
void vfs_close_mounts(void);

#define LOOKUP_FOLLOW 1 /* follow a symlink in the last component */
#define LOOKUP_EMPTY 2	/* "" means dirfd itself (AT_EMPTY_PATH) */
/* openat2's RESOLVE_* flags, as openat2(2) defines them (t must be set).
 * BENEATH: never above the start (EXDEV for "/", an absolute symlink, ".."
 * at the start, a magic link). IN_ROOT: the start is the root ("/",
 * absolute symlinks and ".." stop there; magic links EXDEV). NO_SYMLINKS:
 * ELOOP for any symlink followed; NO_MAGICLINKS: for /proc/<pid>/fd/N, exe,
 * cwd and root. NO_XDEV: EXDEV for any step onto another mount. CACHED:
 * EAGAIN where the walk needs the gofer or finds nothing (Linux: where it
 * is not all in the dcache). */
#define LOOKUP_BENEATH 4
#define LOOKUP_IN_ROOT 8
#define LOOKUP_NO_SYMLINKS 16
#define LOOKUP_NO_MAGICLINKS 32
#define LOOKUP_NO_XDEV 64
#define LOOKUP_CACHED 128
#define LOOKUP_SCOPED (LOOKUP_BENEATH | LOOKUP_IN_ROOT)
/* Resolve path relative to dirfd (AT_FDCWD: the cwd) for task t (t may be
 * NULL for the CLI: resolves from the root). Returns 0 and a reference in
 * *out, or -errno. */
int vfs_resolve(struct task *t, int dirfd, const char *path, int flags,
		struct vnode **out);
/* Resolve all but the last component of path (which must be a directory);
 * the last component is copied to name (NAME_MAX + 1 bytes). A trailing
 * slash sets *trailing. "." and ".." as last components give -EINVAL
 * (callers map it). A path that is a mount point gives -EBUSY. */
int vfs_resolve_parent(struct task *t, int dirfd, const char *path,
		       struct vnode **dir, char *name, bool *trailing);
/* The same, walking with LOOKUP_* flags rflags (openat2's RESOLVE_*). */
int vfs_resolve_parent_flags(struct task *t, int dirfd, const char *path,
			     int rflags, struct vnode **dir, char *name,
			     bool *trailing);
/* Create a regular file at path (open O_CREAT on a missing name); mode is
 * masked with the umask here; rflags: LOOKUP_* resolve flags for the
 * walk to the directory. Returns a reference in *out. */
int fs_create(struct task *t, int dirfd, const char *path, mode_t mode,
	      int rflags, struct vnode **out);
/* The rootfs alone (the overlay's lower layer), by canonical path. */
int vfs_lower_lookup(const char *path, struct vnode **out);
/* Is path (canonical, absolute) at or under a mount point (procfs, devfs,
 * a tmpfs, a --mount; not a clone, which is part of the rootfs)? Then the
 * rootfs's own file there is out of the guest's view. */
bool vfs_mounted_over(const char *path);
/* Is path where a clone mount is grafted into that lower layer? */
bool vfs_is_clone_root(const char *path);
int vfs_stat(struct vnode *vn, struct stat *st);
int vfs_readlink(struct vnode *vn, char *buf,
		 size_t cap); /* length or -errno */
/* A number for an object the guest must not learn more of (a host inode,
 * a sentry address): keyed per sandbox, equal for equal v, never 0. */
uint32_t opaque_id(uint64_t v);
/* Is g the fs group of c, or one of its supplementary groups? */
bool creds_in_group(const struct creds *c, gid_t g);
/* Permission check against the virtual credentials (mask: R_OK|W_OK|X_OK):
 * the mode for c's fs ids, then CAP_DAC_READ_SEARCH and CAP_DAC_OVERRIDE
 * in c's effective set, never uid 0 as such. */
int vfs_access(const struct creds *c, struct vnode *vn, int mask);
/* vfs_access as task t asks it, with c its credentials for the check
 * (faccessat's real ids, or t's own): also what Linux's permission ops
 * grant the asking process itself whatever the mode says
 * (procfs_self_access). t NULL: vfs_access. */
int vfs_task_access(struct task *t, const struct creds *c, struct vnode *vn,
		    int mask);
/* The canonical path of name in dir (0, or -ENAMETOOLONG). */
int vfs_child_path(struct vnode *dir, const char *name, char *out, size_t cap);
/* The sticky-directory rule: may c remove or replace, in dir, a name whose
 * file owner owns? (0 or -EPERM; CAP_FOWNER may) */
int vfs_sticky_ok(const struct creds *c, struct vnode *dir, uid_t owner);
/* statfs of the filesystem vn is in: f_flags are its mount's
 * (vfs_mount_of) with ST_VALID, as Linux reports them. */
int vfs_statfs(struct vnode *vn, struct statfs *st);

/* ---- the mount table ----------------------------------------------------
 *
 * Every mount the guest sees, in the order it was made: the root, /proc,
 * /dev, /dev/pts, /dev/shm, /dev/mqueue, /sys (but for an OCI bundle that
 * mounts no sysfs), /tmp, then the `--mount`s and an
 * OCI bundle's tmpfs and directory binds (a mount hidden under a later one
 * is still listed, as on Linux). /proc/<pid>/mountinfo, /proc/mounts and
 * statfs's f_flags are made from it, so they cannot disagree with what the
 * sentry enforces. A bound host file is no mount: it is copied into the
 * overlay (sentry/boot.c). */
struct vfs_mount_info {
	unsigned id, parent; /* the root is 1, its own parent */
	dev_t dev;	     /* st_dev of every file in it */
	const char *path;    /* mount point, canonical */
	const char *fstype, *source;
	/* ST_RDONLY, ST_NOSUID, ST_NODEV, ST_NOEXEC, ST_RELATIME: what the
	 * sentry enforces there. No mount honours set-id bits (exec never
	 * changes credentials) and device nodes work only in /dev and
	 * /dev/pts (mknod refuses them; the gofer never opens one). */
	unsigned long flags;
	long magic; /* statfs f_type */
	/* The filesystem's own options ("mode=755"), or "". Each is made
	 * writable and a read-only one made so after setup, as runc remounts
	 * it: its superblock says rw. */
	char super[64];
	bool super_ro; /* but sysfs's, mounted ro from the start: ro */
};
#define VFS_MOUNTS_TABLE_MAX (64 + 7)
/* Fill out (cap entries) with the table; returns how many there are. The
 * strings are the table's own, valid until the next mount. */
size_t vfs_mount_table(struct vfs_mount_info *out, size_t cap);
/* The mount vn is in (by its st_dev). 0, or -errno from its stat. */
int vfs_mount_of(struct vnode *vn, struct vfs_mount_info *out);
/* Is vn in a mount whose files may not be executed or mapped PROT_EXEC? */
bool vfs_noexec(struct vnode *vn);

/* The text of one entry as the kernel prints it (sentry/mountinfo.c).
 * Writes at most cap bytes including a NUL (cap may be 0) and returns the
 * length of the whole line, as snprintf does. */
enum mount_style {
	MOUNT_STYLE_MOUNTINFO, /* /proc/<pid>/mountinfo */
	MOUNT_STYLE_MOUNTS,    /* /proc/mounts, /proc/<pid>/mounts */
	MOUNT_STYLE_MOUNTSTATS /* /proc/<pid>/mountstats */
};
size_t mount_format(char *out, size_t cap, const struct vfs_mount_info *m,
		    enum mount_style style);

/* Directory listing of synthetic dirs (and the root of a mount). */
struct dirent_sink {
	void *buf;
	size_t cap, len;
	int64_t skip;  /* entries to skip (resumption index) */
	int64_t index; /* entries produced so far */
	bool full;
};
/* Append one linux_dirent64; returns false when the buffer is full. */
bool dirent_emit(struct dirent_sink *s, uint64_t ino, unsigned char type,
		 const char *name);

/* ---- open files -------------------------------------------------------- */

struct file;
struct file_ops {
	/* Read or write at *off (for streams off is NULL). Return bytes,
	 * -errno, or SYS_BLOCK (the task waits; t->wait_hostfd may be set). */
	long (*read)(struct task *t, struct file *f, void *buf, size_t n,
		     int64_t *off);
	long (*write)(struct task *t, struct file *f, const void *buf, size_t n,
		      int64_t *off);
	/* Readiness for poll/select: POLLIN/POLLOUT/POLLHUP/POLLERR bits. */
	short (*poll)(struct file *f, short events);
	long (*getdents)(struct task *t, struct file *f, struct dirent_sink *s);
	long (*ioctl)(struct task *t, struct file *f, unsigned long cmd,
		      uint64_t arg);
	int (*stat)(struct file *f, struct stat *st);
	void (*release)(struct file *f);
	/* Every close of a descriptor of f by p, not only the last one
	 * (Linux's flush). Optional. */
	void (*flush)(struct process *p, struct file *f);
	/* A counter that moves on every event a waiter on f may care about
	 * (data in, room out, a hangup): edge-triggered epoll reports an
	 * item when it moved. Optional: without it, an edge is a new bit. */
	uint64_t (*evseq)(struct file *f);
};

struct file {
	int refs;
	struct mntns *ns; /* the mount namespace it was opened in */
	const struct file_ops *ops;
	int flags; /* O_ACCMODE | status flags (O_NONBLOCK, O_APPEND) */
	int64_t pos;
	bool stream;	    /* no offsets: pipes, ttys, sockets */
	struct vnode *vn;   /* may be NULL (pipes) */
	int hostfd;	    /* owned host fd, or -1 */
	bool hostfd_shared; /* hostfd belongs to vn, do not close */
	bool tmpfs;	    /* hostfd is a tmpfs file's store fd, pinned for
			     * f's life (tmpfs_file_pin) */
	void *priv;
	char *data; /* generated contents (procfs) */
	size_t data_len;
	int64_t dir_index;	/* synthetic directory position */
	struct epitem *epitems; /* epoll registrations watching this file */
	uint64_t ep_walk;	/* EPOLL_CTL_ADD's last look at its paths */
	int owner;		/* F_SETOWN: the pid (or -pgid) for SIGIO */
	int sig;		/* F_SETSIG: the signal instead of SIGIO */
};

/* The sandbox's open file descriptions, at most (Linux's fs.file-max):
 * each is the sentry's memory, whoever holds it. */
#define FILES_MAX (1L << 18)
/* A new file with one reference; NULL with errno ENFILE past FILES_MAX, or
 * ENOMEM. file_discard frees one that was never used (no ops ran). */
struct file *file_new(const struct file_ops *ops, int flags);
void file_discard(struct file *f);
long files_open(void); /* open file descriptions now */
/* The most fds one process may have, whatever RLIMIT_NOFILE says (EMFILE:
 * Linux's fs.nr_open). */
#define FDT_MAX 65536
/* Slots of all fd tables together (16 bytes each: 64 MiB). They are the
 * sentry's heap, which no memory cgroup sees, and a fork copies its
 * parent's table: 1023 processes each with fd 65535 open would otherwise
 * hold 1 GiB. Past it a table does not grow (ENOMEM) and fork fails with
 * ENOMEM, as Linux's do when the memory cgroup refuses a kernel
 * allocation. */
#define FDT_SLOTS_TOTAL (1L << 22)
/* Shared file_ops pieces: pread from f->hostfd at *off (directories:
 * EISDIR); readiness of a file that never blocks. */
long file_hostfd_read(struct task *t, struct file *f, void *buf, size_t n,
		      int64_t *off);
/* The read of a synthetic directory: EISDIR; the write of a file that
 * takes none (a directory, a read-only synthetic file): EBADF. */
long file_read_isdir(struct task *t, struct file *f, void *buf, size_t n,
		     int64_t *off);
long file_write_ebadf(struct task *t, struct file *f, const void *buf, size_t n,
		      int64_t *off);
short file_always_ready(struct file *f, short events);
/* A read of f->data, the text a synthetic file (procfs, sysfs) made at
 * open: ESPIPE without an offset. */
long file_data_read(struct task *t, struct file *f, void *buf, size_t n,
		    int64_t *off);
struct file *file_get(struct file *f);
void file_put(struct file *f);

/* fd table */
struct fdtable *fdtable_new(void);
struct file *fd_get(struct task *t, int fd); /* borrowed, NULL if bad */
int fd_install(struct task *t, struct file *f, bool cloexec,
	       int minfd); /* takes a ref on success */
int fd_close(struct task *t, int fd);
int fd_install_at(struct task *t, struct file *f, int fd, bool cloexec);
bool *fd_cloexec_ptr(struct task *t, int fd); /* NULL if fd is not open */
void fd_close_on_exec(struct process *p, struct fdtable *fdt);

/* File locks (sentry/lock.c). */
long lock_fcntl(struct task *t, struct file *f, int cmd, uint64_t arg);
void locks_file_gone(struct file *f);			 /* last close */
void locks_closed_by(struct process *p, struct file *f); /* any close */
void locks_proc_gone(struct process *p);

/* Directory change notification (sentry/notify.c, F_NOTIFY). ev: DN_*. */
long notify_fcntl(struct task *t, struct file *f, unsigned long mask);
void notify_file_gone(struct file *f);
void notify_proc_gone(struct process *p); /* exited: drop its watches */
void notify_dir(struct vnode *dir, unsigned long ev);
void notify_parent(struct vnode *vn, unsigned long ev);
void notify_path(struct task *t, int dirfd, uint64_t upath, unsigned long ev);
/* inotify's limits: Linux's per-user ones, for the whole sandbox
 * (fs.inotify.*): each instance and watch costs the sentry memory, and
 * every change walks every watch. */
#define INOTIFY_INSTANCES_MAX 128 /* max_user_instances: EMFILE */
#define INOTIFY_WATCHES_MAX 8192  /* max_user_watches: ENOSPC */
#define INOTIFY_QUEUE_MAX 16384	  /* max_queued_events, per instance */
/* inotify: a change ev (IN_*) of obj, seen from dir as name (either may be
 * NULL); or of the object at vn's path, and from its directory. */
bool inotify_active(void);
void inotify_report(struct vnode *obj, struct vnode *dir, const char *name,
		    uint32_t ev, uint32_t cookie);
void inotify_report_vn(struct vnode *vn, uint32_t ev);
uint32_t inotify_cookie(void);

/* Open a resolved vnode as a file (read-only root: writes give EROFS). */
int vfs_open(struct task *t, struct vnode *vn, int flags, struct file **out);
/* Host-fd backed stream (the caller's stdio). Takes ownership of hostfd. */
struct file *file_host_stream(int hostfd, int flags);

/* A new anonymous stream file around priv (freed on failure), installed
 * in t: the fd or -errno (sentry/events.c). */
long install_anon(struct task *t, const struct file_ops *ops, int fflags,
		  void *priv, bool cloexec);
/* A release that frees f->priv, for files whose priv is one allocation. */
void file_release_priv(struct file *f);

/* epoll, eventfd and sockets (sentry/events.c, sentry/socket.c) */
struct epitem;
void epoll_file_gone(struct file *f); /* f is being freed: unregister it */
/* Bracket one look at many files' readiness (a poll or select call):
 * within it, an epoll that is watched through many paths (nested epolls
 * that share what they watch) is looked at once, not once a path. Files
 * must not change between begin and end. */
void epoll_look_begin(void);
void epoll_look_end(void);
bool file_is_socket(struct file *f);
bool file_is_stream_socket(struct file *f); /* SOCK_STREAM: unix or TCP */
/* The socket layer's limits, as /proc/sys/net shows them. */
#define USOCK_BUF 212992 /* every socket's buffer: net.core.[rw]mem_* */
#define BACKLOG_MAX 4096 /* listen() clamps to it: net.core.somaxconn */
#define LO_MTU 65536	 /* lo's, as netlink, SIOCGIFMTU and /sys say it */
/* The ports a bind to port 0 and an autobind take, the sandbox's sockets
 * among themselves (net.ipv4.ip_local_port_range, Linux's default). */
#define EPHEMERAL_LO 32768
#define EPHEMERAL_HI 60999
/* Binding a port below this takes root
 * (net.ipv4.ip_unprivileged_port_start). */
#define PORT_UNPRIV_START 1024
/* mq_notify's SIGEV_THREAD (sentry/mqueue.c): 0 if f is a netlink socket,
 * else -ENOTSOCK or -EINVAL (as Linux's netlink_getsockbyfd); a datagram
 * from the kernel's port on it, dropped when it does not fit. */
int netlink_sock_check(struct file *f);
void netlink_kernel_send(struct file *f, const void *buf, size_t n);

/* Pipes (sentry/pipe.c) */
int pipe_create(struct file **rd, struct file **wr, int flags);
/* F_GETPIPE_SZ (set 0) and F_SETPIPE_SZ (set 1, arg bytes): an
 * unprivileged F_SETPIPE_SZ past PIPE_MAX_SIZE is EPERM (fs.pipe-max-size). */
#define PIPE_MAX_SIZE (1u << 20)
long pipe_size_ctl(struct file *f, int set, uint64_t arg);
bool file_is_pipe(struct file *f);
/* Copy the first n bytes of f's pipe without taking them; *eof when it is
 * empty and has no writer. */
long pipe_peek(struct file *f, void *buf, size_t n, bool *eof);
size_t pipe_room(struct file *f); /* 0 with no reader left */
struct pipe;
int fifo_open(struct task *t, struct pipe **slot, int flags, struct file **out);
void fifo_detach(struct pipe *p); /* the FIFO's node is going away */
/* The task's FIFO open ended without opening (signal, exit): it no
 * longer counts as a waiting reader or writer. */
void fifo_unwait(struct task *t);

/* procfs and devfs (sentry/fs_proc.c, sentry/fs_dev.c) */
struct vnode *procfs_root(void);
/* The sandbox's memory, KiB, as /proc/meminfo shows it (and sysfs's
 * node0): the host's figures, bounded by --memory. */
struct sandbox_mem {
	unsigned long long total, free, avail, swap_total, swap_free, shared;
};
void procfs_mem(struct sandbox_mem *m);
int procfs_lookup(struct task *t, struct vnode *dir, const char *name,
		  struct vnode **out);
int procfs_readlink(struct task *t, struct vnode *vn, char *buf, size_t cap);
int procfs_stat(struct vnode *vn, struct stat *st);
/* Is vn a /proc entry that Linux opens to its own process whatever its
 * owner and mode: /proc/PID/fd and /proc/PID/task/TID/fd of t's process
 * (proc_fd_permission's same-thread-group rule)? */
bool procfs_self_access(struct task *t, struct vnode *vn);
/* The pid a /proc/<pid> directory names (it serves as a pidfd), else 0. */
int procfs_pid_of_dir(struct vnode *vn);
/* Is vn a magic link (/proc/<pid>/fd/N, exe, cwd, root): one that leads
 * to an object rather than naming a path? */
bool procfs_is_magic(const struct vnode *vn);
struct file *procfs_fd_file(struct task *t, struct vnode *vn);
int procfs_open(struct task *t, struct vnode *vn, int flags, struct file **out);
struct vnode *devfs_root(void);
int devfs_lookup(struct vnode *dir, const char *name, struct vnode **out);
int devfs_stat(struct vnode *vn, struct stat *st);
int devfs_open(struct task *t, struct vnode *vn, int flags, struct file **out);

/* sysfs at /sys (sentry/fs_sys.c): its root (made at vfs_init), the
 * lookup of one name in a directory of it (a new vnode, the caller's),
 * its stat, its links' targets, and its opens (read-only: a write is
 * EROFS, a directory's EISDIR). */
struct vnode *sysfs_root(void);
int sysfs_vn_lookup(struct vnode *dir, const char *name, struct vnode **out);
int sysfs_stat(struct vnode *vn, struct stat *st);
int sysfs_readlink(struct vnode *vn, char *buf, size_t cap);
int sysfs_open(struct task *t, struct vnode *vn, int flags, struct file **out);

/* The mqueue filesystem at /dev/mqueue (sentry/mqueue.c): its root, and
 * the queues as files. create makes a queue with the default attributes
 * (open O_CREAT there); unlink removes a name (unlink(2) there). */
struct vnode *mqueuefs_root(void);
int mqueuefs_lookup(struct vnode *dir, const char *name, struct vnode **out);
int mqueuefs_stat(struct vnode *vn, struct stat *st);
int mqueuefs_open(struct task *t, struct vnode *vn, int flags,
		  struct file **out);
int mqueuefs_create(struct task *t, struct vnode *dir, const char *name,
		    mode_t mode, struct vnode **out);
int mqueuefs_unlink(struct task *t, struct vnode *dir, const char *name);
int mqueuefs_chmod(struct task *t, struct vnode *vn, mode_t mode);
int mqueuefs_chown(struct task *t, struct vnode *vn, uid_t uid, gid_t gid);
void mqueuefs_vnode_gone(struct vnode *vn); /* vn's last reference went */

/* process mappings, for /proc/<pid>/maps: path, dev and ino are what the
 * guest sees of the mapped file (never the host's fd behind it). Bounded
 * sandbox-wide: past the budget a mapping shows without a name. maps_copy
 * (at fork) shares src's records with dst until either changes them. */
void maps_copy(struct process *dst, struct process *src);
void maps_clear(struct process *p);
void maps_add(struct process *p, uint64_t start, uint64_t end, const char *path,
	      dev_t dev, uint64_t ino);
/* The same for a mapping of vn. */
void maps_add_vn(struct process *p, uint64_t start, uint64_t end,
		 const struct vnode *vn);

#endif
