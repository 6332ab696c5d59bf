/* sentry/store.c: the sandbox's store (see store.h). */
#include "sentry/store.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "lib/hostfile.h"
#include "sentry/p9client.h"

/* A directory of a sandbox that is gone, but whose lock file was not made
 * yet, is left alone this long: it may be one starting right now. */
#define STALE_AFTER_S 60
/* Stale directories one start removes at most: a start stays quick even
 * after a crash left many. */
#define SWEEP_MAX 16

static struct p9_client *store_c;
static uint32_t store_root;
static int store_pending = -1; /* the gofer's socket, not yet greeted */
static char store_dir[PATH_MAX];

/* ---- setup, host side --------------------------------------------------- */

static int default_base(char *out, size_t cap, struct moat_error *err)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	int n;

	if (geteuid() == 0)
		n = snprintf(out, cap, "/var/lib/moat/store");
	else if (xdg && xdg[0] == '/')
		n = snprintf(out, cap, "%s/moat/store", xdg);
	else if (home && home[0] == '/')
		n = snprintf(out, cap, "%s/.local/state/moat/store", home);
	else
		return moat_error_input(err, EINVAL,
					"store: neither XDG_STATE_HOME nor "
					"HOME is set; name a directory "
					"with --store DIR");
	if (n < 0 || (size_t)n >= cap)
		return moat_error_set(err, ENAMETOOLONG, "store");
	return 0;
}

/* mkdir -p, each directory it makes 0700 (those that exist are kept). */
static int mkdir_private(const char *path, struct moat_error *err)
{
	char buf[PATH_MAX];
	char *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return moat_error_set(err, ENAMETOOLONG, "store `%s`", path);
	for (p = buf + 1;; p++) {
		if (*p != '/' && *p != 0)
			continue;
		char c = *p;
		*p = 0;
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return moat_error_set(err, errno, "store: mkdir `%s`",
					      buf);
		*p = c;
		if (!c)
			break;
	}
	return 0;
}

/* Is the sandbox directory name in base gone (its lock free)? */
static bool stale(int base, const char *name)
{
	struct stat st;
	int dfd, lfd;
	bool gone = false;

	dfd = openat(base, name,
		     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return false;
	if (fstat(dfd, &st) < 0 || st.st_uid != geteuid()) {
		close(dfd);
		return false;
	}
	lfd = openat(dfd, "lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (lfd >= 0) {
		/* Its sentry holds the lock for its life, from just after
		 * it made the file: a young directory may be one in that
		 * window, whose lock is not taken yet. */
		gone = flock(lfd, LOCK_EX | LOCK_NB) == 0 &&
		       time(NULL) - st.st_mtime > STALE_AFTER_S;
		close(lfd);
	} else {
		gone = time(NULL) - st.st_mtime > STALE_AFTER_S;
	}
	close(dfd);
	return gone;
}

static void sweep(int base)
{
	int fd = dup(base), n = 0;
	DIR *d;
	struct dirent *e;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((e = readdir(d)) && n < SWEEP_MAX) {
		if (strncmp(e->d_name, "s.", 2) || !stale(base, e->d_name))
			continue;
		remove_tree_at(base, e->d_name);
		n++;
	}
	closedir(d);
}

int store_prepare(const char *base, const char **dir_out, uint64_t *free_out,
		  struct moat_error *err)
{
	char def[PATH_MAX], name[16];
	cleanup_close int bfd = -1, dfd = -1;
	struct statvfs vs;
	struct stat st;
	int lfd, i, rc;

	if (!base) {
		if (default_base(def, sizeof(def), err) < 0)
			return -1;
		base = def;
		if (mkdir_private(base, err) < 0)
			return -1;
	}
	bfd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd < 0)
		return moat_error_set(err, errno, "store `%s`", base);
	/* No one else may write in it: another user could otherwise plant
	 * the names the sandbox's data is about to take. */
	if (fstat(bfd, &st) < 0)
		return moat_error_set(err, errno, "store `%s`", base);
	if (st.st_uid != geteuid() || (st.st_mode & 022))
		return moat_error_input(err, EPERM,
					"store `%s`: must be a directory of "
					"uid %u that no one else may write "
					"(it is uid %u, mode %04o)",
					base, (unsigned)geteuid(),
					(unsigned)st.st_uid,
					(unsigned)(st.st_mode & 07777));
	sweep(bfd);
	for (i = 0;; i++) {
		uint32_t r;
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			return moat_error_set(err, errno, "store: getrandom");
		snprintf(name, sizeof(name), "s.%08x", r);
		if (mkdirat(bfd, name, 0700) == 0)
			break;
		if (errno != EEXIST || i >= 16)
			return moat_error_set(err, errno,
					      "store: mkdir in `%s`", base);
	}
	if ((size_t)snprintf(store_dir, sizeof(store_dir), "%s/%s", base,
			     name) >= sizeof(store_dir))
		return moat_error_set(err, ENAMETOOLONG, "store `%s`", base);
	dfd = openat(bfd, name,
		     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return moat_error_set(err, errno, "store `%s`", store_dir);
	/* Held for the sentry's life (never closed): a sweep by another
	 * sandbox's start sees the directory is in use. */
	lfd = openat(dfd, "lock", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (lfd < 0 || flock(lfd, LOCK_EX) < 0)
		return moat_error_set(err, errno, "store: lock in `%s`",
				      store_dir);
	*free_out = fstatvfs(dfd, &vs) == 0 ?
			    (uint64_t)vs.f_bavail * (uint64_t)vs.f_frsize :
			    0;
	/* The janitor removes the directory however the sentry ends,
	 * through the base it has open (checked above), not by its path. */
	rc = janitor_fork_keep(bfd);
	if (rc == 0) {
		remove_tree_at(4, name);
		_exit(0);
	}
	if (rc < 0) {
		remove_tree_at(bfd, name);
		return moat_error_set(err, errno, "store: janitor");
	}
	*dir_out = store_dir;
	return 0;
}

/* ---- the files, through the store's gofer -------------------------------- */

void store_attach(struct p9_client *c, uint32_t rootfid)
{
	store_c = c;
	store_root = rootfid;
}

void store_attach_later(int sock)
{
	store_pending = sock;
}

/* The handshake with a gofer started a while ago (store_attach_later):
 * at the first use, when it has long confined itself. */
static bool connected(void)
{
	struct moat_error err = { 0 };
	struct p9_qid rq;

	if (!store_c && store_pending >= 0) {
		if (p9c_open(&store_c, store_pending, &store_root, &rq, &err) <
		    0) {
			/* Only files that fit inline can be kept, then:
			 * say why once, on the sentry's stderr. */
			fprintf(stderr, "moat: store: %s\n", err.msg);
			close(store_pending);
			store_c = NULL;
		}
		store_pending = -1;
	}
	return store_c != NULL;
}

bool store_ready(void)
{
	return connected();
}

void store_close(void)
{
	if (store_c)
		p9c_close(store_c);
	store_c = NULL;
	if (store_pending >= 0)
		close(store_pending);
	store_pending = -1;
}

static void id_name(uint64_t id, char name[17])
{
	snprintf(name, 17, "%016llx", (unsigned long long)id);
}

int store_create(uint64_t id)
{
	char name[17];
	uint32_t fid;
	int fd = -1, rc;

	if (!connected())
		return -ENOSPC;
	id_name(id, name);
	rc = p9c_lcreate(store_c, store_root, name,
			 O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600, &fid,
			 &fd);
	if (rc < 0) {
		/* Made on the host, but no room for its fd here. */
		if (rc == -ENFILE)
			p9c_unlinkat(store_c, store_root, name, 0);
		return rc;
	}
	p9c_clunk(store_c, fid);
	return fd;
}

int store_open(uint64_t id, int flags)
{
	struct p9_qid qid;
	char name[17];
	uint32_t fid;
	int fd = -1, rc;

	if (!connected())
		return -EIO;
	id_name(id, name);
	rc = p9c_walk1(store_c, store_root, name, &fid, &qid);
	if (rc < 0)
		return rc == -ENOENT ? -EIO : rc; /* it was ours: lost */
	rc = p9c_lopen(store_c, fid, (flags & O_ACCMODE) | O_NOFOLLOW, &fd);
	p9c_clunk(store_c, fid);
	return rc < 0 ? rc : fd;
}

void store_remove(uint64_t id)
{
	char name[17];

	if (!store_c)
		return;
	id_name(id, name);
	p9c_unlinkat(store_c, store_root, name, 0);
}
