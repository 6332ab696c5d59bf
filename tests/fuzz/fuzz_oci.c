/* tests/fuzz/fuzz_oci.c: libFuzzer target for oci/config.c (config.json
 * and process.json).
 *
 *   make build/fuzz/fuzz_oci && build/fuzz/fuzz_oci tests/fuzz/corpus/oci
 *
 * Each input is parsed as a bundle's config.json and as a process.json.
 * A refusal must say why, naming the file; an accepted config must hold
 * what moat relies on: a root path, a first argument, an absolute
 * canonical cwd and mount destinations, rlimits with soft <= hard, bind
 * mounts with a source, masked and read-only paths absolute and shorter
 * than PATH_MAX (the sentry resolves them as they are). Violations
 * abort().
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oci/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_path(const char *p)
{
	size_t n = strlen(p);

	if (p[0] != '/' || strstr(p, "//") || strstr(p, "/../") ||
	    strstr(p, "/./") || (n > 1 && p[n - 1] == '/') ||
	    (n >= 3 && !strcmp(p + n - 3, "/..")))
		abort();
}

static void check_process(const struct oci_process *pr)
{
	size_t i;

	if (!pr->args || !pr->args[0] || !pr->args[0][0] || !pr->cwd)
		abort();
	check_path(pr->cwd);
	for (i = 0; pr->env && pr->env[i]; i++)
		if (!strchr(pr->env[i], '=') || pr->env[i][0] == '=')
			abort();
	for (i = 0; i < pr->nrlimits; i++)
		if (pr->rlimits[i].soft > pr->rlimits[i].hard)
			abort();
	if (pr->ngids > 32)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oci_config c;
	struct oci_process pr;
	struct moat_error err = { 0 };
	size_t i;

	if (oci_config_parse((const char *)data, size, "/bundle", &c, &err) <
	    0) {
		if (!err.msg[0] || strncmp(err.msg, "config.json", 11))
			abort();
	} else {
		if (!c.root || !c.root[0] || !c.oci_version)
			abort();
		check_process(&c.process);
		for (i = 0; i < c.nmounts; i++) {
			check_path(c.mounts[i].dst);
			if (c.mounts[i].kind == OCI_MNT_BIND &&
			    (!c.mounts[i].src || c.mounts[i].src[0] != '/'))
				abort();
		}
		for (int k = 0; k < 2; k++) {
			char **v = k ? c.readonly_paths : c.masked_paths;

			for (i = 0; v && v[i]; i++)
				if (v[i][0] != '/' || strlen(v[i]) >= 4095)
					abort();
		}
		for (i = 0; i < c.nannotations; i++)
			if (!c.annotations[i].key || !c.annotations[i].value)
				abort();
		oci_config_free(&c);
	}
	memset(&err, 0, sizeof(err));
	if (oci_process_parse((const char *)data, size, "p.json", &pr, &err) <
	    0) {
		if (!err.msg[0] || strncmp(err.msg, "p.json", 6))
			abort();
		return 0;
	}
	check_process(&pr);
	oci_process_free(&pr);
	return 0;
}
