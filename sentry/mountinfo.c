/* sentry/mountinfo.c: one mount table entry as text, the way the kernel
 * prints it in /proc/<pid>/mountinfo (show_mountinfo), /proc/mounts
 * (show_vfsmnt) and /proc/<pid>/mountstats (show_vfsstat). Pure: the
 * table comes from vfs_mount_table. */
#include "sentry/vfs.h"

#include <stdio.h>
#include <string.h>

struct out {
	char *p;
	size_t cap, len;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len < o->cap) {
		size_t room = o->cap - o->len;
		memcpy(o->p + o->len, s, n < room ? n : room);
	}
	o->len += n;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* Paths and names are split on whitespace by every reader: the kernel
 * writes space, tab, newline and backslash as octal escapes (mangle()). */
static void put_escaped(struct out *o, const char *s)
{
	char esc[5];

	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\') {
			snprintf(esc, sizeof(esc), "\\%03o", (unsigned char)*s);
			put(o, esc, 4);
		} else {
			put(o, s, 1);
		}
	}
}

/* The per-mount options, in show_mnt_opts's order. */
static void put_mnt_opts(struct out *o, unsigned long f)
{
	puts_(o, (f & ST_RDONLY) ? "ro" : "rw");
	if (f & ST_NOSUID)
		puts_(o, ",nosuid");
	if (f & ST_NODEV)
		puts_(o, ",nodev");
	if (f & ST_NOEXEC)
		puts_(o, ",noexec");
	if (f & ST_NOATIME)
		puts_(o, ",noatime");
	if (f & ST_NODIRATIME)
		puts_(o, ",nodiratime");
	if (f & ST_RELATIME)
		puts_(o, ",relatime");
}

size_t mount_format(char *buf, size_t cap, const struct vfs_mount_info *m,
		    enum mount_style style)
{
	struct out o = { buf, cap ? cap - 1 : 0, 0 };
	char num[64];

	switch (style) {
	case MOUNT_STYLE_MOUNTINFO:
		snprintf(num, sizeof(num), "%u %u %u:%u ", m->id, m->parent,
			 major(m->dev), minor(m->dev));
		puts_(&o, num);
		/* the root of the mount within its filesystem: always the
		 * filesystem's own root (a bind's host path is not shown) */
		puts_(&o, "/ ");
		put_escaped(&o, m->path);
		puts_(&o, " ");
		put_mnt_opts(&o, m->flags);
		puts_(&o, " - ");
		put_escaped(&o, m->fstype);
		puts_(&o, " ");
		put_escaped(&o, m->source);
		puts_(&o, m->super_ro ? " ro" : " rw");
		if (m->super[0]) {
			puts_(&o, ",");
			puts_(&o, m->super);
		}
		break;
	case MOUNT_STYLE_MOUNTS:
		put_escaped(&o, m->source);
		puts_(&o, " ");
		put_escaped(&o, m->path);
		puts_(&o, " ");
		put_escaped(&o, m->fstype);
		puts_(&o, " ");
		put_mnt_opts(&o, m->flags);
		if (m->super[0]) {
			puts_(&o, ",");
			puts_(&o, m->super);
		}
		puts_(&o, " 0 0");
		break;
	case MOUNT_STYLE_MOUNTSTATS:
		puts_(&o, "device ");
		put_escaped(&o, m->source);
		puts_(&o, " mounted on ");
		put_escaped(&o, m->path);
		puts_(&o, " with fstype ");
		put_escaped(&o, m->fstype);
		break;
	}
	puts_(&o, "\n");
	if (cap)
		buf[o.len < o.cap ? o.len : o.cap] = '\0';
	return o.len;
}
