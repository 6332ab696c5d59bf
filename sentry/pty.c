/* sentry/pty.c: pseudo-terminals, in the sentry.
 *
 * /dev/ptmx opens a new master, /dev/pts/N its slave, /dev/tty the
 * caller's controlling terminal. The line discipline is the sentry's:
 * canonical editing (erase, kill, word erase, EOF), echo, input and output
 * newline translation, and ISIG characters that signal the foreground
 * process group (Ctrl-C, Ctrl-\, Ctrl-Z). termios, window size (SIGWINCH
 * on a change), foreground group, controlling terminal and session are
 * kept per terminal, as Linux keeps them.
 *
 * `moat do -t` gives the first process the slave of a pty whose master is
 * the sentry's own: the host terminal, put in raw mode, is relayed to and
 * from it (pty_relay_*), and its size follows the host's.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include "sentry/pty.h"
#include "sentry/syscalls.h"
#include "sentry/vfs.h"

#define PTY_MAX 64
#define PTY_IN 4096   /* input a slave has not read, and the line */
#define PTY_OUT 16384 /* output the master has not read */
/* Canonical records waiting: n_tty spends at least a byte of its 4096 on
 * each (an EOF is a byte there), so there are never more than PTY_IN. */
#define PTY_RECORDS PTY_IN
_Static_assert(PTY_IN <= UINT16_MAX, "rec[] holds offsets into in[]");

/* The kernel's termios (TCGETS), and termios2 (TCGETS2). */
struct ktermios {
	uint32_t c_iflag, c_oflag, c_cflag, c_lflag;
	uint8_t c_line;
	uint8_t c_cc[19];
};
struct ktermios2 {
	struct ktermios t;
	uint32_t c_ispeed, c_ospeed;
};
/* The termios2 ioctls (asm/termbits.h's struct, which glibc does not
 * declare): _IOR/_IOW('T', 0x2a..0x2d, 44 bytes). */
#define K_TCGETS2 0x802c542aUL
#define K_TCSETS2 0x402c542bUL
#define K_TCSETSW2 0x402c542cUL
#define K_TCSETSF2 0x402c542dUL

struct pty {
	int index;
	/* the mount namespace whose /dev/pts shows it (a pod member's
	 * devpts is its own, as each container's is); never dereferenced */
	const struct mntns *ns;
	bool locked;	     /* until unlockpt (TIOCSPTLCK 0) */
	int masters, slaves; /* open files */
	bool slave_opened;   /* ever: a master reads EIO once all are gone */
	bool sentry_master;  /* the master is `moat do -t`'s relay */
	struct ktermios tio;
	struct winsize ws;
	/* Input the slave may read. Canonical mode hands it out a record
	 * at a time (a line, or an EOF: a record of 0 bytes); rec[] holds
	 * the end offsets. Raw mode reads whatever is there. In canonical
	 * mode inlen + linelen <= PTY_IN (input_char admits no more). */
	char in[PTY_IN];
	size_t inlen;
	uint16_t rec[PTY_RECORDS];
	int nrec;
	char line[PTY_IN]; /* the canonical line being edited */
	size_t linelen;
	char out[PTY_OUT]; /* slave output and echo, for the master */
	size_t outlen;
	int sid;     /* session it controls (0: none) */
	int fg_pgrp; /* its foreground process group */
	uint64_t seq;
	int64_t vtime_deadline;
};

static struct pty *ptys[PTY_MAX];

struct ptyfile {
	struct pty *pty;
	bool master;
};

static const struct file_ops master_ops, slave_ops;

static void changed(struct pty *p)
{
	p->seq++;
	sentry_wake();
}

static void pty_defaults(struct pty *p)
{
	static const uint8_t cc[19] = {
		3,    0x1c, 0x7f, 0x15, 4,    0,    1, 0, 0x11, 0x13,
		0x1a, 0,    0x12, 0x0f, 0x17, 0x16, 0, 0, 0,
	};

	p->tio.c_iflag = ICRNL | IXON;
	p->tio.c_oflag = OPOST | ONLCR;
	p->tio.c_cflag = B38400 | CS8 | CREAD | HUPCL;
	p->tio.c_lflag = ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL |
			 ECHOKE | IEXTEN;
	memcpy(p->tio.c_cc, cc, sizeof(cc));
	p->ws.ws_row = 24;
	p->ws.ws_col = 80;
}

/* ---- output: slave writes and echo, with OPOST processing ---------------- */

static size_t out_room(struct pty *p)
{
	return PTY_OUT - p->outlen;
}

static void out_put(struct pty *p, char c)
{
	if ((p->tio.c_oflag & OPOST) && (p->tio.c_oflag & ONLCR) && c == '\n') {
		if (out_room(p) < 2)
			return;
		p->out[p->outlen++] = '\r';
	}
	if (out_room(p) < 1)
		return;
	p->out[p->outlen++] = c;
}

static void echo_char(struct pty *p, char c)
{
	unsigned char u = (unsigned char)c;

	if ((p->tio.c_lflag & ECHOCTL) && (u < 32 || u == 127) && c != '\n' &&
	    c != '\t') {
		out_put(p, '^');
		out_put(p, u == 127 ? '?' : (char)(u + 64));
		return;
	}
	out_put(p, c);
}

/* ---- input: master writes through the line discipline ------------------- */

static void signal_fg(struct pty *p, int sig)
{
	struct process *q;

	if (!p->fg_pgrp)
		return;
	for (q = S->procs; q; q = q->next)
		if (!q->exited && q->pgid == p->fg_pgrp)
			send_signal_proc(q, sig, 0);
}

static void flush_input(struct pty *p)
{
	p->inlen = 0;
	p->nrec = 0;
	p->linelen = 0;
}

/* The line being edited becomes a record the slave reads. With no room
 * (in[] or rec[] full) nothing is written and the line stays as it is:
 * a full queue drops input, never a line's end into a bogus EOF. */
static void push_record(struct pty *p)
{
	if (p->nrec >= PTY_RECORDS || p->linelen > PTY_IN - p->inlen)
		return;
	memcpy(p->in + p->inlen, p->line, p->linelen);
	p->inlen += p->linelen;
	p->rec[p->nrec++] = (uint16_t)p->inlen;
	p->linelen = 0;
}

static void erase_one(struct pty *p, bool echo)
{
	if (!p->linelen)
		return;
	p->linelen--;
	if (echo && (p->tio.c_lflag & ECHO)) {
		unsigned char u = (unsigned char)p->line[p->linelen];
		int w = ((p->tio.c_lflag & ECHOCTL) && (u < 32 || u == 127) &&
			 u != '\t') ?
				2 :
				1;
		while (w--) {
			if (p->tio.c_lflag & ECHOE) {
				out_put(p, '\b');
				out_put(p, ' ');
			}
			out_put(p, '\b');
		}
	}
}

/* One byte typed at the terminal. */
static void input_char(struct pty *p, char c)
{
	const uint8_t *cc = p->tio.c_cc;
	uint32_t l = p->tio.c_lflag, i = p->tio.c_iflag;
	unsigned char u = (unsigned char)c;
	bool eol;

	if (i & ISTRIP)
		c = (char)(u &= 0x7f);
	if (c == '\r') {
		if (i & IGNCR)
			return;
		if (i & ICRNL)
			c = '\n';
	} else if (c == '\n' && (i & INLCR)) {
		c = '\r';
	}
	u = (unsigned char)c;
	if (l & ISIG) {
		int sig = u == cc[VINTR] && u ? SIGINT :
			  u == cc[VQUIT] && u ? SIGQUIT :
			  u == cc[VSUSP] && u ? SIGTSTP :
						0;
		if (sig) {
			if (!(l & NOFLSH))
				flush_input(p);
			if (l & ECHO)
				echo_char(p, c);
			signal_fg(p, sig);
			return;
		}
	}
	if (l & ICANON) {
		if (u == cc[VERASE] && u) {
			erase_one(p, true);
			return;
		}
		if (u == cc[VKILL] && u) {
			while (p->linelen)
				erase_one(p, (l & ECHOKE) != 0);
			if ((l & ECHO) && (l & ECHOK) && !(l & ECHOKE))
				out_put(p, '\n');
			return;
		}
		if ((l & IEXTEN) && u == cc[VWERASE] && u) {
			while (p->linelen && p->line[p->linelen - 1] == ' ')
				erase_one(p, true);
			while (p->linelen && p->line[p->linelen - 1] != ' ')
				erase_one(p, true);
			return;
		}
		if (u == cc[VEOF] && u) {
			push_record(p); /* the line so far; empty: EOF */
			return;
		}
		/* n_tty: lines waiting and the one being edited share 4096
		 * bytes; ordinary characters stop one short, so a full line
		 * can still be ended. What does not fit is dropped. */
		eol = c == '\n' || (u == cc[VEOL] && u) ||
		      (u == cc[VEOL2] && u);
		if (p->inlen + p->linelen >= PTY_IN - (eol ? 0 : 1) ||
		    (eol && p->nrec >= PTY_RECORDS))
			return;
		p->line[p->linelen++] = c;
		if ((l & ECHO) || (c == '\n' && (l & ECHONL)))
			echo_char(p, c);
		if (eol)
			push_record(p);
		return;
	}
	if (p->inlen < PTY_IN)
		p->in[p->inlen++] = c;
	if (l & ECHO)
		echo_char(p, c);
}

/* ---- pty objects ----------------------------------------------------------- */

static struct pty *pty_alloc(const struct mntns *ns)
{
	int i;

	for (i = 0; i < PTY_MAX; i++) {
		if (ptys[i])
			continue;
		ptys[i] = calloc(1, sizeof(struct pty));
		if (!ptys[i])
			return NULL;
		ptys[i]->index = i;
		ptys[i]->ns = ns;
		ptys[i]->locked = true;
		pty_defaults(ptys[i]);
		return ptys[i];
	}
	return NULL;
}

/* p is no process's controlling terminal any more (Linux's
 * session_clear_tty): /dev/tty then fails ENXIO for them. */
static void clear_ctty(struct pty *p)
{
	struct process *q;

	for (q = S->procs; q; q = q->next)
		if (q->ctty == p->index)
			q->ctty = -1;
	p->sid = 0;
	p->fg_pgrp = 0;
}

static void pty_maybe_free(struct pty *p)
{
	if (p->masters || p->slaves || p->sentry_master)
		return;
	/* A ctty is a bare index: left behind, it would name whichever pty
	 * takes the slot next, another session's. */
	clear_ctty(p);
	ptys[p->index] = NULL;
	free(p);
}

static struct file *pty_file(struct pty *p, bool master, int flags)
{
	struct ptyfile *pf = calloc(1, sizeof(*pf));
	struct file *f;

	if (!pf)
		return NULL;
	f = file_new(master ? &master_ops : &slave_ops,
		     flags & (O_ACCMODE | O_NONBLOCK | O_APPEND));
	if (!f) {
		free(pf);
		return NULL;
	}
	pf->pty = p;
	pf->master = master;
	f->priv = pf;
	f->stream = true;
	if (master) {
		p->masters++;
	} else {
		char path[32];
		p->slaves++;
		p->slave_opened = true;
		/* Its node, whichever way it was opened (ptsname, ttyname and
		 * /proc/self/fd name it /dev/pts/N). */
		snprintf(path, sizeof(path), "/dev/pts/%d", p->index);
		if (vfs_resolve(NULL, AT_FDCWD, path, 0, &f->vn) < 0)
			f->vn = NULL;
	}
	return f;
}

static struct pty *pty_of(struct file *f)
{
	return ((struct ptyfile *)f->priv)->pty;
}

bool file_is_tty(struct file *f)
{
	return f && (f->ops == &slave_ops || f->ops == &master_ops);
}

/* The session leader p opens a terminal without O_NOCTTY: it becomes the
 * session's controlling terminal if neither has one yet. */
static void maybe_acquire(struct process *proc, struct pty *p)
{
	if (proc->sid != proc->pid || proc->ctty >= 0 || p->sid)
		return;
	proc->ctty = p->index;
	p->sid = proc->sid;
	p->fg_pgrp = proc->pgid;
}

/* ---- the slave ------------------------------------------------------------ */

/* A process of a background group using its controlling terminal (Linux's
 * __tty_check_change): sig (SIGTTIN, SIGTTOU) to its group and a restart,
 * to run again once the group is continued. A process that cannot be
 * stopped that way (it ignores or blocks sig, or its group is orphaned)
 * gets EIO instead, or for an ignored SIGTTOU goes ahead: a restart would
 * come straight back here, for ever. 0: go ahead. */
static long job_control(struct task *t, struct pty *p, int sig)
{
	struct process *q;

	if (!t || t->proc->ctty != p->index || !p->fg_pgrp ||
	    t->proc->pgid == p->fg_pgrp)
		return 0;
	if (task_sig_ignored(t, sig))
		return sig == SIGTTIN ? -EIO : 0;
	if (pgrp_orphaned(t->proc->pgid))
		return -EIO;
	for (q = S->procs; q; q = q->next)
		if (!q->exited && q->pgid == t->proc->pgid)
			send_signal_proc(q, sig, 0);
	return SYS_RESTART;
}

static long slave_read(struct task *t, struct file *f, void *buf, size_t n,
		       int64_t *off)
{
	struct pty *p = pty_of(f);
	bool nonblock = (f->flags & O_NONBLOCK) != 0;
	size_t take;
	long rc;

	(void)off;
	rc = job_control(t, p, SIGTTIN);
	if (rc)
		return rc;
	if (p->tio.c_lflag & ICANON) {
		if (!p->nrec) {
			if (!p->masters && !p->sentry_master)
				return 0; /* hung up */
			return nonblock ? -EAGAIN : SYS_BLOCK;
		}
		take = p->rec[0] < n ? p->rec[0] : n;
	} else {
		size_t vmin = p->tio.c_cc[VMIN], vtime = p->tio.c_cc[VTIME];
		size_t need = vmin < n ? vmin : n;
		if (!p->masters && !p->sentry_master && !p->inlen)
			return 0;
		if (p->inlen < (need ? need : 1) && !nonblock) {
			if (!vtime && !vmin)
				return 0;
			if (vtime && (vmin == 0 || p->inlen > 0)) {
				/* VTIME: an inter-byte (or, with VMIN 0, total)
				 * timeout in tenths of a second */
				if (!t->block_started)
					t->deadline_ns =
						now_ns() +
						(int64_t)vtime * 100000000;
				else if (now_ns() >= t->deadline_ns)
					goto give;
			}
			return SYS_BLOCK;
		}
		if (!p->inlen)
			return nonblock ? -EAGAIN : 0;
give:
		take = p->inlen < n ? p->inlen : n;
	}
	memcpy(buf, p->in, take);
	memmove(p->in, p->in + take, p->inlen - take);
	p->inlen -= take;
	if (p->tio.c_lflag & ICANON) {
		int i;
		for (i = 0; i < p->nrec; i++)
			p->rec[i] = (uint16_t)(p->rec[i] - take);
		if (p->rec[0] == 0) {
			memmove(p->rec, p->rec + 1,
				sizeof(p->rec[0]) * (size_t)(p->nrec - 1));
			p->nrec--;
		}
	} else {
		p->nrec = 0;
	}
	changed(p);
	return (long)take;
}

static long slave_write(struct task *t, struct file *f, const void *buf,
			size_t n, int64_t *off)
{
	struct pty *p = pty_of(f);
	const char *c = buf;
	size_t done = 0;

	(void)off;
	if (p->tio.c_lflag & TOSTOP) {
		long rc = job_control(t, p, SIGTTOU);
		if (rc)
			return rc;
	}
	if (!p->masters && !p->sentry_master)
		return -EIO;
	while (done < n && out_room(p) >= 2)
		out_put(p, c[done++]);
	if (!done)
		return (f->flags & O_NONBLOCK) ? -EAGAIN : SYS_BLOCK;
	changed(p);
	return (long)done;
}

static short slave_poll(struct file *f, short events)
{
	struct pty *p = pty_of(f);
	short r = 0;

	if ((p->tio.c_lflag & ICANON) ? p->nrec > 0 : p->inlen > 0)
		r |= POLLIN | POLLRDNORM;
	if (out_room(p) >= 2)
		r |= POLLOUT | POLLWRNORM;
	if (!p->masters && !p->sentry_master)
		r |= POLLHUP | POLLIN;
	return r & (events | POLLHUP | POLLERR);
}

/* ---- the master ----------------------------------------------------------- */

static long master_read(struct task *t, struct file *f, void *buf, size_t n,
			int64_t *off)
{
	struct pty *p = pty_of(f);
	size_t take;

	(void)t;
	(void)off;
	if (!p->outlen) {
		if (p->slave_opened && !p->slaves)
			return -EIO; /* every slave closed */
		return (f->flags & O_NONBLOCK) ? -EAGAIN : SYS_BLOCK;
	}
	take = p->outlen < n ? p->outlen : n;
	memcpy(buf, p->out, take);
	memmove(p->out, p->out + take, p->outlen - take);
	p->outlen -= take;
	changed(p);
	return (long)take;
}

static long master_write(struct task *t, struct file *f, const void *buf,
			 size_t n, int64_t *off)
{
	struct pty *p = pty_of(f);

	(void)t;
	(void)off;
	pty_input(p, buf, n);
	(void)f;
	return (long)n;
}

static short master_poll(struct file *f, short events)
{
	struct pty *p = pty_of(f);
	short r = POLLOUT | POLLWRNORM;

	if (p->outlen)
		r |= POLLIN | POLLRDNORM;
	if (p->slave_opened && !p->slaves)
		r |= POLLHUP;
	return r & (events | POLLHUP | POLLERR);
}

void pty_input(struct pty *p, const void *buf, size_t n)
{
	const char *c = buf;
	size_t i;

	for (i = 0; i < n; i++)
		input_char(p, c[i]);
	changed(p);
}

/* ---- ioctls, common to both sides ----------------------------------------- */

static long set_winsize(struct pty *p, const struct winsize *ws)
{
	if (memcmp(&p->ws, ws, sizeof(*ws))) {
		p->ws = *ws;
		signal_fg(p, SIGWINCH);
	}
	return 0;
}

static long tty_ioctl(struct task *t, struct file *f, unsigned long cmd,
		      uint64_t arg)
{
	struct pty *p = pty_of(f);
	bool master = ((struct ptyfile *)f->priv)->master;
	int v;

	switch (cmd) {
	case TCGETS:
		return task_write(t, arg, &p->tio, sizeof(p->tio)) < 0 ?
			       -EFAULT :
			       0;
	case K_TCGETS2: {
		struct ktermios2 t2 = { p->tio, 38400, 38400 };
		return task_write(t, arg, &t2, sizeof(t2)) < 0 ? -EFAULT : 0;
	}
	case TCSETS:
	case TCSETSW:
	case TCSETSF:
	case K_TCSETS2:
	case K_TCSETSW2:
	case K_TCSETSF2: {
		struct ktermios nt;
		bool was_canon = p->tio.c_lflag & ICANON;
		if (task_read(t, arg, &nt, sizeof(nt)) < 0)
			return -EFAULT;
		p->tio = nt;
		if (cmd == TCSETSF || cmd == K_TCSETSF2)
			flush_input(p);
		if (was_canon && !(nt.c_lflag & ICANON)) {
			/* the pending line becomes input, as Linux does */
			if (p->linelen <= PTY_IN - p->inlen) {
				memcpy(p->in + p->inlen, p->line, p->linelen);
				p->inlen += p->linelen;
			}
			p->linelen = 0;
			p->nrec = 0;
		} else if (!was_canon && (nt.c_lflag & ICANON) && p->inlen) {
			p->rec[0] = (uint16_t)p->inlen;
			p->nrec = 1;
		}
		changed(p);
		return 0;
	}
	case TIOCGWINSZ:
		return task_write(t, arg, &p->ws, sizeof(p->ws)) < 0 ? -EFAULT :
								       0;
	case TIOCSWINSZ: {
		struct winsize ws;
		if (task_read(t, arg, &ws, sizeof(ws)) < 0)
			return -EFAULT;
		return set_winsize(p, &ws);
	}
	case TIOCGPGRP:
		if (!master && t->proc->ctty != p->index)
			return -ENOTTY;
		v = pid_to_guest(t->proc->pidns, p->fg_pgrp);
		return task_write(t, arg, &v, sizeof(v)) < 0 ? -EFAULT : 0;
	case TIOCSPGRP: {
		struct process *q;
		bool found = false;
		if (task_read(t, arg, &v, sizeof(v)) < 0)
			return -EFAULT;
		if (v < 0)
			return -EINVAL;
		if (t->proc->ctty != p->index || p->sid != t->proc->sid)
			return -ENOTTY;
		v = pid_from_guest(t->proc->pidns, v);
		for (q = S->procs; q; q = q->next)
			if (!q->reaped && q->pgid == v && q->sid == p->sid)
				found = true;
		if (!found)
			return -EPERM;
		p->fg_pgrp = v;
		return 0;
	}
	case TIOCGSID:
		if (!p->sid)
			return -ENOTTY;
		v = pid_to_guest(t->proc->pidns, p->sid);
		return task_write(t, arg, &v, sizeof(v)) < 0 ? -EFAULT : 0;
	case TIOCSCTTY:
		if (t->proc->sid != t->proc->pid)
			return -EPERM;
		if (t->proc->ctty == p->index)
			return 0;
		if (t->proc->ctty >= 0)
			return -EPERM;
		if (p->sid &&
		    !(arg == 1 && creds_capable(&t->proc->cred, CAP_SYS_ADMIN)))
			return -EPERM;
		if (p->sid)
			clear_ctty(p); /* stolen: the old session loses it */
		t->proc->ctty = p->index;
		p->sid = t->proc->sid;
		p->fg_pgrp = t->proc->pgid;
		return 0;
	case TIOCNOTTY:
		if (t->proc->ctty != p->index)
			return -ENOTTY;
		t->proc->ctty = -1;
		if (t->proc->sid == t->proc->pid) {
			struct process *q;
			for (q = S->procs; q; q = q->next)
				if (q->sid == p->sid)
					q->ctty = -1;
			p->sid = 0;
			p->fg_pgrp = 0;
		}
		return 0;
	case FIONREAD:
		v = (int)(master ? p->outlen :
			  (p->tio.c_lflag & ICANON) ?
				   (p->nrec ? p->rec[0] : 0) :
				   p->inlen);
		return task_write(t, arg, &v, sizeof(v)) < 0 ? -EFAULT : 0;
	case TIOCOUTQ:
		v = master ? 0 : (int)p->outlen;
		return task_write(t, arg, &v, sizeof(v)) < 0 ? -EFAULT : 0;
	case TCFLSH:
		if (arg == TCIFLUSH || arg == TCIOFLUSH)
			flush_input(p);
		if (arg == TCOFLUSH || arg == TCIOFLUSH)
			p->outlen = 0;
		if (arg > TCIOFLUSH)
			return -EINVAL;
		changed(p);
		return 0;
	case TCSBRK:
	case TCSBRKP:
	case TCXONC:
		return 0; /* no line to drain or to pause */
	case TIOCGPTN:
		if (!master)
			return -ENOTTY;
		v = p->index;
		return task_write(t, arg, &v, sizeof(v)) < 0 ? -EFAULT : 0;
	case TIOCSPTLCK:
		if (!master)
			return -ENOTTY;
		if (task_read(t, arg, &v, sizeof(v)) < 0)
			return -EFAULT;
		p->locked = v != 0;
		return 0;
	case TIOCGPTLCK:
		if (!master)
			return -ENOTTY;
		v = p->locked;
		return task_write(t, arg, &v, sizeof(v)) < 0 ? -EFAULT : 0;
	case TIOCGPTPEER: {
		struct file *sf;
		int fd;
		if (!master)
			return -ENOTTY;
		if (p->locked)
			return -EIO;
		sf = pty_file(p, false, (int)arg | O_RDWR);
		if (!sf)
			return -ENOMEM;
		fd = fd_install(t, sf, (arg & O_CLOEXEC) != 0, 0);
		file_put(sf);
		return fd;
	}
	default:
		return -ENOTTY;
	}
}

static int tty_stat(struct file *f, struct stat *st)
{
	struct pty *p = pty_of(f);
	bool master = ((struct ptyfile *)f->priv)->master;

	/* The node it was opened by (/dev/pts/N, /dev/ptmx): ttyname(3)
	 * matches fstat against stat of the path. */
	if (f->vn)
		return vfs_stat(f->vn, st);
	memset(st, 0, sizeof(*st));
	st->st_mode = S_IFCHR | 0620;
	st->st_rdev = master ? makedev(5, 2) : makedev(136, p->index);
	st->st_ino = master ? 2 : 3 + (ino_t)p->index;
	st->st_dev = master ? 6 : VFS_DEV_PTS;
	st->st_nlink = 1;
	st->st_blksize = 1024;
	return 0;
}

static void tty_release(struct file *f)
{
	struct ptyfile *pf = f->priv;
	struct pty *p = pf->pty;

	if (pf->master) {
		p->masters--;
		if (!p->masters && !p->sentry_master && p->sid) {
			/* hangup: the session hears SIGHUP (and SIGCONT) */
			struct process *q;
			for (q = S->procs; q; q = q->next)
				if (!q->exited && q->sid == p->sid &&
				    q->pid == q->sid) {
					send_signal_proc(q, SIGHUP, 0);
					send_signal_proc(q, SIGCONT, 0);
				}
			/* and is no longer its controlling terminal */
			clear_ctty(p);
		}
	} else {
		p->slaves--;
	}
	free(pf);
	changed(p);
	pty_maybe_free(p);
}

static uint64_t tty_evseq(struct file *f)
{
	return pty_of(f)->seq;
}

static const struct file_ops master_ops = {
	.read = master_read,
	.write = master_write,
	.poll = master_poll,
	.ioctl = tty_ioctl,
	.stat = tty_stat,
	.release = tty_release,
	.evseq = tty_evseq,
};

static const struct file_ops slave_ops = {
	.read = slave_read,
	.write = slave_write,
	.poll = slave_poll,
	.ioctl = tty_ioctl,
	.stat = tty_stat,
	.release = tty_release,
	.evseq = tty_evseq,
};

/* ---- devfs entry points --------------------------------------------------- */

int pty_open_master(struct task *t, int flags, struct file **out)
{
	struct pty *p = pty_alloc(t ? t->proc->mntns : vfs_ns());
	struct file *f;

	if (!p)
		return -ENOSPC;
	f = pty_file(p, true, flags);
	if (!f) {
		pty_maybe_free(p);
		return -ENOMEM;
	}
	*out = f;
	return 0;
}

static int open_slave(struct task *t, struct pty *p, int flags,
		      struct file **out)
{
	struct file *f;

	if (p->locked)
		return -EIO;
	f = pty_file(p, false, flags);
	if (!f)
		return -ENOMEM;
	if (t && !(flags & O_NOCTTY))
		maybe_acquire(t->proc, p);
	*out = f;
	return 0;
}

int pty_open_slave(struct task *t, int index, int flags, struct file **out)
{
	if (!pty_exists(index))
		return -ENOENT;
	return open_slave(t, ptys[index], flags, out);
}

int pty_open_ctty(struct task *t, int flags, struct file **out)
{
	/* its own terminal, whichever namespace's /dev/pts shows it */
	if (!t || t->proc->ctty < 0 || !ptys[t->proc->ctty])
		return -ENXIO;
	return open_slave(t, ptys[t->proc->ctty], flags | O_NOCTTY, out);
}

/* Is /dev/pts/index there, in the namespace walking now? */
bool pty_exists(int index)
{
	return index >= 0 && index < PTY_MAX && ptys[index] &&
	       ptys[index]->ns == vfs_ns();
}

int pty_count_index(int *out, int max)
{
	int i, n = 0;

	for (i = 0; i < PTY_MAX && n < max; i++)
		if (pty_exists(i))
			out[n++] = i;
	return n;
}

/* ---- terminal relays: `moat do -t`, and OCI terminals -------------------- */

/* A pty of the sentry's whose master side is relayed to a host terminal
 * (put in raw mode: the sentry's line discipline is the one that counts)
 * in and out. The first is the first process's (`moat do -t`, an OCI
 * container's console); `moat exec -t` adds one per process. */
#define RELAYS 9
static struct relay {
	struct pty *pty;
	struct process *owner; /* the process whose terminal it is */
	int in, out;
	bool in_eof, raw;
	struct termios saved;
	unsigned short rows, cols; /* the host's size, as last seen */
} relays[RELAYS];
static int nrelays;
static volatile sig_atomic_t winch;

static void on_winch(int sig)
{
	(void)sig;
	winch = 1;
}

static void relay_restore(struct relay *r)
{
	if (r->raw) {
		tcsetattr(r->in, TCSAFLUSH, &r->saved);
		r->raw = false;
	}
}

void pty_relay_restore(void)
{
	for (int i = 0; i < nrelays; i++)
		if (relays[i].pty)
			relay_restore(&relays[i]);
}

static void follow_host_size(struct relay *r)
{
	struct winsize ws;

	if (r->pty && ioctl(r->in, TIOCGWINSZ, &ws) == 0 && ws.ws_col &&
	    (ws.ws_row != r->rows || ws.ws_col != r->cols)) {
		r->rows = ws.ws_row;
		r->cols = ws.ws_col;
		set_winsize(r->pty, &ws);
	}
}

int pty_relay_start(struct process *owner, int in, int out,
		    struct moat_error *err)
{
	struct sigaction sa;
	struct relay *r = NULL;
	struct file *f;
	int fd, i;

	for (i = 0; i < RELAYS && !r; i++)
		if (!relays[i].pty)
			r = &relays[i];
	if (!r)
		return moat_error_set(err, ENOSPC, "terminals: %d at once",
				      RELAYS);
	if (r - relays >= nrelays)
		nrelays = (int)(r - relays) + 1;
	memset(r, 0, sizeof(*r));
	r->pty = pty_alloc(owner->mntns);
	if (!r->pty)
		return moat_error_set(err, ENOSPC, "pty");
	r->pty->sentry_master = true;
	r->pty->locked = false;
	r->owner = owner;
	r->in = in;
	r->out = out;
	if (isatty(in) && tcgetattr(in, &r->saved) == 0) {
		struct termios raw = r->saved;
		cfmakeraw(&raw);
		if (tcsetattr(in, TCSANOW, &raw) == 0)
			r->raw = true;
	}
	follow_host_size(r);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_winch; /* no SA_RESTART: it wakes the loop */
	sigaction(SIGWINCH, &sa, NULL);
	/* Its process is a session leader with this terminal. */
	owner->ctty = r->pty->index;
	r->pty->sid = owner->sid;
	r->pty->fg_pgrp = owner->pgid;
	for (fd = 0; fd < 3; fd++) {
		f = pty_file(r->pty, false, O_RDWR);
		if (!f)
			return moat_error_set(err, ENOMEM, "pty stdio");
		if (fd_install(owner->leader, f, false, fd) != fd)
			return moat_error_set(err, ENOMEM, "pty stdio");
		file_put(f);
	}
	return 0;
}

int pty_relay_pollfds(struct pollfd *pfds, int max)
{
	int n = 0, i;
	bool sized = winch;

	winch = 0;
	for (i = 0; i < nrelays; i++) {
		struct relay *r = &relays[i];

		if (!r->pty)
			continue;
		/* SIGWINCH comes only for the sentry's own terminal (the
		 * first process's); an exec's is looked at each time round. */
		if (sized || r->owner->pid != 1)
			follow_host_size(r);
		if (!r->in_eof && n < max && PTY_IN - r->pty->inlen > 256) {
			pfds[n].fd = r->in;
			pfds[n].events = POLLIN;
			n++;
		}
		if (r->pty->outlen && n < max) {
			pfds[n].fd = r->out;
			pfds[n].events = POLLOUT;
			n++;
		}
	}
	return n;
}

static void relay_pump(struct relay *r)
{
	char buf[1024];
	ssize_t n;

	if (!r->in_eof && PTY_IN - r->pty->inlen > 256) {
		struct pollfd pf = { r->in, POLLIN, 0 };
		if (poll(&pf, 1, 0) > 0) {
			n = read(r->in, buf, sizeof(buf));
			if (n > 0)
				pty_input(r->pty, buf, (size_t)n);
			else if (n == 0 || (errno != EAGAIN && errno != EINTR))
				r->in_eof = true;
		}
	}
	while (r->pty->outlen) {
		n = write(r->out, r->pty->out, r->pty->outlen);
		if (n <= 0)
			break;
		memmove(r->pty->out, r->pty->out + n,
			r->pty->outlen - (size_t)n);
		r->pty->outlen -= (size_t)n;
		changed(r->pty);
	}
}

/* Move what can move, without blocking the sentry. */
void pty_relay_pump(void)
{
	for (int i = 0; i < nrelays; i++)
		if (relays[i].pty)
			relay_pump(&relays[i]);
}

/* What r's guests wrote last reaches the host terminal (a second at
 * most), and the host terminal gets its mode back. */
static void relay_flush(struct relay *r)
{
	while (r->pty->outlen) {
		struct pollfd pf = { r->out, POLLOUT, 0 };
		if (poll(&pf, 1, 1000) <= 0)
			break;
		relay_pump(r);
	}
	relay_restore(r);
}

void pty_relay_finish(void)
{
	for (int i = 0; i < nrelays; i++)
		if (relays[i].pty)
			relay_flush(&relays[i]);
}

void pty_relay_end(struct process *owner)
{
	for (int i = 0; i < nrelays; i++) {
		struct relay *r = &relays[i];

		if (!r->pty || r->owner != owner)
			continue;
		relay_flush(r);
		if (r->out != r->in)
			close(r->out);
		close(r->in);
		/* the pty stays while guests hold it; nobody relays it now */
		r->pty->sentry_master = false;
		pty_maybe_free(r->pty);
		r->pty = NULL;
	}
}
