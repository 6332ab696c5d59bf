/* sentry/exec.c: execve and execveat by the sentry's own loader.
 *
 * 1. At the execve stop the sentry reads the path, argv and envp, resolves
 *    and opens the file, follows "#!" and PT_INTERP and validates every
 *    header. Any failure is returned to the caller with its image intact.
 * 2. Point of no return: the syscall is rewritten into
 *    execveat(GUEST_STUB_FD, "", NULL, NULL, AT_EMPTY_PATH). The host gives
 *    the process a fresh address space holding only the stub, a stack and
 *    the vDSO; it also releases a vfork parent and kills other threads.
 * 3. At the exec event the sentry maps the program and its interpreter with
 *    injected mmaps of the donated host fds (files are mapped, never
 *    copied), writes the initial stack and sets the registers.
 */
#include "sentry/exec.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "platform/platform.h"
#include "sentry/audit.h"
#include "sentry/fs_tmpfs.h"
#include "sentry/syscalls.h"
#include "sentry/vfs.h"

#define MAX_SHEBANG_DEPTH 4
/* The stub's stack has at least 128 KiB mapped below its own strings. */
#define EXEC_ARG_MAX (120 * 1024)
#define ARGV_MAX 32768

static int file_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
	struct file *f = ctx;
	ssize_t n = pread(f->hostfd, buf, len, (off_t)off);
	return n < 0 ? -errno : (int)n;
}

void exec_plan_free(struct exec_plan *p)
{
	size_t i;

	if (!p)
		return;
	file_put(p->main);
	file_put(p->interp);
	vnode_put(p->main_vn);
	for (i = 0; p->argv && i < p->argc; i++)
		free(p->argv[i]);
	for (i = 0; p->envp && i < p->envc; i++)
		free(p->envp[i]);
	free(p->argv);
	free(p->envp);
	free(p->execfn);
	free(p);
}

static char **dup_strv(char *const *v, size_t n, size_t extra_front)
{
	char **r = calloc(n + extra_front + 1, sizeof(char *));
	size_t i;

	if (!r)
		return NULL;
	for (i = 0; i < n; i++) {
		r[i + extra_front] = strdup(v[i]);
		if (!r[i + extra_front]) {
			while (i--)
				free(r[i + extra_front]);
			free(r);
			return NULL;
		}
	}
	return r;
}

/* Open an executable file: a regular file with execute permission. */
static int open_exec(struct task *t, struct vnode *cwd, int dirfd,
		     const char *path, int at_flags, struct vnode **vn_out,
		     struct file **f_out)
{
	struct vnode *vn;
	struct file *f;
	int rc, lflags = (at_flags & AT_SYMLINK_NOFOLLOW) ? 0 : LOOKUP_FOLLOW;

	if (at_flags & AT_EMPTY_PATH)
		lflags |= LOOKUP_EMPTY;
	if (t) {
		rc = vfs_resolve(t, dirfd, path, lflags, &vn);
	} else {
		/* CLI: relative to the initial cwd. */
		char full[PATH_MAX];
		if (path[0] != '/' && cwd)
			snprintf(full, sizeof(full), "%s/%s", cwd->path, path);
		else
			snprintf(full, sizeof(full), "%s", path);
		rc = vfs_resolve(NULL, AT_FDCWD, full, lflags, &vn);
	}
	if (rc < 0)
		return rc;
	if (S_ISLNK(vn->mode)) {
		vnode_put(vn);
		return -ELOOP;
	}
	/* a noexec mount: EACCES whatever the mode says, as Linux's
	 * path_noexec */
	if (!S_ISREG(vn->mode) ||
	    vfs_access(t ? &t->proc->cred :
			   &(struct creds){ .cap = CAP_SETS_ROOT },
		       vn, X_OK) < 0 ||
	    vfs_noexec(vn)) {
		vnode_put(vn);
		return -EACCES;
	}
	rc = vfs_open(t, vn, O_RDONLY, &f);
	if (rc < 0) {
		vnode_put(vn);
		return rc;
	}
	/* A tmpfs file is read and mapped through a host fd of its own
	 * for the exec's length. */
	if (vn->kind == VN_TMPFS && S_ISREG(vn->mode)) {
		rc = tmpfs_file_pin(f);
		if (rc < 0) {
			file_put(f);
			vnode_put(vn);
			return rc;
		}
	}
	if (f->hostfd < 0) {
		file_put(f);
		vnode_put(vn);
		return -EACCES; /* only files of a filesystem can be executed */
	}
	*vn_out = vn;
	*f_out = f;
	return 0;
}

int exec_prepare(struct task *t, struct vnode *cwd, int dirfd, const char *path,
		 int at_flags, char *const *argv, size_t argc,
		 char *const *envp, size_t envc, struct exec_plan **out)
{
	struct exec_plan *p = calloc(1, sizeof(*p));
	char cur[PATH_MAX];
	size_t total = 0, i;
	int depth, rc;

	if (!p)
		return -ENOMEM;
	if (argc == 0) {
		/* Linux >= 5.18 substitutes { "" } for an empty argv. */
		static char *const empty[] = { "" };
		argv = empty;
		argc = 1;
	}
	p->argv = dup_strv(argv, argc, 0);
	p->envp = dup_strv(envp, envc, 0);
	p->argc = argc;
	p->envc = envc;
	p->execfn = strdup(path);
	if (!p->argv || !p->envp || !p->execfn) {
		exec_plan_free(p);
		return -ENOMEM;
	}
	snprintf(cur, sizeof(cur), "%s", path);
	for (depth = 0;; depth++) {
		char head[SHEBANG_BUF_SIZE];
		char interp[SHEBANG_BUF_SIZE], arg[SHEBANG_BUF_SIZE];
		int has_arg = 0;
		ssize_t n;
		char **nv;

		rc = open_exec(t, cwd, depth ? AT_FDCWD : dirfd, cur,
			       depth ? 0 : at_flags, &p->main_vn, &p->main);
		if (rc < 0)
			goto fail;
		n = pread(p->main->hostfd, head, sizeof(head), 0);
		if (n < 0) {
			rc = -EIO;
			goto fail;
		}
		rc = shebang_parse(head, (size_t)n, interp, sizeof(interp), arg,
				   sizeof(arg), &has_arg);
		if (rc < 0)
			goto fail;
		if (rc == 0)
			break;
		if (depth >= MAX_SHEBANG_DEPTH) {
			rc = -ELOOP;
			goto fail;
		}
		/* argv becomes: interp [arg] path argv[1..] */
		nv = calloc(p->argc + 3, sizeof(char *));
		if (!nv) {
			rc = -ENOMEM;
			goto fail;
		}
		i = 0;
		nv[i++] = strdup(interp);
		if (has_arg)
			nv[i++] = strdup(arg);
		nv[i++] = strdup(cur);
		free(p->argv[0]);
		memcpy(nv + i, p->argv + 1, (p->argc - 1) * sizeof(char *));
		free(p->argv);
		p->argv = nv;
		p->argc = i + p->argc - 1;
		for (i = 0; i < p->argc; i++)
			if (!p->argv[i]) {
				rc = -ENOMEM;
				goto fail;
			}
		snprintf(cur, sizeof(cur), "%s", interp);
		file_put(p->main);
		vnode_put(p->main_vn);
		p->main = NULL;
		p->main_vn = NULL;
	}
	rc = elf_parse(file_pread, p->main, (uint64_t)p->main_vn->st.st_size,
		       &p->mi);
	if (rc < 0)
		goto fail;
	if (p->mi.has_interp) {
		struct vnode *ivn;
		rc = open_exec(t, NULL, AT_FDCWD, p->mi.interp, 0, &ivn,
			       &p->interp);
		if (rc < 0)
			goto fail;
		rc = elf_parse(file_pread, p->interp, (uint64_t)ivn->st.st_size,
			       &p->ii);
		vnode_put(ivn);
		if (rc < 0)
			goto fail;
		if (p->ii.has_interp) {
			rc = -ELIBBAD;
			goto fail;
		}
	}
	for (i = 0; i < p->argc; i++)
		total += strlen(p->argv[i]) + 1 + 8;
	for (i = 0; i < p->envc; i++)
		total += strlen(p->envp[i]) + 1 + 8;
	total += strlen(p->execfn) + 1;
	if (total > EXEC_ARG_MAX) {
		rc = -E2BIG;
		goto fail;
	}
	*out = p;
	return 0;
fail:
	exec_plan_free(p);
	return rc;
}

/* Read a NULL-terminated array of strings from guest memory. */
static int read_strv(struct task *t, uint64_t addr, char ***out, size_t *n_out)
{
	size_t n = 0, cap = 16, total = 0;
	char **v = calloc(cap + 1, sizeof(char *));
	char buf[PATH_MAX * 8];

	if (!v)
		return -ENOMEM;
	while (addr) {
		uint64_t p;
		int len;

		if (task_read(t, addr + n * 8, &p, 8) < 0)
			goto efault;
		if (!p)
			break;
		if (n >= ARGV_MAX)
			goto e2big;
		len = task_read_str(t, p, buf, sizeof(buf));
		if (len == -ENAMETOOLONG)
			goto e2big;
		if (len < 0)
			goto efault;
		total += (size_t)len + 1;
		if (total > EXEC_ARG_MAX)
			goto e2big;
		if (n == cap) {
			char **nv = realloc(v, (cap * 2 + 1) * sizeof(char *));
			if (!nv)
				goto enomem;
			v = nv;
			cap *= 2;
		}
		v[n] = strdup(buf);
		if (!v[n])
			goto enomem;
		v[++n] = NULL;
	}
	*out = v;
	*n_out = n;
	return 0;
efault:
	while (n--)
		free(v[n]);
	free(v);
	return -EFAULT;
e2big:
	while (n--)
		free(v[n]);
	free(v);
	return -E2BIG;
enomem:
	while (n--)
		free(v[n]);
	free(v);
	return -ENOMEM;
}

static void free_strv(char **v, size_t n)
{
	while (n--)
		free(v[n]);
	free(v);
}

static long do_execve(struct task *t, int dirfd, uint64_t upath, uint64_t uargv,
		      uint64_t uenvp, int flags)
{
	char path[PATH_MAX];
	char **argv = NULL, **envp = NULL;
	size_t argc = 0, envc = 0;
	struct exec_plan *plan;
	struct user_regs_struct r;
	int rc;

	if (flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
		return -EINVAL;
	rc = task_read_str(t, upath, path, sizeof(path));
	if (rc < 0)
		return rc;
	rc = read_strv(t, uargv, &argv, &argc);
	if (rc < 0)
		return rc;
	rc = read_strv(t, uenvp, &envp, &envc);
	if (rc < 0) {
		free_strv(argv, argc);
		return rc;
	}
	rc = exec_prepare(t, NULL, dirfd, path, flags, argv, argc, envp, envc,
			  &plan);
	free_strv(argv, argc);
	free_strv(envp, envc);
	if (rc < 0)
		return rc;
	/* Point of no return. */
	t->exec = plan;
	r = t->regs;
	r.orig_rax = SYS_execveat;
	r.rdi = GUEST_STUB_FD;
	r.rsi = STUB_DATA; /* a zero byte: the empty path */
	r.rdx = 0;
	r.r10 = 0;
	r.r8 = AT_EMPTY_PATH;
	if (ptrace(PTRACE_SETREGS, t->host_tid, 0, &r) < 0) {
		t->exec = NULL;
		exec_plan_free(plan);
		return -ESRCH;
	}
	t->fixup_kind = 3;
	if (t->proc->nthreads > 1)
		t->proc->exec_pending = true;
	return SYS_PASSTHROUGH_FIXUP;
}

long sys_execve(struct task *t, struct syscall_args *a)
{
	return do_execve(t, AT_FDCWD, a->a[0], a->a[1], a->a[2], 0);
}

long sys_execveat(struct task *t, struct syscall_args *a)
{
	return do_execve(t, (int)a->a[0], a->a[1], a->a[2], a->a[3],
			 (int)a->a[4]);
}

void exec_failed(struct task *t)
{
	t->proc->exec_pending = false;
	exec_plan_free(t->exec);
	t->exec = NULL;
}

static long inj_mmap(struct task *t, uint64_t addr, uint64_t len, int prot,
		     int flags, int fd, uint64_t off)
{
	return plat_inject(t, SYS_mmap, addr, len, (uint64_t)prot,
			   (uint64_t)flags, (uint64_t)(int64_t)fd, off);
}

static int zero_bytes(struct task *t, uint64_t addr, uint64_t len)
{
	static const char zeros[4096];

	if (len > sizeof(zeros))
		return -EINVAL;
	if (task_write(t, addr, zeros, len) == 0)
		return 0;
	return task_poke(t, addr, zeros, len);
}

/* Map one ELF image. For ET_DYN a region is reserved first so the gaps
 * between segments stay the image's. Returns the bias. */
static int map_image(struct task *t, struct file *f, struct elf_info *ei,
		     const char *path, uint64_t hint, uint64_t *bias_out)
{
	struct elf_map_op ops[ELF_MAP_OPS_MAX];
	uint64_t bias = 0, span = ei->max_vaddr - ei->min_vaddr;
	long r;
	int n, i, gfd;

	if (ei->type == ET_DYN) {
		uint64_t align = ei->max_align ? ei->max_align : 4096;
		r = inj_mmap(t, hint, span + align, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r < 0 && r > -4096)
			return (int)r;
		{
			uint64_t base = ((uint64_t)r + align - 1) &
					~(align - 1);
			bias = base - ei->min_vaddr;
		}
	}
	n = elf_map_plan(ei, bias, ops, ARRAY_SIZE(ops));
	if (n < 0)
		return n;
	gfd = plat_donate_fd(t, f->hostfd);
	if (gfd < 0)
		return gfd;
	for (i = 0; i < n; i++) {
		switch (ops[i].kind) {
		case ELF_MAP_FILE:
			r = inj_mmap(t, ops[i].addr, ops[i].len, ops[i].prot,
				     MAP_PRIVATE | MAP_FIXED, gfd,
				     ops[i].offset);
			if (r < 0 && r > -4096)
				goto out;
			maps_add(t->proc, ops[i].addr, ops[i].addr + ops[i].len,
				 path, f->vn ? f->vn->st.st_dev : 0,
				 f->vn ? f->vn->st.st_ino : 0);
			break;
		case ELF_MAP_ANON:
			r = inj_mmap(t, ops[i].addr, ops[i].len, ops[i].prot,
				     MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS,
				     -1, 0);
			if (r < 0 && r > -4096)
				goto out;
			break;
		case ELF_ZERO:
			r = zero_bytes(t, ops[i].addr, ops[i].len);
			if (r < 0)
				goto out;
			break;
		default:
			r = -EINVAL;
			goto out;
		}
	}
	r = 0;
	*bias_out = bias;
out:
	plat_inject(t, SYS_close, (uint64_t)gfd, 0, 0, 0, 0, 0);
	return (int)r;
}

/* The stub's auxv tells the sentry the vDSO and CPU facts of this host. */
struct host_aux {
	uint64_t sysinfo_ehdr, hwcap, hwcap2, clktck, minsigstksz, execfn;
};

static int read_stub_aux(struct task *t, uint64_t sp, struct host_aux *ha)
{
	uint64_t w[512];
	size_t i;
	uint64_t argc;

	size_t got = 0;

	memset(ha, 0, sizeof(*ha));
	memset(w, 0, sizeof(w));
	/* Page by page: the stack ends a few hundred bytes above sp. */
	while (got < sizeof(w)) {
		size_t chunk = 4096 - ((sp + got) & 4095);
		if (chunk > sizeof(w) - got)
			chunk = sizeof(w) - got;
		if (task_read(t, sp + got, (char *)w + got, chunk) < 0)
			break;
		got += chunk;
	}
	if (got < 64)
		return -EFAULT;
	argc = w[0];
	if (argc > 16)
		return -EINVAL;
	i = 1 + argc + 1;
	while (i < ARRAY_SIZE(w) && w[i])
		i++;
	for (i++; i + 1 < ARRAY_SIZE(w) && w[i] != AT_NULL; i += 2) {
		switch (w[i]) {
		case AT_SYSINFO_EHDR:
			ha->sysinfo_ehdr = w[i + 1];
			break;
		case AT_HWCAP:
			ha->hwcap = w[i + 1];
			break;
		case AT_HWCAP2:
			ha->hwcap2 = w[i + 1];
			break;
		case AT_CLKTCK:
			ha->clktck = w[i + 1];
			break;
		case AT_MINSIGSTKSZ:
			ha->minsigstksz = w[i + 1];
			break;
		case AT_EXECFN:
			ha->execfn = w[i + 1];
			break;
		default:
			break;
		}
	}
	return ha->execfn ? 0 : -EINVAL;
}

static int load(struct task *t, struct exec_plan *p)
{
	struct user_regs_struct r;
	struct host_aux ha;
	uint64_t mbias = 0, ibias = 0, stack_top, rnd;
	uint64_t aux[64];
	size_t na = 0, i;
	uint8_t random16[16];
	struct stack_image img;
	char fnbuf[PATH_MAX];
	int rc, len;
	struct process *proc = t->proc;
	bool secure;

	if (ptrace(PTRACE_GETREGS, t->host_tid, 0, &r) < 0)
		return -ESRCH;
	t->regs = r;
	rc = read_stub_aux(t, r.rsp, &ha);
	if (rc < 0)
		return rc;
	len = task_read_str(t, ha.execfn, fnbuf, sizeof(fnbuf));
	if (len < 0)
		return len;
	/* Linux puts the exec file name right below an 8-byte end marker at
	 * the top of the stack. */
	stack_top = (ha.execfn + (uint64_t)len + 1 + 8 + 4095) & ~4095ULL;
	/* Past the point of no return: the new program's credentials
	 * (capabilities(7)'s execve transformation). */
	secure = caps_exec(&proc->cred, proc->no_new_privs);
	maps_clear(proc);
	timers_exec(proc);
	sysv_exec(proc);
	mqueue_exec(proc);
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = (uint64_t)now_ns();
	rc = map_image(t, p->main, &p->mi, p->main_vn->path,
		       p->mi.type == ET_DYN ? (ELF_DYN_BASE_DEFAULT +
					       ((rnd & 0x3ffff) << 12)) :
					      0,
		       &mbias);
	if (rc < 0)
		return rc;
	if (p->interp) {
		rc = map_image(t, p->interp, &p->ii, p->mi.interp, 0, &ibias);
		if (rc < 0)
			return rc;
	}
	if (getrandom(random16, sizeof(random16), 0) != sizeof(random16))
		return -EIO;
#define AUX(k, v)                                                              \
	do {                                                                   \
		aux[na++] = (k);                                               \
		aux[na++] = (v);                                               \
	} while (0)
	if (ha.sysinfo_ehdr)
		AUX(AT_SYSINFO_EHDR, ha.sysinfo_ehdr);
	if (ha.minsigstksz)
		AUX(AT_MINSIGSTKSZ, ha.minsigstksz);
	AUX(AT_HWCAP, ha.hwcap);
	AUX(AT_PAGESZ, 4096);
	AUX(AT_CLKTCK, ha.clktck ? ha.clktck : 100);
	if (p->mi.phdr_vaddr)
		AUX(AT_PHDR, p->mi.phdr_vaddr + mbias);
	AUX(AT_PHENT, sizeof(Elf64_Phdr));
	AUX(AT_PHNUM, p->mi.phnum);
	AUX(AT_BASE, p->interp ? ibias + 0 : 0);
	AUX(AT_FLAGS, 0);
	AUX(AT_ENTRY, p->mi.entry + mbias);
	AUX(AT_UID, proc->cred.ruid);
	AUX(AT_EUID, proc->cred.euid);
	AUX(AT_GID, proc->cred.rgid);
	AUX(AT_EGID, proc->cred.egid);
	AUX(AT_SECURE, secure);
	AUX(AT_HWCAP2, ha.hwcap2);
#undef AUX
	/* AT_BASE is the interpreter's load address: its bias plus its
	 * lowest vaddr (0 for ld.so). */
	if (p->interp)
		for (i = 0; i < na; i += 2)
			if (aux[i] == AT_BASE)
				aux[i + 1] = ibias + p->ii.min_vaddr;
	img.cap = EXEC_ARG_MAX + 16384;
	img.buf = malloc(img.cap);
	if (!img.buf)
		return -ENOMEM;
	rc = stack_build(stack_top, (const char *const *)p->argv, p->argc,
			 (const char *const *)p->envp, p->envc, p->execfn, aux,
			 na / 2, random16, &img);
	if (rc == 0)
		rc = task_write(t, img.sp, img.buf + img.cap - img.len,
				img.len);
	free(img.buf);
	if (rc < 0)
		return rc;
	/* Fresh registers, as the kernel's start_thread gives them. */
	memset(&r, 0, sizeof(r));
	r.cs = t->regs.cs;
	r.ss = t->regs.ss;
	r.ds = t->regs.ds;
	r.es = t->regs.es;
	r.eflags = 0x202;
	r.rsp = img.sp;
	r.rip = p->interp ? p->ii.entry + ibias : p->mi.entry + mbias;
	r.orig_rax = (unsigned long long)-1;
	if (ptrace(PTRACE_SETREGS, t->host_tid, 0, &r) < 0)
		return -ESRCH;
	t->regs = r;
	/* The process now is the new program. */
	vnode_put(proc->exe);
	proc->exe = vnode_get(p->main_vn);
	{
		size_t total = 0, off = 0;
		struct cmdline *cl;
		for (i = 0; i < p->argc; i++)
			total += strlen(p->argv[i]) + 1;
		cl = malloc(sizeof(*cl) + total);
		if (cl) {
			for (i = 0; i < p->argc; i++) {
				size_t l = strlen(p->argv[i]) + 1;
				memcpy(cl->s + off, p->argv[i], l);
				off += l;
			}
			cl->refs = 1;
			cl->len = total;
			cmdline_put(proc->cmdline);
			proc->cmdline = cl;
		}
	}
	{
		const char *base = strrchr(p->execfn, '/');
		base = base ? base + 1 : p->execfn;
		snprintf(proc->comm, sizeof(proc->comm), "%s", base);
	}
	/* Linux's begin_new_exec: dumpable again, unless the ids differ
	 * (what a set-user-ID program leaves). */
	proc->nondumpable = proc->cred.euid != proc->cred.ruid ||
			    proc->cred.egid != proc->cred.rgid;
	if (proc->fdt)
		fd_close_on_exec(proc, proc->fdt);
	/* Handlers reset to default; ignored stays ignored (as the host did). */
	for (i = 1; i < ARRAY_SIZE(proc->sigact); i++) {
		if (proc->sigact[i].handler != (uint64_t)(uintptr_t)SIG_IGN)
			proc->sigact[i].handler = 0;
		proc->sigact[i].flags = 0;
	}
	return 0;
}

void exec_event(struct task *t)
{
	struct exec_plan *p = t->exec;
	unsigned long former = 0;
	struct task *x;
	int st, rc;

	t->proc->exec_pending = false;
	ptrace(PTRACE_GETEVENTMSG, t->host_tid, 0, &former);
	if ((pid_t)former != t->host_tid) {
		/* A non-leader thread exec'ed and took the leader's tid: the
		 * plan is on the task object of its old tid. */
		struct task *old = task_by_host((pid_t)former);
		if (old && old->exec) {
			/* The leader's own plan (it lost the race) is dropped. */
			if (p && p != old->exec)
				exec_plan_free(p);
			p = old->exec;
			old->exec = NULL;
			task_exited(old, 0);
		}
	}
	/* The host killed every other thread of the process. */
	for (x = S->tasks; x; x = x->next)
		if (x->proc == t->proc && x != t && x->state != TS_DEAD)
			task_exited(x, 0);
	t->proc->leader = t;
	t->tid = t->proc->pid;
	t->exec = p;
	if (!p) {
		/* An exec the sentry did not ask for cannot happen: the only
		 * host execs are of the stub. Refuse to run whatever it is. */
		plat_tkill(t->host_tid, SIGKILL);
		plat_cont(t->host_tid, 0);
		return;
	}
	/* Step to the execveat's exit stop: injections run from there. */
	if (ptrace(PTRACE_SYSCALL, t->host_tid, 0, 0) < 0)
		return;
	for (;;) {
		st = plat_wait_task(t, PTRACE_SYSCALL);
		if (st < 0) {
			exec_plan_free(p);
			t->exec = NULL;
			return; /* it died */
		}
		if (WSTOPSIG(st) == (SIGTRAP | 0x80))
			break;
		ptrace(PTRACE_SYSCALL, t->host_tid, 0, 0);
	}
	t->at_exit_stop = true;
	t->fixup_pending = false;
	t->fixup_kind = 0;
	t->state = TS_RUNNING;
	rc = load(t, p);
	t->exec = NULL;
	exec_plan_free(p);
	if (rc < 0) {
		/* Past the point of no return, as Linux: the process dies. */
		audit_guest(AUDIT_GUEST, AUDIT_K_EXEC_FAILED,
			    "\"event\":\"exec-failed\",\"pid\":%d,\"errno\":%d",
			    t->proc->pid, -rc);
		if (t->state != TS_DEAD) {
			plat_tkill(t->host_tid, SIGKILL);
			plat_cont(t->host_tid, 0);
		}
		return;
	}
	t->at_exit_stop = false;
	for (rc = 1; t->pending_sigs && rc <= 64; rc++)
		if (t->pending_sigs & (1ULL << (rc - 1)))
			plat_tkill(t->host_tid, rc);
	t->pending_sigs = 0;
	plat_cont(t->host_tid, 0);
}
