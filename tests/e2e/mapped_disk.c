/* tests/e2e/mapped_disk.c MODE: try to make shared mappings of /tmp files
 * allocate more than --disk. Each round makes an 8 MiB sparse file and
 * writes all of it through a MAP_SHARED mapping, after one of:
 *   mremap  mapping one page, then growing it (mremap runs natively)
 *   punch   fallocate(PUNCH_HOLE) of the mapped file
 *   madv    madvise(MADV_REMOVE) of the mapping, then a 1-byte write
 *   gap     fallocate(0) past the end of a mapped 1-page file
 * until the sentry refuses (mmap ENOMEM, fallocate ENOSPC) or 12 rounds
 * (96 MiB). Prints the rounds done, then "ready", and keeps every file
 * until killed, so that the host can measure the store. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SZ (8 << 20)

static int round_of(const char *mode, int i)
{
	char path[64];
	char *m;
	int fd;

	snprintf(path, sizeof(path), "/tmp/%s%d", mode, i);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -errno;
	if (!strcmp(mode, "gap")) {
		if (ftruncate(fd, 4096) < 0)
			return -errno;
		m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			return -errno;
		if (fallocate(fd, 0, SZ - 4096, 4096) < 0)
			return -errno;
		m = mremap(m, 4096, SZ, MREMAP_MAYMOVE);
	} else {
		if (ftruncate(fd, SZ) < 0)
			return -errno;
		m = mmap(NULL, strcmp(mode, "mremap") ? SZ : 4096,
			 PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			return -errno;
		if (!strcmp(mode, "mremap")) {
			m = mremap(m, 4096, SZ, MREMAP_MAYMOVE);
		} else if (!strcmp(mode, "punch")) {
			if (fallocate(fd,
				      FALLOC_FL_PUNCH_HOLE |
					      FALLOC_FL_KEEP_SIZE,
				      0, SZ) < 0)
				return -errno;
		} else {
			if (madvise(m, SZ, MADV_REMOVE) < 0 ||
			    pwrite(fd, "y", 1, 0) != 1)
				return -errno;
		}
	}
	if (m == MAP_FAILED)
		return -errno;
	memset(m, 'x', SZ);
	msync(m, SZ, MS_SYNC);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "mremap";
	int i, rc = 0;

	for (i = 0; i < 12; i++) {
		rc = round_of(mode, i);
		if (rc < 0)
			break;
	}
	printf("%s: %d rounds, then %s\n", mode, i,
	       rc ? strerrorname_np(-rc) : "none");
	printf("ready\n");
	fflush(stdout);
	pause();
	return 0;
}
