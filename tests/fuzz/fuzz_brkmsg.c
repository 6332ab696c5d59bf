/* tests/fuzz/fuzz_brkmsg.c: libFuzzer target for broker/msg.c, the
 * broker's checks of the sentry's messages.
 *
 *   make build/fuzz/fuzz_brkmsg && build/fuzz/fuzz_brkmsg tests/fuzz/corpus/brkmsg
 *
 * Each input is read as a BRK_FLOW, a BRK_SECRET and a BRK_CONFIG
 * payload. What is accepted lies inside the input and says what
 * prot/broker.h says: a flow's kind and family known, its strings
 * terminated, its names non-empty, short, NUL-free and filling the
 * message exactly; a secret's name the message's last bytes, or, for a
 * set, its name and then its JSON, each non-empty and terminated; a config's
 * JSON and path adding up to the input. Violations abort().
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "broker/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_flow(const uint8_t *data, size_t size)
{
	static char buf[BRK_NAMES_BYTES];
	const char *names[BRK_NAMES_MAX];
	struct brk_flow f;
	size_t total = sizeof(f);

	if (brk_flow_decode(data, size, &f, names, buf) < 0)
		return;
	if ((f.kind != BRK_KIND_TLS && f.kind != BRK_KIND_HTTP) ||
	    (f.family != AF_INET && f.family != AF_INET6) ||
	    strnlen(f.exe, sizeof(f.exe)) == sizeof(f.exe) ||
	    strnlen(f.sni, sizeof(f.sni)) == sizeof(f.sni) ||
	    f.nnames > BRK_NAMES_MAX)
		abort();
	for (size_t i = 0; i < f.nnames; i++) {
		size_t l = strlen(names[i]);

		if (l == 0 || l > BRK_NAME_MAX || names[i] < buf ||
		    names[i] + l >= buf + sizeof(buf))
			abort();
		if (memcmp(names[i], data + total, l + 1))
			abort();
		total += l + 1;
	}
	if (total != size)
		abort();
}

static void check_secret(const uint8_t *data, size_t size)
{
	struct brk_secret op;
	const char *name, *json;
	size_t total;

	if (brk_secret_decode(data, size, &op, &name, &json) < 0)
		return;
	if (name != (const char *)data + sizeof(op) || !*name)
		abort();
	total = sizeof(op) + strlen(name) + 1;
	if ((op.op == BRK_SECRET_SET) != (json != NULL))
		abort();
	if (json) {
		if (json != name + strlen(name) + 1 || !*json)
			abort();
		total += strlen(json) + 1;
	}
	if (op.op != BRK_SECRET_SET && op.op != BRK_SECRET_ROTATE &&
	    op.op != BRK_SECRET_REVOKE)
		abort();
	if (total != size)
		abort();
}

static void check_config(const uint8_t *data, size_t size)
{
	char ca[64];
	size_t jlen;

	if (brk_config_split(data, size, &jlen, ca, sizeof(ca)) < 0)
		return;
	if (jlen > size || memchr(data, 0, jlen))
		abort();
	if (jlen == size) {
		if (*ca)
			abort();
		return;
	}
	if (data[jlen] != 0 || strlen(ca) >= sizeof(ca) ||
	    memcmp(ca, data + jlen + 1, strlen(ca)))
		abort();
	/* what follows the path is one NUL at most */
	if (jlen + 1 + strlen(ca) != size &&
	    !(jlen + 2 + strlen(ca) == size && data[size - 1] == 0))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_flow(data, size);
	check_secret(data, size);
	check_config(data, size);
	return 0;
}
