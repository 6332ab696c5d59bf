/* tests/unit/loader/helpers.c: fixtures shared by the loader suites. */
#include "tests/unit/loader/loader_test.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"

static int fd_baseline = -1;

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	cr_assert_not_null(d, "opendir /proc/self/fd: %s", strerror(errno));
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n; /* the DIR's own fd is counted both times */
}

void loader_fd_snapshot(void)
{
	fd_baseline = count_fds();
}

void loader_fd_check(void)
{
	int now = count_fds();

	cr_assert_eq(now, fd_baseline, "fd leak: %d open fds, %d at setup", now,
		     fd_baseline);
}

int loader_read_fd(void *ctx, void *buf, size_t len, uint64_t off)
{
	int fd = *(int *)ctx;
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done,
				  (off_t)(off + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (int)done;
}

int loader_read_mem(void *ctx, void *buf, size_t len, uint64_t off)
{
	const struct loader_mem *m = ctx;
	size_t n;

	if (m->fail_errno)
		return -m->fail_errno;
	if (off >= m->size)
		return 0;
	n = m->size - off < len ? m->size - off : len;
	if (m->short_by && n == len)
		n -= (size_t)m->short_by;
	memcpy(buf, m->data + off, n);
	return (int)n;
}

int loader_parse_path(const char *path, struct elf_info *ei)
{
	cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	return elf_parse(loader_read_fd, &fd, (uint64_t)st.st_size, ei);
}

static void put_ph(Elf64_Phdr *p, uint32_t type, uint32_t flags, uint64_t off,
		   uint64_t vaddr, uint64_t filesz, uint64_t memsz,
		   uint64_t align)
{
	*p = (Elf64_Phdr){
		.p_type = type,
		.p_flags = flags,
		.p_offset = off,
		.p_vaddr = vaddr,
		.p_paddr = vaddr,
		.p_filesz = filesz,
		.p_memsz = memsz,
		.p_align = align,
	};
}

void synth_init(struct synth *s)
{
	memset(s, 0, sizeof(*s));
	s->size = SYNTH_FILE_SIZE;
	s->eh = (Elf64_Ehdr *)s->buf;
	s->ph = (Elf64_Phdr *)(s->buf + sizeof(Elf64_Ehdr));

	memcpy(s->eh->e_ident, ELFMAG, SELFMAG);
	s->eh->e_ident[EI_CLASS] = ELFCLASS64;
	s->eh->e_ident[EI_DATA] = ELFDATA2LSB;
	s->eh->e_ident[EI_VERSION] = EV_CURRENT;
	s->eh->e_ident[EI_OSABI] = ELFOSABI_SYSV;
	s->eh->e_type = ET_DYN;
	s->eh->e_machine = EM_X86_64;
	s->eh->e_version = EV_CURRENT;
	s->eh->e_entry = 0x1100;
	s->eh->e_phoff = sizeof(Elf64_Ehdr);
	s->eh->e_ehsize = sizeof(Elf64_Ehdr);
	s->eh->e_phentsize = sizeof(Elf64_Phdr);
	s->eh->e_phnum = SYNTH_PHNUM;

	put_ph(&s->ph[0], PT_PHDR, PF_R, 0x40, 0x40,
	       SYNTH_PHNUM * sizeof(Elf64_Phdr),
	       SYNTH_PHNUM * sizeof(Elf64_Phdr), 8);
	put_ph(&s->ph[1], PT_INTERP, PF_R, SYNTH_INTERP_OFF, SYNTH_INTERP_OFF,
	       sizeof(SYNTH_INTERP), sizeof(SYNTH_INTERP), 1);
	put_ph(&s->ph[2], PT_LOAD, PF_R, 0, 0, 0x800, 0x800, 0x1000);
	put_ph(&s->ph[3], PT_LOAD, PF_R | PF_X, 0x1000, 0x1000, 0x800, 0x800,
	       0x1000);
	put_ph(&s->ph[4], PT_LOAD, PF_R | PF_W, 0x2e00, 0x3e00, 0x300, 0x2400,
	       0x1000);
	put_ph(&s->ph[5], PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 0, 0x10);
	memcpy(s->buf + SYNTH_INTERP_OFF, SYNTH_INTERP, sizeof(SYNTH_INTERP));
	/* Recognisable bytes in the data segment's file range. */
	memset(s->buf + 0x2e00, 0x5a, 0x300);
}

int synth_parse(struct synth *s, struct elf_info *ei)
{
	struct loader_mem m = { .data = s->buf, .size = SYNTH_BUF_SIZE };

	return elf_parse(loader_read_mem, &m, s->size, ei);
}

static char tmp_dir[256];

char *loader_mkdtemp(char *tmpl)
{
	if (!mkdtemp(tmpl))
		return NULL;
	snprintf(tmp_dir, sizeof(tmp_dir), "%s", tmpl);
	return tmpl;
}

void loader_tmp_cleanup(void)
{
	DIR *d;
	struct dirent *e;

	if (!tmp_dir[0])
		return;
	d = opendir(tmp_dir);
	if (d) {
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(tmp_dir);
	tmp_dir[0] = '\0';
}

char *loader_run(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	char *out = NULL;
	size_t len = 0, cap = 0, n;
	char chunk[4096];

	if (!f)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			out = realloc(out, cap);
			cr_assert_not_null(out);
		}
		memcpy(out + len, chunk, n);
		len += n;
	}
	if (pclose(f) != 0 || !out) {
		free(out);
		return NULL;
	}
	out[len] = '\0';
	return out;
}

/* Criterion's runner leaks a few bytes of its own at exit: not ours, and
 * it would fail every sanitizer run. Only consulted under LeakSanitizer. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libcriterion.so\n";
}
