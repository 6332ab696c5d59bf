/* tests/unit/vfs/test_fdtable.c: fd tables and open-file refcounts
 * (sentry/file.c) and pipes (sentry/pipe.c), on a fake task and process.
 *
 * Every file a test makes comes from new_file(), whose release hook counts
 * the files still alive, so the end of each test checks that every
 * reference was dropped (in the normal build too); the ASan build adds a
 * LeakSanitizer pass for the rest (fd tables, pipe buffers).
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include "sentry/sentry.h"
#include "sentry/vfs.h"
#include "tests/unit/vfs/vfs_test.h"

#define FDT_MAX 65536	/* sentry/file.c: the table never grows past this */
#define PIPE_SIZE 65536 /* sentry/pipe.c */

/* ---- fixture -------------------------------------------------------------- */

static int live_files; /* made by new_file() and not yet released */
static struct process P;
static struct task T;
static int base_fds;

static void track_release(struct file *f)
{
	(void)f;
	live_files--;
}

static const struct file_ops track_ops = {
	.release = track_release,
};

/* A file with one reference (the caller's), counted until released. */
static struct file *new_file(void)
{
	struct file *f = file_new(&track_ops, O_RDONLY);

	cr_assert_not_null(f);
	live_files++;
	return f;
}

static void fsetup(void)
{
	base_fds = vfst_count_fds();
	live_files = 0;
	S = calloc(1, sizeof(*S));
	cr_assert_not_null(S);
	S->audit_fd = -1;
	S->host_proc_fd = -1;
	memset(&P, 0, sizeof(P));
	memset(&T, 0, sizeof(T));
	P.pid = 1;
	P.host_pid = getpid();
	P.rlim[RLIMIT_NOFILE].cur = 64;
	P.rlim[RLIMIT_NOFILE].max = 4096;
	P.fdt = fdtable_new();
	cr_assert_not_null(P.fdt);
	cr_assert_eq(P.fdt->refs, 1);
	P.leader = &T;
	T.proc = &P;
	T.tid = 1;
	T.host_tid = gettid();
	T.state = TS_RUNNING;
	T.wait_hostfd = -1;
}

/* Idempotent: also the .fini of a test that failed half-way. */
static void fteardown(void)
{
	fdtable_put(P.fdt);
	P.fdt = NULL;
	free(S);
	S = NULL;
}

static void fend(void)
{
	int n;

	fteardown();
	cr_assert_eq(live_files, 0, "%d file(s) never released", live_files);
	n = vfst_count_fds();
	cr_assert_eq(n, base_fds, "fd leak: %d -> %d", base_fds, n);
#if defined(__SANITIZE_ADDRESS__)
	cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "memory leak");
#endif
}

/* Criterion 2.4 ignores failures in .fini: the checks run in fend(). */
#define FT_TEST(suite, name)                                                   \
	static void suite##__##name(void);                                     \
	Test(suite, name)                                                      \
	{                                                                      \
		suite##__##name();                                             \
		fend();                                                        \
	}                                                                      \
	static void suite##__##name(void)

TestSuite(fdtable, .init = fsetup, .fini = fteardown);
TestSuite(pipe, .init = fsetup, .fini = fteardown);
#define TF(name) FT_TEST(fdtable, name)
#define TP(name) FT_TEST(pipe, name)

/* ---- fd allocation ----------------------------------------------------------- */

TF(lowest_free_fd)
{
	struct file *a = new_file(), *b = new_file(), *c = new_file(),
		    *d = new_file();

	cr_assert_eq(fd_install(&T, a, false, 0), 0);
	cr_assert_eq(fd_install(&T, b, false, 0), 1);
	cr_assert_eq(fd_install(&T, c, false, 0), 2);
	cr_assert_eq(a->refs, 2, "the table takes its own reference");
	cr_assert_eq(fd_get(&T, 0), a);
	cr_assert_eq(fd_get(&T, 1), b);
	cr_assert_eq(fd_get(&T, 2), c);
	cr_assert_null(fd_get(&T, 3));

	cr_assert_eq(fd_close(&T, 1), 0);
	cr_assert_eq(b->refs, 1);
	cr_assert_null(fd_get(&T, 1));
	cr_assert_eq(fd_install(&T, d, false, 0), 1, "the hole is reused");
	cr_assert_eq(fd_install(&T, b, false, 0), 3);
	cr_assert_eq(fd_close(&T, 0), 0);
	cr_assert_eq(fd_install(&T, b, false, 0), 0);
	cr_assert_eq(b->refs, 3);
	file_put(a);
	file_put(b);
	file_put(c);
	file_put(d);
	cr_assert_eq(live_files, 3, "the table still holds b, c, d");
}

TF(one_file_many_fds)
{
	struct file *f = new_file();
	int i;

	for (i = 0; i < 5; i++)
		cr_assert_eq(fd_install(&T, f, false, 0), i);
	cr_assert_eq(f->refs, 6);
	for (i = 0; i < 5; i++)
		cr_assert_eq(fd_close(&T, i), 0);
	cr_assert_eq(f->refs, 1);
	file_put(f);
	cr_assert_eq(live_files, 0);
}

TF(null_ops_file)
{
	struct file *f = file_new(NULL, O_RDONLY);

	cr_assert_not_null(f);
	cr_assert_eq(f->hostfd, -1);
	cr_assert_eq(fd_install(&T, f, false, 0), 0);
	file_put(f);
	cr_assert_eq(fd_close(&T, 0), 0, "frees a file without ops");
}

TF(minfd_honoured)
{
	struct file *f = new_file();

	cr_assert_eq(fd_install(&T, f, false, 10), 10);
	cr_assert_eq(fd_install(&T, f, false, 10), 11);
	cr_assert_eq(fd_install(&T, f, false, 0), 0);
	cr_assert_eq(fd_install(&T, f, false, 5), 5);
	cr_assert_eq(fd_install(&T, f, false, 10), 12);
	cr_assert_eq(fd_install(&T, f, false, 63), 63);
	cr_assert_eq(fd_install(&T, f, false, 63), -EMFILE);
	cr_assert_eq(fd_install(&T, f, false, 64), -EMFILE, "minfd >= limit");
	cr_assert_eq(fd_install(&T, f, false, 1000), -EMFILE);
	cr_assert_eq(f->refs, 7, "a failed install takes no reference");
	file_put(f);
}

TF(minfd_grows_the_table)
{
	struct file *f = new_file();

	P.rlim[RLIMIT_NOFILE].cur = 1024;
	cr_assert_eq(fd_install(&T, f, false, 700), 700);
	cr_assert_gt(P.fdt->cap, 700);
	cr_assert_eq(fd_get(&T, 700), f);
	cr_assert_null(fd_get(&T, 699));
	cr_assert_null(fd_get(&T, P.fdt->cap));
	cr_assert_eq(fd_install(&T, f, false, 0), 0);
	file_put(f);
}

/* ---- fd_install_at (dup2) -------------------------------------------------- */

TF(install_at_replaces_and_drops_the_old_file)
{
	struct file *a = new_file(), *b = new_file();
	uint64_t gen;

	cr_assert_eq(fd_install_at(&T, a, 5, false), 5);
	cr_assert_eq(a->refs, 2);
	cr_assert_eq(fd_get(&T, 5), a);
	cr_assert_null(fd_get(&T, 0), "no fd below is touched");

	gen = S->generation;
	cr_assert_eq(fd_install_at(&T, b, 5, true), 5);
	cr_assert_gt(S->generation, gen, "a replaced file may wake a task");
	cr_assert_eq(fd_get(&T, 5), b);
	cr_assert_eq(a->refs, 1, "the old file's reference is dropped");
	cr_assert_eq(b->refs, 2);
	cr_assert(*fd_cloexec_ptr(&T, 5));

	/* dup2(fd, fd) keeps the file alive */
	cr_assert_eq(fd_install_at(&T, b, 5, false), 5);
	cr_assert_eq(b->refs, 2);
	cr_assert_eq(fd_get(&T, 5), b);
	cr_assert_not(*fd_cloexec_ptr(&T, 5));

	file_put(a);
	cr_assert_eq(live_files, 1, "a is gone");
	file_put(b);
	cr_assert_eq(fd_close(&T, 5), 0);
	cr_assert_eq(live_files, 0);
}

TF(install_at_last_ref_is_released)
{
	struct file *a = new_file(), *b = new_file();

	cr_assert_eq(fd_install_at(&T, a, 3, false), 3);
	file_put(a); /* only the table holds a now */
	cr_assert_eq(fd_install_at(&T, b, 3, false), 3);
	cr_assert_eq(live_files, 1, "a released by the replace");
	file_put(b);
}

TF(install_at_bounds)
{
	struct file *f = new_file();

	cr_assert_eq(fd_install_at(&T, f, -1, false), -EBADF);
	cr_assert_eq(fd_install_at(&T, f, 64, false), -EBADF, "fd == rlimit");
	cr_assert_eq(fd_install_at(&T, f, INT_MAX, false), -EBADF);
	cr_assert_eq(f->refs, 1);
	cr_assert_eq(fd_install_at(&T, f, 63, false), 63);
	cr_assert_eq(fd_get(&T, 63), f);
	P.rlim[RLIMIT_NOFILE].cur = 512;
	cr_assert_eq(fd_install_at(&T, f, 300, false), 300, "grows the table");
	cr_assert_gt(P.fdt->cap, 300);
	cr_assert_eq(fd_install(&T, f, false, 0), 0);
	cr_assert_eq(f->refs, 4);
	file_put(f);
}

/* ---- close ------------------------------------------------------------------ */

TF(close_bad_fd_is_ebadf)
{
	struct file *f = new_file();
	uint64_t gen;

	cr_assert_eq(fd_close(&T, 0), -EBADF, "empty table");
	cr_assert_eq(fd_install(&T, f, false, 0), 0);
	cr_assert_eq(fd_close(&T, -1), -EBADF);
	cr_assert_eq(fd_close(&T, 1), -EBADF, "inside the table, not open");
	cr_assert_eq(fd_close(&T, 64), -EBADF);
	cr_assert_eq(fd_close(&T, 100000), -EBADF);
	cr_assert_eq(fd_close(&T, INT_MIN), -EBADF);
	cr_assert_null(fd_get(&T, -1));
	cr_assert_null(fd_get(&T, 100000));
	cr_assert_null(fd_cloexec_ptr(&T, -1));
	cr_assert_null(fd_cloexec_ptr(&T, 1));
	cr_assert_null(fd_cloexec_ptr(&T, 100000));
	cr_assert_eq(f->refs, 2);
	gen = S->generation;
	cr_assert_eq(fd_close(&T, 0), 0);
	cr_assert_gt(S->generation, gen, "a close may wake a task");
	cr_assert_eq(fd_close(&T, 0), -EBADF, "double close");
	cr_assert_null(fd_cloexec_ptr(&T, 0));
	cr_assert_eq(f->refs, 1);
	file_put(f);
}

/* ---- close-on-exec ------------------------------------------------------------ */

TF(close_on_exec_closes_only_cloexec_fds)
{
	struct file *a = new_file(), *b = new_file(), *c = new_file(),
		    *d = new_file(), *e = new_file();
	bool *ce;

	cr_assert_eq(fd_install(&T, a, false, 0), 0);
	cr_assert_eq(fd_install(&T, b, true, 0), 1);
	cr_assert_eq(fd_install(&T, c, false, 0), 2);
	cr_assert_eq(fd_install(&T, d, true, 10), 10);
	cr_assert_eq(fd_install_at(&T, e, 40, true), 40);
	cr_assert_not(*fd_cloexec_ptr(&T, 0));
	cr_assert(*fd_cloexec_ptr(&T, 1));

	/* fcntl(F_SETFD) goes through fd_cloexec_ptr */
	ce = fd_cloexec_ptr(&T, 2);
	cr_assert_not_null(ce);
	*ce = true;
	ce = fd_cloexec_ptr(&T, 10);
	cr_assert_not_null(ce);
	*ce = false;

	file_put(a);
	file_put(b);
	file_put(c);
	file_put(d);
	file_put(e);
	fd_close_on_exec(&P, P.fdt);
	cr_assert_eq(fd_get(&T, 0), a);
	cr_assert_null(fd_get(&T, 1));
	cr_assert_null(fd_get(&T, 2));
	cr_assert_eq(fd_get(&T, 10), d);
	cr_assert_null(fd_get(&T, 40));
	cr_assert_eq(live_files, 2, "b, c and e released");
	cr_assert_eq(a->refs, 1);
	cr_assert_eq(d->refs, 1);
	/* nothing left to close */
	fd_close_on_exec(&P, P.fdt);
	cr_assert_eq(live_files, 2);
}

TF(close_on_exec_of_an_empty_table)
{
	fd_close_on_exec(&P, P.fdt);
	cr_assert_eq(P.fdt->cap, 0);
}

/* ---- fdtable_dup / fdtable_put ---------------------------------------------------- */

TF(dup_shares_files)
{
	struct file *a = new_file(), *b = new_file(), *c = new_file();
	struct fdtable *orig = P.fdt, *dup;

	cr_assert_eq(fd_install(&T, a, false, 0), 0);
	cr_assert_eq(fd_install(&T, b, true, 0), 1);
	cr_assert_eq(fd_install(&T, a, false, 7), 7);
	cr_assert_eq(a->refs, 3);

	dup = fdtable_dup(orig);
	cr_assert_not_null(dup);
	cr_assert_neq(dup, orig);
	cr_assert_eq(dup->refs, 1);
	cr_assert_eq(orig->refs, 1);
	cr_assert_eq(a->refs, 5, "one more per fd in the copy");
	cr_assert_eq(b->refs, 3);
	cr_assert_eq(dup->ents[0].f, a);
	cr_assert_eq(dup->ents[1].f, b);
	cr_assert_eq(dup->ents[7].f, a);
	cr_assert(dup->ents[1].cloexec, "cloexec is copied");
	cr_assert_not(dup->ents[0].cloexec);

	/* closing in the copy does not touch the original */
	P.fdt = dup;
	cr_assert_eq(fd_close(&T, 0), 0);
	cr_assert_eq(fd_install(&T, c, false, 0), 0);
	cr_assert_null(fd_get(&T, 2));
	P.fdt = orig;
	cr_assert_eq(fd_get(&T, 0), a);
	cr_assert_eq(fd_get(&T, 7), a);
	cr_assert_eq(a->refs, 4);
	cr_assert_eq(c->refs, 2);

	/* nor the other way round */
	cr_assert_eq(fd_close(&T, 1), 0);
	cr_assert_eq(dup->ents[1].f, b);
	cr_assert_eq(b->refs, 2);

	/* new fds after the copy are private */
	cr_assert_eq(fd_install(&T, c, false, 0), 1);
	cr_assert_null(dup->ents[2].f);

	fdtable_put(dup);
	cr_assert_eq(a->refs, 3);
	cr_assert_eq(b->refs, 1);
	cr_assert_eq(c->refs, 2);
	file_put(a);
	file_put(b);
	file_put(c);
	cr_assert_eq(live_files, 2, "the original still holds a and c");
}

TF(dup_of_an_empty_table)
{
	struct fdtable *dup = fdtable_dup(P.fdt);
	struct fdtable *orig = P.fdt;
	struct file *f = new_file();

	cr_assert_not_null(dup);
	cr_assert_eq(dup->cap, 0);
	P.fdt = dup;
	cr_assert_null(fd_get(&T, 0));
	cr_assert_eq(fd_install(&T, f, false, 0), 0);
	P.fdt = orig;
	cr_assert_null(fd_get(&T, 0));
	fdtable_put(dup);
	cr_assert_eq(f->refs, 1);
	file_put(f);
}

TF(shared_table_lives_until_last_put)
{
	struct file *f = new_file();

	cr_assert_eq(fd_install(&T, f, false, 0), 0);
	file_put(f);
	/* CLONE_FILES: a second task shares the table */
	P.fdt->refs++;
	fdtable_put(P.fdt);
	cr_assert_eq(P.fdt->refs, 1);
	cr_assert_eq(fd_get(&T, 0), f);
	cr_assert_eq(live_files, 1);
	fdtable_put(P.fdt);
	P.fdt = NULL;
	cr_assert_eq(live_files, 0, "the last put releases every file");
}

/* ---- RLIMIT_NOFILE ------------------------------------------------------------ */

TF(emfile_at_the_rlimit)
{
	struct file *f = new_file();
	int i;

	for (i = 0; i < 64; i++)
		cr_assert_eq(fd_install(&T, f, false, 0), i);
	cr_assert_eq(fd_install(&T, f, false, 0), -EMFILE);
	cr_assert_eq(f->refs, 65);
	cr_assert_eq(fd_close(&T, 17), 0);
	cr_assert_eq(fd_install(&T, f, false, 0), 17);
	cr_assert_eq(fd_install(&T, f, false, 0), -EMFILE);
	/* a lower limit: existing fds stay, no new ones */
	P.rlim[RLIMIT_NOFILE].cur = 4;
	cr_assert_eq(fd_close(&T, 2), 0);
	cr_assert_eq(fd_install(&T, f, false, 0), 2);
	cr_assert_eq(fd_close(&T, 30), 0);
	cr_assert_eq(fd_install(&T, f, false, 0), -EMFILE);
	cr_assert_eq(fd_install_at(&T, f, 30, false), -EBADF);
	cr_assert_eq(fd_get(&T, 40), f);
	P.rlim[RLIMIT_NOFILE].cur = 0;
	cr_assert_eq(fd_install(&T, f, false, 0), -EMFILE);
	cr_assert_eq(f->refs, 64);
	file_put(f);
}

TF(rlimit_infinity_is_clamped)
{
	struct file *f = new_file();

	P.rlim[RLIMIT_NOFILE].cur = RLIM_INFINITY;
	cr_assert_eq(fd_install(&T, f, false, FDT_MAX - 1), FDT_MAX - 1);
	cr_assert_eq(fd_install(&T, f, false, FDT_MAX - 1), -EMFILE);
	cr_assert_eq(fd_install_at(&T, f, FDT_MAX, false), -EBADF);
	cr_assert_eq(fd_install_at(&T, f, FDT_MAX - 2, false), FDT_MAX - 2);
	cr_assert_eq(P.fdt->cap, FDT_MAX);
	file_put(f);
}

TF(dup_is_sized_to_the_highest_open_fd)
{
	struct file *f = new_file();
	struct fdtable *dup;

	P.rlim[RLIMIT_NOFILE].cur = FDT_MAX;
	cr_assert_eq(fd_install_at(&T, f, 5000, false), 5000);
	cr_assert_eq(fd_install(&T, f, false, 3), 3);
	cr_assert_eq(P.fdt->cap, 8192);
	cr_assert_eq(fd_close(&T, 5000), 0);
	dup = fdtable_dup(P.fdt);
	cr_assert_not_null(dup);
	cr_assert_eq(dup->cap, 64,
		     "a table closed down again is not copied whole");
	cr_assert_eq(dup->ents[3].f, f);
	fdtable_put(dup);
	file_put(f);
}

/* The slots of all tables have one bound (they are the sentry's heap,
 * which no memory cgroup sees): past FDT_SLOTS_TOTAL no table grows and a
 * fork's copy is refused, until a table goes. */
TF(all_tables_share_one_bound)
{
	struct fdtable *orig = P.fdt, *t[FDT_SLOTS_TOTAL / FDT_MAX];
	struct file *f = new_file();
	size_t i, n = ARRAY_SIZE(t);

	P.rlim[RLIMIT_NOFILE].cur = FDT_MAX;
	cr_assert_eq(fd_install_at(&T, f, FDT_MAX - 1, false), FDT_MAX - 1);
	/* orig holds FDT_MAX slots: n - 1 copies fill the bound */
	for (i = 0; i < n - 1; i++) {
		cr_assert(fdtable_dup_fits(orig));
		t[i] = fdtable_dup(orig);
		cr_assert_not_null(t[i]);
	}
	cr_assert_not(fdtable_dup_fits(orig));
	cr_assert_null(fdtable_dup(orig));
	P.fdt = fdtable_new();
	cr_assert_eq(fd_install(&T, f, false, 0), -ENOMEM, "nor does one grow");
	fdtable_put(P.fdt);
	P.fdt = orig;
	fdtable_put(t[0]);
	t[0] = fdtable_dup(orig);
	cr_assert_not_null(t[0], "room again once a table went");
	for (i = 0; i < n - 1; i++)
		fdtable_put(t[i]);
	file_put(f);
}

/* ---- pipes ------------------------------------------------------------------- */

/* Install both ends into the fake task and drop the creator's references,
 * as pipe2() does. */
static void pipe_fds(int flags, int fds[2], struct file **r, struct file **w)
{
	cr_assert_eq(pipe_create(r, w, flags), 0);
	fds[0] = fd_install(&T, *r, false, 0);
	fds[1] = fd_install(&T, *w, false, 0);
	cr_assert_geq(fds[0], 0);
	cr_assert_geq(fds[1], 0);
	file_put(*r);
	file_put(*w);
	cr_assert_eq((*r)->refs, 1);
	cr_assert_eq((*w)->refs, 1);
}

static long prd(struct file *f, void *buf, size_t n)
{
	return f->ops->read(&T, f, buf, n, NULL);
}

static long pwr(struct file *f, const void *buf, size_t n)
{
	return f->ops->write(&T, f, buf, n, NULL);
}

TP(create_both_ends)
{
	struct file *r, *w, *r2, *w2;
	struct stat s1, s2, s3;

	cr_assert_eq(pipe_create(&r, &w, 0), 0);
	cr_assert_eq(r->refs, 1);
	cr_assert_eq(w->refs, 1);
	cr_assert_eq(r->flags & O_ACCMODE, O_RDONLY);
	cr_assert_eq(w->flags & O_ACCMODE, O_WRONLY);
	cr_assert(r->stream && w->stream);
	cr_assert_null(r->vn);
	cr_assert_eq(r->ops->stat(r, &s1), 0);
	cr_assert_eq(w->ops->stat(w, &s2), 0);
	cr_assert(S_ISFIFO(s1.st_mode));
	cr_assert_eq(s1.st_ino, s2.st_ino, "both ends are one inode");
	cr_assert_eq(pipe_create(&r2, &w2, O_NONBLOCK), 0);
	cr_assert(r2->flags & O_NONBLOCK);
	cr_assert(w2->flags & O_NONBLOCK);
	cr_assert_eq(r2->ops->stat(r2, &s3), 0);
	cr_assert_neq(s1.st_ino, s3.st_ino);
	file_put(r);
	file_put(w);
	file_put(w2);
	file_put(r2);
}

TP(write_then_read)
{
	struct file *r, *w;
	char buf[16] = { 0 };
	int fds[2];

	pipe_fds(0, fds, &r, &w);
	cr_assert_eq(fds[0], 0);
	cr_assert_eq(fds[1], 1);
	cr_assert_eq(r->ops->poll(r, POLLIN), 0, "empty, writer alive");
	cr_assert_eq(w->ops->poll(w, POLLOUT), POLLOUT);
	cr_assert_eq(pwr(w, "hello", 5), 5);
	cr_assert_eq(r->ops->poll(r, POLLIN), POLLIN);
	cr_assert_eq(prd(r, buf, 3), 3);
	cr_assert_str_eq(buf, "hel");
	cr_assert_eq(prd(r, buf, sizeof(buf)), 2);
	cr_assert_eq(memcmp(buf, "lo", 2), 0);
	cr_assert_eq(prd(r, buf, 0), 0);
	cr_assert_eq(pwr(w, buf, 0), 0);
}

TP(empty_read_blocks_while_a_writer_lives)
{
	struct file *r, *w;
	char buf[8];
	int fds[2];

	pipe_fds(0, fds, &r, &w);
	cr_assert_eq(prd(r, buf, sizeof(buf)), SYS_BLOCK);
	cr_assert_eq(prd(r, buf, sizeof(buf)), SYS_BLOCK, "still");
}

TP(empty_read_nonblock_is_eagain)
{
	struct file *r, *w;
	char buf[8];
	int fds[2];

	pipe_fds(O_NONBLOCK, fds, &r, &w);
	cr_assert_eq(prd(r, buf, sizeof(buf)), -EAGAIN);
	cr_assert_eq(pwr(w, "x", 1), 1);
	cr_assert_eq(prd(r, buf, sizeof(buf)), 1);
	cr_assert_eq(prd(r, buf, sizeof(buf)), -EAGAIN);
}

TP(closing_the_write_end_hangs_up)
{
	struct file *r, *w;
	char buf[8];
	int fds[2];
	uint64_t gen;

	pipe_fds(0, fds, &r, &w);
	cr_assert_eq(pwr(w, "ab", 2), 2);
	gen = S->generation;
	cr_assert_eq(fd_close(&T, fds[1]), 0); /* the last ref: released */
	cr_assert_gt(S->generation, gen);
	/* buffered data first, with the hangup */
	cr_assert_eq(r->ops->poll(r, POLLIN), POLLIN | POLLHUP);
	cr_assert_eq(prd(r, buf, sizeof(buf)), 2);
	cr_assert_eq(r->ops->poll(r, POLLIN), POLLHUP);
	cr_assert_eq(r->ops->poll(r, 0), POLLHUP, "reported unasked");
	cr_assert_eq(prd(r, buf, sizeof(buf)), 0, "EOF");
	cr_assert_eq(prd(r, buf, sizeof(buf)), 0);
	cr_assert_eq(fd_close(&T, fds[0]), 0);
}

TP(write_end_in_two_fds_and_a_dup_table)
{
	struct file *r, *w;
	struct fdtable *orig, *dup;
	char buf[8];
	int fds[2], w2;

	pipe_fds(0, fds, &r, &w);
	w2 = fd_install(&T, w, false, 0);
	cr_assert_eq(w2, 2);
	dup = fdtable_dup(P.fdt);
	cr_assert_not_null(dup);
	cr_assert_eq(w->refs, 4);

	cr_assert_eq(fd_close(&T, fds[1]), 0);
	cr_assert_eq(fd_close(&T, w2), 0);
	cr_assert_eq(w->refs, 2, "the copy's two fds");
	cr_assert_eq(r->ops->poll(r, POLLIN), 0, "a writer is still open");
	cr_assert_eq(prd(r, buf, sizeof(buf)), SYS_BLOCK);

	/* the forked child exits */
	orig = P.fdt;
	P.fdt = dup;
	cr_assert_eq(fd_close(&T, fds[0]), 0);
	P.fdt = orig;
	cr_assert_eq(r->refs, 1);
	fdtable_put(dup);
	cr_assert_eq(r->ops->poll(r, POLLIN), POLLHUP);
	cr_assert_eq(prd(r, buf, sizeof(buf)), 0);
}

TP(closing_the_read_end_is_epipe_and_sigpipe)
{
	struct file *r, *w;
	sigset_t set, old, pending;
	struct timespec zero = { 0, 0 };
	int fds[2];

	pipe_fds(0, fds, &r, &w);
	cr_assert_eq(fd_close(&T, fds[0]), 0);
	cr_assert_eq(w->ops->poll(w, POLLOUT), POLLERR);

	/* The signal goes to the task's host thread: this one, with SIGPIPE
	 * blocked so that it stays pending. */
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	cr_assert_eq(pthread_sigmask(SIG_BLOCK, &set, &old), 0);
	cr_assert_eq(pwr(w, "x", 1), -EPIPE);
	cr_assert_eq(sigpending(&pending), 0);
	cr_assert(sigismember(&pending, SIGPIPE), "SIGPIPE sent");
	cr_assert_eq(P.sig_sender[SIGPIPE], P.pid);
	cr_assert_eq(sigtimedwait(&set, NULL, &zero), SIGPIPE);
	cr_assert_eq(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
}

TP(full_pipe_blocks_and_partial_writes)
{
	struct file *r, *w, *rn, *wn;
	static char big[PIPE_SIZE + 4464], out[PIPE_SIZE + 4464];
	int fds[2], nfds[2];
	size_t i;

	for (i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7 + 3);
	pipe_fds(0, fds, &r, &w);
	cr_assert_eq(pwr(w, big, sizeof(big)), PIPE_SIZE, "a partial write");
	cr_assert_eq(w->ops->poll(w, POLLOUT), 0, "full");
	cr_assert_eq(pwr(w, big, 1), SYS_BLOCK);
	cr_assert_eq(prd(r, out, 100), 100);
	/* 100 bytes of room: PIPE_BUF-sized writes are atomic */
	cr_assert_eq(w->ops->poll(w, POLLOUT), 0, "less than PIPE_BUF free");
	cr_assert_eq(pwr(w, big, 200), SYS_BLOCK, "atomic: all or wait");
	cr_assert_eq(pwr(w, big, PIPE_BUF + 1), 100, "not atomic: partial");
	/* 65536 buffered, the last 100 wrapped to the front of the ring */
	cr_assert_eq(prd(r, out + 100, sizeof(out) - 100), PIPE_SIZE);
	cr_assert_eq(memcmp(out, big, PIPE_SIZE), 0);
	cr_assert_eq(memcmp(out + PIPE_SIZE, big, 100), 0);
	cr_assert_eq(prd(r, out, sizeof(out)), SYS_BLOCK, "drained");

	pipe_fds(O_NONBLOCK, nfds, &rn, &wn);
	cr_assert_eq(pwr(wn, big, PIPE_SIZE), PIPE_SIZE);
	cr_assert_eq(pwr(wn, big, 1), -EAGAIN);
}

TP(ring_buffer_wraps)
{
	struct file *r, *w;
	static char a[60000], b[10000], out[60000];
	int fds[2];
	size_t i;

	for (i = 0; i < sizeof(a); i++)
		a[i] = (char)(i % 251);
	for (i = 0; i < sizeof(b); i++)
		b[i] = (char)(i % 241 + 1);
	pipe_fds(0, fds, &r, &w);
	cr_assert_eq(pwr(w, a, sizeof(a)), (long)sizeof(a));
	cr_assert_eq(prd(r, out, sizeof(a)), (long)sizeof(a));
	cr_assert_eq(memcmp(out, a, sizeof(a)), 0);
	/* head is at 60000: this write wraps at 65536 */
	cr_assert_eq(pwr(w, b, sizeof(b)), (long)sizeof(b));
	cr_assert_eq(pwr(w, a, 50000), 50000);
	cr_assert_eq(prd(r, out, sizeof(b)), (long)sizeof(b));
	cr_assert_eq(memcmp(out, b, sizeof(b)), 0);
	cr_assert_eq(prd(r, out, sizeof(out)), 50000);
	cr_assert_eq(memcmp(out, a, 50000), 0);
}

TP(ends_released_in_either_order)
{
	struct file *r, *w;

	cr_assert_eq(pipe_create(&r, &w, 0), 0);
	file_put(r);
	cr_assert_eq(w->ops->poll(w, POLLOUT), POLLERR);
	file_put(w); /* the pipe is freed here (LeakSanitizer checks) */
	cr_assert_eq(pipe_create(&r, &w, 0), 0);
	file_put(w);
	cr_assert_eq(r->ops->poll(r, POLLIN), POLLHUP);
	file_put(r);
}
