/* tests/oci/capchk.c: what a process sees of its capabilities, and what
 * they let it do, printed the same way under any runtime (built static,
 * run in a container's rootfs by test_caps.sh, under moat and runc).
 *
 *   capchk STEP...
 *
 * Each step runs in order and prints one line:
 *   show                   every view of the sets (see show())
 *   capset EFF PRM INH     capset(2), hex masks
 *   bdrop N                prctl(PR_CAPBSET_DROP, N)
 *   araise N / alower N / aclear   prctl(PR_CAP_AMBIENT, ...)
 *   keepcaps V / securebits V / nnp   prctl(PR_SET_...)
 *   setuid U / setresuid R E S / setfsuid U
 *   bind PORT              a TCP socket bound to INADDR_ANY:PORT
 *   touch PATH / chown PATH UID
 *   exec                   execve argv[0] (a path) with the steps after it
 * A step that fails prints its errno's name; the rest still run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static int last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "r");
	int n = -1;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

static void result(const char *step, long rc)
{
	if (rc < 0)
		printf("%s: %s\n", step, strerrorname_np(errno));
	else
		printf("%s: %ld\n", step, rc);
}

static void show(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	unsigned long long bnd = 0, amb = 0;
	char line[256];
	int n = last_cap(), rs, ra;
	uid_t r, e, s;
	FILE *f;

	printf("cap_last_cap %d\n", n);
	if (syscall(SYS_capget, &h, d) < 0) {
		printf("capget: %s\n", strerrorname_np(errno));
	} else {
		printf("capget eff %08x%08x prm %08x%08x inh %08x%08x\n",
		       d[1].effective, d[0].effective, d[1].permitted,
		       d[0].permitted, d[1].inheritable, d[0].inheritable);
	}
	for (int i = 0; i <= n; i++) {
		rs = prctl(PR_CAPBSET_READ, i, 0, 0, 0);
		ra = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, i, 0, 0);
		if (rs < 0 || ra < 0)
			printf("cap %d: bset %d amb %d\n", i, rs, ra);
		bnd |= (unsigned long long)(rs == 1) << i;
		amb |= (unsigned long long)(ra == 1) << i;
	}
	printf("bset-read %016llx ambient-is-set %016llx past-last %d\n", bnd,
	       amb,
	       prctl(PR_CAPBSET_READ, n + 1, 0, 0, 0) < 0 ? errno : 0);
	printf("no_new_privs %d keepcaps %d securebits %d\n",
	       prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0),
	       prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0),
	       prctl(PR_GET_SECUREBITS, 0, 0, 0, 0));
	getresuid(&r, &e, &s);
	printf("uids %u %u %u fsuid %d\n", r, e, s, setfsuid(-1));
	f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Cap", 3) || !strncmp(line, "NoNewPrivs", 10))
			fputs(line, stdout);
	if (f)
		fclose(f);
}

static unsigned long num(const char *s)
{
	return strtoul(s, NULL, 0);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		int left = argc - i - 1;

#define ARGS(k)                                                                \
	if (left < (k)) {                                                      \
		fprintf(stderr, "%s: %d arguments expected\n", s, k);          \
		return 2;                                                      \
	}
		if (!strcmp(s, "show")) {
			show();
		} else if (!strcmp(s, "capset")) {
			struct __user_cap_header_struct h = {
				_LINUX_CAPABILITY_VERSION_3, 0
			};
			struct __user_cap_data_struct d[2];
			unsigned long long v[3];

			ARGS(3);
			for (int k = 0; k < 3; k++)
				v[k] = strtoull(argv[i + 1 + k], NULL, 16);
			d[0].effective = (unsigned)v[0];
			d[1].effective = (unsigned)(v[0] >> 32);
			d[0].permitted = (unsigned)v[1];
			d[1].permitted = (unsigned)(v[1] >> 32);
			d[0].inheritable = (unsigned)v[2];
			d[1].inheritable = (unsigned)(v[2] >> 32);
			result("capset", syscall(SYS_capset, &h, d));
			i += 3;
		} else if (!strcmp(s, "bdrop")) {
			ARGS(1);
			result(s, prctl(PR_CAPBSET_DROP, num(argv[++i]), 0, 0,
					0));
		} else if (!strcmp(s, "araise") || !strcmp(s, "alower")) {
			ARGS(1);
			result(s, prctl(PR_CAP_AMBIENT,
					s[1] == 'r' ? PR_CAP_AMBIENT_RAISE :
						      PR_CAP_AMBIENT_LOWER,
					num(argv[++i]), 0, 0));
		} else if (!strcmp(s, "aclear")) {
			result(s, prctl(PR_CAP_AMBIENT,
					PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0));
		} else if (!strcmp(s, "keepcaps")) {
			ARGS(1);
			result(s, prctl(PR_SET_KEEPCAPS, num(argv[++i]), 0, 0,
					0));
		} else if (!strcmp(s, "securebits")) {
			ARGS(1);
			result(s, prctl(PR_SET_SECUREBITS, num(argv[++i]), 0,
					0, 0));
		} else if (!strcmp(s, "nnp")) {
			result(s, prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
		} else if (!strcmp(s, "setuid")) {
			ARGS(1);
			result(s, setuid((uid_t)num(argv[++i])));
		} else if (!strcmp(s, "setresuid")) {
			ARGS(3);
			result(s, setresuid((uid_t)num(argv[i + 1]),
					    (uid_t)num(argv[i + 2]),
					    (uid_t)num(argv[i + 3])));
			i += 3;
		} else if (!strcmp(s, "setfsuid")) {
			ARGS(1);
			printf("setfsuid: was %d\n",
			       setfsuid((uid_t)num(argv[++i])));
		} else if (!strcmp(s, "bind")) {
			struct sockaddr_in a = { .sin_family = AF_INET };
			int fd = socket(AF_INET, SOCK_STREAM, 0);

			ARGS(1);
			a.sin_port = htons((unsigned short)num(argv[++i]));
			result(s, fd < 0 ? fd :
					   bind(fd, (struct sockaddr *)&a,
						sizeof(a)));
			if (fd >= 0)
				close(fd);
		} else if (!strcmp(s, "touch")) {
			int fd;

			ARGS(1);
			fd = open(argv[++i], O_CREAT | O_WRONLY, 0644);
			result(s, fd < 0 ? fd : close(fd));
		} else if (!strcmp(s, "chown")) {
			ARGS(2);
			result(s, chown(argv[i + 1], (uid_t)num(argv[i + 2]),
					(gid_t)-1));
			i += 2;
		} else if (!strcmp(s, "exec")) {
			argv[i] = argv[0];
			execv(argv[0], argv + i);
			result(s, -1);
			return 1;
		} else {
			fprintf(stderr, "capchk: unknown step `%s`\n", s);
			return 2;
		}
	}
	return 0;
}
