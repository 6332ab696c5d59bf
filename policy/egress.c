/* policy/egress.c: parsing and matching egress rules (see egress.h). */
#include "policy/egress.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "lib/util.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
	MOAT_PRINTF(3, 4);

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* ---- names ----------------------------------------------------------------- */

int egress_name_normalize(const char *name, char out[EGRESS_NAME_MAX + 1])
{
	size_t len = strlen(name), i, label = 0;
	bool numeric = true; /* the last label so far */

	if (len && name[len - 1] == '.')
		len--;
	if (!len || len > EGRESS_NAME_MAX)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == '.') {
			if (!label)
				return -EINVAL; /* empty label */
			label = 0;
			numeric = true;
			out[i] = '.';
			continue;
		}
		if (!isalnum(c) && c != '-' && c != '_')
			return -EINVAL;
		if (++label > 63)
			return -EINVAL;
		if (!isdigit(c))
			numeric = false;
		out[i] = (char)tolower(c);
	}
	if (!label)
		return -EINVAL;
	out[len] = '\0';
	/* "1.2.3" or "300.1.1.1" is a mistyped address, not a name: no
	 * top-level domain is all digits. */
	return numeric ? -EINVAL : 0;
}

/* Does name equal, or (suffix) lie below, pattern? Both normalized. */
static bool name_matches(const struct egress_rule *r, const char *name)
{
	size_t nl, pl;

	if (r->kind == EGRESS_NAME)
		return strcmp(r->name, name) == 0;
	nl = strlen(name);
	pl = strlen(r->name);
	return nl > pl + 1 && name[nl - pl - 1] == '.' &&
	       strcmp(name + nl - pl, r->name) == 0;
}

/* ---- addresses ------------------------------------------------------------- */

static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* An IPv4-mapped IPv6 address becomes the IPv4 address it carries: a rule
 * for 10.0.0.0/8 must cover ::ffff:10.0.0.1, and no special range may be
 * reached through its mapped form. */
static void addr_canon(int *family, uint8_t addr[16])
{
	if (*family == AF_INET6 && memcmp(addr, v4mapped, 12) == 0) {
		memmove(addr, addr + 12, 4);
		memset(addr + 4, 0, 12);
		*family = AF_INET;
	}
}

static bool prefix_match(const uint8_t *a, const uint8_t *net, unsigned bits)
{
	unsigned full = bits / 8, rest = bits % 8;

	if (memcmp(a, net, full))
		return false;
	if (!rest)
		return true;
	return ((a[full] ^ net[full]) & (uint8_t)(0xff00u >> rest)) == 0;
}

static void clear_host_bits(uint8_t *a, unsigned bits, unsigned total)
{
	unsigned i;

	for (i = bits; i < total; i++)
		a[i / 8] &= (uint8_t) ~(0x80u >> (i % 8));
}

/* What a special range is, for rule 2 of egress.h. */
enum range {
	RANGE_PUBLIC,  /* not special */
	RANGE_PRIVATE, /* a LAN's: a `+private` name may resolve there */
	RANGE_SPECIAL, /* only an address or CIDR rule names it */
	RANGE_HOST,    /* the host itself: never through a name */
};

struct special {
	uint8_t net[16];
	unsigned bits;
	enum range range;
};

/* First match wins: the cloud metadata services that sit inside a
 * private range (or a public one) come before it. They answer whoever
 * asks from the machine with its credentials, so no name leads there,
 * even one marked +private; only an address rule that names them. */
static const struct special special4[] = {
	{ { 0 }, 8, RANGE_HOST }, /* "this network": 0.0.0.0 is here */
	{ { 100, 100, 100, 200 }, 32, RANGE_SPECIAL }, /* metadata: Alibaba */
	{ { 168, 63, 129, 16 }, 32, RANGE_SPECIAL },   /* metadata: Azure */
	{ { 10 }, 8, RANGE_PRIVATE },		       /* private */
	{ { 100, 64 }, 10, RANGE_PRIVATE }, /* shared (CGNAT, Tailscale) */
	{ { 127 }, 8, RANGE_HOST },	    /* loopback: the host's own */
	/* link-local, with the metadata of AWS, GCP, Azure, Oracle,
	 * DigitalOcean, OpenStack and others at 169.254.169.254 */
	{ { 169, 254 }, 16, RANGE_SPECIAL },
	{ { 172, 16 }, 12, RANGE_PRIVATE }, /* private */
	/* IETF protocol assignments, Oracle's 192.0.0.192 among them */
	{ { 192, 0, 0 }, 24, RANGE_SPECIAL },
	{ { 192, 0, 2 }, 24, RANGE_SPECIAL },	/* documentation */
	{ { 192, 88, 99 }, 24, RANGE_SPECIAL }, /* 6to4 relays (deprecated) */
	{ { 192, 168 }, 16, RANGE_PRIVATE },	/* private */
	{ { 198, 18 }, 15, RANGE_SPECIAL }, /* benchmarking; --net=tap's veth */
	{ { 198, 51, 100 }, 24, RANGE_SPECIAL }, /* documentation */
	{ { 203, 0, 113 }, 24, RANGE_SPECIAL },	 /* documentation */
	{ { 224 }, 4, RANGE_SPECIAL },		 /* multicast */
	{ { 240 }, 4, RANGE_SPECIAL },		 /* reserved, broadcast */
};

static const struct special special6[] = {
	{ { 0 }, 127, RANGE_HOST },   /* :: and ::1 */
	{ { 0 }, 96, RANGE_SPECIAL }, /* IPv4-compatible (deprecated) */
	/* ::ffff:0:a.b.c.d, IPv4-translated (SIIT): IPv4 inside */
	{ { 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0 }, 96, RANGE_SPECIAL },
	{ { 0, 0x64, 0xff, 0x9b, 0, 1 }, 48, RANGE_SPECIAL }, /* local NAT64 */
	{ { 0x20, 0x01, 0, 0 }, 32, RANGE_SPECIAL }, /* Teredo: IPv4 inside */
	{ { 0x20, 0x01, 0x0d, 0xb8 }, 32, RANGE_SPECIAL }, /* documentation */
	{ { 0x20, 0x02 }, 16, RANGE_SPECIAL },		/* 6to4: IPv4 inside */
	{ { 0x3f, 0xff, 0 }, 20, RANGE_SPECIAL },	/* documentation */
	{ { 0, 0x64, 0xff, 0x9b }, 96, RANGE_SPECIAL }, /* NAT64: IPv4 behind */
	{ { 0x01, 0x00 }, 64, RANGE_SPECIAL },		/* discard */
	/* metadata inside the unique-local range: AWS (its whole service
	 * block: IMDS, DNS, NTP), GCP, Oracle, Alibaba, Scaleway, Akamai */
	{ { 0xfd, 0x00, 0x0e, 0xc2 }, 32, RANGE_SPECIAL },
	{ { 0xfd, 0x20, 0x00, 0xce, [14] = 0x02, 0x54 }, 128, RANGE_SPECIAL },
	{ { 0xfd, 0x00, 0x00, 0xc1, [12] = 0xa9, 0xfe, 0xa9, 0xfe },
	  128,
	  RANGE_SPECIAL },
	{ { 0xfd, 0x00, 0x01, 0x00, [12] = 0x01, 0x00, 0x02, 0x00 },
	  128,
	  RANGE_SPECIAL },
	{ { 0xfd, 0x00, 0x00, 0x42, [15] = 0x42 }, 128, RANGE_SPECIAL },
	{ { 0xfd, 0x00, 0xa9, 0xfe, 0xa9, 0xfe, [15] = 0x01 },
	  128,
	  RANGE_SPECIAL },
	{ { 0xfc }, 7, RANGE_PRIVATE },	       /* unique local */
	{ { 0xfe, 0x80 }, 10, RANGE_SPECIAL }, /* link-local */
	{ { 0xfe, 0xc0 }, 10, RANGE_SPECIAL }, /* site-local (deprecated) */
	{ { 0xff }, 8, RANGE_SPECIAL },	       /* multicast */
};

/* The range of a canonical address (addr_canon); host: the caller knows it
 * is one of the host's own. */
static enum range range_of(int family, const uint8_t *a, bool host)
{
	const struct special *s;
	size_t i, n;

	if (host)
		return RANGE_HOST;
	s = family == AF_INET ? special4 : special6;
	n = family == AF_INET ? ARRAY_SIZE(special4) : ARRAY_SIZE(special6);
	for (i = 0; i < n; i++)
		if (prefix_match(a, s[i].net, s[i].bits))
			return s[i].range;
	return RANGE_PUBLIC;
}

bool egress_addr_special(int family, const uint8_t *addr)
{
	uint8_t a[16] = { 0 };

	memcpy(a, addr, family == AF_INET ? 4 : 16);
	addr_canon(&family, a);
	return range_of(family, a, false) != RANGE_PUBLIC;
}

/* ---- parsing ---------------------------------------------------------------- */

static int parse_port(const char *s, uint16_t *out)
{
	char *end;
	unsigned long v;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < 1 || v > 65535)
		return -EINVAL;
	*out = (uint16_t)v;
	return 0;
}

static int parse_ports(const char *s, struct egress_rule *r)
{
	char buf[16], *dash;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (parse_port(buf, &r->port_lo) < 0)
		return -EINVAL;
	r->port_hi = r->port_lo;
	if (dash && parse_port(dash + 1, &r->port_hi) < 0)
		return -EINVAL;
	return r->port_lo <= r->port_hi ? 0 : -EINVAL;
}

/* An address or a CIDR (no brackets, no port) into r. 1: it was one;
 * 0: it is not an address; -EINVAL: a CIDR with a bad prefix. */
static int parse_net(const char *s, struct egress_rule *r)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
	unsigned long bits;
	unsigned total;

	if (strlen(s) >= sizeof(buf))
		return 0;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	memset(r->addr, 0, sizeof(r->addr));
	if (inet_pton(AF_INET, buf, r->addr) == 1)
		r->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, r->addr) == 1)
		r->family = AF_INET6;
	else
		return 0;
	total = r->family == AF_INET ? 32 : 128;
	bits = total;
	if (slash) {
		if (!isdigit((unsigned char)slash[1]))
			return -EINVAL;
		errno = 0;
		bits = strtoul(slash + 1, &end, 10);
		if (errno || *end || bits > total)
			return -EINVAL;
	}
	if (r->family == AF_INET6 && memcmp(r->addr, v4mapped, 12) == 0 &&
	    bits >= 96) {
		addr_canon(&r->family, r->addr);
		bits -= 96;
		total = 32;
	}
	r->prefix = (unsigned)bits;
	clear_host_bits(r->addr, r->prefix, total);
	r->kind = EGRESS_NET;
	return 1;
}

static int parse_proto(const char *s, unsigned *out)
{
	if (!strcasecmp(s, "tcp"))
		*out = EGRESS_TCP;
	else if (!strcasecmp(s, "udp"))
		*out = EGRESS_UDP;
	else if (!strcasecmp(s, "icmp"))
		*out = EGRESS_ICMP;
	else
		return -EINVAL;
	return 0;
}

int egress_rule_parse(const char *text, bool deny, struct egress_rule *r,
		      char *err, size_t errlen)
{
	char buf[sizeof(r->text)], *dest, *port = NULL, *slash, *p;
	size_t len = strlen(text);
	bool private = false;
	int rc;

	memset(r, 0, sizeof(*r));
	r->deny = deny;
	r->port_lo = 0;
	r->port_hi = 65535;
	r->protos = EGRESS_PROTO_DEFAULT;
	if (!len)
		return fail(err, errlen, "empty destination");
	if (len >= sizeof(buf))
		return fail(err, errlen, "destination `%.40s...` is too long",
			    text);
	memcpy(r->text, text, len + 1);
	memcpy(buf, text, len + 1);

	/* +private at the very end: no destination has a '+' */
	p = strrchr(buf, '+');
	if (p) {
		if (strcasecmp(p + 1, "private"))
			return fail(err, errlen,
				    "`%s`: unknown option `%s` (+private)",
				    text, p);
		*p = '\0';
		private = true;
	}

	/* /tcp, /udp, /icmp at the end (a CIDR's /N is a number) */
	slash = strrchr(buf, '/');
	if (slash && isalpha((unsigned char)slash[1])) {
		if (parse_proto(slash + 1, &r->protos) < 0)
			return fail(err, errlen,
				    "`%s`: unknown protocol `%s` (tcp, udp or "
				    "icmp)",
				    text, slash + 1);
		*slash = '\0';
	}

	dest = buf;
	if (*dest == '[') {
		p = strchr(dest, ']');
		if (!p)
			return fail(err, errlen, "`%s`: no `]` after `[`",
				    text);
		*p++ = '\0';
		dest++;
		if (*p == ':')
			port = p + 1;
		else if (*p)
			return fail(err, errlen,
				    "`%s`: `:PORT` expected after `]`", text);
		rc = parse_net(dest, r);
		if (rc <= 0)
			return fail(err, errlen,
				    "`%s`: `%s` is not an address or CIDR",
				    text, dest);
	} else {
		p = strchr(dest, ':');
		if (p && strchr(p + 1, ':'))
			p = NULL; /* a bare IPv6 address: no port */
		if (p) {
			*p = '\0';
			port = p + 1;
		}
		if (!strcmp(dest, "*")) {
			r->kind = EGRESS_ANY;
		} else if (!strncmp(dest, "*.", 2)) {
			r->kind = EGRESS_SUFFIX;
			if (egress_name_normalize(dest + 2, r->name) < 0)
				return fail(err, errlen,
					    "`%s`: `%s` is not a domain name",
					    text, dest + 2);
		} else if ((rc = parse_net(dest, r)) != 0) {
			if (rc < 0)
				return fail(err, errlen,
					    "`%s`: bad CIDR prefix length",
					    text);
		} else if (strchr(dest, '*')) {
			return fail(err, errlen,
				    "`%s`: `*` only as the whole destination "
				    "or as `*.domain`",
				    text);
		} else {
			r->kind = EGRESS_NAME;
			if (egress_name_normalize(dest, r->name) < 0)
				return fail(err, errlen,
					    "`%s`: `%s` is not an address, "
					    "CIDR or domain name",
					    text, dest);
		}
	}
	if (port) {
		if (parse_ports(port, r) < 0)
			return fail(err, errlen,
				    "`%s`: bad port `%s` (1-65535, or LO-HI)",
				    text, port);
		if (r->protos == EGRESS_ICMP)
			return fail(err, errlen, "`%s`: icmp has no ports",
				    text);
	}
	if (private) {
		rc = egress_rule_mark_private(r, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int egress_rule_mark_private(struct egress_rule *r, char *err, size_t errlen)
{
	static const char mark[] = "+private";
	size_t len = strlen(r->text);

	if (r->deny)
		return fail(err, errlen,
			    "`%s`: `+private` is for allow rules (a deny rule "
			    "covers every address already)",
			    r->text);
	if (r->kind != EGRESS_NAME)
		return fail(err, errlen,
			    "`%s`: `+private` is for an exact name (an address "
			    "or CIDR rule names its range itself; `*` and "
			    "`*.domain` may not reach one)",
			    r->text);
	if (!r->allow_private) {
		if (len + sizeof(mark) > sizeof(r->text))
			return fail(err, errlen, "`%.40s...` is too long",
				    r->text);
		/* the text says it, so that audit lines and `policy show`
		 * (which prints texts back as rules) keep the mark */
		if (len < sizeof(mark) - 1 ||
		    strcasecmp(r->text + len - (sizeof(mark) - 1), mark))
			memcpy(r->text + len, mark, sizeof(mark));
	}
	r->allow_private = true;
	return 0;
}

int egress_add(struct egress_policy *p, const struct egress_rule *r)
{
	struct egress_rule *n;
	size_t cap;

	if (p->n >= EGRESS_RULES_MAX)
		return -E2BIG;
	if (p->n == p->cap) {
		cap = p->cap ? p->cap * 2 : 8;
		n = realloc(p->rules, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->rules = n;
		p->cap = cap;
	}
	p->rules[p->n++] = *r;
	return 0;
}

void egress_free(struct egress_policy *p)
{
	free(p->rules);
	p->rules = NULL;
	p->n = p->cap = 0;
}

/* ---- deciding --------------------------------------------------------------- */

/* Does r match q? For a name rule, *name is the name that matched. */
static bool rule_matches(const struct egress_rule *r,
			 const struct egress_query *q, const char **name)
{
	char norm[EGRESS_NAME_MAX + 1];
	size_t i;

	if (!(r->protos & q->proto))
		return false;
	if (q->proto != EGRESS_ICMP &&
	    (q->port < r->port_lo || q->port > r->port_hi))
		return false;
	switch (r->kind) {
	case EGRESS_ANY:
		return true;
	case EGRESS_NET:
		return r->family == q->family &&
		       prefix_match(q->addr, r->addr, r->prefix);
	case EGRESS_NAME:
	case EGRESS_SUFFIX:
		for (i = 0; i < q->nnames; i++) {
			if (!q->names[i] ||
			    egress_name_normalize(q->names[i], norm) < 0)
				continue;
			if (name_matches(r, norm)) {
				*name = q->names[i];
				return true;
			}
		}
		return false;
	}
	return false;
}

/* May allow rule r, which matched, reach an address of range? */
static bool names_range(const struct egress_rule *r, enum range range)
{
	switch (range) {
	case RANGE_PUBLIC:
		return true;
	case RANGE_PRIVATE:
		/* Neither "*" nor "*.domain" names a private address: whoever
		 * runs a zone's DNS could point any name below it at the
		 * LAN. An exact name may, when it says +private. */
		return r->kind == EGRESS_NET ||
		       (r->kind == EGRESS_NAME && r->allow_private);
	case RANGE_SPECIAL:
	case RANGE_HOST:
		break;
	}
	return r->kind == EGRESS_NET;
}

void egress_decide(const struct egress_policy *p, const struct egress_query *q,
		   struct egress_decision *d)
{
	struct egress_query c = *q;
	const char *name = NULL;
	bool any_matched = false;
	enum range range;
	size_t i;

	memset(d, 0, sizeof(*d));
	d->reason = EGRESS_BY_DEFAULT;
	if (c.family != AF_INET && c.family != AF_INET6)
		return; /* not an internet destination: denied */
	addr_canon(&c.family, c.addr);
	for (i = 0; i < p->n; i++) {
		if (p->rules[i].deny && rule_matches(&p->rules[i], &c, &name)) {
			d->reason = EGRESS_BY_RULE;
			d->rule = &p->rules[i];
			d->name = name;
			return;
		}
	}
	range = range_of(c.family, c.addr, c.host);
	for (i = 0; i < p->n; i++) {
		const struct egress_rule *r = &p->rules[i];

		if (r->deny || !rule_matches(r, &c, &name))
			continue;
		if (!names_range(r, range)) {
			any_matched = true;
			continue;
		}
		d->allow = true;
		d->reason = EGRESS_BY_RULE;
		d->rule = r;
		d->name = name;
		return;
	}
	if (any_matched)
		d->reason = range == RANGE_HOST ? EGRESS_BY_HOST :
						  EGRESS_BY_SPECIAL;
}

bool egress_answer_ok(const struct egress_policy *p, const char *name,
		      int family, const uint8_t *addr, bool host,
		      enum egress_reason *why)
{
	char norm[EGRESS_NAME_MAX + 1];
	uint8_t a[16] = { 0 };
	enum range range;
	size_t i;

	*why = EGRESS_BY_SPECIAL;
	if (family != AF_INET && family != AF_INET6)
		return false;
	memcpy(a, addr, family == AF_INET ? 4 : 16);
	addr_canon(&family, a);
	range = range_of(family, a, host);
	if (range == RANGE_PUBLIC)
		return true;
	if (range == RANGE_HOST) {
		/* The host's own: an address rule may name it, but a name
		 * never leads there, whatever DNS says. */
		*why = EGRESS_BY_HOST;
		return false;
	}
	if (egress_name_normalize(name, norm) < 0)
		return false;
	for (i = 0; i < p->n; i++) {
		const struct egress_rule *r = &p->rules[i];

		if (r->deny)
			continue;
		/* ports and protocols are decided at connect: an answer is
		 * kept when any allowed connection could use it */
		if (r->kind == EGRESS_NET && r->family == family &&
		    prefix_match(a, r->addr, r->prefix))
			return true;
		if (range == RANGE_PRIVATE && r->kind == EGRESS_NAME &&
		    r->allow_private && name_matches(r, norm))
			return true;
	}
	return false;
}

bool egress_name_allowed(const struct egress_policy *p, const char *name,
			 const struct egress_rule **rule)
{
	char norm[EGRESS_NAME_MAX + 1];
	const struct egress_rule *allow = NULL;
	size_t i;

	*rule = NULL;
	if (egress_name_normalize(name, norm) < 0)
		return false;
	for (i = 0; i < p->n; i++) {
		const struct egress_rule *r = &p->rules[i];
		bool named =
			(r->kind == EGRESS_NAME || r->kind == EGRESS_SUFFIX) &&
			name_matches(r, norm);

		/* A deny rule hides a name only when it denies the name
		 * whole: every port, TCP and UDP. "deny x.com:25" must not
		 * stop x.com resolving for port 443. */
		if (r->deny && named && r->port_lo == 0 &&
		    r->port_hi == 65535 &&
		    (r->protos & EGRESS_PROTO_DEFAULT) ==
			    EGRESS_PROTO_DEFAULT) {
			*rule = r;
			return false;
		}
		if (!r->deny && !allow && (named || r->kind == EGRESS_ANY))
			allow = r;
	}
	*rule = allow;
	return allow != NULL;
}

bool egress_name_denied(const struct egress_policy *p, const char *name)
{
	char norm[EGRESS_NAME_MAX + 1];
	size_t i;

	if (egress_name_normalize(name, norm) < 0)
		return false;
	for (i = 0; i < p->n; i++) {
		const struct egress_rule *r = &p->rules[i];

		if (r->deny &&
		    (r->kind == EGRESS_NAME || r->kind == EGRESS_SUFFIX) &&
		    name_matches(r, norm))
			return true;
	}
	return false;
}
