/* tests/fuzz/fuzz_control.c: libFuzzer target for prot/control.c.
 *
 *   make build/fuzz/fuzz_control && build/fuzz/fuzz_control tests/fuzz/corpus/control
 *
 * Each input is read as a control socket answer, both ways (a line, and
 * the answer to a request that returns data), and its body, if any, as a
 * ps answer. What parses lies inside the input: a line holds no '\n' and
 * no NUL, a body is exactly what its header said and all that followed
 * it; a ps answer counts the same with and without an array to fill, and
 * every process it gives has pids in range and a printable one-word
 * command. Violations abort().
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prot/control.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_ps(const char *body, size_t len)
{
	long n = ctl_ps_parse(body, len, NULL, 0), m, i;
	struct ctl_ps_entry *e;

	if (n < 0)
		return;
	if ((size_t)n > len / 6 + 1)
		abort(); /* "1 1 x\n" is the shortest line */
	e = calloc((size_t)n + 1, sizeof(*e));
	if (!e)
		return;
	m = ctl_ps_parse(body, len, e, (size_t)n);
	if (m != n)
		abort();
	for (i = 0; i < n; i++) {
		size_t k, cl = strlen(e[i].comm);
		if (e[i].host_pid < 1 || e[i].host_pid > CTL_PID_MAX ||
		    e[i].guest_pid < 1 || e[i].guest_pid > CTL_PID_MAX ||
		    cl < 1 || cl > 15)
			abort();
		for (k = 0; k < cl; k++)
			if (e[i].comm[k] <= ' ' || e[i].comm[k] >= 0x7f)
				abort();
	}
	if (n && ctl_ps_parse(body, len, e, (size_t)n - 1) >= 0)
		abort(); /* more than max */
	free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data, *out;
	size_t n;
	int framed, kind;

	for (framed = 0; framed < 2; framed++) {
		kind = ctl_reply_parse(buf, size, framed, &out, &n);
		if (kind < 0)
			continue;
		if (out < buf || n > size || out + n > buf + size)
			abort();
		if (kind == CTL_REPLY_LINE) {
			if (out != buf || n + 1 != size || buf[n] != '\n' ||
			    memchr(out, '\n', n) || memchr(out, 0, n))
				abort();
			if (framed && (n < 7 || memcmp(out, "error: ", 7)))
				abort();
		} else if (kind == CTL_REPLY_BODY) {
			char head[32];
			size_t h = ctl_body_head(head, sizeof(head), n);
			if (!framed || out + n != buf + size || h == 0 ||
			    (size_t)(out - buf) != h || memcmp(buf, head, h))
				abort(); /* the header is exactly "ok LEN\n" */
			check_ps(out, n);
		} else {
			abort();
		}
	}
	check_ps(buf, size);
	return 0;
}
