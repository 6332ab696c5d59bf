/* stack_build(): round-trip parsing of the image, limits, and a byte-for-byte
 * comparison with the stack the host kernel builds for a real process. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"
#include "tests/unit/loader/loader_test.h"

TestSuite(stack, .init = loader_fd_snapshot, .fini = loader_fd_check);

#define TOP 0x7ffffffde000ULL
#define MAXV 64

static const uint8_t RND[16] = { 0xde, 0xad, 0xbe, 0xef, 1, 2,	3,  4,
				 5,    6,    7,	   8,	 9, 10, 11, 12 };

/* A stack image read back as the new program (or ld.so) would read it. */
struct parsed {
	uint64_t argc;
	const char *argv[MAXV];
	size_t envc;
	const char *envp[MAXV];
	size_t naux;
	uint64_t aux[2 * MAXV];
	uint64_t argv_addr, envp_addr, auxv_addr, auxv_end;
};

struct view {
	const uint8_t *base; /* guest address lo maps to base[0] */
	uint64_t lo, hi;
};

static const void *at(const struct view *v, uint64_t addr, size_t len)
{
	cr_assert(addr >= v->lo && addr <= v->hi && len <= v->hi - addr,
		  "address %#" PRIx64 "+%zu outside the image [%#" PRIx64
		  ", %#" PRIx64 ")",
		  addr, len, v->lo, v->hi);
	return v->base + (addr - v->lo);
}

static uint64_t u64_at(const struct view *v, uint64_t addr)
{
	uint64_t x;

	memcpy(&x, at(v, addr, 8), 8);
	return x;
}

static const char *str_at(const struct view *v, uint64_t addr)
{
	const char *s = at(v, addr, 1);

	cr_assert_not_null(memchr(s, 0, v->hi - addr),
			   "unterminated string at %#" PRIx64, addr);
	return s;
}

static void parse_stack(const struct view *v, uint64_t sp, struct parsed *p)
{
	uint64_t a = sp, x;

	memset(p, 0, sizeof(*p));
	p->argc = u64_at(v, a);
	a += 8;
	cr_assert_leq(p->argc, MAXV);
	p->argv_addr = a;
	for (size_t i = 0; i < p->argc; i++, a += 8)
		p->argv[i] = str_at(v, u64_at(v, a));
	cr_assert_eq(u64_at(v, a), 0, "argv not NULL-terminated");
	a += 8;
	p->envp_addr = a;
	while ((x = u64_at(v, a)) != 0) {
		cr_assert_lt(p->envc, MAXV);
		p->envp[p->envc++] = str_at(v, x);
		a += 8;
	}
	a += 8;
	p->auxv_addr = a;
	for (;;) {
		uint64_t type = u64_at(v, a), val = u64_at(v, a + 8);

		a += 16;
		if (type == AT_NULL) {
			cr_assert_eq(val, 0);
			break;
		}
		cr_assert_lt(p->naux, MAXV);
		p->aux[2 * p->naux] = type;
		p->aux[2 * p->naux + 1] = val;
		p->naux++;
	}
	p->auxv_end = a;
}

static int aux_get(const struct parsed *p, uint64_t type, uint64_t *val)
{
	int found = 0;

	for (size_t i = 0; i < p->naux; i++) {
		if (p->aux[2 * i] == type) {
			cr_assert_not(found, "duplicate auxv type %" PRIu64,
				      type);
			*val = p->aux[2 * i + 1];
			found = 1;
		}
	}
	return found;
}

struct built {
	uint8_t buf[16384];
	struct stack_image img;
	struct view v;
};

static int build(struct built *b, const char *const *argv, size_t argc,
		 const char *const *envp, size_t envc, const char *execfn,
		 const uint64_t *aux, size_t naux)
{
	int r;

	memset(b->buf, 0xa5, sizeof(b->buf));
	memset(&b->img, 0, sizeof(b->img));
	b->img.buf = b->buf;
	b->img.cap = sizeof(b->buf);
	r = stack_build(TOP, argv, argc, envp, envc, execfn, aux, naux, RND,
			&b->img);
	if (r == 0) {
		b->v.base = b->buf + b->img.cap - b->img.len;
		b->v.lo = b->img.sp;
		b->v.hi = TOP;
	}
	return r;
}

static const char *const ARGV[] = { "prog", "-x", "hello world", "" };
static const char *const ENVP[] = { "A=1", "PATH=/bin:/usr/bin", "EMPTY=" };
static const uint64_t AUX[] = {
	AT_SYSINFO_EHDR, 0x7ffff7fc1000,
	AT_HWCAP,	 0x178bfbff,
	AT_PAGESZ,	 4096,
	AT_CLKTCK,	 100,
	AT_PHDR,	 0x555555554040,
	AT_PHENT,	 56,
	AT_PHNUM,	 13,
	AT_BASE,	 0x7ffff7fc3000,
	AT_FLAGS,	 0,
	AT_ENTRY,	 0x5555555563d0,
	AT_UID,		 1000,
	AT_EUID,	 1000,
	AT_GID,		 1000,
	AT_EGID,	 1000,
	AT_SECURE,	 0,
	AT_HWCAP2,	 2,
	AT_MINSIGSTKSZ,	 3632,
};
#define NAUX (ARRAY_SIZE(AUX) / 2)

Test(stack, round_trip)
{
	static struct built b;
	struct parsed p;
	uint64_t v;
	const struct stack_image *img = &b.img;

	cr_assert_eq(build(&b, ARGV, 4, ENVP, 3, "/usr/bin/prog", AUX, NAUX),
		     0);
	cr_assert_eq(img->sp, TOP - img->len);
	cr_assert_eq(img->sp % 16, 0, "sp %#" PRIx64 " not 16-aligned",
		     img->sp);
	parse_stack(&b.v, img->sp, &p);

	cr_assert_eq(p.argc, 4);
	for (size_t i = 0; i < 4; i++)
		cr_assert_str_eq(p.argv[i], ARGV[i]);
	cr_assert_eq(p.envc, 3);
	for (size_t i = 0; i < 3; i++)
		cr_assert_str_eq(p.envp[i], ENVP[i]);
	cr_assert_eq(img->argv_addr, p.argv_addr);
	cr_assert_eq(img->envp_addr, p.envp_addr);
	cr_assert_eq(img->auxv_addr, p.auxv_addr);
	cr_assert_eq(img->auxv_len, p.auxv_end - p.auxv_addr);

	/* Caller's entries, in order, then ours. */
	cr_assert_eq(p.naux, NAUX + 3);
	cr_assert_arr_eq(p.aux, AUX, sizeof(AUX));
	cr_assert(aux_get(&p, AT_RANDOM, &v));
	cr_assert_eq(v, img->random_addr);
	cr_assert_arr_eq(at(&b.v, v, 16), RND, 16);
	cr_assert(aux_get(&p, AT_EXECFN, &v));
	cr_assert_eq(v, img->execfn_addr);
	cr_assert_str_eq(str_at(&b.v, v), "/usr/bin/prog");
	cr_assert(aux_get(&p, AT_PLATFORM, &v));
	cr_assert_eq(v, img->platform_addr);
	cr_assert_str_eq(str_at(&b.v, v), "x86_64");

	/* Linux's layout: an 8-byte zero word at the top, then execfn,
	 * envp and argv strings, contiguous, argv[0] lowest. */
	cr_assert_eq(u64_at(&b.v, TOP - 8), 0);
	cr_assert_eq(img->execfn_addr + sizeof("/usr/bin/prog"), TOP - 8);
	cr_assert_eq(img->env_end, img->execfn_addr);
	cr_assert_eq(img->arg_end, img->env_start);
	cr_assert_eq(img->arg_start, u64_at(&b.v, p.argv_addr));
	cr_assert_arr_eq(at(&b.v, img->arg_start,
			    img->arg_end - img->arg_start),
			 "prog\0-x\0hello world\0", 21);
	cr_assert_eq(img->arg_end - img->arg_start, 21);
	cr_assert_arr_eq(at(&b.v, img->env_start,
			    img->env_end - img->env_start),
			 "A=1\0PATH=/bin:/usr/bin\0EMPTY=", 30);
	/* Platform string right below the 16-aligned end of argv[0]'s
	 * area, random bytes right below it. */
	cr_assert_eq(img->platform_addr, (img->arg_start & ~15ULL) - 7);
	cr_assert_eq(img->random_addr, img->platform_addr - 16);
	/* Between auxv's end and the random bytes: zero padding < 16. */
	cr_assert_lt(img->random_addr - p.auxv_end, 16);
	for (uint64_t a = p.auxv_end; a < img->random_addr; a++)
		cr_assert_eq(*(const uint8_t *)at(&b.v, a, 1), 0);
	/* Nothing written outside the image. */
	for (size_t i = 0; i < img->cap - img->len; i++)
		cr_assert_eq(b.buf[i], 0xa5, "byte %zu below the image", i);
}

Test(stack, alignment_for_every_parity)
{
	static struct built b;
	static const char *const strs[] = { "a",       "bb",	  "ccc",
					    "dddd",    "eeeee",	  "ffffff",
					    "ggggggg", "hhhhhhhh" };
	struct parsed p;
	size_t argc, envc, naux;

	/* sp must be 16-aligned whatever the counts' parities and the
	 * strings' lengths. */
	for (argc = 1; argc <= 8; argc++)
		for (envc = 0; envc <= 8; envc++)
			for (naux = 0; naux <= 3; naux++) {
				cr_assert_eq(build(&b, strs, argc,
						   strs + 8 - envc, envc,
						   strs[argc - 1], AUX, naux),
					     0);
				cr_assert_eq(b.img.sp % 16, 0);
				parse_stack(&b.v, b.img.sp, &p);
				cr_assert_eq(p.argc, argc);
				cr_assert_eq(p.envc, envc);
				cr_assert_eq(p.naux, naux + 3);
				cr_assert_lt(b.img.random_addr - p.auxv_end,
					     16);
			}
}

Test(stack, e2big_when_cap_too_small)
{
	static struct built b;
	size_t need;
	int r;

	cr_assert_eq(build(&b, ARGV, 4, ENVP, 3, "/usr/bin/prog", AUX, NAUX),
		     0);
	need = b.img.len;
	b.img.cap = need - 1;
	r = stack_build(TOP, ARGV, 4, ENVP, 3, "/usr/bin/prog", AUX, NAUX, RND,
			&b.img);
	cr_assert_eq(r, -E2BIG);
	b.img.cap = need;
	r = stack_build(TOP, ARGV, 4, ENVP, 3, "/usr/bin/prog", AUX, NAUX, RND,
			&b.img);
	cr_assert_eq(r, 0);
	cr_assert_eq(b.img.len, need);
	b.img.cap = 0;
	b.img.buf = NULL;
	r = stack_build(TOP, ARGV, 4, ENVP, 3, "/usr/bin/prog", AUX, NAUX, RND,
			&b.img);
	cr_assert_eq(r, -E2BIG);
}

Test(stack, e2big_for_overlong_string)
{
	cleanup_free char *s = malloc(STACK_MAX_ARG_STRLEN + 1);
	cleanup_free uint8_t *buf = malloc(4 * STACK_MAX_ARG_STRLEN);
	struct stack_image img = { .buf = buf,
				   .cap = 4 * STACK_MAX_ARG_STRLEN };
	const char *argv[] = { "x", s };

	cr_assert_not_null(s);
	cr_assert_not_null(buf);
	/* MAX_ARG_STRLEN counts the NUL: 131071 chars is the longest. */
	memset(s, 'y', STACK_MAX_ARG_STRLEN - 1);
	s[STACK_MAX_ARG_STRLEN - 1] = '\0';
	cr_assert_eq(
		stack_build(TOP, argv, 2, NULL, 0, "x", NULL, 0, RND, &img), 0);
	s[STACK_MAX_ARG_STRLEN - 1] = 'y';
	s[STACK_MAX_ARG_STRLEN] = '\0';
	cr_assert_eq(stack_build(TOP, argv, 2, NULL, 0, "x", NULL, 0, RND,
				 &img),
		     -E2BIG);
	cr_assert_eq(stack_build(TOP, argv, 1, argv + 1, 1, "x", NULL, 0, RND,
				 &img),
		     -E2BIG);
	cr_assert_eq(stack_build(TOP, argv, 1, NULL, 0, s, NULL, 0, RND, &img),
		     -E2BIG);
}

Test(stack, einval)
{
	static struct built b;
	const char *const nulls[] = { "a", NULL };
	const uint64_t bad_aux[][2] = {
		{ AT_NULL, 0 },
		{ AT_RANDOM, 1 },
		{ AT_EXECFN, 1 },
		{ AT_PLATFORM, 1 },
	};
	struct stack_image *img = &b.img;

	b.img.buf = b.buf;
	b.img.cap = sizeof(b.buf);
	/* Empty argv is the execve layer's to fix (Linux >= 5.18). */
	cr_assert_eq(stack_build(TOP, ARGV, 0, NULL, 0, "x", NULL, 0, RND, img),
		     -EINVAL);
	cr_assert_eq(stack_build(TOP, NULL, 1, NULL, 0, "x", NULL, 0, RND, img),
		     -EINVAL);
	cr_assert_eq(stack_build(TOP, nulls, 2, NULL, 0, "x", NULL, 0, RND,
				 img),
		     -EINVAL);
	cr_assert_eq(stack_build(TOP, ARGV, 1, nulls, 2, "x", NULL, 0, RND,
				 img),
		     -EINVAL);
	cr_assert_eq(stack_build(TOP, ARGV, 1, NULL, 1, "x", NULL, 0, RND, img),
		     -EINVAL);
	cr_assert_eq(stack_build(TOP, ARGV, 1, NULL, 0, NULL, NULL, 0, RND,
				 img),
		     -EINVAL);
	cr_assert_eq(stack_build(TOP, ARGV, 1, NULL, 0, "x", NULL, 1, RND, img),
		     -EINVAL);
	cr_assert_eq(stack_build(TOP, ARGV, 1, NULL, 0, "x", NULL, 0, NULL,
				 img),
		     -EINVAL);
	cr_assert_eq(stack_build(TOP + 8, ARGV, 1, NULL, 0, "x", NULL, 0, RND,
				 img),
		     -EINVAL);
	cr_assert_eq(stack_build(TOP, ARGV, 1, NULL, 0, "x", NULL, 0, RND,
				 NULL),
		     -EINVAL);
	/* A stack_top so low the image would wrap below address 0. */
	cr_assert_eq(stack_build(0x40, ARGV, 1, NULL, 0, "x", NULL, 0, RND,
				 img),
		     -EINVAL);
	for (size_t i = 0; i < ARRAY_SIZE(bad_aux); i++)
		cr_assert_eq(stack_build(TOP, ARGV, 1, NULL, 0, "x", bad_aux[i],
					 1, RND, img),
			     -EINVAL, "aux type %" PRIu64, bad_aux[i][0]);
}

/* ---- differential: the host kernel's own initial stack is the oracle.
 *
 * A static helper dumps [start_stack, end of [stack]) as it finds it at
 * main(), run with ADDR_NO_RANDOMIZE so Linux leaves no random gap below
 * the strings. We rebuild the same stack from the argv/envp/auxv it
 * contains and require the same bytes (auxv order aside: Linux interleaves
 * AT_RANDOM/AT_EXECFN/AT_PLATFORM with the rest). */

static const char helper_src[] =
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"#include <unistd.h>\n"
	"int main(void) {\n"
	"  char buf[4096], *p; unsigned long lo = 0, hi = 0, ss = 0; int i;\n"
	"  FILE *f = fopen(\"/proc/self/maps\", \"r\");\n"
	"  while (fgets(buf, sizeof buf, f))\n"
	"    if (strstr(buf, \"[stack]\")) sscanf(buf, \"%lx-%lx\", &lo, &hi);\n"
	"  fclose(f);\n"
	"  f = fopen(\"/proc/self/stat\", \"r\");\n"
	"  fread(buf, 1, sizeof buf - 1, f); fclose(f);\n"
	"  p = strrchr(buf, ')') + 2;\n"
	"  for (i = 3; i < 28; i++) p = strchr(p, ' ') + 1;\n"
	"  ss = strtoul(p, NULL, 10);\n"
	"  fwrite(&hi, 8, 1, stdout); fwrite(&ss, 8, 1, stdout);\n"
	"  fwrite((void *)ss, 1, hi - ss, stdout);\n"
	"  return 0; }\n";

static int build_helper(char *dir, char *bin, size_t binsz)
{
	char src[128], cmd[512];
	cleanup_free char *out = NULL;
	FILE *f;

	if (!loader_mkdtemp(dir))
		return -1;
	snprintf(src, sizeof(src), "%s/h.c", dir);
	snprintf(bin, binsz, "%s/h", dir);
	f = fopen(src, "w");
	if (!f)
		return -1;
	fputs(helper_src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "gcc -O0 -static -o '%s' '%s' 2>&1 && echo ok", bin, src);
	out = loader_run(cmd);
	unlink(src);
	return out && strncmp(out, "ok", 2) == 0 ? 0 : -1;
}

/* Run bin with argv/envp; return the dump's length (0 on failure). */
static size_t run_helper(const char *bin, char *const *argv, char *const *envp,
			 uint8_t *out, size_t cap)
{
	int pfd[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	cr_assert_eq(pipe2(pfd, O_CLOEXEC), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(pfd[1], 1);
		if (personality(ADDR_NO_RANDOMIZE) < 0)
			_exit(126);
		execve(bin, argv, envp);
		_exit(127);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], out + len, cap - len)) > 0)
		len += (size_t)n;
	close(pfd[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? len : 0;
}

static void compare_one(const char *bin, size_t argc, size_t envc)
{
	static uint8_t dump[1 << 20];
	static struct built b;
	static const char *const words[] = {
		"",
		"x",
		"hello world",
		"0123456789abcdef",
		"A=B",
		"é",
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"TERM=xterm",
		"Z=",
	};
	char *argv[16], *envp[16];
	const char *execfn;
	uint64_t top, sp, v, ours[2 * MAXV];
	size_t len, i, n = 0;
	struct view kv;
	struct parsed kp, op;

	cr_assert_lt(argc, 16);
	cr_assert_lt(envc, 16);
	argv[0] = (char *)bin;
	for (i = 1; i < argc; i++)
		argv[i] = (char *)words[(i * 3) % ARRAY_SIZE(words)];
	argv[argc] = NULL;
	for (i = 0; i < envc; i++)
		envp[i] = (char *)words[(i * 5 + 2) % ARRAY_SIZE(words)];
	envp[envc] = NULL;

	len = run_helper(bin, argv, envp, dump, sizeof(dump));
	cr_assert_gt(len, 16, "helper failed");
	memcpy(&top, dump, 8);
	memcpy(&sp, dump + 8, 8);
	cr_assert_eq(len - 16, top - sp);
	kv = (struct view){ .base = dump + 16, .lo = sp, .hi = top };
	parse_stack(&kv, sp, &kp);
	cr_assert_eq(kp.argc, argc);
	cr_assert_eq(kp.envc, envc);
	cr_assert(aux_get(&kp, AT_EXECFN, &v));
	execfn = str_at(&kv, v);
	cr_assert(aux_get(&kp, AT_RANDOM, &v));

	for (i = 0; i < kp.naux; i++) {
		uint64_t t = kp.aux[2 * i];

		if (t == AT_RANDOM || t == AT_EXECFN || t == AT_PLATFORM)
			continue;
		ours[2 * n] = t;
		ours[2 * n + 1] = kp.aux[2 * i + 1];
		n++;
	}
	memset(b.buf, 0, sizeof(b.buf));
	b.img = (struct stack_image){ .buf = b.buf, .cap = sizeof(b.buf) };
	cr_assert_eq(stack_build(top, kp.argv, kp.argc, kp.envp, kp.envc,
				 execfn, ours, n, at(&kv, v, 16), &b.img),
		     0);
	cr_assert_eq(b.img.sp, sp, "sp %#" PRIx64 ", kernel %#" PRIx64,
		     b.img.sp, sp);
	cr_assert_eq(b.img.len, top - sp);
	b.v = (struct view){ .base = b.buf + b.img.cap - b.img.len,
			     .lo = b.img.sp,
			     .hi = top };
	parse_stack(&b.v, b.img.sp, &op);
	/* Same auxv entries (as a set) at the same place... */
	cr_assert_eq(op.auxv_addr, kp.auxv_addr);
	cr_assert_eq(op.auxv_end, kp.auxv_end);
	for (i = 0; i < kp.naux; i++) {
		cr_assert(aux_get(&op, kp.aux[2 * i], &v),
			  "auxv type %" PRIu64 " missing", kp.aux[2 * i]);
		cr_assert_eq(v, kp.aux[2 * i + 1], "auxv type %" PRIu64,
			     kp.aux[2 * i]);
	}
	/* ...and every other byte identical. */
	cr_assert_arr_eq(b.v.base, kv.base, kp.auxv_addr - sp);
	cr_assert_arr_eq(b.v.base + (kp.auxv_end - sp),
			 kv.base + (kp.auxv_end - sp), top - kp.auxv_end);
}

Test(stack, matches_host_kernel, .timeout = 60, .fini = loader_tmp_cleanup)
{
	char dir[] = "/tmp/moat-stack-XXXXXX";
	char bin[128];
	size_t argc, envc;

	if (personality(0xffffffff) < 0)
		cr_skip_test("personality() unavailable");
	if (build_helper(dir, bin, sizeof(bin)) != 0)
		cr_skip_test("gcc -static does not work here");
	for (argc = 1; argc <= 5; argc++)
		for (envc = 0; envc <= 5; envc++)
			compare_one(bin, argc, envc);
}
