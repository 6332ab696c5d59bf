/* sentry/notify.c: directory change notification (fcntl F_NOTIFY).
 *
 * A directory watched with F_NOTIFY hears, by a signal to the process
 * that asked (SIGIO, or the one set with F_SETSIG), of names created,
 * removed or renamed in it (DN_CREATE, DN_DELETE, DN_RENAME), of
 * attribute changes of its entries (DN_ATTRIB) and of truncations
 * (DN_MODIFY). The write paths call notify_* after a change succeeded; a
 * directory is known by (st_dev, st_ino), so a watch on a rootfs
 * directory hears of changes made in its overlay copy. Data written
 * through write(2) is not reported (docs/compat.md).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "sentry/syscalls.h"
#include "sentry/vfs.h"

#define WATCHES_MAX 4096

struct dwatch {
	struct dwatch *next;
	struct file *f; /* the watching open directory (not referenced) */
	dev_t dev;
	ino_t ino;
	unsigned long mask;
	struct process *owner;
};

static struct dwatch *watches;
static int nwatches;

static int ident(struct vnode *vn, dev_t *dev, ino_t *ino)
{
	struct stat st;
	int rc = vfs_stat(vn, &st);

	if (rc == 0) {
		*dev = st.st_dev;
		*ino = st.st_ino;
	}
	return rc;
}

long notify_fcntl(struct task *t, struct file *f, unsigned long mask)
{
	struct dwatch **pp, *w;
	dev_t dev = 0;
	ino_t ino = 0;
	int rc;

	if (!f->vn || !S_ISDIR(f->vn->mode))
		return -ENOTDIR;
	for (pp = &watches; *pp; pp = &(*pp)->next)
		if ((*pp)->f == f && (*pp)->owner == t->proc)
			break;
	if (!mask) {
		if (*pp) {
			w = *pp;
			*pp = w->next;
			free(w);
			nwatches--;
		}
		return 0;
	}
	rc = ident(f->vn, &dev, &ino);
	if (rc < 0)
		return rc;
	w = *pp;
	if (!w) {
		if (nwatches >= WATCHES_MAX)
			return -ENOSPC;
		w = calloc(1, sizeof(*w));
		if (!w)
			return -ENOMEM;
		w->next = watches;
		watches = w;
		nwatches++;
	}
	w->f = f;
	w->dev = dev;
	w->ino = ino;
	w->mask = mask;
	w->owner = t->proc;
	return 0;
}

void notify_file_gone(struct file *f)
{
	struct dwatch **pp = &watches;

	while (*pp) {
		if ((*pp)->f == f) {
			struct dwatch *w = *pp;
			*pp = w->next;
			free(w);
			nwatches--;
		} else {
			pp = &(*pp)->next;
		}
	}
}

void notify_dir(struct vnode *dir, unsigned long ev)
{
	struct dwatch **pp = &watches;
	dev_t dev = 0;
	ino_t ino = 0;

	if (!watches || !dir || ident(dir, &dev, &ino) < 0)
		return;
	while (*pp) {
		struct dwatch *w = *pp;
		if (w->dev != dev || w->ino != ino || !(w->mask & ev) ||
		    w->owner->exited) {
			pp = &w->next;
			continue;
		}
		send_signal_proc(w->owner, w->f->sig ? w->f->sig : SIGIO, 0);
		if (!(w->mask & DN_MULTISHOT)) {
			*pp = w->next;
			free(w);
			nwatches--;
		} else {
			pp = &w->next;
		}
	}
}

/* The directory holding the file at a canonical path. */
void notify_parent(struct vnode *vn, unsigned long ev)
{
	char buf[PATH_MAX], *slash;
	struct vnode *dir;

	if (!watches || !vn || !vn->path)
		return;
	snprintf(buf, sizeof(buf), "%s", vn->path);
	slash = strrchr(buf, '/');
	if (!slash)
		return;
	if (slash == buf)
		slash[1] = 0;
	else
		*slash = 0;
	if (vfs_resolve(NULL, AT_FDCWD, buf, LOOKUP_FOLLOW, &dir) == 0) {
		notify_dir(dir, ev);
		vnode_put(dir);
	}
}

/* The directory a guest path names an entry of. */
void notify_path(struct task *t, int dirfd, uint64_t upath, unsigned long ev)
{
	char path[PATH_MAX], name[NAME_MAX + 1];
	struct vnode *dir;
	bool trailing;

	if (!watches || task_read_str(t, upath, path, sizeof(path)) < 0)
		return;
	if (vfs_resolve_parent(t, dirfd, path, &dir, name, &trailing) == 0) {
		notify_dir(dir, ev);
		vnode_put(dir);
	}
}
