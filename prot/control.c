/* prot/control.c: control socket answers. Pure functions, see
 * prot/control.h. Every length comes from the buffer's own bounds; a
 * number from the wire is read digit by digit with its bound checked
 * before it can overflow. */
#include "prot/control.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Decimal digits at p[0..n): a number in [0, max], no sign, no leading
 * zero (but "0"), no space. */
static bool dec(const char *p, size_t n, unsigned long long max,
		unsigned long long *v)
{
	unsigned long long x = 0;
	size_t i;

	if (!n || (n > 1 && p[0] == '0'))
		return false;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		if (x > (max - (unsigned)(p[i] - '0')) / 10)
			return false;
		x = x * 10 + (unsigned)(p[i] - '0');
	}
	*v = x;
	return true;
}

int ctl_reply_parse(const char *buf, size_t n, bool framed, const char **out,
		    size_t *outlen)
{
	const char *nl = n ? memchr(buf, '\n', n) : NULL;
	size_t line, rest;
	unsigned long long len;

	if (!nl)
		return -EPROTO; /* nothing, or a line cut off */
	line = (size_t)(nl - buf);
	rest = n - line - 1;
	if (line + 1 > CTL_LINE_MAX || memchr(buf, '\0', line))
		return -EPROTO;
	if (framed && line > 3 && !memcmp(buf, "ok ", 3)) {
		if (!dec(buf + 3, line - 3, CTL_BODY_MAX, &len) || rest != len)
			return -EPROTO; /* cut off, or more than it said */
		*out = nl + 1;
		*outlen = rest;
		return CTL_REPLY_BODY;
	}
	if (rest || (framed && (line < 7 || memcmp(buf, "error: ", 7))))
		return -EPROTO;
	*out = buf;
	*outlen = line;
	return CTL_REPLY_LINE;
}

void ctl_printable(char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			s[i] = '?';
}

size_t ctl_body_head(char *buf, size_t cap, size_t len)
{
	int n = snprintf(buf, cap, "ok %zu\n", len);

	return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

int ctl_word_uint(const char *line, size_t n, const char *word,
		  unsigned long max, unsigned long *v)
{
	size_t w = strlen(word);
	unsigned long long x;

	if (n < w + 2 || memcmp(line, word, w) || line[w] != ' ' ||
	    !dec(line + w + 1, n - w - 1, max, &x))
		return -EPROTO;
	*v = (unsigned long)x;
	return 0;
}

/* One field up to the next byte stop at *p (before end). */
static bool field(const char **p, const char *end, char stop, const char **f,
		  size_t *n)
{
	const char *s = *p, *e = memchr(s, stop, (size_t)(end - s));

	if (!e)
		return false;
	*f = s;
	*n = (size_t)(e - s);
	*p = e + 1;
	return true;
}

long ctl_ps_parse(const char *body, size_t len, struct ctl_ps_entry *out,
		  size_t max)
{
	const char *p = body, *end = body + len, *f;
	unsigned long long hp, vp;
	long count = 0;
	size_t n, i;

	while (p < end) {
		if (!field(&p, end, ' ', &f, &n) ||
		    !dec(f, n, CTL_PID_MAX, &hp) || !hp)
			return -EPROTO;
		if (!field(&p, end, ' ', &f, &n) ||
		    !dec(f, n, CTL_PID_MAX, &vp) || !vp)
			return -EPROTO;
		if (!field(&p, end, '\n', &f, &n) || !n || n > 15)
			return -EPROTO;
		for (i = 0; i < n; i++)
			if (f[i] <= ' ' || f[i] >= 0x7f)
				return -EPROTO;
		if (out) {
			if ((size_t)count >= max)
				return -EPROTO;
			out[count].host_pid = (int)hp;
			out[count].guest_pid = (int)vp;
			memcpy(out[count].comm, f, n);
			out[count].comm[n] = 0;
		}
		count++;
	}
	return count;
}
