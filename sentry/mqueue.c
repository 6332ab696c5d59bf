/* sentry/mqueue.c: POSIX message queues in the sandbox's own IPC
 * namespace, and /dev/mqueue, the filesystem that shows them.
 *
 * Everything is the sentry's: a queue and its messages live in the
 * sentry's memory, and no host queue is ever made, opened or seen. The
 * semantics are Linux's (ipc/mqueue.c, mq_overview(7)): names are one
 * component; a queue is a file whose descriptor is always close-on-exec;
 * messages come out highest priority first, in order within a priority; a
 * send or receive that cannot go on blocks as any emulated syscall does
 * (re-run on every wake, a CLOCK_REALTIME deadline, interrupted by
 * signals); mq_notify fires when the queue goes from empty to non-empty
 * and no receiver waits, once.
 *
 * Limits are Linux's defaults (sentry/mqueue.h), and the sandbox cannot
 * change them: at most MQ_QUEUES_MAX queues (unlinked ones still open
 * included), each of at most MQ_MSG_MAX messages of MQ_MSGSIZE_MAX bytes,
 * and each charged to its creator's uid against RLIMIT_MSGQUEUE as Linux
 * counts it. The sandbox's root has no CAP_SYS_RESOURCE here (container
 * runtimes drop it, and in a user namespace Linux checks it against the
 * initial one), so the bounds hold for it too: whatever the guest does,
 * the queues hold at most MQ_QUEUES_MAX * MQ_MSG_MAX * MQ_MSGSIZE_MAX
 * bytes of messages (20 MiB).
 *
 * Lifetime: a queue is held by its name while linked and by every vnode
 * that names it (each open file holds one); it is freed, its charge
 * returned, when both are gone. The sandbox's end frees what is left.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "sentry/limits.h"
#include "sentry/mqueue.h"
#include "sentry/syscalls.h"
#include "sentry/sysctl.h"
#include "sentry/vfs.h"

#define MQ_PRIO_MAX 32768
/* What Linux charges a queue for besides the messages' bytes: a struct
 * msg_msg a message and a tree node a priority (x86-64 sizes). Charged
 * alike, the same queues fit in the same RLIMIT_MSGQUEUE. */
#define MSG_HDR_BYTES 48
#define PRIO_NODE_BYTES 48
#define FILENT_SIZE 80 /* st_size of a queue; the directory: 20 a name */
#define DIRENT_SIZE 20
#define COOKIE_LEN 32 /* NOTIFY_COOKIE_LEN, linux/mqueue.h */
#define COOKIE_WOKENUP 1
#define COOKIE_REMOVED 2
#define MQ_DEV VFS_DEV_MQUEUE
#define MQ_DIR "/dev/mqueue"
#define MQ_BUCKETS 64

/* The guest's struct mq_attr and struct sigevent, as the kernel reads them. */
struct kmq_attr {
	long flags, maxmsg, msgsize, curmsgs, reserved[4];
};
struct ksigevent {
	union sigval value;
	int signo;
	int notify;
	char rest[48];
};

struct mqmsg {
	unsigned prio;
	size_t len;
	char data[];
};

/* A queued message is the sentry's heap, charged to its share of the
 * memory limit (limits_heap_charge): past it mq_send gives ENOMEM, as
 * Linux when the message's memory is refused. */
static int64_t msg_charge(size_t len)
{
	return (int64_t)(sizeof(struct mqmsg) + len + 16);
}

static void msg_free(struct mqmsg *m)
{
	limits_heap_charge(-msg_charge(m->len));
	free(m);
}

struct mqueue {
	char *name; /* without the leading slash */
	bool linked;
	int refs; /* vnodes naming it */
	uint64_t ino;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	uid_t charged; /* the creator's real uid, charged `charge` bytes */
	size_t charge;
	long maxmsg, msgsize;
	/* At most maxmsg (<= MQ_MSG_MAX) messages, highest priority first and
	 * in arrival order within one: so few that a sorted array is all
	 * the order needs. */
	struct mqmsg **msgs;
	long nmsg;
	size_t qsize; /* bytes of all queued messages (QSIZE) */
	struct timespec atime, mtime, ctime;
	struct {
		bool on;
		struct process *proc; /* the owner; compared, and valid while
				       * on (mqueue_proc_gone clears it) */
		bool execd;	      /* the owner exec'd since it registered */
		int notify; /* SIGEV_NONE, SIGEV_SIGNAL, SIGEV_THREAD */
		int signo;
		union sigval value;
		struct file *sock; /* SIGEV_THREAD: the netlink socket (ref) */
		unsigned char cookie[COOKIE_LEN];
	} nt;
	uint64_t seq;		    /* events, for edge-triggered epoll */
	struct mqueue *hnext;	    /* its name's bucket, while linked */
	struct mqueue *prev, *next; /* all queues, newest first */
};

/* Bytes charged to one uid (Linux's per-user RLIMIT_MSGQUEUE count). */
struct mquser {
	uid_t uid;
	size_t bytes;
	struct mquser *next;
};

static struct mqueue *buckets[MQ_BUCKETS];
static struct mqueue *all;
static int nqueues; /* alive, unlinked ones included (Linux's count) */
static int nlinked;
static struct mquser *users;
static uint64_t next_ino = 2;
static struct timespec dir_time;
static const struct file_ops mq_file_ops, mq_dir_ops;

static struct timespec now_real(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h % MQ_BUCKETS;
}

static struct mqueue *find(const char *name)
{
	struct mqueue *q;

	for (q = buckets[name_hash(name)]; q; q = q->hnext)
		if (!strcmp(q->name, name))
			return q;
	return NULL;
}

/* A name as Linux's lookup takes it: one component. */
static int check_name(const char *name)
{
	if (!name[0] || !strcmp(name, ".") || !strcmp(name, "..") ||
	    strchr(name, '/'))
		return -EACCES;
	return strlen(name) > NAME_MAX ? -ENAMETOOLONG : 0;
}

static struct mquser *user_of(uid_t uid, bool make)
{
	struct mquser *u;

	for (u = users; u; u = u->next)
		if (u->uid == uid)
			return u;
	if (!make || !(u = calloc(1, sizeof(*u))))
		return NULL;
	u->uid = uid;
	u->next = users;
	users = u;
	return u;
}

static void uncharge(struct mqueue *q)
{
	struct mquser *u = user_of(q->charged, false), **pp;

	if (!u)
		return;
	u->bytes -= q->charge;
	if (u->bytes)
		return;
	for (pp = &users; *pp != u; pp = &(*pp)->next)
		;
	*pp = u->next;
	free(u);
}

static void notify_clear(struct mqueue *q, bool tell)
{
	if (!q->nt.on)
		return;
	if (q->nt.notify == SIGEV_THREAD && q->nt.sock) {
		/* glibc's helper thread frees its copy of the attributes */
		q->nt.cookie[COOKIE_LEN - 1] = COOKIE_REMOVED;
		if (tell)
			netlink_kernel_send(q->nt.sock, q->nt.cookie,
					    COOKIE_LEN);
		file_put(q->nt.sock);
	}
	memset(&q->nt, 0, sizeof(q->nt));
}

static void maybe_free(struct mqueue *q)
{
	long i;

	if (q->linked || q->refs > 0)
		return;
	notify_clear(q, false);
	for (i = 0; i < q->nmsg; i++)
		msg_free(q->msgs[i]);
	free(q->msgs);
	uncharge(q);
	if (q->prev)
		q->prev->next = q->next;
	else
		all = q->next;
	if (q->next)
		q->next->prev = q->prev;
	nqueues--;
	free(q->name);
	free(q);
}

static void unlink_queue(struct mqueue *q)
{
	struct mqueue **pp;

	for (pp = &buckets[name_hash(q->name)]; *pp != q; pp = &(*pp)->hnext)
		;
	*pp = q->hnext;
	q->hnext = NULL;
	q->linked = false;
	nlinked--;
	dir_time = now_real();
	q->ctime = dir_time;
	maybe_free(q);
}

/* A new linked queue of t's, with attr (NULL: the defaults). Checked in
 * Linux's order: the count, the attributes, the rlimit charge. */
static int queue_new(struct task *t, const char *name, mode_t mode,
		     const struct kmq_attr *attr, struct mqueue **out)
{
	/* fs.mqueue.*: at most the constants, which bound the memory; the
	 * defaults within the maxima (Linux's mqueue_get_inode) */
	const struct sysctl_knobs *k = &sysctl_k;
	long maxmsg = attr ? attr->maxmsg :
			     (long)(k->mq_msg_default < k->mq_msg_max ?
					    k->mq_msg_default :
					    k->mq_msg_max);
	long msgsize = attr ? attr->msgsize :
			      (long)(k->mq_msgsize_default < k->mq_msgsize_max ?
					     k->mq_msgsize_default :
					     k->mq_msgsize_max);
	const struct creds *c = &t->proc->cred;
	struct mquser *u;
	struct mqueue *q;
	size_t charge;
	uint32_t b;

	if ((unsigned long long)nqueues >= sysctl_k.mq_queues_max)
		return -ENOSPC;
	if (maxmsg <= 0 || msgsize <= 0 ||
	    (unsigned long long)maxmsg > sysctl_k.mq_msg_max ||
	    (unsigned long long)msgsize > sysctl_k.mq_msgsize_max)
		return -EINVAL;
	charge = (size_t)maxmsg * ((size_t)msgsize + MSG_HDR_BYTES) +
		 (size_t)(maxmsg < MQ_PRIO_MAX ? maxmsg : MQ_PRIO_MAX) *
			 PRIO_NODE_BYTES;
	u = user_of(c->ruid, false);
	if ((u ? u->bytes : 0) + charge > t->proc->rlim[RLIMIT_MSGQUEUE].cur)
		return -EMFILE;
	q = calloc(1, sizeof(*q));
	if (q) {
		q->name = strdup(name);
		q->msgs = calloc((size_t)maxmsg, sizeof(*q->msgs));
	}
	if (q && q->name && q->msgs && !u)
		u = user_of(c->ruid, true);
	if (!q || !q->name || !q->msgs || !u) {
		if (q) {
			free(q->name);
			free(q->msgs);
		}
		free(q);
		return -ENOMEM;
	}
	u->bytes += charge;
	q->charged = c->ruid;
	q->charge = charge;
	q->linked = true;
	q->ino = next_ino++;
	q->mode = mode & 07777;
	q->uid = c->fsuid;
	q->gid = c->fsgid;
	q->maxmsg = maxmsg;
	q->msgsize = msgsize;
	q->atime = q->mtime = q->ctime = dir_time = now_real();
	b = name_hash(name);
	q->hnext = buckets[b];
	buckets[b] = q;
	q->next = all;
	if (all)
		all->prev = q;
	all = q;
	nqueues++;
	nlinked++;
	*out = q;
	return 0;
}

/* A fresh vnode naming q (refs 1, holding q). */
static struct vnode *queue_vnode(struct mqueue *q)
{
	char path[PATH_MAX];
	struct vnode *vn;

	snprintf(path, sizeof(path), MQ_DIR "/%s", q->name);
	vn = vnode_new(VN_MQUEUE, S_IFREG | q->mode, path);
	if (!vn)
		return NULL;
	vn->mq = q;
	q->refs++;
	return vn;
}

void mqueuefs_vnode_gone(struct vnode *vn)
{
	struct mqueue *q = vn->mq;

	vn->mq = NULL;
	if (q) {
		q->refs--;
		maybe_free(q);
	}
}

/* The queue of an open mq descriptor, or NULL (EBADF for the caller). */
static struct mqueue *queue_of(struct task *t, int fd, struct file **fp)
{
	struct file *f = fd_get(t, fd);

	if (!f || f->ops != &mq_file_ops || !f->vn || !f->vn->mq)
		return NULL;
	if (fp)
		*fp = f;
	return f->vn->mq;
}

/* ---- the queue as a file ----------------------------------------------------- */

static int queue_stat(struct mqueue *q, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = MQ_DEV;
	st->st_ino = q->ino;
	st->st_mode = S_IFREG | q->mode;
	st->st_nlink = q->linked ? 1 : 0;
	st->st_uid = q->uid;
	st->st_gid = q->gid;
	st->st_size = FILENT_SIZE;
	st->st_blksize = 4096;
	st->st_atim = q->atime;
	st->st_mtim = q->mtime;
	st->st_ctim = q->ctime;
	return 0;
}

/* read(2) of a queue: Linux's one line about it. */
static long mq_read(struct task *t, struct file *f, void *buf, size_t n,
		    int64_t *off)
{
	struct mqueue *q = f->vn->mq;
	char line[FILENT_SIZE];
	int len;

	len = snprintf(
		line, sizeof(line),
		"QSIZE:%-10zu NOTIFY:%-5d SIGNO:%-5d NOTIFY_PID:%-6d\n",
		q->qsize, q->nt.on ? q->nt.notify : 0,
		q->nt.on && q->nt.notify == SIGEV_SIGNAL ? q->nt.signo : 0,
		q->nt.on ? pid_to_guest(t->proc->pidns, q->nt.proc->pid) : 0);
	if (len < 0 || !off || *off < 0)
		return -EINVAL;
	if (len >= (int)sizeof(line))
		len = (int)sizeof(line) - 1;
	if (*off >= len)
		return 0;
	if (n > (size_t)(len - *off))
		n = (size_t)(len - *off);
	memcpy(buf, line + *off, n);
	*off += (int64_t)n;
	q->atime = q->ctime = now_real();
	return (long)n;
}

static short mq_poll(struct file *f, short events)
{
	struct mqueue *q = f->vn->mq;
	short r = 0;

	if (q->nmsg)
		r |= POLLIN | POLLRDNORM;
	if (q->nmsg < q->maxmsg)
		r |= POLLOUT | POLLWRNORM;
	return r & (events | POLLERR | POLLHUP);
}

static int mq_fstat(struct file *f, struct stat *st)
{
	return queue_stat(f->vn->mq, st);
}

/* Linux's flush: any close by the owner of the notification ends it. */
static void mq_flush(struct process *p, struct file *f)
{
	struct mqueue *q = f->vn ? f->vn->mq : NULL;

	if (q && q->nt.on && q->nt.proc == p)
		notify_clear(q, true);
}

static uint64_t mq_evseq(struct file *f)
{
	return f->vn->mq->seq;
}

static const struct file_ops mq_file_ops = {
	.read = mq_read,
	.poll = mq_poll,
	.stat = mq_fstat,
	.flush = mq_flush,
	.evseq = mq_evseq,
};

static int open_file(struct vnode *vn, int flags, struct file **out)
{
	struct file *f = file_new(&mq_file_ops,
				  flags & (O_ACCMODE | O_NONBLOCK | O_APPEND));

	if (!f)
		return -ENOMEM;
	f->vn = vnode_get(vn);
	*out = f;
	return 0;
}

/* ---- the syscalls ------------------------------------------------------------ */

/* The name a syscall gives, as Linux's getname reads it. */
static int read_name(struct task *t, uint64_t uname, char *buf)
{
	int n = task_read_str(t, uname, buf, PATH_MAX);

	if (n < 0)
		return n;
	return n ? 0 : -ENOENT;
}

/* Read and check a guest's absolute timeout (0: none given). */
static int read_timeout(struct task *t, uint64_t uts, struct timespec *ts)
{
	if (task_read(t, uts, ts, sizeof(*ts)) < 0)
		return -EFAULT;
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L)
		return -EINVAL;
	return 0;
}

/* Wait, until the CLOCK_REALTIME time abs if given: SYS_BLOCK, or
 * -ETIMEDOUT once it has passed. The deadline is set on the first try
 * and checked on the retries (a restart after a signal sets it anew). */
static long wait_until(struct task *t, const struct timespec *abs)
{
	struct timespec now;
	int64_t left;

	if (!abs)
		return SYS_BLOCK;
	if (t->block_started)
		return t->deadline_ns && now_ns() >= t->deadline_ns ?
			       -ETIMEDOUT :
			       SYS_BLOCK;
	now = now_real();
	left = guest_timeout_ns(abs->tv_sec - now.tv_sec,
				abs->tv_nsec - now.tv_nsec);
	if (left == -1 && abs->tv_sec > now.tv_sec)
		return SYS_BLOCK; /* too far to matter */
	if (left <= 0)
		return -ETIMEDOUT;
	t->deadline_ns = now_ns() + left;
	return SYS_BLOCK;
}

long sys_mq_open(struct task *t, struct syscall_args *a)
{
	char name[PATH_MAX];
	int oflag = (int)a->a[1], fd;
	struct kmq_attr attr;
	struct mqueue *q;
	struct vnode *vn;
	struct file *f = NULL;
	bool made = false;
	int rc;

	if (a->a[3] && task_read(t, a->a[3], &attr, sizeof(attr)) < 0)
		return -EFAULT;
	rc = read_name(t, a->a[0], name);
	if (rc == 0)
		rc = check_name(name);
	if (rc < 0)
		return rc;
	q = find(name);
	if (!q) {
		if (!(oflag & O_CREAT))
			return -ENOENT;
		rc = queue_new(t, name, (mode_t)a->a[2] & ~t->proc->umask,
			       a->a[3] ? &attr : NULL, &q);
		if (rc < 0)
			return rc;
		made = true;
	} else if ((oflag & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
		return -EEXIST;
	} else if ((oflag & O_ACCMODE) == O_ACCMODE) {
		return -EINVAL;
	}
	vn = queue_vnode(q);
	if (!vn) {
		if (made)
			unlink_queue(q);
		return -ENOMEM;
	}
	rc = 0;
	if (!made)
		rc = vfs_access(&t->proc->cred, vn,
				(oflag & O_ACCMODE) == O_RDONLY ? R_OK :
				(oflag & O_ACCMODE) == O_WRONLY ? W_OK :
								  R_OK | W_OK);
	if (rc == 0)
		rc = open_file(vn, oflag, &f);
	if (rc < 0) {
		if (made)
			unlink_queue(q);
		vnode_put(vn);
		return rc;
	}
	/* Linux makes every queue descriptor close-on-exec. */
	fd = fd_install(t, f, true, 0);
	if (fd < 0 && made)
		unlink_queue(q);
	file_put(f);
	vnode_put(vn);
	return fd;
}

long sys_mq_unlink(struct task *t, struct syscall_args *a)
{
	char name[PATH_MAX];
	int rc = read_name(t, a->a[0], name);

	if (rc == 0)
		rc = check_name(name);
	if (rc < 0)
		return rc;
	return mqueuefs_unlink(t, mqueuefs_root(), name);
}

/* Put m in its place: after every message of its priority or higher. */
static void insert(struct mqueue *q, struct mqmsg *m)
{
	long i = q->nmsg;

	while (i > 0 && q->msgs[i - 1]->prio < m->prio) {
		q->msgs[i] = q->msgs[i - 1];
		i--;
	}
	q->msgs[i] = m;
	q->nmsg++;
	q->qsize += m->len;
}

/* Is a task blocked in mq_timedreceive on q? Linux hands a new message
 * straight to such a receiver, and then notifies nobody. */
static bool receiver_waits(const struct mqueue *q)
{
	struct task *x;

	for (x = S->tasks; x; x = x->next) {
		struct file *f;

		if (x->state != TS_BLOCKED || x->sc.nr != SYS_mq_timedreceive)
			continue;
		f = fd_get(x, (int)x->sc.a[0]);
		if (f && f->ops == &mq_file_ops && f->vn && f->vn->mq == q)
			return true;
	}
	return false;
}

/* The queue went from empty to one message, sent by t: the registered
 * notification fires, once. */
static void notify_fire(struct task *t, struct mqueue *q)
{
	struct process *owner = q->nt.proc;
	siginfo_t si;

	switch (q->nt.notify) {
	case SIGEV_SIGNAL:
		if (!q->nt.signo || q->nt.execd || owner->exited)
			break;
		memset(&si, 0, sizeof(si));
		si.si_signo = q->nt.signo;
		si.si_code = SI_MESGQ;
		si.si_value = q->nt.value;
		/* The host gives the sentry's view of the sender; the
		 * sandbox's is put back on delivery (task.c fix_info). */
		si.si_pid = t->proc->pid;
		si.si_uid = t->proc->cred.ruid;
		sig_note_sender(owner, q->nt.signo, t->proc->pid);
		send_siginfo(owner, NULL, &si);
		break;
	case SIGEV_THREAD:
		q->nt.cookie[COOKIE_LEN - 1] = COOKIE_WOKENUP;
		netlink_kernel_send(q->nt.sock, q->nt.cookie, COOKIE_LEN);
		file_put(q->nt.sock);
		q->nt.sock = NULL;
		break;
	default:
		break;
	}
	memset(&q->nt, 0, sizeof(q->nt));
}

long sys_mq_timedsend(struct task *t, struct syscall_args *a)
{
	size_t len = a->a[2];
	unsigned prio = (unsigned)a->a[3];
	struct timespec ts;
	struct mqueue *q;
	struct mqmsg *m;
	struct file *f;
	int rc;

	if (a->a[4] && (rc = read_timeout(t, a->a[4], &ts)) < 0)
		return rc;
	if (prio >= MQ_PRIO_MAX)
		return -EINVAL;
	q = queue_of(t, (int)a->a[0], &f);
	if (!q || ((f->flags & O_ACCMODE) != O_WRONLY &&
		   (f->flags & O_ACCMODE) != O_RDWR))
		return -EBADF;
	if (len > (size_t)q->msgsize)
		return -EMSGSIZE;
	/* A retry while the queue is still full: the message was read (and
	 * found readable) on the first try, no need to copy it again. */
	if (t->block_started && q->nmsg == q->maxmsg)
		return wait_until(t, a->a[4] ? &ts : NULL);
	m = malloc(sizeof(*m) + len);
	if (!m)
		return -ENOMEM;
	if (len && task_read(t, a->a[1], m->data, len) < 0) {
		free(m);
		return -EFAULT;
	}
	if (q->nmsg == q->maxmsg) {
		free(m);
		if (f->flags & O_NONBLOCK)
			return -EAGAIN;
		return wait_until(t, a->a[4] ? &ts : NULL);
	}
	if (!limits_heap_charge(msg_charge(len))) {
		free(m);
		return -ENOMEM;
	}
	m->prio = prio;
	m->len = len;
	insert(q, m);
	q->atime = q->mtime = q->ctime = now_real();
	q->seq++;
	if (q->nmsg == 1 && q->nt.on && !receiver_waits(q))
		notify_fire(t, q);
	sentry_wake();
	return 0;
}

long sys_mq_timedreceive(struct task *t, struct syscall_args *a)
{
	size_t len = a->a[2];
	struct timespec ts;
	struct mqueue *q;
	struct mqmsg *m;
	struct file *f;
	long rc;

	if (a->a[4] && (rc = read_timeout(t, a->a[4], &ts)) < 0)
		return rc;
	q = queue_of(t, (int)a->a[0], &f);
	if (!q || ((f->flags & O_ACCMODE) != O_RDONLY &&
		   (f->flags & O_ACCMODE) != O_RDWR))
		return -EBADF;
	if (len < (size_t)q->msgsize)
		return -EMSGSIZE;
	if (!q->nmsg) {
		if (f->flags & O_NONBLOCK)
			return -EAGAIN;
		return wait_until(t, a->a[4] ? &ts : NULL);
	}
	/* Taken off first: a bad buffer loses the message, as on Linux. */
	m = q->msgs[0];
	memmove(q->msgs, q->msgs + 1, sizeof(*q->msgs) * (size_t)(q->nmsg - 1));
	q->nmsg--;
	q->qsize -= m->len;
	q->atime = q->mtime = q->ctime = now_real();
	q->seq++;
	sentry_wake(); /* room for a blocked sender */
	rc = (long)m->len;
	if ((a->a[3] &&
	     task_write(t, a->a[3], &m->prio, sizeof(m->prio)) < 0) ||
	    (m->len && task_write(t, a->a[1], m->data, m->len) < 0))
		rc = -EFAULT;
	msg_free(m);
	return rc;
}

long sys_mq_notify(struct task *t, struct syscall_args *a)
{
	unsigned char cookie[COOKIE_LEN];
	struct file *sock = NULL, *f;
	struct ksigevent ev;
	struct mqueue *q;

	if (a->a[1]) {
		if (task_read(t, a->a[1], &ev, sizeof(ev)) < 0)
			return -EFAULT;
		if (ev.notify != SIGEV_NONE && ev.notify != SIGEV_SIGNAL &&
		    ev.notify != SIGEV_THREAD)
			return -EINVAL;
		if (ev.notify == SIGEV_SIGNAL &&
		    (ev.signo < 0 || ev.signo > 64))
			return -EINVAL;
		if (ev.notify == SIGEV_THREAD) {
			/* glibc's form: the cookie it wants back, and the
			 * netlink socket its helper thread reads. */
			int rc;
			if (task_read(t,
				      (uint64_t)(uintptr_t)ev.value.sival_ptr,
				      cookie, sizeof(cookie)) < 0)
				return -EFAULT;
			sock = fd_get(t, ev.signo);
			if (!sock)
				return -EBADF;
			rc = netlink_sock_check(sock);
			if (rc < 0)
				return rc;
		}
	}
	q = queue_of(t, (int)a->a[0], &f);
	if (!q)
		return -EBADF;
	if (!a->a[1]) {
		/* Only the owner's own removal counts; others' are ignored. */
		if (q->nt.on && q->nt.proc == t->proc) {
			notify_clear(q, true);
			q->atime = q->ctime = now_real();
		}
		return 0;
	}
	if (q->nt.on)
		return -EBUSY;
	q->nt.on = true;
	q->nt.proc = t->proc;
	q->nt.notify = ev.notify;
	if (ev.notify == SIGEV_SIGNAL) {
		q->nt.signo = ev.signo;
		q->nt.value = ev.value;
	} else if (ev.notify == SIGEV_THREAD) {
		q->nt.sock = file_get(sock);
		memcpy(q->nt.cookie, cookie, sizeof(cookie));
	}
	q->atime = q->ctime = now_real();
	return 0;
}

long sys_mq_getsetattr(struct task *t, struct syscall_args *a)
{
	struct kmq_attr nw, old;
	struct mqueue *q;
	struct file *f;

	if (a->a[1]) {
		if (task_read(t, a->a[1], &nw, sizeof(nw)) < 0)
			return -EFAULT;
		if (nw.flags & ~(long)O_NONBLOCK)
			return -EINVAL;
	}
	q = queue_of(t, (int)a->a[0], &f);
	if (!q)
		return -EBADF;
	memset(&old, 0, sizeof(old));
	old.flags = f->flags & O_NONBLOCK;
	old.maxmsg = q->maxmsg;
	old.msgsize = q->msgsize;
	old.curmsgs = q->nmsg;
	if (a->a[1]) {
		f->flags = (f->flags & ~O_NONBLOCK) |
			   (int)(nw.flags & O_NONBLOCK);
		q->atime = q->ctime = now_real();
	}
	if (a->a[2] && task_write(t, a->a[2], &old, sizeof(old)) < 0)
		return -EFAULT;
	return 0;
}

void mqueue_exec(struct process *p)
{
	struct mqueue *q;

	for (q = all; q; q = q->next)
		if (q->nt.on && q->nt.proc == p)
			q->nt.execd = true;
}

void mqueue_proc_gone(struct process *p)
{
	struct mqueue *q;

	for (q = all; q; q = q->next)
		if (q->nt.on && q->nt.proc == p)
			notify_clear(q, true);
}

/* ---- /dev/mqueue ------------------------------------------------------------- */

struct vnode *mqueuefs_root(void)
{
	static struct vnode *root;

	if (!root) {
		root = vnode_new(VN_MQUEUE, S_IFDIR | 01777, MQ_DIR);
		if (!root)
			return NULL;
		root->cached = true; /* lives as long as the sentry */
		dir_time = now_real();
	}
	return root;
}

int mqueuefs_lookup(struct vnode *dir, const char *name, struct vnode **out)
{
	struct mqueue *q;

	if (dir->mq || !S_ISDIR(dir->mode))
		return -ENOTDIR;
	q = find(name);
	if (!q)
		return -ENOENT;
	*out = queue_vnode(q);
	return *out ? 0 : -ENOMEM;
}

int mqueuefs_stat(struct vnode *vn, struct stat *st)
{
	if (vn->mq)
		return queue_stat(vn->mq, st);
	memset(st, 0, sizeof(*st));
	st->st_dev = MQ_DEV;
	st->st_ino = 1;
	st->st_mode = S_IFDIR | 01777;
	st->st_nlink = 2;
	st->st_size = DIRENT_SIZE * (2 + nlinked);
	st->st_blksize = 4096;
	st->st_atim = st->st_mtim = st->st_ctim = dir_time;
	return 0;
}

int mqueuefs_create(struct task *t, struct vnode *dir, const char *name,
		    mode_t mode, struct vnode **out)
{
	struct mqueue *q;
	int rc;

	if (dir->mq)
		return -ENOTDIR;
	rc = check_name(name);
	if (rc == 0)
		rc = queue_new(t, name, mode, NULL, &q);
	if (rc < 0)
		return rc;
	*out = queue_vnode(q);
	if (!*out) {
		unlink_queue(q);
		return -ENOMEM;
	}
	return 0;
}

int mqueuefs_unlink(struct task *t, struct vnode *dir, const char *name)
{
	const struct creds *c = &t->proc->cred;
	struct mqueue *q;

	if (!dir || dir->mq)
		return -ENOTDIR;
	q = find(name);
	if (!q)
		return -ENOENT;
	/* The directory is sticky and root's: only the queue's owner (or
	 * CAP_FOWNER) removes it. mq_unlink(3) turns EPERM into EACCES. */
	if (!creds_capable(c, CAP_FOWNER) && c->fsuid != q->uid)
		return -EPERM;
	unlink_queue(q);
	return 0;
}

int mqueuefs_chmod(struct task *t, struct vnode *vn, mode_t mode)
{
	const struct creds *c = &t->proc->cred;
	struct mqueue *q = vn->mq;

	if (!q)
		return -EPERM; /* the directory stays as Linux makes it */
	if (!creds_capable(c, CAP_FOWNER) && c->fsuid != q->uid)
		return -EPERM;
	/* set-group-id needs the group, or CAP_FSETID (Linux) */
	if (!creds_capable(c, CAP_FSETID) && !creds_in_group(c, q->gid))
		mode &= ~(mode_t)S_ISGID;
	q->mode = mode & 07777;
	q->ctime = now_real();
	return 0;
}

int mqueuefs_chown(struct task *t, struct vnode *vn, uid_t uid, gid_t gid)
{
	const struct creds *c = &t->proc->cred;
	struct mqueue *q = vn->mq;

	if (!q)
		return -EPERM;
	/* Linux's chown_ok/chgrp_ok: without privilege, only the owner may,
	 * only to itself, and only to a group it is in. */
	if (!creds_capable(c, CAP_CHOWN)) {
		if (uid != (uid_t)-1 && (uid != q->uid || c->fsuid != q->uid))
			return -EPERM;
		if (gid != (gid_t)-1 &&
		    (c->fsuid != q->uid ||
		     (gid != q->gid && !creds_in_group(c, gid))))
			return -EPERM;
	}
	if (uid != (uid_t)-1)
		q->uid = uid;
	if (gid != (gid_t)-1)
		q->gid = gid;
	q->mode &= ~(mode_t)(S_ISUID | S_ISGID);
	q->ctime = now_real();
	return 0;
}

static long dir_getdents(struct task *t, struct file *f, struct dirent_sink *s)
{
	struct mqueue *q;

	(void)t;
	s->skip = f->dir_index;
	s->index = 0;
	if (!dirent_emit(s, 1, DT_DIR, ".") || !dirent_emit(s, 1, DT_DIR, ".."))
		goto out;
	for (q = all; q; q = q->next)
		if (q->linked && !dirent_emit(s, q->ino, DT_REG, q->name))
			break;
out:
	f->dir_index = s->index;
	return (long)s->len;
}

static short dir_poll(struct file *f, short events)
{
	(void)f;
	return events & (POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM);
}

static int dir_fstat(struct file *f, struct stat *st)
{
	return mqueuefs_stat(f->vn, st);
}

static const struct file_ops mq_dir_ops = {
	.read = file_read_isdir,
	.poll = dir_poll,
	.getdents = dir_getdents,
	.stat = dir_fstat,
};

int mqueuefs_open(struct task *t, struct vnode *vn, int flags,
		  struct file **out)
{
	struct file *f;

	(void)t;
	if (!vn->mq) {
		if ((flags & O_ACCMODE) != O_RDONLY)
			return -EISDIR;
		f = file_new(&mq_dir_ops, flags & (O_ACCMODE | O_NONBLOCK));
		if (!f)
			return -ENOMEM;
		f->vn = vnode_get(vn);
		*out = f;
		return 0;
	}
	if (flags & O_DIRECTORY)
		return -ENOTDIR;
	return open_file(vn, flags, out);
}
