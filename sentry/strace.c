/* sentry/strace.c: --strace, one line per trapped syscall on stderr.
 *
 *   [pid:tid] openat(AT_FDCWD, "/etc/hostname", O_RDONLY|O_CLOEXEC, 0) = 3
 *   [pid:tid] openat(AT_FDCWD, "/nope", O_RDONLY, 0) = -1 ENOENT (No such file or directory)
 *
 * Arguments are decoded at syscall entry (strings must be read before the
 * handler or the guest changes them) into t->strace_args, per the table's
 * argfmt; the line is written at exit, in one write(2) so lines from
 * different tasks never interleave. pid and tid are the virtual ones.
 * Only trapped syscalls appear: native ones never stop the task.
 */
#include "sentry/sentry.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#define STR_MAX 64 /* characters of a string argument shown */
/* The kernel's value: glibc defines O_LARGEFILE as 0 on x86_64. */
#define KERNEL_O_LARGEFILE 0100000

/* Bounded appender over a fixed buffer; on overflow the tail becomes "...". */
struct out {
	char *p;
	size_t cap, len;
	bool trunc;
};

static void out_add(struct out *o, const char *s, size_t n)
{
	if (o->trunc)
		return;
	if (o->len + n + 4 >= o->cap) {
		/* Leave room for "..." and the NUL. */
		size_t room = o->cap > o->len + 4 ? o->cap - o->len - 4 : 0;
		memcpy(o->p + o->len, s, room);
		o->len += room;
		memcpy(o->p + o->len, "...", 4);
		o->len += 3;
		o->trunc = true;
		return;
	}
	memcpy(o->p + o->len, s, n);
	o->len += n;
	o->p[o->len] = 0;
}

static void out_puts(struct out *o, const char *s)
{
	out_add(o, s, strlen(s));
}

MOAT_PRINTF(2, 3) static void out_printf(struct out *o, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	out_add(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* A guest string, quoted and escaped, at most STR_MAX characters. */
static void put_string(struct out *o, struct task *t, uint64_t addr)
{
	char buf[STR_MAX + 1];
	char esc[8];
	int n, i;
	bool more = false;

	if (!addr) {
		out_puts(o, "NULL");
		return;
	}
	n = task_read_str(t, addr, buf, sizeof(buf));
	if (n == -ENAMETOOLONG) {
		n = STR_MAX;
		more = true;
	} else if (n < 0) {
		out_printf(o, "0x%llx", (unsigned long long)addr);
		return;
	}
	out_puts(o, "\"");
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		switch (c) {
		case '"':
			out_puts(o, "\\\"");
			break;
		case '\\':
			out_puts(o, "\\\\");
			break;
		case '\n':
			out_puts(o, "\\n");
			break;
		case '\t':
			out_puts(o, "\\t");
			break;
		case '\r':
			out_puts(o, "\\r");
			break;
		default:
			if (c < 0x20 || c >= 0x7f) {
				snprintf(esc, sizeof(esc), "\\x%02x", c);
				out_puts(o, esc);
			} else {
				out_add(o, (const char *)&c, 1);
			}
		}
	}
	out_puts(o, more ? "\"..." : "\"");
}

static void put_open_flags(struct out *o, uint64_t v)
{
	static const struct {
		uint64_t bits;
		const char *name;
	} flags[] = {
		/* Composite flags before their parts. */
		{ O_TMPFILE, "O_TMPFILE" },
		{ O_SYNC, "O_SYNC" },
		{ O_CREAT, "O_CREAT" },
		{ O_EXCL, "O_EXCL" },
		{ O_NOCTTY, "O_NOCTTY" },
		{ O_TRUNC, "O_TRUNC" },
		{ O_APPEND, "O_APPEND" },
		{ O_NONBLOCK, "O_NONBLOCK" },
		{ O_DSYNC, "O_DSYNC" },
		{ O_ASYNC, "O_ASYNC" },
		{ O_DIRECT, "O_DIRECT" },
		{ KERNEL_O_LARGEFILE, "O_LARGEFILE" },
		{ O_DIRECTORY, "O_DIRECTORY" },
		{ O_NOFOLLOW, "O_NOFOLLOW" },
		{ O_NOATIME, "O_NOATIME" },
		{ O_CLOEXEC, "O_CLOEXEC" },
		{ O_PATH, "O_PATH" },
	};
	static const char *const acc[] = { "O_RDONLY", "O_WRONLY", "O_RDWR",
					   "O_ACCMODE" };
	size_t i;

	v &= 0xffffffffULL; /* the kernel takes an int */
	out_puts(o, acc[v & O_ACCMODE]);
	v &= ~(uint64_t)O_ACCMODE;
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		if ((v & flags[i].bits) == flags[i].bits) {
			out_puts(o, "|");
			out_puts(o, flags[i].name);
			v &= ~flags[i].bits;
		}
	}
	if (v)
		out_printf(o, "|0x%llx", (unsigned long long)v);
}

static void put_signal(struct out *o, uint64_t v)
{
	int sig = (int)v;
	const char *abbrev = sig > 0 && sig < 32 ? sigabbrev_np(sig) : NULL;

	if (abbrev)
		out_printf(o, "SIG%s", abbrev);
	else if (sig >= 32 && sig <= 64)
		out_printf(o, "SIGRT_%d", sig - 32);
	else
		out_printf(o, "%d", sig);
}

static void put_arg(struct out *o, struct task *t, char fmt, uint64_t v)
{
	switch (fmt) {
	case 's':
		put_string(o, t, v);
		break;
	case 'F':
		/* The kernel reads fds as int: look at the low 32 bits. */
		if ((int)v == AT_FDCWD)
			out_puts(o, "AT_FDCWD");
		else
			out_printf(o, "%d", (int)v);
		break;
	case 'f':
		put_open_flags(o, v);
		break;
	case 'S':
		put_signal(o, v);
		break;
	case 'o':
		out_printf(o, v ? "0%llo" : "%llo", (unsigned long long)v);
		break;
	case 'd':
		out_printf(o, "%lld", (long long)(int64_t)v);
		break;
	case 'u':
		out_printf(o, "%llu", (unsigned long long)v);
		break;
	case 'p':
	case 'x':
	default:
		out_printf(o, "0x%llx", (unsigned long long)v);
		break;
	}
}

static void emit_line(struct task *t, const char *name, long nr,
		      const char *args, long ret, bool hex)
{
	char line[1024];
	/* One byte held back: the newline always fits. */
	struct out o = { line, sizeof(line) - 1, 0, false };
	const char *ename;

	line[0] = 0;
	out_printf(&o, "[%d:%d] ", t->proc ? t->proc->pid : 0, t->tid);
	if (name)
		out_puts(&o, name);
	else
		out_printf(&o, "syscall_%ld", nr);
	out_puts(&o, "(");
	out_puts(&o, args);
	out_puts(&o, ") = ");
	if (ret < 0 && ret >= -4095) {
		int e = (int)-ret;
		switch (e) {
		case 512:
			ename = "ERESTARTSYS";
			break;
		case 513:
			ename = "ERESTARTNOINTR";
			break;
		case 514:
			ename = "ERESTARTNOHAND";
			break;
		case 516:
			ename = "ERESTART_RESTARTBLOCK";
			break;
		default:
			ename = strerrorname_np(e);
		}
		if (ename && e >= 512 && e <= 516)
			out_printf(&o, "? %s (To be restarted)", ename);
		else if (ename)
			out_printf(&o, "-1 %s (%s)", ename, strerror(e));
		else
			out_printf(&o, "-1 errno %d", e);
	} else if (hex) {
		out_printf(&o, "0x%lx", (unsigned long)ret);
	} else {
		out_printf(&o, "%ld", ret);
	}
	line[o.len++] = '\n';
	write_all(2, line, o.len);
}

void strace_enter(struct task *t, const struct syscall_desc *d)
{
	struct out o = { t->strace_args, sizeof(t->strace_args), 0, false };
	const char *fmt;
	int i;

	t->strace_args[0] = 0;
	if (!d) {
		/* Not in the table: dispatch answers ENOSYS and nothing
		 * calls strace_exit, so the whole line is written now. */
		for (i = 0; i < 6; i++)
			out_printf(&o, "%s0x%llx", i ? ", " : "",
				   (unsigned long long)t->sc.a[i]);
		emit_line(t, NULL, t->sc.nr, t->strace_args, -ENOSYS, false);
		return;
	}
	fmt = d->argfmt ? d->argfmt : "";
	for (i = 0; fmt[i] && i < 6; i++) {
		if (i)
			out_puts(&o, ", ");
		put_arg(&o, t, fmt[i], t->sc.a[i]);
	}
}

static bool returns_address(const char *name)
{
	return !strcmp(name, "mmap") || !strcmp(name, "mremap") ||
	       !strcmp(name, "brk") || !strcmp(name, "shmat");
}

void strace_exit(struct task *t, const struct syscall_desc *d, long ret)
{
	if (!d)
		return; /* written by strace_enter */
	emit_line(t, d->name, d->nr, t->strace_args, ret,
		  returns_address(d->name));
}
