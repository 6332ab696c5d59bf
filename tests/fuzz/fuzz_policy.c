/* tests/fuzz/fuzz_policy.c: libFuzzer target for policy/ (the policy file
 * parser, the rule parser and the matcher).
 *
 *   make build/fuzz/fuzz_policy && build/fuzz/fuzz_policy tests/fuzz/corpus/policy
 *
 * Each input is parsed as a policy file. When it parses, every rule must
 * have come out normalized (a name rule's name lower case and dot-free at
 * the end, a CIDR without host bits, port_lo <= port_hi), and a handful of
 * queries, some built from the input's bytes, are decided: a decision
 * must be consistent (allowed only by an allow rule; denied by a deny rule
 * or none); no answer may lead a name to the host, its loopback or the
 * unspecified address, and only a `+private` name or an address rule to
 * another special range. The input's first line is also parsed as one
 * rule and as a name. Violations abort().
 *
 * The credentials part too: every credential that parses has a valid
 * name, hosts (normalized, none passed through), places and ports; what
 * `policy show` prints parses back to the same part (cred_equal); the
 * first line is also parsed as a --secret, an --inspect and a
 * --passthrough, and its hosts are matched.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_pattern(const char *h, bool star)
{
	size_t i, n = strlen(h);

	if (!n || h[n - 1] == '.' || (!star && !strcmp(h, "*")))
		abort();
	for (i = 0; i < n; i++)
		if (h[i] >= 'A' && h[i] <= 'Z')
			abort();
}

static void check_cred(const struct cred_policy *p)
{
	size_t i, j, k;

	for (i = 0; i < p->n; i++) {
		const struct credential *c = &p->v[i];

		if (!c->name || !c->from || !c->nhosts || !c->where ||
		    !c->nports || c->nhosts > CRED_HOSTS_MAX)
			abort();
		if ((c->where & CRED_IN_HEADER) && !c->nheaders)
			abort();
		if ((c->source == CRED_FROM_FD) != (c->src == NULL))
			abort();
		for (j = 0; j < c->nhosts; j++) {
			check_pattern(c->hosts[j], false);
			/* a host of its own is brokered, and a name below
			 * a suffix is passed through by no entry */
			if (c->hosts[j][0] != '*' &&
			    !cred_brokered(p, c->hosts[j]))
				abort();
			for (k = 0; k < p->npassthrough; k++)
				if (cred_host_match(p->passthrough[k],
						    c->hosts[j]))
					abort();
		}
		for (j = 0; j < c->nports; j++)
			if (!c->ports[j] || !cred_port(p, c->ports[j]))
				abort();
		for (j = 0; j < i; j++)
			if (!strcmp(p->v[j].name, c->name))
				abort();
	}
	for (i = 0; i < p->ninspect; i++)
		check_pattern(p->inspect[i], true);
	for (i = 0; i < p->npassthrough; i++) {
		check_pattern(p->passthrough[i], false);
		if (p->passthrough[i][0] != '*' &&
		    cred_inspected(p, p->passthrough[i]))
			abort();
	}
}

/* What show prints is a policy file of the same credentials. */
static void check_shown(const struct moat_policy *p)
{
	struct moat_policy again;
	struct moat_error err = { 0 };
	char *json = policy_to_json(p);

	if (!json)
		abort();
	if (policy_parse(json, strlen(json), "shown", &again, &err) < 0)
		abort();
	if (!cred_equal(&p->cred, &again.cred) || again.egress.n != p->egress.n)
		abort();
	policy_free(&again);
	free(json);
}

/* The first line as the command line's forms. */
static void check_args(const char *line)
{
	struct cred_policy p = { 0 };
	struct moat_error err = { 0 };
	size_t idx[4];

	if (cred_parse_arg(&p, line, &err) < 0) {
		if (!err.msg[0] || p.n)
			abort();
	} else if (p.n != 1 || !p.v[0].nhosts) {
		abort();
	}
	err.msg[0] = 0;
	if (cred_add_inspect(&p, line, &err) < 0 && !err.msg[0])
		abort();
	err.msg[0] = 0;
	if (cred_add_passthrough(&p, line, &err) < 0 && !err.msg[0])
		abort();
	err.msg[0] = 0;
	if (cred_validate(&p, NULL, &err) < 0 && !err.msg[0])
		abort();
	(void)cred_for_host(&p, line, idx, 4);
	(void)cred_brokered(&p, line);
	(void)cred_host_match(line, "api.example.com");
	(void)cred_host_match("*.example.com", line);
	cred_free(&p);
}

static void check_rule(const struct egress_rule *r)
{
	size_t i, n;

	if (r->port_lo > r->port_hi || !r->protos)
		abort();
	if (r->kind == EGRESS_NAME || r->kind == EGRESS_SUFFIX) {
		n = strlen(r->name);
		if (!n || r->name[n - 1] == '.')
			abort();
		for (i = 0; i < n; i++)
			if (r->name[i] >= 'A' && r->name[i] <= 'Z')
				abort();
	}
	if (r->kind == EGRESS_NET) {
		unsigned total = r->family == AF_INET ? 32 : 128;

		if (r->prefix > total)
			abort();
		for (i = r->prefix; i < total; i++)
			if (r->addr[i / 8] & (0x80u >> (i % 8)))
				abort();
	}
}

/* An answer for name (a name of the input, or a fixed one) to addr. */
static void check_answer(const struct egress_policy *p, const char *name,
			 int family, const char *text, bool host)
{
	uint8_t a[16] = { 0 };
	enum egress_reason why;
	bool ok, marked = false, by_addr = false;
	size_t i;

	inet_pton(family, text, a);
	ok = egress_answer_ok(p, name, family, a, host, &why);
	if (!ok && why != EGRESS_BY_SPECIAL && why != EGRESS_BY_HOST)
		abort();
	if (ok && (host || !strcmp(text, "127.0.0.1") || !strcmp(text, "::1") ||
		   !strcmp(text, "::ffff:127.0.0.1")))
		abort(); /* a name never leads to the host */
	if (!ok || !egress_addr_special(family, a))
		return;
	for (i = 0; i < p->n; i++) {
		marked |= p->rules[i].allow_private;
		by_addr |= !p->rules[i].deny && p->rules[i].kind == EGRESS_NET;
	}
	if (!marked && !by_addr)
		abort(); /* a special answer kept with no rule to name it */
	if (!by_addr && (!strcmp(text, "169.254.169.254") ||
			 !strcmp(text, "100.100.100.200") ||
			 !strcmp(text, "fd00:ec2::254")))
		abort(); /* metadata kept for a name: +private is not enough */
}

static void check_decision(const struct egress_policy *p,
			   const struct egress_query *q)
{
	struct egress_decision d;

	egress_decide(p, q, &d);
	if (d.allow && (!d.rule || d.rule->deny))
		abort();
	if (!d.allow && d.rule && !d.rule->deny)
		abort();
	if ((d.reason == EGRESS_BY_RULE) != (d.rule != NULL))
		abort();
	if (d.rule && (d.rule < p->rules || d.rule >= p->rules + p->n))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct moat_policy pol;
	struct moat_error err = { 0 };
	struct egress_rule r;
	const struct egress_rule *nr;
	char line[512], msg[256];
	const char *names[2] = { "api.example.com", line };
	struct egress_query q = { .names = names, .nnames = 2 };
	size_t i, n;

	n = size < sizeof(line) - 1 ? size : sizeof(line) - 1;
	memcpy(line, data, n);
	line[n] = 0;
	line[strcspn(line, "\n")] = 0;
	if (egress_rule_parse(line, false, &r, msg, sizeof(msg)) == 0)
		check_rule(&r);
	else if (!msg[0])
		abort(); /* a refusal always says why */

	check_args(line);
	if (policy_parse((const char *)data, size, "f", &pol, &err) < 0) {
		if (!err.msg[0] || strncmp(err.msg, "f", 1))
			abort();
		return 0;
	}
	check_cred(&pol.cred);
	check_shown(&pol);
	for (i = 0; i < pol.egress.n; i++) {
		check_rule(&pol.egress.rules[i]);
		if (pol.egress.rules[i].allow_private &&
		    (pol.egress.rules[i].deny ||
		     pol.egress.rules[i].kind != EGRESS_NAME))
			abort();
	}
	for (i = 0; i < 2; i++) {
		check_answer(&pol.egress, names[i], AF_INET, "10.1.2.3", false);
		check_answer(&pol.egress, names[i], AF_INET, "10.1.2.3", true);
		check_answer(&pol.egress, names[i], AF_INET, "127.0.0.1",
			     false);
		check_answer(&pol.egress, names[i], AF_INET, "169.254.169.254",
			     false);
		check_answer(&pol.egress, names[i], AF_INET, "93.184.216.34",
			     true);
		check_answer(&pol.egress, names[i], AF_INET6, "fd00::1", false);
		check_answer(&pol.egress, names[i], AF_INET, "100.100.100.200",
			     false);
		check_answer(&pol.egress, names[i], AF_INET6, "fd00:ec2::254",
			     false);
		check_answer(&pol.egress, names[i], AF_INET6, "::1", false);
		check_answer(&pol.egress, names[i], AF_INET6,
			     "::ffff:127.0.0.1", false);
	}
	(void)egress_name_allowed(&pol.egress, line, &nr);
	(void)egress_name_allowed(&pol.egress, "a.example.com", &nr);
	/* a name hidden whole by a deny rule is one a deny rule names */
	if (!egress_name_allowed(&pol.egress, line, &nr) && nr && nr->deny &&
	    !egress_name_denied(&pol.egress, line))
		abort();

	q.family = AF_INET;
	q.port = 443;
	q.proto = EGRESS_TCP;
	inet_pton(AF_INET, "10.1.2.3", q.addr);
	check_decision(&pol.egress, &q);
	inet_pton(AF_INET, "93.184.216.34", q.addr);
	check_decision(&pol.egress, &q);
	q.family = AF_INET6;
	inet_pton(AF_INET6, "::ffff:169.254.169.254", q.addr);
	check_decision(&pol.egress, &q);
	memcpy(q.addr, data, size < 16 ? size : 16);
	q.port = size > 17 ? (uint16_t)(data[16] << 8 | data[17]) : 0;
	q.proto = EGRESS_UDP;
	check_decision(&pol.egress, &q);
	q.family = AF_INET;
	q.proto = EGRESS_ICMP;
	check_decision(&pol.egress, &q);
	policy_free(&pol);
	return 0;
}
