/* sentry/fs_tmpfs.h: tmpfs, a filesystem in the sentry's memory.
 *
 * Mounted at /tmp and /dev/shm, and the overlay's upper layer. A regular
 * file's data is inline in the sentry's memory while small, else a file of
 * the sandbox's store (sentry/store.h) on the host's disk, opened only
 * while in use; a guest mmap maps the store file (donated like a gofer fd),
 * so MAP_SHARED works and nothing is copied. See "file data" in
 * fs_tmpfs.c, and docs/storage.md.
 *
 * Ownership: a directory entry holds one reference to its vnode; the mount
 * holds one to the root. A vnode unlinked while open lives until its last
 * reference goes (vnode_put frees it with tmpfs_free).
 */
#ifndef MOAT_FS_TMPFS_H
#define MOAT_FS_TMPFS_H

#include "sentry/vfs.h"

/* What all tmpfs files of the sandbox may hold without --disk (ENOSPC
 * past it): at most this, and at most half the store's free space (set at
 * setup with tmpfs_set_default_max). A 2 GiB checkpoint fits. */
#define TMPFS_DEFAULT_MAX (10ULL << 30)
/* Files, directories and other nodes, at most (ENOSPC past it). Each
 * costs the sentry a few hundred bytes of memory. */
#define TMPFS_NODES_MAX (1ULL << 20)
/* A file stays inline in the sentry's memory up to this size, while all
 * inline buffers together stay within TMPFS_INLINE_TOTAL. */
#define TMPFS_INLINE_MAX (64 * 1024)
#define TMPFS_INLINE_TOTAL (64ULL << 20)
/* Host fds of stored files kept open while unused, at most: an eighth of
 * the fds guests may make the sentry hold (fd_admit), between these. A
 * miss costs a reopen through the store's gofer (three round trips). */
#define TMPFS_IDLE_FDS 64
#define TMPFS_IDLE_FDS_MAX 1024
void tmpfs_set_default_max(uint64_t bytes);

struct vnode *tmpfs_new_root(const char *mount_path, mode_t mode);
/* From now on no change (EROFS) to vn: a file, or an instance root and
 * everything in it. */
void tmpfs_set_readonly(struct vnode *vn);
bool tmpfs_readonly(const struct vnode *vn);
/* vn (a file) stays writable when its instance is made read-only. */
void tmpfs_set_writable(struct vnode *vn);
/* What tmpfs holds now was the sentry's setup: not charged to --disk. */
void tmpfs_setup_done(void);
void tmpfs_free(struct vnode *vn);
/* The data of every file under root goes (its memory, store files and
 * --disk): root's instance is one nothing can reach any more. */
void tmpfs_release_data(struct vnode *root);

int tmpfs_lookup(struct vnode *dir, const char *name, struct vnode **out);
struct vnode *
tmpfs_parent(struct vnode *vn); /* NULL: a mount root, or removed */
bool tmpfs_is_mount_root(struct vnode *vn);
/* The root of vn's instance (which mount it is part of); borrowed. */
struct vnode *tmpfs_instance_root(struct vnode *vn);
int tmpfs_stat(struct vnode *vn, struct stat *st);
int tmpfs_open(struct task *t, struct vnode *vn, int flags, struct file **out);
int tmpfs_readlink(struct vnode *vn, char *buf, size_t cap);

/* Namespace operations; dir is a tmpfs directory, name one component. */
int tmpfs_create(struct task *t, struct vnode *dir, const char *name,
		 mode_t mode, struct vnode **out);
int tmpfs_mkdir(struct task *t, struct vnode *dir, const char *name,
		mode_t mode);
int tmpfs_mkfifo(struct task *t, struct vnode *dir, const char *name,
		 mode_t mode);
/* A socket node (bind of an AF_UNIX path): *out is referenced; the
 * socket is attached with tmpfs_set_sock and detached with NULL. */
int tmpfs_mksock(struct task *t, struct vnode *dir, const char *name,
		 mode_t mode, struct vnode **out);
void *tmpfs_sock(struct vnode *vn); /* NULL: not a bound tmpfs socket */
void tmpfs_set_sock(struct vnode *vn, void *sock);
int tmpfs_symlink(struct task *t, struct vnode *dir, const char *name,
		  const char *target);
int tmpfs_link(struct task *t, struct vnode *dir, const char *name,
	       struct vnode *target);
int tmpfs_unlink(struct task *t, struct vnode *dir, const char *name,
		 bool rmdir);
int tmpfs_rename(struct task *t, struct vnode *odir, const char *oname,
		 struct vnode *ndir, const char *nname, unsigned flags);

/* Attributes. uid/gid (uid_t)-1: unchanged. */
int tmpfs_truncate(struct vnode *vn, int64_t len);
int tmpfs_chmod(struct task *t, struct vnode *vn, mode_t mode);
int tmpfs_chown(struct task *t, struct vnode *vn, uid_t uid, gid_t gid);
int tmpfs_utimens(struct task *t, struct vnode *vn,
		  const struct timespec ts[2]);
int tmpfs_statfs(struct vnode *vn, struct statfs *st);
bool tmpfs_same_fs(struct vnode *a, struct vnode *b);

/* The overlay's upper layer (sentry/overlay.c) is a tmpfs instance too,
 * whose directories may hold whiteouts (a deleted lower name) and may be
 * opaque (hiding the lower directory of the same path). */
struct vnode *tmpfs_new_overlay_root(const struct stat *lower_root);
bool tmpfs_is_overlay(struct vnode *vn);
bool tmpfs_is_opaque(struct vnode *dir);
void tmpfs_set_opaque(struct vnode *dir);
size_t tmpfs_nchildren(struct vnode *dir); /* live entries */
/* 1: found (*out referenced); 0: no entry; -ENOENT: a whiteout */
int tmpfs_lookup_ov(struct vnode *dir, const char *name, struct vnode **out);
bool tmpfs_has_whiteout(struct vnode *dir, const char *name);
int tmpfs_add_whiteout(struct vnode *dir, const char *name);
int tmpfs_make_raw(struct vnode *dir, const char *name, const struct stat *st,
		   const char *target, struct vnode **out);

/* A regular file's bytes, without permission checks (copy-up, setup):
 * bytes moved or -errno; writes within --disk, what fits. */
long tmpfs_pread(struct vnode *vn, void *buf, size_t n, int64_t off);
long tmpfs_pwrite(struct vnode *vn, const void *buf, size_t n, int64_t off);
/* A host fd of the file for a mapping (it moves to the store for good):
 * writable (MAP_SHARED of a writable open) preallocates the whole file
 * within --disk, and every later growth, and keeps its size charged
 * whatever is punched (ENOMEM when it does not fit): such a mapping can
 * reach every page of the file (mremap runs natively). The fd stays the
 * file's: tmpfs_map_done once it is donated. */
int tmpfs_map_fd(struct vnode *vn, bool writable);
void tmpfs_map_done(struct vnode *vn);
/* f (a file of a tmpfs regular file) gets a host fd in f->hostfd for as
 * long as it lives (exec reads and maps it): the fd or -errno. file_put
 * lets go of it (tmpfs_file_unpin). */
int tmpfs_file_pin(struct file *f);
void tmpfs_file_unpin(struct file *f);
/* fallocate(2) modes 0, KEEP_SIZE and PUNCH_HOLE|KEEP_SIZE (else
 * EOPNOTSUPP); range already checked. */
int tmpfs_fallocate(struct vnode *vn, int mode, int64_t off, int64_t len);
/* lseek SEEK_DATA / SEEK_HOLE: the offset or -errno (ENXIO past the end). */
int64_t tmpfs_seek_data(struct vnode *vn, int64_t off, int whence);

/* Extended attributes of a tmpfs node (names already checked). */
long tmpfs_getxattr(struct vnode *vn, const char *name, void *buf, size_t size);
long tmpfs_setxattr(struct vnode *vn, const char *name, const void *value,
		    size_t size, int flags);
long tmpfs_removexattr(struct vnode *vn, const char *name);
long tmpfs_listxattr(struct vnode *vn, char *buf, size_t size);
int tmpfs_anon_file(const char *name, struct vnode **out);
/* O_TMPFILE: an unnamed file of dir's tmpfs; linkable: it may be given a
 * name later (linkat), unless O_EXCL said not. */
int tmpfs_tmpfile(struct task *t, struct vnode *dir, mode_t mode, bool linkable,
		  struct vnode **out);

#endif
