/* sentry/hostids.c: a sandbox's host uids and gids (see hostids.h). */
#include "sentry/hostids.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define RUN_DIR "/run/moat"
/* /etc/subuid is a short file of root's; more is not one */
#define RANGE_FILE_MAX (1 << 20)
/* /etc/passwd and /etc/group: a million accounts fit */
#define ACCOUNT_FILE_MAX (256 << 20)

/* ---- /etc/subuid ---------------------------------------------------------- */

struct entry {
	const char *name;
	size_t namelen;
	uint64_t start, count;
	bool ok; /* NAME:START:COUNT with both numbers in range */
};

static bool parse_num(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 10)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > UINT32_MAX)
		return false;
	*out = v;
	return true;
}

/* The next non-blank, non-comment line at *pos as an entry; false at the
 * end of the text. */
static bool next_entry(const char **pos, struct entry *e)
{
	const char *l = *pos, *end, *c1, *c2;

	for (;;) {
		if (!l || !*l)
			return false;
		end = strchr(l, '\n');
		if (!end)
			end = l + strlen(l);
		*pos = *end ? end + 1 : end;
		if (end > l && *l != '#')
			break;
		l = *pos;
	}
	memset(e, 0, sizeof(*e));
	e->name = l;
	c1 = memchr(l, ':', (size_t)(end - l));
	c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
	e->namelen = c1 ? (size_t)(c1 - l) : (size_t)(end - l);
	e->ok = c2 && parse_num(c1 + 1, (size_t)(c2 - c1 - 1), &e->start) &&
		parse_num(c2 + 1, (size_t)(end - c2 - 1), &e->count);
	return true;
}

static bool is_moat(const struct entry *e)
{
	return e->namelen == 4 && memcmp(e->name, "moat", 4) == 0;
}

int hostids_range(const char *text, const char *file, uint32_t def_start,
		  uint32_t def_count, uint32_t *start, uint32_t *count,
		  struct moat_error *err)
{
	const char *pos = text;
	uint64_t s = def_start, c = def_count;
	struct entry e;
	bool found = false;

	while (!found && next_entry(&pos, &e)) {
		if (!is_moat(&e))
			continue;
		if (!e.ok)
			return moat_error_input(err, EINVAL,
						"%s: the moat entry is not "
						"moat:START:COUNT",
						file);
		s = e.start;
		c = e.count;
		found = true;
	}
	/* Root and nobody are never a sandbox's, nor is -1 (no id). */
	if (c < 2 || s == 0 || s + c > UINT32_MAX ||
	    (s <= 65534 && 65534 < s + c))
		return moat_error_input(err, EINVAL,
					"%s: moat's range %llu-%llu must hold "
					"at least 2 ids, and neither 0, 65534 "
					"nor 4294967295",
					file, (unsigned long long)s,
					(unsigned long long)(s + c - 1));
	/* Another entry's ids are a user's to map with newuidmap: a guest
	 * given one would be that user's to signal and trace. */
	pos = text;
	while (next_entry(&pos, &e))
		if (!is_moat(&e) && e.ok && e.start < s + c &&
		    s < e.start + e.count)
			return moat_error_input(
				err, EEXIST,
				"%s: moat's range %llu-%llu overlaps the "
				"entry of `%.*s` (%llu-%llu); give moat a "
				"range of its own (a line moat:START:COUNT)",
				file, (unsigned long long)s,
				(unsigned long long)(s + c - 1), (int)e.namelen,
				e.name, (unsigned long long)e.start,
				(unsigned long long)(e.start + e.count - 1));
	*start = (uint32_t)s;
	*count = (uint32_t)c;
	return 0;
}

static int load_range(const char *file, uint32_t *start, uint32_t *count,
		      struct moat_error *err)
{
	static char text[RANGE_FILE_MAX + 1];
	cleanup_close int fd = open(file, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0;

	if (fd < 0 && errno != ENOENT)
		return moat_error_set(err, errno, "host ids: open `%s`", file);
	if (fd >= 0) {
		n = read_all(fd, text, RANGE_FILE_MAX + 1);
		if (n < 0)
			return moat_error_set(err, (int)-n,
					      "host ids: read `%s`", file);
		if (n > RANGE_FILE_MAX)
			return moat_error_input(err, EFBIG,
						"host ids: `%s` is over %d "
						"bytes",
						file, RANGE_FILE_MAX);
	}
	text[n] = 0;
	return hostids_range(text, file, HOSTIDS_DEFAULT_START,
			     HOSTIDS_DEFAULT_COUNT, start, count, err);
}

int hostids_no_account(const char *text, size_t len, const char *file,
		       int field, const char *what, uint32_t start,
		       uint32_t count, const char *range_file,
		       struct moat_error *err)
{
	const char *l = text, *end = text + len;

	while (l < end) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		const char *e = nl ? nl : end, *f = l, *c;
		uint64_t id;
		int i;

		/* NAME:PASSWORD:ID[:...]; field counts from 0 */
		for (i = 0; i < field && f && f < e; i++) {
			c = memchr(f, ':', (size_t)(e - f));
			f = c ? c + 1 : NULL;
		}
		c = f ? memchr(f, ':', (size_t)(e - f)) : NULL;
		if (f && *l != '#' &&
		    parse_num(f, (size_t)((c ? c : e) - f), &id) &&
		    id >= start && id - start < count) {
			const char *colon = memchr(l, ':', (size_t)(e - l));

			return moat_error_input(
				err, EEXIST,
				"host ids: `%.*s` of %s has %s %llu, in "
				"moat's range %u-%u (%s); give moat a range "
				"that no user or group has an id in (a line "
				"moat:START:COUNT)",
				(int)((colon ? colon : e) - l), l, file, what,
				(unsigned long long)id, start,
				start + count - 1, range_file);
		}
		l = nl ? nl + 1 : end;
	}
	return 0;
}

/* hostids_no_account on a file of the host's (absent: nothing in it). */
static int no_account_in(const char *file, int field, const char *what,
			 uint32_t start, uint32_t count, const char *range_file,
			 struct moat_error *err)
{
	cleanup_close int fd = open(file, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *text;
	int rc;

	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 || fstat(fd, &st) < 0)
		return moat_error_set(err, errno, "host ids: open `%s`", file);
	if (st.st_size == 0)
		return 0;
	if (!S_ISREG(st.st_mode) || st.st_size > ACCOUNT_FILE_MAX)
		return moat_error_input(err, EFBIG,
					"host ids: `%s` is not a file of at "
					"most %d MiB",
					file, ACCOUNT_FILE_MAX >> 20);
	text = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (text == MAP_FAILED)
		return moat_error_set(err, errno, "host ids: read `%s`", file);
	rc = hostids_no_account(text, (size_t)st.st_size, file, field, what,
				start, count, range_file, err);
	munmap(text, (size_t)st.st_size);
	return rc;
}

/* Root in a user namespace of its own (a container) may map only the ids
 * its namespace has: the range must lie inside one extent of
 * /proc/self/{uid,gid}_map, or the sandbox's map could not be written. */
static int range_mapped(const char *map, uint32_t start, uint32_t count,
			struct moat_error *err)
{
	char buf[4096];
	cleanup_close int fd = open(map, O_RDONLY | O_CLOEXEC);
	const char *l = buf;
	ssize_t n;

	if (fd < 0)
		return moat_error_set(err, errno, "host ids: open `%s`", map);
	n = read_all(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return moat_error_set(err, (int)-n, "host ids: read `%s`", map);
	buf[n] = 0;
	while (l && *l) {
		unsigned long long in, out, len;

		if (sscanf(l, "%llu %llu %llu", &in, &out, &len) == 3 &&
		    in <= start && (uint64_t)start + count <= in + len)
			return 0;
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	return moat_error_input(err, ERANGE,
				"host ids: moat's range %u-%u is not mapped in "
				"this user namespace (%s); name one it maps "
				"in a moat:START:COUNT line of /etc/subuid and "
				"/etc/subgid",
				start, start + count - 1, map);
}

/* ---- the slots -------------------------------------------------------- */

/* A lock directory of RUN_DIR (uids, gids), opened: root's, entered by
 * no one else, never a link, so that nobody but root can take or plant a
 * lock. */
static int open_lock_dir(const char *name, struct moat_error *err)
{
	cleanup_close int run = -1;
	struct stat st;
	int dir;

	if (mkdir(RUN_DIR, 0711) < 0 && errno != EEXIST)
		return moat_error_set(err, errno, "host ids: mkdir `%s`",
				      RUN_DIR);
	run = open(RUN_DIR, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (run < 0 || fstat(run, &st) < 0)
		return moat_error_set(err, errno, "host ids: open `%s`",
				      RUN_DIR);
	if (st.st_uid != 0 || (st.st_mode & 022))
		return moat_error_input(err, EPERM,
					"host ids: `%s` is not root's alone "
					"(owner %u, mode %04o)",
					RUN_DIR, (unsigned)st.st_uid,
					(unsigned)(st.st_mode & 07777));
	if (mkdirat(run, name, 0700) < 0 && errno != EEXIST)
		return moat_error_set(err, errno, "host ids: mkdir `%s/%s`",
				      RUN_DIR, name);
	dir = openat(run, name,
		     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0 || fstat(dir, &st) < 0) {
		int e = errno;

		if (dir >= 0)
			close(dir);
		return moat_error_set(err, e, "host ids: open `%s/%s`", RUN_DIR,
				      name);
	}
	if (st.st_uid != 0 || (st.st_mode & 077)) {
		close(dir);
		return moat_error_input(err, EPERM,
					"host ids: `%s/%s` is open to others "
					"(owner %u, mode %04o)",
					RUN_DIR, name, (unsigned)st.st_uid,
					(unsigned)(st.st_mode & 07777));
	}
	return dir;
}

/* Lock id's file in dir (dirname for messages), without waiting: the fd
 * (the lock's while open), -EWOULDBLOCK when someone holds it, or -1
 * with err set. */
static int lock_id(int dir, const char *dirname, uint32_t id,
		   struct moat_error *err)
{
	char name[16];
	int fd;

	snprintf(name, sizeof(name), "%u", id);
	fd = openat(dir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return moat_error_set(err, errno, "host ids: lock `%s/%s/%s`",
				      RUN_DIR, dirname, name);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		close(fd);
		if (e == EWOULDBLOCK)
			return -EWOULDBLOCK;
		return moat_error_set(err, e, "host ids: lock `%s/%s/%s`",
				      RUN_DIR, dirname, name);
	}
	return fd;
}

static void unlock_all(struct host_ids *ids)
{
	for (size_t i = 0; i < ARRAY_SIZE(ids->lock_fd); i++)
		if (ids->lock_fd[i] >= 0) {
			close(ids->lock_fd[i]);
			ids->lock_fd[i] = -1;
		}
}

/* Lock each of the slot's four ids (ids set): 1 when all are held, 0 when
 * one is someone else's (none held then), or -1 with err set. */
static int lock_slot(struct host_ids *ids, int udir, int gdir,
		     struct moat_error *err)
{
	const struct {
		int dir;
		const char *name;
		uint32_t id;
	} want[4] = {
		{ udir, "uids", ids->guest_uid },
		{ udir, "uids", ids->helper_uid },
		{ gdir, "gids", ids->guest_gid },
		{ gdir, "gids", ids->helper_gid },
	};

	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		int fd = lock_id(want[i].dir, want[i].name, want[i].id, err);

		if (fd < 0) {
			unlock_all(ids);
			return fd == -EWOULDBLOCK ? 0 : -1;
		}
		ids->lock_fd[i] = fd;
	}
	return 1;
}

bool hostids_status_uses(const char *status, uid_t u1, uid_t u2, gid_t g1,
			 gid_t g2)
{
	static const char *const keys[] = { "\nUid:", "\nGid:" };
	const char *state = strstr(status, "\nState:\t");

	/* A zombie is dead, whatever ids it keeps until it is reaped (which
	 * an init that reaps slowly may take seconds to do). */
	if (state && (state[8] == 'Z' || state[8] == 'X'))
		return false;
	for (int k = 0; k < 2; k++) {
		const char *l = strstr(status, keys[k]);
		unsigned long v[4];
		char *end;

		if (!l)
			return true; /* not a status file: cannot say it is free */
		l += strlen(keys[k]);
		for (int i = 0; i < 4; i++) {
			errno = 0;
			v[i] = strtoul(l, &end, 10);
			if (end == l || errno)
				return true;
			l = end;
			if (k == 0 ? v[i] == u1 || v[i] == u2 :
				     v[i] == g1 || v[i] == g2)
				return true;
		}
	}
	return false;
}

/* Does any process run as one of the slot's ids: one of a sandbox whose
 * sentry died (the kernel drops the lock in the sentry's exit, a moment
 * before PTRACE_O_EXITKILL and the reaper's parent-death signal end its
 * guests), one of a moat that does not share this /run/moat, a host user
 * given ids of moat's range, anything else? Such a slot is skipped, never
 * cleared: its processes are not moat's to kill, as far as anyone can
 * prove. (A sandbox's own stale processes cannot outlive that moment:
 * its guests are in a pid namespace whose init, the reaper, dies with the
 * sentry, and after which no process can be made there; the helpers have
 * the parent-death signal and cannot fork.)
 *
 * /proc is this pid namespace's (checked), so the scan sees every process
 * a kill(-1) of ours would reach, and thread-group leaders as kill does.
 * 1 with *who set, 0, or -errno. Costs one read of a short file per host
 * process, once per start: the first slot whose locks are free is
 * normally free of processes too. */
static int slot_busy(const struct host_ids *ids, pid_t *who)
{
	char self[32], link[32];
	struct dirent *de;
	int rc = 0;
	DIR *d;
	ssize_t n;

	snprintf(self, sizeof(self), "%d", (int)getpid());
	n = readlink("/proc/self", link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = 0;
	if (strcmp(link, self) != 0)
		return -ENXIO; /* another pid namespace's /proc */
	d = opendir("/proc");
	if (!d)
		return -errno;
	while (rc == 0 && (errno = 0, de = readdir(d))) {
		char path[64], buf[4096];
		cleanup_close int fd = -1;
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "%ld/status", pid);
		fd = openat(dirfd(d), path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			if (errno != ENOENT && errno != ESRCH)
				rc = -errno;
			continue; /* gone meanwhile */
		}
		n = read_all(fd, buf, sizeof(buf) - 1);
		if (n < 0) {
			if (n != -ESRCH)
				rc = (int)n;
			continue;
		}
		buf[n] = 0;
		if (n > 0 &&
		    hostids_status_uses(buf, ids->guest_uid, ids->helper_uid,
					ids->guest_gid, ids->helper_gid)) {
			*who = (pid_t)pid;
			rc = 1;
		}
	}
	if (rc == 0 && errno)
		rc = -errno;
	closedir(d);
	return rc;
}

int hostids_acquire(struct host_ids *ids, struct moat_error *err)
{
	cleanup_close int udir = -1;
	cleanup_close int gdir = -1;
	uint32_t us, uc, gs, gc, slots, i, busy = 0;
	pid_t who = 0;
	int rc;

	for (i = 0; i < ARRAY_SIZE(ids->lock_fd); i++)
		ids->lock_fd[i] = -1;
	if (geteuid() != 0) {
		/* An unprivileged user namespace maps one id: the caller's. */
		ids->guest_uid = ids->helper_uid = geteuid();
		ids->guest_gid = ids->helper_gid = getegid();
		return 0;
	}
	if (load_range("/etc/subuid", &us, &uc, err) < 0 ||
	    load_range("/etc/subgid", &gs, &gc, err) < 0 ||
	    range_mapped("/proc/self/uid_map", us, uc, err) < 0 ||
	    range_mapped("/proc/self/gid_map", gs, gc, err) < 0)
		return -1;
	/* A host user or group of the range would share ids with a sandbox
	 * (signal its guests, be killed or refused as one). The files only:
	 * a directory service behind NSS may be slow or away, and ids it
	 * hands out are the admin's to keep out of the range (slot_busy
	 * still skips a slot whose ids a process has). */
	if (no_account_in("/etc/passwd", 2, "uid", us, uc, "/etc/subuid", err) <
		    0 ||
	    no_account_in("/etc/passwd", 3, "gid", gs, gc, "/etc/subgid", err) <
		    0 ||
	    no_account_in("/etc/group", 2, "gid", gs, gc, "/etc/subgid", err) <
		    0)
		return -1;
	udir = open_lock_dir("uids", err);
	if (udir < 0)
		return -1;
	gdir = open_lock_dir("gids", err);
	if (gdir < 0)
		return -1;
	slots = (uc < gc ? uc : gc) / 2;
	/* Lowest first: a start costs four opens and flocks per sandbox
	 * running below it (microseconds each), and one scan of /proc. */
	for (i = 0; i < slots; i++) {
		ids->guest_uid = us + 2 * i;
		ids->helper_uid = us + 2 * i + 1;
		ids->guest_gid = gs + 2 * i;
		ids->helper_gid = gs + 2 * i + 1;
		rc = lock_slot(ids, udir, gdir, err);
		if (rc < 0)
			return -1;
		if (rc == 0)
			continue;
		rc = slot_busy(ids, &who);
		if (rc < 0) {
			unlock_all(ids);
			return moat_error_set(
				err, -rc,
				"host ids: look in /proc for what "
				"runs as uid %u or %u",
				(unsigned)ids->guest_uid,
				(unsigned)ids->helper_uid);
		}
		if (rc > 0) {
			unlock_all(ids); /* someone else's: leave it be */
			busy++;
			continue;
		}
		return 0;
	}
	if (busy)
		return moat_error_set(err, EAGAIN,
				      "host ids: all %u sandbox slots of uids "
				      "%u-%u are in use (%u of them by "
				      "processes moat does not hold, such as "
				      "pid %d)",
				      slots, us, us + 2 * slots - 1, busy,
				      (int)who);
	return moat_error_set(err, EAGAIN,
			      "host ids: all %u sandbox slots of uids %u-%u "
			      "are in use",
			      slots, us, us + 2 * slots - 1);
}
