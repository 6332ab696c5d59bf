/* sentry/vfs.c: vnodes, the dentry cache, NS->mounts and path resolution. */
#include "sentry/vfs.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/random.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sentry/fs_dev.h"
#include "sentry/fs_tmpfs.h"
#include "sentry/overlay.h"
#include "sentry/p9client.h"
#include "sentry/sysfs.h"

#define MAX_SYMLINKS 40
#define DCACHE_BUCKETS 4096
/* Bounds on what a guest can make the sentry keep: cached nodes (each
 * positive one holds a gofer fid) and idle host fds of closed files. */
#define DCACHE_MAX 65536
#define IDLE_FDS_MAX VFS_IDLE_FDS_MAX

static size_t dcache_count, dcache_pos, dcache_pos_max = DCACHE_MAX;
static struct vnode *idle_head, *idle_tail;
static size_t idle_count;

static struct vnode *dcache[DCACHE_BUCKETS];
/* RESOLVE_CACHED is in force for the walk under way: a lookup that would
 * ask the gofer fails with EAGAIN instead. A flag of the file rather than
 * an argument threaded through the overlay: the sentry is single-threaded
 * and a walk never yields, so no other walk can see it set. */
static bool walk_cached_only;
/* The sentry's own filesystems, one for the whole sandbox (a pod's
 * containers share them): procfs, devfs, /dev/shm and /dev/mqueue. */
static struct vnode *proc_vn, *dev_vn, *shm_vn, *mq_vn;
/* sysfs at /sys; NULL when an OCI bundle's config NS->mounts none there (the
 * rootfs's /sys shows, as under runc). */
static struct vnode *sys_vn;

/* A mount namespace (struct mntns, vfs.h): the sandbox's own, and one
 * per pod member. NS: the one the walk under way is in (vfs_ns_enter):
 * the sentry is single-threaded and a syscall runs to its end or
 * blocks before another starts, so a file-wide "current" is safe, as
 * walk_cached_only is. */
static struct mntns ns0 = { .refs = 1 };
static struct mntns *NS = &ns0;

struct p9_client *vn_p9(const struct vnode *vn)
{
	return vn->mnt ? vn->mnt->p9 : vn->ns->p9;
}

static uint32_t hash_path(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static void vnode_free(struct vnode *vn);
static void idle_unlink(struct vnode *vn);

struct vnode *vnode_get(struct vnode *vn)
{
	if (vn && !vn->cached)
		vn->refs++;
	return vn;
}

void vnode_put(struct vnode *vn)
{
	if (!vn || vn->cached)
		return;
	if (--vn->refs > 0)
		return;
	vnode_free(vn);
}

/* The last reference's end of vn (vnode_put, or a dying namespace's
 * cache). */
static void vnode_free(struct vnode *vn)
{
	struct mntns *ns = vn->ns;

	if (vn->hostfd >= 0) {
		idle_unlink(vn);
		close(vn->hostfd);
	}
	if (vn->tn)
		tmpfs_free(vn);
	if (vn->mq)
		mqueuefs_vnode_gone(vn);
	if ((vn->kind == VN_GOFER || vn->kind == VN_HOST) && !vn->negative &&
	    vn_p9(vn) && vn->fid != (vn->mnt ? vn->mnt->rootfid : ns->rootfid))
		p9c_clunk(vn_p9(vn), vn->fid);
	free(vn->link);
	free(vn->path);
	free(vn);
}

struct vnode *vnode_new(enum vn_kind kind, mode_t mode, const char *path)
{
	struct vnode *vn = calloc(1, sizeof(*vn));

	if (!vn)
		return NULL;
	vn->path = strdup(path);
	if (!vn->path) {
		free(vn);
		return NULL;
	}
	vn->refs = 1;
	vn->ns = NS;
	vn->kind = kind;
	vn->mode = mode;
	vn->hostfd = -1;
	return vn;
}

static struct vnode *dcache_find(const char *path)
{
	struct vnode *vn;

	for (vn = dcache[hash_path(path) % DCACHE_BUCKETS]; vn;
	     vn = vn->hash_next)
		if (vn->ns == NS && !strcmp(vn->path, path))
			return vn;
	return NULL;
}

static void idle_unlink(struct vnode *vn)
{
	if (vn->idle_prev)
		vn->idle_prev->idle_next = vn->idle_next;
	else if (idle_head == vn)
		idle_head = vn->idle_next;
	else
		return; /* not on the list */
	if (vn->idle_next)
		vn->idle_next->idle_prev = vn->idle_prev;
	else
		idle_tail = vn->idle_prev;
	vn->idle_prev = vn->idle_next = NULL;
	idle_count--;
}

int vnode_hostfd_get(struct vnode *vn)
{
	int rc, fd;

	if (vn->hostfd < 0) {
		rc = p9c_lopen(vn_p9(vn), vn->fid, O_RDONLY, &fd);
		if (rc < 0)
			return rc;
		vn->hostfd = fd;
	}
	idle_unlink(vn);
	vn->nopen++;
	return vn->hostfd;
}

void vnode_hostfd_put(struct vnode *vn)
{
	if (--vn->nopen > 0 || vn->hostfd < 0)
		return;
	if (!vn->cached) {
		close(vn->hostfd);
		vn->hostfd = -1;
		return;
	}
	/* Keep it for the next open (ld.so opens libc in every exec), but
	 * only so many: a guest opening a whole tree must not use up the
	 * sentry's fds. */
	vn->idle_prev = idle_tail;
	vn->idle_next = NULL;
	if (idle_tail)
		idle_tail->idle_next = vn;
	else
		idle_head = vn;
	idle_tail = vn;
	idle_count++;
	while (idle_count > IDLE_FDS_MAX) {
		struct vnode *old = idle_head;
		idle_unlink(old);
		close(old->hostfd);
		old->hostfd = -1;
	}
}

static void dcache_add(struct vnode *vn)
{
	uint32_t b = hash_path(vn->path) % DCACHE_BUCKETS;

	if (dcache_count >= DCACHE_MAX)
		return; /* stays uncached: freed (and its fid clunked) on last put */
	/* A positive node holds a gofer fid, which is an fd in the gofer:
	 * keep to half of the fd limit the gofer shares with the sentry. */
	if (!vn->negative && dcache_pos >= dcache_pos_max)
		return;
	if (!vn->negative)
		dcache_pos++;
	dcache_count++;
	vn->cached = true;
	vn->hash_next = dcache[b];
	dcache[b] = vn;
}

/* The rootfs of namespace NS, served by p9 from rootfid: its "/", the
 * overlay over it and its /tmp. */
static int ns_rootfs(struct p9_client *p9, uint32_t rootfid,
		     struct moat_error *err)
{
	NS->p9 = p9;
	NS->rootfid = rootfid;
	NS->root_vn = vnode_new(VN_GOFER, S_IFDIR | 0755, "/");
	if (!NS->root_vn)
		return moat_error_set(err, ENOMEM, "vfs");
	NS->root_vn->fid = rootfid;
	if (p9c_getattr(p9, rootfid, &NS->root_vn->st) < 0)
		return moat_error_set(err, EIO, "gofer: getattr of the root");
	/* before ovl_init: the upper layer takes the rootfs's device */
	NS->root_vn->st.st_dev = VFS_DEV_ROOT;
	NS->root_vn->mode = NS->root_vn->st.st_mode;
	dcache_add(NS->root_vn);
	/* The rootfs is read-only on the host, writable in the sandbox: an
	 * overlay with its upper layer in the sentry's memory. */
	ovl_init(NS->root_vn);
	if (!ovl_enabled())
		return moat_error_set(err, ENOMEM, "overlay");
	/* Writable scratch space that never reaches the host's disk. */
	NS->tmp_vn = tmpfs_new_root("/tmp", 01777);
	if (!NS->tmp_vn)
		return moat_error_set(err, ENOMEM, "vfs");
	/* before anything is made in it: its files take it */
	NS->tmp_vn->st.st_dev = VFS_DEV_TMP;
	NS->top_vn = ovl_root();
	return 0;
}

int vfs_init(uint32_t rootfid, struct moat_error *err)
{
	{
		struct rlimit rl;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		    rl.rlim_cur / 2 < DCACHE_MAX)
			dcache_pos_max = rl.rlim_cur / 2;
	}
	NS = &ns0;
	if (ns_rootfs(S->p9, rootfid, err) < 0)
		return -1;
	proc_vn = procfs_root();
	dev_vn = devfs_root();
	mq_vn = mqueuefs_root();
	if (!S->opts.no_sysfs) {
		/* while the host's /sys is still in view (THP) */
		sysfs_init();
		sys_vn = sysfs_root();
		if (!sys_vn)
			return moat_error_set(err, ENOMEM, "vfs");
	}
	shm_vn = tmpfs_new_root("/dev/shm", 01777);
	if (!shm_vn)
		return moat_error_set(err, ENOMEM, "vfs");
	/* before anything is made in it: its files take it */
	shm_vn->st.st_dev = VFS_DEV_SHM;
	if (!proc_vn || !dev_vn || !mq_vn)
		return moat_error_set(err, ENOMEM, "vfs");
	return 0;
}

/* ---- mount namespaces ---------------------------------------------------- */

static struct mntns *members; /* the pod's members' namespaces */

struct mntns *vfs_ns(void)
{
	return NS;
}

struct mntns *vfs_ns0(void)
{
	return &ns0;
}

void vfs_ns_enter(struct mntns *ns)
{
	NS = ns ? ns : &ns0;
}

struct mntns *vfs_ns_get(struct mntns *ns)
{
	if (ns)
		ns->refs++;
	return ns;
}

int vfs_ns_new(const char *name, struct p9_client *p9, uint32_t rootfid,
	       struct mntns **out, struct moat_error *err)
{
	struct mntns *ns;

	if (vfs_ns_find(name))
		return moat_error_input(err, EEXIST, "container %s exists",
					name);
	ns = calloc(1, sizeof(*ns));
	if (!ns || !(ns->name = strdup(name))) {
		free(ns);
		return moat_error_set(err, ENOMEM, "container %s", name);
	}
	ns->refs = 1;
	NS = ns;
	if (ns_rootfs(p9, rootfid, err) < 0) {
		/* what was made stays (the caller's p9 is closed with it) */
		ns->ended = true;
		vfs_ns_put(ns);
		NS = &ns0;
		return moat_error_wrap(err, "container %s", name);
	}
	ns->next = members;
	members = ns;
	*out = ns;
	return 0;
}

struct mntns *vfs_ns_find(const char *name)
{
	for (struct mntns *ns = members; ns; ns = ns->next)
		if (!ns->ended && !strcmp(ns->name, name))
			return ns;
	return NULL;
}

/* A member's namespace that nothing uses (no process in it, no open file
 * made in it) ends: its gofers' clients are closed, so those gofers end
 * and the host tree is no longer reachable, and the data of its tmpfs
 * files goes. Its nodes stay in memory, empty, until the sandbox ends
 * (cached ones are never freed: vnode_get does not count them), but
 * nothing can reach them: only a process in a namespace walks it, and
 * none can join an ended one. */
void vfs_ns_check(struct mntns *ns)
{
	if (!ns || ns == &ns0 || ns->refs > 0 || ns->nfiles > 0 ||
	    (ns->ended && !ns->p9))
		return;
	ns->ended = true;
	for (size_t i = 0; i < ns->nmounts; i++) {
		p9c_close(ns->mounts[i].p9);
		ns->mounts[i].p9 = NULL;
	}
	p9c_close(ns->p9);
	ns->p9 = NULL;
	/* what its processes wrote (the overlay's upper layer, /tmp, its
	 * tmpfs mounts) is given back; the nodes stay, empty */
	tmpfs_release_data(ns->upper_root);
	tmpfs_release_data(ns->tmp_vn);
	for (size_t i = 0; i < ns->nmounts; i++)
		if (ns->mounts[i].kind == VMOUNT_TMPFS)
			tmpfs_release_data(ns->mounts[i].root);
	pidns_put(ns->pidns);
	ns->pidns = NULL;
	if (NS == ns)
		NS = &ns0;
}

void vfs_ns_put(struct mntns *ns)
{
	if (!ns || --ns->refs > 0)
		return;
	vfs_ns_check(ns);
}

/* The mount table: the rootfs at "/", procfs and devfs over it, tmpfs,
 * and the ro and rw `--mount`s (clone ones are part of the rootfs). */
/* Whether a mount made after NS->mounts[i] is at a directory above it: as
 * on Linux, a mount over a directory hides the NS->mounts below it (an OCI
 * bundle's bind at /x/m, then a tmpfs at /x: /x is the empty tmpfs). */
static bool mount_hidden(size_t i)
{
	const char *path = NS->mounts[i].path;

	for (size_t j = i + 1; j < NS->nmounts; j++) {
		size_t n = strlen(NS->mounts[j].path);

		/* A readonlyPaths bind is recursive: what was mounted below
		 * it shows through it. */
		if (NS->mounts[j].kind == VMOUNT_BIND)
			continue;
		if (!strncmp(path, NS->mounts[j].path, n) && path[n] == '/')
			return true;
	}
	return false;
}

/* readonlyPaths binds made (vfs_bound_ro has nothing to look for without) */

/* The mount points of the sentry's own filesystems (mount_at). */
static const char *const own_mounts[] = { "/proc",    "/dev",	     "/tmp",
					  "/dev/shm", "/dev/mqueue", "/sys" };

/* Is the canonical path p at or below the mount point m (n: its length)? */
static bool at_or_under(const char *p, const char *m, size_t n)
{
	return !strncmp(p, m, n) && (p[n] == '/' || !p[n]);
}

/* The entry of the mount table that the canonical path lies in: the
 * deepest mount point at or above it that is in view (the latest of those
 * at one place). NULL: the rootfs, or one of the sentry's own. Clone
 * NS->mounts are part of the rootfs. Cost: one pass over the table (64). */
static const struct vmount *mount_covering(const char *path)
{
	const struct vmount *best = NULL;
	size_t blen = 0, i;

	for (i = NS->nmounts; i-- > 0;) {
		size_t n = strlen(NS->mounts[i].path);

		if (NS->mounts[i].mode != MNT_CLONE && n > blen &&
		    at_or_under(path, NS->mounts[i].path, n) &&
		    !mount_hidden(i)) {
			best = &NS->mounts[i];
			blen = n;
		}
	}
	for (i = 0; i < ARRAY_SIZE(own_mounts); i++) {
		size_t n = strlen(own_mounts[i]);

		if (!sys_vn && !strcmp(own_mounts[i], "/sys"))
			continue;
		if (n > blen && at_or_under(path, own_mounts[i], n))
			return NULL;
	}
	return best;
}

bool vfs_bound_ro(const struct vnode *vn)
{
	const struct vmount *m;

	if (!NS->nbinds)
		return false;
	m = mount_covering(vn->path);
	return m && m->kind == VMOUNT_BIND;
}

bool vfs_host_readonly(const struct vnode *vn)
{
	return vn->mnt->mode != MNT_RW || vfs_bound_ro(vn);
}

bool vfs_mounts_below(const char *path)
{
	size_t n = strlen(path);

	for (size_t i = 0; i < NS->nmounts; i++)
		if (NS->mounts[i].mode != MNT_CLONE &&
		    (!strcmp(path, "/") ||
		     (!strncmp(NS->mounts[i].path, path, n) &&
		      NS->mounts[i].path[n] == '/')) &&
		    !mount_hidden(i))
			return true;
	return false;
}

/* The vnode that a lookup of the canonical path finds mounted there, or
 * NULL: nothing is, or a readonlyPaths bind is, whose lookups go on as
 * before. */
static struct vnode *mount_at(const char *path)
{
	size_t i;

	for (i = NS->nmounts; i-- > 0;)
		if (NS->mounts[i].mode != MNT_CLONE &&
		    NS->mounts[i].kind != VMOUNT_BIND &&
		    !strcmp(NS->mounts[i].path, path) && !mount_hidden(i))
			return NS->mounts[i].root;
	if (!strcmp(path, "/proc"))
		return proc_vn;
	if (!strcmp(path, "/dev"))
		return dev_vn;
	if (!strcmp(path, "/tmp"))
		return NS->tmp_vn;
	if (!strcmp(path, "/dev/shm"))
		return shm_vn;
	if (!strcmp(path, "/dev/mqueue"))
		return mq_vn;
	if (!strcmp(path, "/sys"))
		return sys_vn;
	return NULL;
}

/* The directory of path (canonical, absolute, not "/") into dir, its last
 * component into name (NAME_MAX + 1 bytes). 0 or -ENAMETOOLONG. */
static int split_path(const char *path, char dir[PATH_MAX], char *name)
{
	const char *slash = strrchr(path, '/');
	size_t dl = (size_t)(slash - path);

	if (strlen(slash + 1) > NAME_MAX || dl >= PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(dir, path, dl);
	dir[dl ? dl : 1] = 0;
	if (!dl)
		dir[0] = '/';
	strcpy(name, slash + 1);
	return 0;
}

/* A mount point directly in the sandbox's /dev: nothing is made there
 * (devfs has a fixed set of nodes); the mount shadows the node of that
 * name, or adds one, and `ls /dev` lists it (vfs_dev_mounts). dir: the
 * mount is of a directory, which may go over devfs's own directories
 * (/dev/shm, the sentry's tmpfs, is no devfs node) but not over a
 * device; a file over a device only. Never over a symlink (/dev/fd, ...)
 * or /dev/pts, the sentry's ptys. 0, or -errno. */
static int dev_mount_point(const char *name, bool dir)
{
	struct vnode *vn;
	bool isdir;
	int rc;

	if (!strcmp(name, "pts"))
		return -EPERM;
	rc = devfs_lookup(dev_vn, name, &vn);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	isdir = S_ISDIR(vn->mode);
	rc = S_ISLNK(vn->mode) ? -EPERM :
	     isdir && !dir     ? -EISDIR :
	     !isdir && dir     ? -ENOTDIR :
				 0;
	vnode_put(vn);
	return rc;
}

bool vfs_dev_mounts(bool (*emit)(void *ctx, const char *name, mode_t mode),
		    void *ctx)
{
	for (size_t i = 0; i < NS->nmounts; i++) {
		const char *p = NS->mounts[i].path;
		struct vnode *vn;

		/* The mount a lookup finds there (the last at that path, and
		 * not hidden), once a name; devfs lists its own names. */
		if (strncmp(p, "/dev/", 5) || strchr(p + 5, '/') ||
		    mount_at(p) != NS->mounts[i].root)
			continue;
		if (devfs_lookup(dev_vn, p + 5, &vn) == 0) {
			vnode_put(vn);
			continue;
		}
		if (!emit(ctx, p + 5, NS->mounts[i].root->mode))
			return false;
	}
	return true;
}

/* The mount point of dst, made if the rootfs lacks it: its canonical path
 * in canon, which is where the mount goes. A symlink on the way has been
 * followed (vfs_mkdir_p), so the mount is where a guest's walk of dst
 * arrives. 0, or -1 and err. */
static int mount_point(const char *dst, const struct stat *last,
		       char canon[PATH_MAX], struct moat_error *err)
{
	char dir[PATH_MAX], name[NAME_MAX + 1];
	struct vnode *vn;
	int rc;

	/* Directly in /dev: a mount point of devfs's (none is made). */
	if (!last && strcmp(dst, "/") && split_path(dst, dir, name) == 0 &&
	    vfs_mkdir_p(dir, NULL, &vn) == 0) {
		bool in_dev = vn == dev_vn;

		vnode_put(vn);
		if (in_dev) {
			rc = dev_mount_point(name, true);
			if (rc < 0)
				return moat_error_input(
					err, -rc,
					"mount point `%s` is /dev/%s, %s", dst,
					name,
					rc == -ENOTDIR ?
						"a device of the sandbox's "
						"own /dev: a directory "
						"NS->mounts only over a directory" :
						"of the sandbox's own /dev");
			snprintf(canon, PATH_MAX, "/dev/%s", name);
			return 0;
		}
	}
	rc = vfs_mkdir_p(dst, last, &vn);

	/* The guest's /proc and /dev are the sentry's own, where nothing
	 * can be made (ovl_write_dir) or mounted; an image's symlink may
	 * lead a mount point there, or to "/". */
	if (rc == -EPERM)
		return moat_error_input(err, EPERM,
					"mount point `%s` leads into the "
					"sandbox's own /proc or /dev",
					dst);
	if (rc < 0)
		return moat_error_set(err, -rc, "mount point `%s`", dst);
	snprintf(canon, PATH_MAX, "%s", vn->path);
	if (vn == NS->top_vn)
		rc = -EBUSY;
	else if (vn->kind == VN_PROC || vn->kind == VN_DEV ||
		 vn->kind == VN_MQUEUE || vn->kind == VN_SYS)
		rc = -EPERM;
	/* A clone is grafted into the rootfs's overlay (vfs_lower_lookup). */
	else if (last && vn->kind != VN_GOFER &&
		 !(vn->kind == VN_TMPFS && tmpfs_is_overlay(vn)))
		rc = -EXDEV;
	vnode_put(vn);
	if (rc == 0)
		return 0;
	return moat_error_input(
		err, -rc, "mount point `%s` is `%s`, %s", dst, canon,
		rc == -EBUSY ? "the root" :
		rc == -EPERM ? "in the sandbox's own /proc, /dev or /sys" :
			       "not in the rootfs (a clone mount is grafted "
			       "into it)");
}

/* A FIFO, socket or device of the image where a file is bound gives way
 * to a file, as the bind mount hides it under runc: the node leaves the
 * merged view (a whiteout over the rootfs's) and a regular file of mode
 * takes its place, so that listings of the directory say what a lookup
 * (the mount) finds. 0, or -errno. */
static int replace_node(struct vnode *udir, const char *name, mode_t mode)
{
	struct vnode *old, *up = NULL;
	int rc = 0;

	if (tmpfs_lookup(udir, name, &old) == 0) {
		vnode_put(old);
		rc = tmpfs_unlink(NULL, udir, name, false);
	}
	if (rc == 0)
		rc = ovl_hide_lower(udir, name);
	if (rc == 0)
		rc = tmpfs_create(NULL, udir, name, mode, &up);
	vnode_put(up);
	return rc;
}

/* The mount point of a file bind mount at dst, a file: an image's file is
 * kept (the mount hides it), a missing one made empty in the overlay or
 * the tmpfs it is in, a FIFO, socket or device replaced (replace_node).
 * A symlink at dst is followed inside the sandbox, as runc's securejoin
 * follows it: the mount goes where it leads (a dangling one's target is
 * made). Directly in /dev nothing is made (dev_mount_point). Over a
 * directory, refused, as Linux refuses it. canon: where the mount goes.
 * 0, or -1 and err. */
static int file_mount_point(const char *dst, mode_t mode, char canon[PATH_MAX],
			    struct moat_error *err)
{
	char path[PATH_MAX], dir[PATH_MAX], name[NAME_MAX + 1];
	struct vnode *dvn = NULL, *vn = NULL, *udir = NULL;
	const char *why = NULL;
	int links = 0, rc;

	snprintf(path, sizeof(path), "%s", dst);
	for (;;) {
		char target[PATH_MAX];
		int n;

		rc = split_path(path, dir, name);
		if (rc == 0)
			rc = vfs_mkdir_p(dir, NULL, &dvn);
		if (rc == 0)
			rc = vfs_child_path(dvn, name, canon, PATH_MAX);
		if (rc < 0)
			goto out;
		if (dvn == dev_vn) {
			rc = dev_mount_point(name, false);
			if (rc < 0)
				why = "in the sandbox's own /dev, where a file "
				      "binds over a device or a new name only";
			goto out;
		}
		if (dvn->kind == VN_PROC || dvn->kind == VN_DEV ||
		    dvn->kind == VN_MQUEUE || dvn->kind == VN_SYS) {
			rc = -EPERM;
			why = "in the sandbox's own /proc, /dev or /sys";
			goto out;
		}
		rc = vfs_resolve(NULL, AT_FDCWD, canon, 0, &vn);
		if (rc < 0 || !S_ISLNK(vn->mode))
			break;
		n = ++links > MAX_SYMLINKS || procfs_is_magic(vn) ?
			    -ELOOP :
			    vfs_readlink(vn, target, sizeof(target));
		vnode_put(vn);
		vn = NULL;
		if (n <= 0) {
			rc = n < 0 ? n : -ENOENT;
			goto out;
		}
		/* Relative to the link's directory, or from the sandbox's "/";
		 * vfs_mkdir_p makes the rest canonical. */
		rc = target[0] == '/' ?
			     snprintf(path, sizeof(path), "%s", target) :
			     snprintf(path, sizeof(path), "%s/%s",
				      strcmp(dvn->path, "/") ? dvn->path : "",
				      target);
		vnode_put(dvn);
		dvn = NULL;
		if (rc < 0 || (size_t)rc >= sizeof(path)) {
			rc = -ENAMETOOLONG;
			goto out;
		}
		/* "a/../b" is walked by vfs_mkdir_p; a target that ends in
		 * "/", "." or ".." names a directory. */
		name[0] = 0;
		split_path(path, dir, name);
		if (!name[0] || !strcmp(name, ".") || !strcmp(name, "..")) {
			rc = -EISDIR;
			why = "a link in the image leads to a directory, and "
			      "a file binds only over a file";
			snprintf(canon, PATH_MAX, "%s", path);
			goto out;
		}
	}
	if (rc == 0 && S_ISDIR(vn->mode)) {
		rc = -EISDIR;
		why = "the image has a directory there, and a file binds only "
		      "over a file";
	} else if (rc == 0 && (vn->kind == VN_PROC || vn->kind == VN_DEV ||
			       vn->kind == VN_MQUEUE || vn->kind == VN_SYS)) {
		rc = -EPERM;
		why = "in the sandbox's own /proc, /dev or /sys";
	} else if (rc == 0 && !S_ISREG(vn->mode)) {
		rc = ovl_write_dir(dvn, &udir);
		if (rc == 0)
			rc = replace_node(udir, name, mode & 0777);
	} else if (rc == -ENOENT) {
		rc = ovl_write_dir(dvn, &udir);
		if (rc == 0)
			rc = tmpfs_create(NULL, udir, name, mode & 0777, &vn);
	}
out:
	vnode_put(vn);
	vnode_put(udir);
	vnode_put(dvn);
	if (rc == 0)
		return 0;
	if (why)
		return moat_error_input(err, -rc, "mount point `%s` (`%s`): %s",
					dst, canon, why);
	return moat_error_set(err, -rc, "mount point `%s`", dst);
}

int vfs_add_mount(const char *dst, enum mnt_mode mode, bool noexec,
		  struct p9_client *p9, uint32_t rootfid,
		  struct moat_error *err)
{
	char canon[PATH_MAX];
	struct vmount *m;
	struct vnode *vn;
	struct statfs sfs;
	struct stat st;
	int rc;

	if (NS->nmounts == VFS_MOUNTS_MAX)
		return moat_error_set(err, E2BIG, "mount `%s`: more than %d",
				      dst, VFS_MOUNTS_MAX);
	m = &NS->mounts[NS->nmounts];
	rc = p9c_getattr(p9, rootfid, &st);
	if (rc < 0)
		return moat_error_set(err, -rc, "mount `%s`: getattr", dst);
	/* The host filesystem's type, for the mount table (a bind shows
	 * it, as on Linux; statfs asks the gofer each time). */
	rc = p9c_statfs(p9, rootfid, &sfs);
	if (rc < 0)
		return moat_error_set(err, -rc, "mount `%s`: statfs", dst);
	st.st_dev = m->dev = VFS_DEV_MOUNT(NS->nmounts);
	/* A bind of one host file (its gofer's root is that file): a file
	 * as its mount point. Never a clone: only a tree is grafted. */
	if (!S_ISDIR(st.st_mode)) {
		if (mode == MNT_CLONE || !S_ISREG(st.st_mode))
			return moat_error_input(err, EINVAL,
						"mount `%s`: only a directory "
						"is cloned",
						dst);
		if (file_mount_point(dst, st.st_mode, canon, err) < 0)
			return -1;
	} else if (mount_point(dst, mode == MNT_CLONE ? &st : NULL, canon,
			       err) < 0) {
		return -1;
	}
	vn = vnode_new(mode == MNT_CLONE ? VN_GOFER : VN_HOST, st.st_mode,
		       canon);
	if (!vn)
		return moat_error_set(err, ENOMEM, "mount `%s`", dst);
	m->path = vn->path;
	m->kind = VMOUNT_HOST;
	m->mode = mode;
	m->noexec = noexec;
	m->source = NULL;
	m->magic = (long)sfs.f_type;
	m->p9 = p9;
	m->rootfid = rootfid;
	m->root = vn;
	vn->mnt = m;
	vn->fid = rootfid;
	vn->st = st;
	NS->nmounts++;
	return 0;
}

/* tmpfs NS->mounts have no gofer (p9 NULL); an ro one is made read-only only
 * here, after setup: NS->mounts and files inside it come first, as runc
 * remounts read-only last. */
void vfs_seal_tmpfs(void)
{
	for (size_t i = 0; i < NS->nmounts; i++)
		if (NS->mounts[i].kind == VMOUNT_TMPFS &&
		    NS->mounts[i].mode == MNT_RO)
			tmpfs_set_readonly(NS->mounts[i].root);
}

/* Is the canonical path a mount point of any kind (rename, unlink and
 * rmdir of it: EBUSY)? */
static bool mount_point_at(const char *path)
{
	if (mount_at(path))
		return true;
	for (size_t i = NS->nmounts; i-- > 0;)
		if (NS->mounts[i].kind == VMOUNT_BIND &&
		    !strcmp(NS->mounts[i].path, path) && !mount_hidden(i))
			return true;
	return false;
}

/* A path of the sandbox for maskedPaths or readonlyPaths (what: the
 * field): 1 and a reference in *out, 0 if nothing is there, or < 0 and
 * err. The walk is the guest's, from the sandbox's "/" with symlinks
 * followed, so a path never leads out of it. */
static int oci_path(const char *what, const char *path, struct vnode **out,
		    struct moat_error *err)
{
	int rc = vfs_resolve(NULL, AT_FDCWD, path, LOOKUP_FOLLOW, out);

	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return moat_error_set(err, -rc, "%s: `%s`", what, path);
	if (NS->nmounts == VFS_MOUNTS_MAX) {
		vnode_put(*out);
		return moat_error_set(err, E2BIG,
				      "%s: `%s`: more than %d NS->mounts", what,
				      path, VFS_MOUNTS_MAX);
	}
	return 1;
}

int vfs_mask_path(const char *path, struct moat_error *err)
{
	const char *what = "linux.maskedPaths";
	struct vnode *vn, *root;
	struct vmount *m;
	int rc = oci_path(what, path, &vn, err);

	if (rc <= 0)
		return rc;
	if (vn == NS->top_vn) {
		vnode_put(vn);
		return moat_error_input(err, EBUSY, "%s: `%s` is the root",
					what, path);
	}
	/* runc's maskPath: a bind of /dev/null, or where that cannot go (a
	 * directory) a read-only tmpfs, empty. */
	if (S_ISDIR(vn->mode)) {
		root = tmpfs_new_root(vn->path, 01777);
		if (root) {
			tmpfs_set_readonly(root);
			root->st.st_dev = VFS_DEV_MOUNT(NS->nmounts);
		}
	} else {
		root = devfs_null_at(vn->path);
	}
	vnode_put(vn);
	if (!root)
		return moat_error_set(err, ENOMEM, "%s: `%s`", what, path);
	m = &NS->mounts[NS->nmounts++];
	*m = (struct vmount){
		.path = root->path,
		.kind = S_ISDIR(root->mode) ? VMOUNT_TMPFS : VMOUNT_NULL,
		.mode = S_ISDIR(root->mode) ? MNT_RO : MNT_RW,
		.magic = TMPFS_MAGIC,
		.dev = S_ISDIR(root->mode) ? root->st.st_dev : VFS_DEV_DEV,
		.root = root
	};
	return 0;
}

int vfs_readonly_path(const char *path, struct moat_error *err)
{
	struct vnode *vn;
	struct vmount *m;
	int rc = oci_path("linux.readonlyPaths", path, &vn, err);

	if (rc <= 0)
		return rc;
	if (vn == NS->top_vn) {
		vnode_put(vn);
		ovl_set_readonly(); /* as root.readonly */
		return 0;
	}
	m = &NS->mounts[NS->nmounts++];
	*m = (struct vmount){ .path = xstrdup(vn->path),
			      .kind = VMOUNT_BIND,
			      .mode = MNT_RO };
	NS->nbinds++;
	vnode_put(vn);
	return 0;
}

int vfs_add_tmpfs(const struct tmpfs_spec *ts, struct moat_error *err)
{
	const char *dst = ts->dst;
	char canon[PATH_MAX];
	struct vmount *m;
	struct vnode *vn;

	if (NS->nmounts == VFS_MOUNTS_MAX)
		return moat_error_set(err, E2BIG, "mount `%s`: more than %d",
				      dst, VFS_MOUNTS_MAX);
	if (mount_point(dst, NULL, canon, err) < 0)
		return -1;
	vn = tmpfs_new_root(canon, ts->mode & 07777);
	if (!vn)
		return moat_error_set(err, ENOMEM, "tmpfs `%s`", dst);
	vn->st.st_uid = ts->uid;
	vn->st.st_gid = ts->gid;
	vn->st.st_dev = VFS_DEV_MOUNT(NS->nmounts);
	m = &NS->mounts[NS->nmounts++];
	m->path = vn->path;
	m->kind = VMOUNT_TMPFS;
	m->mode = ts->ro ? MNT_RO : MNT_RW;
	m->noexec = ts->noexec;
	m->source = ts->src;
	m->magic = TMPFS_MAGIC;
	m->dev = vn->st.st_dev;
	m->p9 = NULL;
	m->root = vn;
	return 0;
}

void vfs_close_mounts(void)
{
	while (NS->nmounts > 0) {
		struct vmount *m = &NS->mounts[--NS->nmounts];
		p9c_close(m->p9);
		m->p9 = NULL;
	}
}

static int join_path(char *out, size_t cap, const char *dir, const char *name)
{
	int n;

	if (!strcmp(dir, "/"))
		n = snprintf(out, cap, "/%s", name);
	else
		n = snprintf(out, cap, "%s/%s", dir, name);
	return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : 0;
}

static int gofer_lookup(struct vnode *dir, const char *name, const char *path,
			struct vnode **out)
{
	/* A host directory mounted ro or rw may change under the sandbox
	 * (the host, or the guest through rw): its nodes are not cached. */
	bool cache = dir->kind == VN_GOFER;
	struct vnode *vn = cache ? dcache_find(path) : NULL;
	struct p9_qid qid;
	uint32_t fid;
	int rc;

	if (vn) {
		if (vn->negative)
			return -ENOENT;
		*out = vn;
		return 0;
	}
	if (walk_cached_only)
		return -EAGAIN; /* RESOLVE_CACHED: this needs the gofer */
	rc = p9c_walk1(vn_p9(dir), dir->fid, name, &fid, &qid);
	if (rc == -ENOENT && !cache)
		return rc;
	if (rc == -ENOENT) {
		vn = vnode_new(VN_GOFER, 0, path);
		if (vn) {
			vn->mnt = dir->mnt;
			vn->negative = true;
			dcache_add(vn);
			if (!vn->cached)
				vnode_put(vn);
		}
		return -ENOENT;
	}
	if (rc < 0)
		return rc;
	vn = vnode_new(dir->kind, 0, path);
	if (!vn) {
		p9c_clunk(vn_p9(dir), fid);
		return -ENOMEM;
	}
	vn->mnt = dir->mnt;
	vn->fid = fid;
	rc = p9c_getattr(vn_p9(dir), fid, &vn->st);
	if (rc < 0) {
		vn->negative = true; /* no fid to clunk on the put below */
		p9c_clunk(vn_p9(dir), fid);
		vnode_put(vn);
		return rc;
	}
	vn->st.st_dev = vn->mnt ? vn->mnt->dev : VFS_DEV_ROOT;
	vn->mode = vn->st.st_mode;
	if (cache)
		dcache_add(vn);
	*out = vn;
	return 0; /* cached: the dcache's reference; else the caller's */
}

/* The root of a clone mount at path: the lower layer's tree there. */
static struct vnode *clone_at(const char *path)
{
	size_t i;

	for (i = NS->nmounts; i-- > 0;)
		if (NS->mounts[i].mode == MNT_CLONE &&
		    !strcmp(NS->mounts[i].path, path) && !mount_hidden(i))
			return vnode_get(NS->mounts[i].root);
	return NULL;
}

static int is_mount_point(const char *prefix, void *ctx)
{
	(void)ctx;
	return mount_at(prefix) != NULL;
}

bool vfs_mounted_over(const char *path)
{
	return path_prefixes(path, is_mount_point, NULL) == 1;
}

bool vfs_is_clone_root(const char *path)
{
	struct vnode *vn = clone_at(path);

	vnode_put(vn);
	return vn != NULL;
}

int vfs_lower_lookup(const char *path, struct vnode **out)
{
	char buf[PATH_MAX], sub[PATH_MAX] = "";
	char *save = NULL, *comp;
	struct vnode *cur = NS->root_vn, *next;
	int rc;

	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (comp = strtok_r(buf, "/", &save); comp;
	     comp = strtok_r(NULL, "/", &save)) {
		size_t l = strlen(sub);
		if (!S_ISDIR(cur->mode)) {
			vnode_put(cur);
			return -ENOTDIR;
		}
		snprintf(sub + l, sizeof(sub) - l, "/%s", comp);
		next = clone_at(sub);
		rc = next ? 0 : gofer_lookup(cur, comp, sub, &next);
		vnode_put(cur);
		if (rc < 0)
			return rc;
		cur = next;
	}
	*out = cur; /* the walk's reference (a no-op one for cached nodes) */
	return 0;
}

/* Look up one checked component in dir. Returns a reference. */
static int lookup_child(struct task *t, struct vnode *dir, const char *name,
			struct vnode **out)
{
	char path[PATH_MAX];
	struct vnode *m;
	int rc;

	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	if (strlen(name) > NAME_MAX)
		return -ENAMETOOLONG;
	rc = join_path(path, sizeof(path), dir->path, name);
	if (rc < 0)
		return rc;
	m = mount_at(path);
	if (m) {
		*out = vnode_get(m);
		return 0;
	}
	if (ovl_enabled() && (dir->kind == VN_GOFER ||
			      (dir->kind == VN_TMPFS && tmpfs_is_overlay(dir))))
		return ovl_lookup(path, out); /* upper layer, then rootfs */
	switch (dir->kind) {
	case VN_GOFER:
	case VN_HOST:
		/* A cached node needs no reference (vnode_get is a no-op on
		 * it); an uncached one comes back holding the only one. */
		return gofer_lookup(dir, name, path, out);
	case VN_PROC:
		return procfs_lookup(t, dir, name, out);
	case VN_DEV:
		return devfs_lookup(dir, name, out);
	case VN_TMPFS:
		return tmpfs_lookup(dir, name, out);
	case VN_MQUEUE:
		return mqueuefs_lookup(dir, name, out);
	case VN_SYS:
		return sysfs_vn_lookup(dir, name, out);
	}
	return -ENOENT;
}

/* The vnode of a canonical path (no symlinks in it). */
static int vnode_of_canonical(struct task *t, const char *path,
			      struct vnode **out)
{
	char buf[PATH_MAX];
	char *save = NULL, *comp;
	struct vnode *cur = vnode_get(NS->top_vn), *next;
	int rc;

	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (comp = strtok_r(buf, "/", &save); comp;
	     comp = strtok_r(NULL, "/", &save)) {
		rc = lookup_child(t, cur, comp, &next);
		vnode_put(cur);
		if (rc < 0)
			return rc;
		cur = next;
	}
	*out = cur;
	return 0;
}

static int vnode_parent(struct task *t, struct vnode *vn, struct vnode **out)
{
	char buf[PATH_MAX];
	char *slash;

	if (!strcmp(vn->path, "/")) {
		*out = vnode_get(vn);
		return 0;
	}
	if (vn->kind == VN_TMPFS && !tmpfs_is_mount_root(vn)) {
		/* tmpfs directories move (rename): follow the real parent
		 * (a removed directory keeps its old one, as on Linux). */
		if (!tmpfs_parent(vn))
			return -ENOENT;
		*out = vnode_get(tmpfs_parent(vn));
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", vn->path);
	slash = strrchr(buf, '/');
	if (slash == buf)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	return vnode_of_canonical(t, buf, out);
}

int vfs_readlink(struct vnode *vn, char *buf, size_t cap)
{
	size_t n;

	if (!S_ISLNK(vn->mode))
		return -EINVAL;
	if (vn->kind == VN_PROC)
		return procfs_readlink(NULL, vn, buf, cap);
	if (vn->kind == VN_TMPFS)
		return tmpfs_readlink(vn, buf, cap);
	if (vn->kind == VN_SYS)
		return sysfs_readlink(vn, buf, cap);
	if (vn->kind == VN_DEV) {
		/* devfs symlinks keep their target in link */
		if (!vn->link)
			return -EINVAL;
	} else if (!vn->link) {
		char tmp[PATH_MAX];
		int rc = p9c_readlink(vn_p9(vn), vn->fid, tmp, sizeof(tmp));
		if (rc < 0)
			return rc;
		vn->link = strdup(tmp);
		if (!vn->link)
			return -ENOMEM;
	}
	n = strlen(vn->link);
	if (n >= cap)
		return -ENAMETOOLONG;
	memcpy(buf, vn->link, n + 1);
	return (int)n;
}

static int readlink_for(struct task *t, struct vnode *vn, char *buf, size_t cap)
{
	if (vn->kind == VN_PROC)
		return procfs_readlink(t, vn, buf, cap);
	return vfs_readlink(vn, buf, cap);
}

/* The mount vn belongs to, named by its root vnode, or by its entry for
 * a mask or a readonlyPaths bind (RESOLVE_NO_XDEV, link and rename
 * compare them). */
static const void *mount_of(struct vnode *vn)
{
	const struct vmount *m = mount_covering(vn->path);

	if (m && (m->kind == VMOUNT_BIND || m->kind == VMOUNT_NULL))
		return m;
	switch (vn->kind) {
	case VN_PROC:
		return proc_vn;
	case VN_DEV:
		return dev_vn;
	case VN_MQUEUE:
		return mq_vn;
	case VN_SYS:
		return sys_vn;
	case VN_TMPFS:
		/* The overlay's upper layer and the rootfs are one mount to
		 * the guest, as overlayfs is. */
		return tmpfs_is_overlay(vn) ? NS->top_vn :
					      tmpfs_instance_root(vn);
	case VN_HOST:
		return vn->mnt->root;
	case VN_GOFER:
		return NS->top_vn; /* clone NS->mounts are grafted into the rootfs */
	}
	return NULL;
}

/* What openat2's flags say of following the symlink vn: 0, or why not.
 * The order is Linux's (pick_link, then nd_jump_link). */
static int link_allowed(struct vnode *vn, int flags)
{
	if (flags & LOOKUP_NO_SYMLINKS)
		return -ELOOP;
	if (!procfs_is_magic(vn))
		return 0;
	if (flags & LOOKUP_CACHED)
		return -EAGAIN; /* Linux cannot follow one in an RCU walk */
	if (flags & LOOKUP_NO_MAGICLINKS)
		return -ELOOP;
	/* A magic link goes anywhere: no scope can be kept across it. */
	return (flags & LOOKUP_SCOPED) ? -EXDEV : 0;
}

bool vfs_same_mount(struct vnode *a, struct vnode *b)
{
	return mount_of(a) == mount_of(b);
}

/* NO_XDEV: may the walk step from cur to next? */
static bool xdev_ok(int flags, struct vnode *cur, struct vnode *next)
{
	return !(flags & LOOKUP_NO_XDEV) || mount_of(cur) == mount_of(next);
}

/* The directories a walk came down through, kept so that ".." returns
 * to them: looking a parent up again from "/" (vnode_parent) costs a
 * whole walk per "..", and an image's or a guest's link that climbs D
 * levels and comes back to itself, followed to ELOOP, cost minutes at
 * D=300. Each is a component of a canonical path, "/x" at least, so
 * PATH_MAX/2 bounds them (join_path refuses a longer path first). */
#define WALK_DEPTH (PATH_MAX / 2)

/* Drop the directories walked: after a jump (an absolute or magic
 * link), ".." is the new place's parent. */
static void walk_unwind(struct vnode **up, size_t *nup)
{
	while (*nup > 0)
		vnode_put(up[--*nup]);
}

/* The component of rest at *pos into name (NAME_MAX + 2 bytes), *pos
 * past it, and *last whether only slashes follow: 1, 0 at the end of
 * rest, or -ENAMETOOLONG. */
static int next_component(const char *rest, size_t *pos, char *name, bool *last)
{
	size_t len;

	*pos += strspn(rest + *pos, "/");
	if (!rest[*pos])
		return 0;
	len = strcspn(rest + *pos, "/");
	if (len > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(name, rest + *pos, len);
	name[len] = 0;
	*pos += len;
	*last = !rest[*pos + strspn(rest + *pos, "/")];
	return 1;
}

/* The walk itself (vfs_resolve). For BENEATH and IN_ROOT, depth counts the
 * components below the start: ".." at depth 0 would leave it. The start
 * can be reached again only through "..", since a magic link and an
 * absolute symlink (outside IN_ROOT, which resets depth) end a scoped
 * walk, so depth 0 is exactly "at the start". */
static int walk(struct task *t, int dirfd, const char *path, int flags,
		struct vnode **out)
{
	char rest[2 * PATH_MAX];
	struct vnode *cur, *next, *root = NULL, *up[WALK_DEPTH];
	int links = 0, depth = 0, rc;
	size_t pos = 0, nup = 0;

	if (!path[0] && !(flags & LOOKUP_EMPTY))
		return -ENOENT;
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	if (path[0] == '/' && (flags & LOOKUP_BENEATH))
		return -EXDEV;
	if (!t || (path[0] == '/' && !(flags & LOOKUP_IN_ROOT))) {
		cur = vnode_get(NS->top_vn);
	} else if (dirfd == AT_FDCWD) {
		cur = vnode_get(t->proc->cwd);
	} else {
		struct file *f = fd_get(t, dirfd);
		if (!f)
			return -EBADF;
		if (!f->vn)
			return path[0] ? -ENOTDIR : -EBADF;
		if (path[0] && !S_ISDIR(f->vn->mode))
			return -ENOTDIR;
		cur = vnode_get(f->vn);
	}
	if (flags & LOOKUP_IN_ROOT)
		root = vnode_get(cur); /* what "/" means from here on */
	strcpy(rest, path);
	for (;;) {
		char name[NAME_MAX + 2];
		bool last, trailing;

		rc = next_component(rest, &pos, name, &last);
		if (rc == 0)
			break;
		if (rc < 0)
			goto fail;
		trailing = rest[pos] == '/';
		if (!strcmp(name, ".")) {
			if (!S_ISDIR(cur->mode)) {
				rc = -ENOTDIR;
				goto fail;
			}
			continue;
		}
		/* Search permission on every directory walked through. */
		if (t) {
			rc = vfs_task_access(t, &t->proc->cred, cur, X_OK);
			if (rc < 0)
				goto fail;
		}
		if (!strcmp(name, "..")) {
			if ((flags & LOOKUP_SCOPED) && depth == 0) {
				/* IN_ROOT: as "/.." is "/" */
				if (flags & LOOKUP_BENEATH) {
					rc = -EXDEV;
					goto fail;
				}
				continue;
			}
			/* Back where the walk came from, or (above its start,
			 * or after a jump) the parent. Clamped at the sandbox
			 * root: there is nothing above. Nothing renames a
			 * directory during a walk, so the two are the same. */
			if (nup > 0) {
				next = up[--nup];
			} else {
				rc = vnode_parent(t, cur, &next);
				if (rc < 0)
					goto fail;
			}
			if (!xdev_ok(flags, cur, next)) {
				vnode_put(next);
				rc = -EXDEV;
				goto fail;
			}
			vnode_put(cur);
			cur = next;
			if (depth > 0)
				depth--;
			continue;
		}
		rc = lookup_child(t, cur, name, &next);
		if (rc < 0)
			goto fail;
		if (!xdev_ok(flags, cur, next)) {
			vnode_put(next);
			rc = -EXDEV;
			goto fail;
		}
		if (S_ISLNK(next->mode) &&
		    (!last || trailing || (flags & LOOKUP_FOLLOW))) {
			char target[PATH_MAX], tmp[2 * PATH_MAX];
			struct file *mf;
			size_t rl;
			int n;

			rc = ++links > MAX_SYMLINKS ? -ELOOP : 0;
			if (rc == 0 &&
			    (flags & ~(LOOKUP_FOLLOW | LOOKUP_EMPTY)))
				rc = link_allowed(next, flags);
			if (rc < 0) {
				vnode_put(next);
				goto fail;
			}
			mf = procfs_fd_file(t, next);
			if (mf) {
				/* A magic link: go to the open file itself. */
				if (mf->vn ? !xdev_ok(flags, cur, mf->vn) :
					     (flags & LOOKUP_NO_XDEV) != 0) {
					vnode_put(next);
					rc = -EXDEV;
					goto fail;
				}
				if (!mf->vn) {
					/* A pipe or a host stream: no node to walk
					 * into; callers open the link itself. */
					if (!last) {
						vnode_put(next);
						rc = -ENOTDIR;
						goto fail;
					}
					vnode_put(cur);
					cur = next;
					break;
				}
				/* A file with more of the path after it:
				 * ENOTDIR, before any search permission
				 * on it is asked (Linux: "/proc/self/fd/N/.."
				 * of a file). */
				if ((!last || trailing) &&
				    !S_ISDIR(mf->vn->mode)) {
					vnode_put(next);
					rc = -ENOTDIR;
					goto fail;
				}
				vnode_put(next);
				vnode_put(cur);
				walk_unwind(up, &nup);
				cur = vnode_get(mf->vn);
				continue;
			}
			n = readlink_for(t, next, target, sizeof(target));
			vnode_put(next);
			if (n <= 0) {
				rc = n < 0 ? n : -ENOENT;
				goto fail;
			}
			rl = strlen(rest + pos);
			if (rl + (size_t)n + 2 >= sizeof(tmp)) {
				rc = -ENAMETOOLONG;
				goto fail;
			}
			memcpy(tmp, target, (size_t)n);
			memcpy(tmp + n, rest + pos, rl + 1);
			memcpy(rest, tmp, (size_t)n + rl + 1);
			pos = 0;
			if (target[0] == '/') {
				if (flags & LOOKUP_BENEATH) {
					rc = -EXDEV;
					goto fail;
				}
				next = vnode_get(root ? root : NS->top_vn);
				if (!xdev_ok(flags, cur, next)) {
					vnode_put(next);
					rc = -EXDEV;
					goto fail;
				}
				vnode_put(cur);
				walk_unwind(up, &nup);
				cur = next;
				depth = 0;
			}
			continue;
		}
		if (trailing && !S_ISDIR(next->mode)) {
			vnode_put(next);
			rc = -ENOTDIR;
			goto fail;
		}
		if (nup == WALK_DEPTH)
			walk_unwind(up, &nup); /* (cannot be: see WALK_DEPTH) */
		up[nup++] = cur;
		cur = next;
		depth++;
	}
	walk_unwind(up, &nup);
	vnode_put(root);
	*out = cur;
	return 0;
fail:
	walk_unwind(up, &nup);
	vnode_put(cur);
	vnode_put(root);
	return rc;
}

/* Make name in dir, a directory (a mount point the rootfs lacks): in the
 * overlay's upper layer, or in the tmpfs dir is in. last: a clone's root,
 * made with the host directory's attributes, as a copy-up. */
static int make_mount_dir(struct vnode *dir, const char *name,
			  const struct stat *last)
{
	struct vnode *udir, *vn;
	int rc = ovl_write_dir(dir, &udir);

	if (rc < 0)
		return rc;
	if (last) {
		rc = tmpfs_make_raw(udir, name, last, NULL, &vn);
		if (rc == 0)
			vnode_put(vn);
	} else {
		rc = tmpfs_mkdir(NULL, udir, name, 0755);
	}
	vnode_put(udir);
	return rc;
}

/* One walk from "/", each component looked up (or made) in the directory
 * the walk has reached: resolving every prefix again from "/" made a
 * mount 2,000 levels deep take a minute. Symlinks are followed inside the
 * sandbox's tree, as runc's securejoin does: an absolute one restarts at
 * the sandbox's "/", ".." stops there, and a dangling one's target is
 * made, so that an image's link never takes a mount point out of it.
 * ".." returns to the directory the walk came from, kept on a stack:
 * looking the parent up again from "/" (vnode_parent) cost a whole walk
 * per "..", and an image's link that climbs D levels and comes back to
 * itself, followed to ELOOP, took minutes at D=300. Nothing renames a
 * directory while the sandbox is set up, so the stack is the canonical
 * path. A loop, never a recursion: the depth is bounded by PATH_MAX. */
int vfs_mkdir_p(const char *path, const struct stat *last, struct vnode **out)
{
	char rest[2 * PATH_MAX];
	struct vnode *cur, *next, **up;
	size_t pos = 0, nup = 0;
	int links = 0, rc;

	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	up = malloc(WALK_DEPTH * sizeof(*up));
	if (!up)
		return -ENOMEM;
	strcpy(rest, path);
	cur = vnode_get(NS->top_vn);
	for (;;) {
		char name[NAME_MAX + 2];
		bool final;

		rc = next_component(rest, &pos, name, &final);
		if (rc == 0)
			break;
		if (rc < 0)
			goto fail;
		if (!strcmp(name, "."))
			continue;
		if (!strcmp(name, "..")) {
			if (nup > 0) { /* "/.." is "/" */
				vnode_put(cur);
				cur = up[--nup];
			}
			continue;
		}
		rc = lookup_child(NULL, cur, name, &next);
		if (rc == -ENOENT) {
			rc = make_mount_dir(cur, name, final ? last : NULL);
			if (rc == 0)
				rc = lookup_child(NULL, cur, name, &next);
		}
		if (rc < 0)
			goto fail;
		if (S_ISLNK(next->mode)) {
			char target[PATH_MAX];
			size_t rl = strlen(rest + pos);
			int n;

			/* /proc/self/fd/N and the like lead to no directory
			 * of the sandbox's tree. */
			if (++links > MAX_SYMLINKS || procfs_is_magic(next))
				n = -ELOOP;
			else
				n = vfs_readlink(next, target, sizeof(target));
			vnode_put(next);
			if (n <= 0) {
				rc = n < 0 ? n : -ENOENT;
				goto fail;
			}
			/* The link's text and the rest are bounded by the
			 * buffer: a 4095-byte target is valid, and
			 * join_path bounds the real path. */
			if ((size_t)n + rl >= sizeof(rest)) {
				rc = -ENAMETOOLONG;
				goto fail;
			}
			memmove(rest + n, rest + pos, rl + 1);
			memcpy(rest, target, (size_t)n);
			pos = 0;
			if (target[0] == '/') {
				walk_unwind(up, &nup);
				vnode_put(cur);
				cur = vnode_get(NS->top_vn);
			}
			continue;
		}
		if (!S_ISDIR(next->mode) || nup == WALK_DEPTH) {
			rc = S_ISDIR(next->mode) ? -ENAMETOOLONG : -ENOTDIR;
			vnode_put(next);
			goto fail;
		}
		up[nup++] = cur;
		cur = next;
	}
	walk_unwind(up, &nup);
	free(up);
	if (out)
		*out = cur;
	else
		vnode_put(cur);
	return 0;
fail:
	walk_unwind(up, &nup);
	free(up);
	vnode_put(cur);
	return rc;
}

int vfs_resolve(struct task *t, int dirfd, const char *path, int flags,
		struct vnode **out)
{
	int rc;

	if (!(flags & LOOKUP_CACHED))
		return walk(t, dirfd, path, flags, out);
	walk_cached_only = true;
	rc = walk(t, dirfd, path, flags, out);
	walk_cached_only = false;
	/* Linux: a name it does not find in the dcache needs a real lookup,
	 * and even a negative dentry gives EAGAIN. */
	return rc == -ENOENT ? -EAGAIN : rc;
}

int vfs_stat(struct vnode *vn, struct stat *st)
{
	switch (vn->kind) {
	case VN_GOFER:
		*st = vn->st;
		return 0;
	case VN_HOST: {
		/* Fresh every time: the file may have changed on the host, or
		 * through a donated fd. */
		int rc = p9c_getattr(vn_p9(vn), vn->fid, &vn->st);
		if (rc < 0)
			return rc;
		vn->st.st_dev = vn->mnt->dev;
		*st = vn->st;
		return 0;
	}
	case VN_PROC:
		return procfs_stat(vn, st);
	case VN_DEV:
		return devfs_stat(vn, st);
	case VN_TMPFS:
		return tmpfs_stat(vn, st);
	case VN_MQUEUE:
		return mqueuefs_stat(vn, st);
	case VN_SYS:
		return sysfs_stat(vn, st);
	}
	return -EINVAL;
}

int vfs_access(const struct creds *c, struct vnode *vn, int mask)
{
	struct stat st;
	mode_t m;
	int rc = vfs_stat(vn, &st);

	if (rc < 0)
		return rc;
	if ((mask & W_OK) && vn->kind == VN_GOFER &&
	    (!ovl_enabled() || ovl_readonly()))
		return -EROFS; /* with the overlay, a write copies up */
	if ((mask & W_OK) && vn->kind == VN_TMPFS && tmpfs_readonly(vn))
		return -EROFS;
	if ((mask & W_OK) && vn->kind == VN_HOST && vfs_host_readonly(vn))
		return -EROFS;
	/* sysfs is mounted read-only, as runc NS->mounts it: EROFS, before the
	 * mode is looked at (its superblock is read-only too) */
	if ((mask & W_OK) && vn->kind == VN_SYS)
		return -EROFS;
	m = st.st_mode;
	/* A read-only mount refuses writes to its files, not to its devices
	 * (a masked file is /dev/null), as Linux's; tmpfs says it above. */
	if ((mask & W_OK) && (S_ISREG(m) || S_ISDIR(m) || S_ISLNK(m)) &&
	    vn->kind != VN_TMPFS && vfs_bound_ro(vn))
		return -EROFS;
	/* procfs files without a write bit are never written, by root
	 * neither, as Linux's read-only sysctls refuse it; the others
	 * (oom_score_adj) are their owner's and root's. */
	if ((mask & W_OK) && vn->kind == VN_PROC && S_ISREG(m) && !(m & 0222))
		return -EACCES;
	if (st.st_uid == c->fsuid)
		m >>= 6;
	else if (creds_in_group(c, st.st_gid))
		m >>= 3;
	if (!((mask & R_OK) && !(m & 4)) && !((mask & W_OK) && !(m & 2)) &&
	    !((mask & X_OK) && !(m & 1)))
		return 0;
	/* Linux's generic_permission: CAP_DAC_READ_SEARCH reads anything
	 * and searches any directory; CAP_DAC_OVERRIDE does everything but
	 * execute a file with no x bit. */
	m = st.st_mode;
	if (S_ISDIR(m)) {
		if (!(mask & W_OK) && creds_capable(c, CAP_DAC_READ_SEARCH))
			return 0;
		return creds_capable(c, CAP_DAC_OVERRIDE) ? 0 : -EACCES;
	}
	if ((mask & (R_OK | W_OK | X_OK)) == R_OK &&
	    creds_capable(c, CAP_DAC_READ_SEARCH))
		return 0;
	if ((!(mask & X_OK) || (m & 0111)) &&
	    creds_capable(c, CAP_DAC_OVERRIDE))
		return 0;
	return -EACCES;
}

int vfs_task_access(struct task *t, const struct creds *c, struct vnode *vn,
		    int mask)
{
	int rc = vfs_access(c, vn, mask);

	if (rc == -EACCES && vn->kind == VN_PROC && procfs_self_access(t, vn))
		return 0;
	return rc;
}

uint32_t opaque_id(uint64_t v)
{
	static uint64_t key;

	if (!key && getrandom(&key, sizeof(key), 0) != sizeof(key))
		key = (uint64_t)now_ns() | 1;
	v ^= key;
	v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
	v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
	v ^= v >> 31;
	return (uint32_t)v ? (uint32_t)v : 1;
}

bool creds_in_group(const struct creds *c, gid_t g)
{
	int i;

	if (g == c->fsgid)
		return true;
	for (i = 0; i < c->ngroups; i++)
		if (c->groups[i] == g)
			return true;
	return false;
}

int vfs_child_path(struct vnode *dir, const char *name, char *out, size_t cap)
{
	int n = !strcmp(dir->path, "/") ?
			snprintf(out, cap, "/%s", name) :
			snprintf(out, cap, "%s/%s", dir->path, name);
	return (n < 0 || (size_t)n >= cap) ? -ENAMETOOLONG : 0;
}

int vfs_sticky_ok(const struct creds *c, struct vnode *dir, uid_t owner)
{
	struct stat st;

	if (creds_capable(c, CAP_FOWNER) || c->fsuid == owner ||
	    vfs_stat(dir, &st) < 0)
		return 0;
	return (st.st_mode & S_ISVTX) && c->fsuid != st.st_uid ? -EPERM : 0;
}

/* ---- the mount table ------------------------------------------------------ */

#define MQUEUE_MAGIC 0x19800202

/* Linux's name of a host filesystem a directory is bound from. */
static const char *fs_name(long magic)
{
	static const struct {
		long magic;
		const char *name;
	} names[] = {
		{ EXT4_SUPER_MAGIC, "ext4" },
		{ XFS_SUPER_MAGIC, "xfs" },
		{ BTRFS_SUPER_MAGIC, "btrfs" },
		{ TMPFS_MAGIC, "tmpfs" },
		{ OVERLAYFS_SUPER_MAGIC, "overlay" },
		{ F2FS_SUPER_MAGIC, "f2fs" },
		{ NFS_SUPER_MAGIC, "nfs" },
		{ FUSE_SUPER_MAGIC, "fuse" },
		{ V9FS_MAGIC, "9p" },
		{ SQUASHFS_MAGIC, "squashfs" },
		{ RAMFS_MAGIC, "ramfs" },
		{ MSDOS_SUPER_MAGIC, "vfat" },
		{ 0x2fc12fc1, "zfs" },
		{ 0x6a656a63, "fakeowner" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if ((uint32_t)names[i].magic == (uint32_t)magic)
			return names[i].name;
	return "9p"; /* what else it is, the gofer serves it over 9P */
}

/* What no mount of the sandbox allows (struct vfs_mount_info). */
#define MNT_ALWAYS (ST_NOSUID | ST_RELATIME)

static void add_entry(struct vfs_mount_info *t, size_t *n, const char *path,
		      dev_t dev, const char *fstype, const char *source,
		      unsigned long flags, long magic, const char *super)
{
	struct vfs_mount_info *e = &t[*n];

	memset(e, 0, sizeof(*e));
	e->id = (unsigned)*n + 1;
	e->path = path;
	e->dev = dev;
	e->fstype = fstype;
	e->source = source;
	e->flags = flags | MNT_ALWAYS;
	e->magic = magic;
	snprintf(e->super, sizeof(e->super), "%s", super ? super : "");
	/* The parent is the mount that was on top at the mount point when
	 * this one was made: the latest of the longest prefix. */
	e->parent = 1;
	for (size_t j = 0, best = 0; j < *n; j++) {
		size_t l = strlen(t[j].path);
		bool prefix = !strcmp(t[j].path, "/") ||
			      (!strncmp(path, t[j].path, l) &&
			       (path[l] == '/' || !path[l]));
		if (prefix && l >= best) {
			best = l;
			e->parent = t[j].id;
		}
	}
	(*n)++;
}

size_t vfs_mount_table(struct vfs_mount_info *out, size_t cap)
{
	struct vfs_mount_info t[VFS_MOUNTS_TABLE_MAX];
	bool rootro = !ovl_enabled() || ovl_readonly();
	size_t n = 0;

	add_entry(t, &n, "/", VFS_DEV_ROOT, "overlay", "overlay",
		  ST_NODEV | (rootro ? ST_RDONLY : 0), OVERLAYFS_SUPER_MAGIC,
		  NULL);
	add_entry(t, &n, "/proc", VFS_DEV_PROC, "proc", "proc",
		  ST_NODEV | ST_NOEXEC, PROC_SUPER_MAGIC, NULL);
	/* devfs: devices work here, and nothing else can be made */
	add_entry(t, &n, "/dev", VFS_DEV_DEV, "tmpfs", "tmpfs", 0, TMPFS_MAGIC,
		  "mode=755");
	add_entry(t, &n, "/dev/pts", VFS_DEV_PTS, "devpts", "devpts", ST_NOEXEC,
		  DEVPTS_SUPER_MAGIC, "mode=620,ptmxmode=666");
	add_entry(t, &n, "/dev/shm", VFS_DEV_SHM, "tmpfs", "shm",
		  ST_NODEV | (S->opts.shm_noexec ? ST_NOEXEC : 0), TMPFS_MAGIC,
		  NULL);
	add_entry(t, &n, "/dev/mqueue", VFS_DEV_MQUEUE, "mqueue", "mqueue",
		  ST_NODEV | ST_NOEXEC, MQUEUE_MAGIC, NULL);
	/* runc's default: ro,nosuid,nodev,noexec, its superblock ro */
	if (sys_vn) {
		add_entry(t, &n, "/sys", VFS_DEV_SYS, "sysfs", "sysfs",
			  ST_RDONLY | ST_NODEV | ST_NOEXEC, SYSFS_MAGIC, NULL);
		t[n - 1].super_ro = true;
	}
	add_entry(t, &n, "/tmp", VFS_DEV_TMP, "tmpfs", "tmpfs", ST_NODEV,
		  TMPFS_MAGIC, NULL);
	for (size_t i = 0; i < NS->nmounts && n < ARRAY_SIZE(t); i++) {
		const struct vmount *m = &NS->mounts[i];
		unsigned long f = ST_NODEV | (m->noexec ? ST_NOEXEC : 0);
		char super[64] = "";

		if (m->kind == VMOUNT_BIND) {
			/* a readonlyPaths bind of the path over itself: the
			 * filesystem it is in, read-only here */
			size_t k = n;
			for (size_t j = 0; j < n; j++) {
				size_t l = strlen(t[j].path);
				if (!strcmp(t[j].path, "/") ||
				    (!strncmp(m->path, t[j].path, l) &&
				     (m->path[l] == '/' || !m->path[l])))
					k = j;
			}
			if (k == n)
				continue;
			add_entry(t, &n, m->path, t[k].dev, t[k].fstype,
				  t[k].source,
				  (t[k].flags & ~MNT_ALWAYS) | ST_RDONLY,
				  t[k].magic, t[k].super);
		} else if (m->kind == VMOUNT_NULL) {
			/* a masked file: /dev/null bound over it, as runc
			 * masks one */
			add_entry(t, &n, m->path, VFS_DEV_DEV, "tmpfs", "tmpfs",
				  0, TMPFS_MAGIC, "mode=755");
		} else if (m->mode == MNT_CLONE) {
			/* part of the rootfs's overlay, read-only with it */
			add_entry(t, &n, m->path, m->dev, "overlay", "overlay",
				  f | (rootro ? ST_RDONLY : 0),
				  OVERLAYFS_SUPER_MAGIC, NULL);
		} else if (!m->p9) {
			const struct stat *rs = &m->root->st;
			int l = 0;

			if ((rs->st_mode & 07777) != 01777)
				l = snprintf(super, sizeof(super), "mode=%03o",
					     rs->st_mode & 07777);
			if (rs->st_uid)
				l += snprintf(super + l, sizeof(super) - l,
					      "%suid=%u", l ? "," : "",
					      rs->st_uid);
			if (rs->st_gid)
				snprintf(super + l, sizeof(super) - l,
					 "%sgid=%u", l ? "," : "", rs->st_gid);
			add_entry(t, &n, m->path, m->dev, "tmpfs",
				  m->source && m->source[0] ? m->source :
							      "tmpfs",
				  f | (m->mode == MNT_RO ? ST_RDONLY : 0),
				  TMPFS_MAGIC, super);
		} else {
			/* a bind: the host's filesystem, read-only or not in
			 * this mount alone; its device is not shown */
			add_entry(t, &n, m->path, m->dev, fs_name(m->magic),
				  "none",
				  f | (m->mode == MNT_RO ? ST_RDONLY : 0),
				  m->magic, NULL);
		}
	}
	memcpy(out, t, (n < cap ? n : cap) * sizeof(*t));
	return n;
}

int vfs_mount_of(struct vnode *vn, struct vfs_mount_info *out)
{
	struct vfs_mount_info t[VFS_MOUNTS_TABLE_MAX];
	size_t n = vfs_mount_table(t, ARRAY_SIZE(t)), i;
	struct stat st;
	dev_t dev;

	/* no round trip to the gofer, no stale procfs node's ENOENT */
	if (vn->kind == VN_HOST) {
		dev = vn->mnt->dev;
	} else if (vn->kind == VN_PROC) {
		dev = VFS_DEV_PROC;
	} else if (vn->kind == VN_MQUEUE) {
		dev = VFS_DEV_MQUEUE;
	} else if (vn->kind == VN_SYS) {
		dev = VFS_DEV_SYS;
	} else {
		int rc = vfs_stat(vn, &st);
		if (rc < 0)
			return rc;
		dev = st.st_dev;
	}
	/* Among the NS->mounts of that device (a readonlyPaths bind shares its
	 * filesystem's, a masked file /dev's), the latest whose mount point
	 * the path is at or under; else the latest of the device: a file
	 * renamed into a clone from the rest of the rootfs keeps the
	 * rootfs's device, as a file of the same overlay. */
	size_t best = n, best_len = 0, last = n;
	for (i = n; i-- > 0;) {
		size_t l = strlen(t[i].path);

		if (t[i].dev != dev)
			continue;
		if (last == n)
			last = i;
		if ((best == n || l > best_len) &&
		    (!strcmp(t[i].path, "/") ||
		     (!strncmp(vn->path, t[i].path, l) &&
		      (vn->path[l] == '/' || !vn->path[l])))) {
			best = i;
			best_len = l;
		}
	}
	i = best < n ? best : last;
	*out = t[i < n ? i : 0];
	return 0;
}

bool vfs_noexec(struct vnode *vn)
{
	struct vfs_mount_info m;
	bool any = S->opts.shm_noexec;

	/* Every execve and PROT_EXEC mapping asks: a file of the rootfs, a
	 * bind or a tmpfs is on a noexec mount only if some mount of the
	 * table says noexec (those kinds' entries take their flags from
	 * NS->mounts[] or /dev/shm), which is rarely so; then no table is made. */
	for (size_t i = 0; i < NS->nmounts && !any; i++)
		any = NS->mounts[i].noexec;
	if (!any && (vn->kind == VN_GOFER || vn->kind == VN_HOST ||
		     vn->kind == VN_TMPFS))
		return false;
	return vfs_mount_of(vn, &m) == 0 && (m.flags & ST_NOEXEC);
}

int vfs_statfs(struct vnode *vn, struct statfs *st)
{
	struct vfs_mount_info m;
	int rc = vfs_mount_of(vn, &m);

	if (rc < 0)
		return rc;
	memset(st, 0, sizeof(*st));
	switch (vn->kind) {
	case VN_HOST: {
		rc = p9c_statfs(vn_p9(vn), vn->mnt->rootfid, st);
		if (rc < 0)
			return rc;
		break;
	}
	case VN_GOFER:
	case VN_TMPFS:
		/* The rootfs's overlay and clones count what the guest may
		 * write, as a tmpfs does: the sandbox's --disk budget. */
		rc = tmpfs_statfs(vn, st);
		if (rc < 0)
			return rc;
		break;
	case VN_PROC:
	case VN_DEV:
	case VN_MQUEUE:
	case VN_SYS:
		st->f_bsize = 4096;
		st->f_namelen = 255;
		st->f_frsize = 4096;
		break;
	}
	st->f_type = m.magic;
	/* ST_VALID: Linux sets it on every statfs (calculate_f_flags) */
	st->f_flags = m.flags | 0x20;
	/* a file an OCI bundle binds read-only, copied into the overlay;
	 * anything under a readonlyPaths bind */
	if ((vn->kind == VN_TMPFS && tmpfs_readonly(vn)) || vfs_bound_ro(vn))
		st->f_flags |= ST_RDONLY;
	return 0;
}

bool dirent_emit(struct dirent_sink *s, uint64_t ino, unsigned char type,
		 const char *name)
{
	size_t nlen = strlen(name);
	size_t reclen = (offsetof(
				 struct {
					 uint64_t a;
					 int64_t b;
					 uint16_t c;
					 uint8_t d;
					 char e[];
				 },
				 e) +
			 nlen + 1 + 7) &
			~(size_t)7;
	uint8_t *p;

	if (s->full)
		return false;
	if (s->index < s->skip) {
		s->index++;
		return true;
	}
	if (s->len + reclen > s->cap) {
		s->full = true;
		return false;
	}
	p = (uint8_t *)s->buf + s->len;
	memset(p, 0, reclen);
	memcpy(p, &ino, 8);
	{
		int64_t off = s->index + 1;
		uint16_t rl = (uint16_t)reclen;
		memcpy(p + 8, &off, 8);
		memcpy(p + 16, &rl, 2);
	}
	p[18] = type;
	memcpy(p + 19, name, nlen);
	s->len += reclen;
	s->index++;
	return true;
}

int vfs_resolve_parent(struct task *t, int dirfd, const char *path,
		       struct vnode **dir, char *name, bool *trailing)
{
	return vfs_resolve_parent_flags(t, dirfd, path, 0, dir, name, trailing);
}

int vfs_resolve_parent_flags(struct task *t, int dirfd, const char *path,
			     int rflags, struct vnode **dir, char *name,
			     bool *trailing)
{
	char buf[PATH_MAX], full[PATH_MAX];
	const char *dirpart, *last;
	char *slash;
	size_t len = strlen(path);
	struct vnode *d;
	int rc;

	*trailing = false;
	if (!len)
		return -ENOENT;
	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	while (len > 1 && buf[len - 1] == '/') {
		buf[--len] = 0;
		*trailing = true;
	}
	if (!strcmp(buf, "/"))
		return -EBUSY;
	slash = strrchr(buf, '/');
	if (!slash) {
		last = buf;
		dirpart = ".";
	} else {
		last = slash + 1;
		*slash = 0;
		dirpart = slash == buf ? "/" : buf;
	}
	if (strlen(last) > NAME_MAX)
		return -ENAMETOOLONG;
	if (!strcmp(last, ".") || !strcmp(last, ".."))
		return -EINVAL;
	memcpy(name, last, strlen(last) + 1);
	rc = vfs_resolve(t, dirfd, dirpart, LOOKUP_FOLLOW | rflags, &d);
	if (rc < 0)
		return rc;
	if (!S_ISDIR(d->mode)) {
		vnode_put(d);
		return -ENOTDIR;
	}
	if (t) {
		rc = vfs_task_access(t, &t->proc->cred, d, X_OK);
		if (rc < 0) {
			vnode_put(d);
			return rc;
		}
	}
	if (join_path(full, sizeof(full), d->path, name) == 0 &&
	    mount_point_at(full)) {
		vnode_put(d);
		return -EBUSY;
	}
	*dir = d;
	return 0;
}
