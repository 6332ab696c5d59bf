/* broker/msg.c: the broker's checks of the sentry's messages (msg.h). */
#include "broker/msg.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

int brk_flow_decode(const void *p, size_t len, struct brk_flow *f,
		    const char **names, char *buf)
{
	const char *s, *end;
	size_t rest;

	if (len < sizeof(*f))
		return -EPROTO;
	rest = len - sizeof(*f);
	if (rest > BRK_NAMES_BYTES)
		return -EPROTO;
	memcpy(f, p, sizeof(*f));
	if ((f->kind != BRK_KIND_TLS && f->kind != BRK_KIND_HTTP) ||
	    (f->family != AF_INET && f->family != AF_INET6) ||
	    !memchr(f->exe, 0, sizeof(f->exe)) ||
	    !memchr(f->sni, 0, sizeof(f->sni)) || f->nnames > BRK_NAMES_MAX ||
	    (f->flags & ~BRK_FLOW_ALPN_H2))
		return -EPROTO;
	memcpy(buf, (const char *)p + sizeof(*f), rest);
	s = buf;
	end = buf + rest;
	for (size_t i = 0; i < f->nnames; i++) {
		const char *nul = memchr(s, 0, (size_t)(end - s));

		if (!nul || nul == s || nul - s > BRK_NAME_MAX)
			return -EPROTO;
		names[i] = s;
		s = nul + 1;
	}
	return s == end ? 0 : -EPROTO;
}

int brk_secret_decode(const void *p, size_t len, struct brk_secret *op,
		      const char **name, const char **json)
{
	const char *n, *end, *nul;

	*name = *json = NULL;
	if (len < sizeof(*op) + 2)
		return -EPROTO;
	memcpy(op, p, sizeof(*op));
	if (op->op != BRK_SECRET_SET && op->op != BRK_SECRET_ROTATE &&
	    op->op != BRK_SECRET_REVOKE)
		return -EPROTO;
	n = (const char *)p + sizeof(*op);
	end = (const char *)p + len;
	if (end[-1] != 0)
		return -EPROTO;
	nul = memchr(n, 0, (size_t)(end - n));
	if (nul == n)
		return -EPROTO;
	if (op->op != BRK_SECRET_SET) {
		if (nul != end - 1)
			return -EPROTO;
		*name = n;
		return 0;
	}
	/* a set: the JSON after the name, one string to the end */
	if (nul + 2 >= end || memchr(nul + 1, 0, (size_t)(end - nul - 2)))
		return -EPROTO;
	*name = n;
	*json = nul + 1;
	return 0;
}

int brk_config_split(const void *p, size_t len, size_t *jlen, char *ca,
		     size_t cap)
{
	const char *c;
	size_t clen;

	*jlen = strnlen(p, len);
	*ca = 0;
	if (*jlen == len)
		return 0;
	c = (const char *)p + *jlen + 1;
	clen = len - *jlen - 1;
	if (clen && c[clen - 1] == 0)
		clen--;
	if (memchr(c, 0, clen) || clen >= cap)
		return -EPROTO;
	memcpy(ca, c, clen);
	ca[clen] = 0;
	return 0;
}
