/* tests/escape/maps_fork.c: file mappings that a fork bomb multiplies.
 *
 *   maps_fork DIR NFILES NKIDS
 *
 * Makes NFILES files under DIR, each with a path of ~3.8 KB, maps each
 * once, prints "mapped" and waits for a line on stdin. Then forks NKIDS
 * children: a third exit at once and stay zombies (never waited for), a
 * third wait, and a third map the first file once more and wait; the first
 * few check their own /proc/self/maps. It prints "forked", waits for a line, lets
 * the waiting children go and prints what it found.
 *
 * The sentry once kept every mapping's path in every process, copied at
 * each fork (~15 MB a child here, zombies included); the test reads the
 * sentry's memory at "mapped" and at "forked". Wherever a mapping of
 * these files shows in /proc/self/maps, its name must be its own file's
 * (or none, past the sentry's bound on what it remembers), never another.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char **paths;
static unsigned long *addrs;
static int nfiles;

static void wait_line(void)
{
	char c;

	while (read(0, &c, 1) == 1 && c != '\n')
		;
}

/* Lines of /proc/self/maps that name a file of ours at an address that
 * is not that file's mapping. *named: lines of our mappings with a name.
 * extra/extra_path: one more mapping to expect (0: none); *extra_named
 * says whether its line names it. */
static int check_maps(int *named, unsigned long extra, const char *extra_path,
		      int *extra_named)
{
	FILE *f = fopen("/proc/self/maps", "r");
	static char line[8192];
	int wrong = 0, i;

	*named = 0;
	if (extra_named)
		*extra_named = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		char *name, *nl;
		int pos = 0;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &start, &end,
			   &pos) < 2 ||
		    !pos)
			continue;
		name = line + pos;
		nl = strchr(name, '\n');
		if (nl)
			*nl = 0;
		if (extra && start == extra) {
			if (*name && strcmp(name, extra_path))
				wrong++;
			*extra_named = *name != 0;
			continue;
		}
		for (i = 0; i < nfiles && addrs[i] != start; i++)
			;
		if (i < nfiles) {
			if (*name && strcmp(name, paths[i]))
				wrong++;
			*named += *name != 0;
		} else if (strstr(name, "/fmaps")) {
			wrong++; /* our name on a mapping that is not ours */
		}
	}
	fclose(f);
	return wrong;
}

int main(int argc, char **argv)
{
	char dir[4096], comp[250];
	int nkids, i, hold[2], named, wrong, bad = 0, live = 0;

	if (argc != 4)
		return 2;
	nfiles = atoi(argv[2]);
	nkids = atoi(argv[3]);
	paths = calloc((size_t)nfiles, sizeof(*paths));
	addrs = calloc((size_t)nfiles, sizeof(*addrs));
	if (!paths || !addrs || pipe(hold) < 0)
		return 2;
	memset(comp, 'a', sizeof(comp) - 1);
	comp[sizeof(comp) - 1] = 0;
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	for (i = 0; i < 15; i++) {
		strcat(dir, "/");
		strcat(dir, comp);
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			perror("mkdir");
			return 2;
		}
	}
	for (i = 0; i < nfiles; i++) {
		int fd;
		void *m;

		if (asprintf(&paths[i], "%s/fmaps%05d", dir, i) < 0)
			return 2;
		fd = open(paths[i], O_RDWR | O_CREAT, 0600);
		if (fd < 0 || ftruncate(fd, 4096) < 0) {
			perror("open");
			return 2;
		}
		m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED) {
			perror("mmap");
			return 2;
		}
		addrs[i] = (unsigned long)m;
		close(fd);
	}
	wrong = check_maps(&named, 0, NULL, NULL);
	printf("parent: %s named, wrong names %d\n", named ? "some" : "none",
	       wrong);
	printf("mapped\n");
	fflush(stdout);
	wait_line();

	for (i = 0; i < nkids; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			printf("fork %d: %s\n", i, strerror(errno));
			break;
		}
		if (pid == 0) {
			char c;
			int fd, extra_named = 0;
			void *m = NULL;

			close(hold[1]);
			if (i % 3 == 0)
				_exit(0); /* a zombie */
			if (i % 3 == 2) {
				fd = open(paths[0], O_RDONLY);
				m = fd < 0 ? MAP_FAILED :
					     mmap(NULL, 4096, PROT_READ,
						  MAP_PRIVATE, fd, 0);
				if (m == MAP_FAILED)
					_exit(3);
				close(fd);
			}
			/* A few look (reading ~16 MB of names is slow even
			 * natively). The new mapping of a file whose name the
			 * sentry has kept is named, in a child as in its
			 * parent. */
			if (i < 6) {
				wrong = check_maps(&named, (unsigned long)m,
						   paths[0], &extra_named);
				if (wrong || (m && !extra_named))
					_exit(wrong ? 4 : 5);
			}
			(void)!read(hold[0], &c, 1);
			_exit(0);
		}
		live += i % 3 != 0;
	}
	close(hold[0]);
	printf("forked\n");
	fflush(stdout);
	wait_line();
	close(hold[1]);
	for (i = 0; i < nkids; i++) {
		int st;
		pid_t pid = wait(&st);

		if (pid < 0)
			break;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	printf("children: %d waiting, %d bad\n", live, bad);
	wrong = check_maps(&named, 0, NULL, NULL);
	printf("parent after: wrong names %d\n", wrong);
	return 0;
}
