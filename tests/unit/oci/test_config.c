/* tests/unit/oci/test_config.c: config.json (oci/config.c). */
#include <criterion/criterion.h>

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "netstack/netstack.h"
#include "oci/config.h"

static struct oci_config cfg;
static struct moat_error err;

static void fini(void)
{
	oci_config_free(&cfg);
}

TestSuite(oci, .fini = fini);

static const char *const minimal_fmt =
	"{\n"
	"  \"ociVersion\": \"1.0.2\",\n"
	"  \"root\": {\"path\": \"rootfs\"},\n"
	"  \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}%s\n"
	"}\n";

static int parse_text(const char *text)
{
	memset(&err, 0, sizeof(err));
	oci_config_free(&cfg);
	return oci_config_parse(text, strlen(text), "/b", &cfg, &err);
}

/* The minimal config with extra top-level members appended. */
static int parse_with(const char *extra)
{
	char buf[8192];

	snprintf(buf, sizeof(buf), minimal_fmt, extra);
	return parse_text(buf);
}

static void refused(const char *text, const char *want)
{
	cr_assert_eq(parse_text(text), -1, "accepted: %s", text);
	cr_assert(strstr(err.msg, want), "message `%s` lacks `%s`", err.msg,
		  want);
}

static void refused_with(const char *extra, const char *want)
{
	cr_assert_eq(parse_with(extra), -1, "accepted: %s", extra);
	cr_assert(strstr(err.msg, want), "message `%s` lacks `%s`", err.msg,
		  want);
}

Test(oci, minimal)
{
	cr_assert_eq(parse_with(""), 0, "%s", err.msg);
	cr_assert_str_eq(cfg.root, "/b/rootfs");
	cr_assert_str_eq(cfg.process.args[0], "sh");
	cr_assert_null(cfg.process.args[1]);
	cr_assert_str_eq(cfg.process.cwd, "/");
	cr_assert_not(cfg.root_ro);
	cr_assert_eq(cfg.process.uid, 0);
}

Test(oci, default_spec_parses)
{
	char *doc = oci_spec_default();

	cr_assert_eq(parse_text(doc), 0, "%s", err.msg);
	cr_assert(cfg.root_ro);
	cr_assert(cfg.process.terminal);
	cr_assert_str_eq(cfg.hostname, "moat");
	cr_assert_eq(cfg.process.nrlimits, 1);
	cr_assert_eq(cfg.process.rlimits[0].resource, RLIMIT_NOFILE);
	cr_assert_eq(cfg.process.rlimits[0].soft, 1024);
	free(doc);
}

Test(oci, process_fields)
{
	cr_assert_eq(
		parse_text(
			"{\"ociVersion\": \"1.1.0\", \"root\": {\"path\": "
			"\"/abs\", \"readonly\": true},\n"
			"\"process\": {\"args\": [\"/bin/x\", \"-v\"], \"env\": "
			"[\"A=1\", \"B=\"], \"cwd\": \"/w//x/.\", \"terminal\": "
			"false, \"user\": {\"uid\": 1000, \"gid\": 100, "
			"\"additionalGids\": [5, 6], \"umask\": 18}, "
			"\"capabilities\": {\"bounding\": []}, "
			"\"noNewPrivileges\": true, \"rlimits\": [{\"type\": "
			"\"RLIMIT_NPROC\", \"soft\": 10, \"hard\": 20}]}}"),
		0, "%s", err.msg);
	cr_assert_str_eq(cfg.root, "/abs");
	cr_assert(cfg.root_ro);
	cr_assert_str_eq(cfg.process.args[1], "-v");
	cr_assert_str_eq(cfg.process.env[1], "B=");
	cr_assert_str_eq(cfg.process.cwd, "/w/x");
	cr_assert_eq(cfg.process.uid, 1000);
	cr_assert_eq(cfg.process.gid, 100);
	cr_assert_eq(cfg.process.ngids, 2);
	cr_assert_eq(cfg.process.gids[1], 6);
	cr_assert(cfg.process.has_umask);
	cr_assert_eq(cfg.process.umask, 022);
	cr_assert_eq(cfg.process.rlimits[0].resource, RLIMIT_NPROC);
	cr_assert_eq(cfg.process.rlimits[0].hard, 20);
}

/* The minimal config with process.capabilities set to caps (JSON). */
static int parse_caps(const char *caps)
{
	char buf[4096];

	snprintf(buf, sizeof(buf),
		 "{\"ociVersion\": \"1.1.0\", \"root\": {\"path\": \"r\"}, "
		 "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", "
		 "\"capabilities\": %s}}",
		 caps);
	return parse_text(buf);
}

Test(oci, capabilities)
{
	cr_assert_eq(parse_with(""), 0, "%s", err.msg);
	cr_assert_not(cfg.process.has_caps, "none given: root's stay");

	cr_assert_eq(parse_caps(
			     "{\"bounding\": [\"CAP_CHOWN\", "
			     "\"CAP_NET_BIND_SERVICE\"], \"effective\": "
			     "[\"CAP_CHOWN\"], \"permitted\": [\"CAP_CHOWN\", "
			     "\"CAP_KILL\"], \"inheritable\": "
			     "[\"CAP_NET_BIND_SERVICE\"], \"ambient\": "
			     "[\"CAP_KILL\"]}"),
		     0, "%s", err.msg);
	cr_assert(cfg.process.has_caps);
	cr_assert_eq(cfg.process.caps.bnd,
		     (1ULL << CAP_CHOWN) | (1ULL << CAP_NET_BIND_SERVICE));
	cr_assert_eq(cfg.process.caps.eff, 1ULL << CAP_CHOWN);
	cr_assert_eq(cfg.process.caps.prm,
		     (1ULL << CAP_CHOWN) | (1ULL << CAP_KILL));
	cr_assert_eq(cfg.process.caps.inh, 1ULL << CAP_NET_BIND_SERVICE);
	cr_assert_eq(cfg.process.caps.amb, 0,
		     "ambient that is not inheritable is left out, as runc's "
		     "failed raise");
	cr_assert_null(cfg.warnings);

	/* a set left out is empty; unknown names are left out, each with a
	 * warning naming where it is */
	cr_assert_eq(parse_caps("{\"bounding\": [\"CAP_CHOWN\", \"CAP_FOO\", "
				"\"CAP_BAR\", \"CAP_FOO\"]}"),
		     0, "%s", err.msg);
	cr_assert_eq(cfg.process.caps.bnd, 1ULL << CAP_CHOWN);
	cr_assert_eq(cfg.process.caps.prm | cfg.process.caps.eff |
			     cfg.process.caps.inh | cfg.process.caps.amb,
		     0);
	cr_assert(cfg.warnings &&
			  strstr(cfg.warnings,
				 "process.capabilities.bounding[1]: unknown "
				 "capability `CAP_FOO`, ignored") &&
			  strstr(cfg.warnings,
				 "bounding[2]: unknown capability "
				 "`CAP_BAR`, ignored"),
		  "%s", cfg.warnings ? cfg.warnings : "(none)");

	/* what runc's capset refuses, refused naming the set */
	cr_assert_eq(parse_caps("{\"effective\": [\"CAP_KILL\"]}"), -1);
	cr_assert(strstr(err.msg, "process.capabilities.effective: CAP_KILL "
				  "is not permitted"),
		  "%s", err.msg);
	cr_assert_eq(parse_caps("{\"permitted\": [\"CAP_KILL\"], "
				"\"inheritable\": [\"CAP_KILL\"]}"),
		     -1);
	cr_assert(strstr(err.msg, "process.capabilities.inheritable: "
				  "CAP_KILL is not in the bounding set"),
		  "%s", err.msg);
	cr_assert_eq(parse_caps("{\"bounding\": \"CAP_KILL\"}"), -1);
	cr_assert(strstr(err.msg, "bounding: a list of capability names"), "%s",
		  err.msg);
	cr_assert_eq(parse_caps("{\"bounding\": [1]}"), -1);
	cr_assert(strstr(err.msg, "bounding[0]: a capability name"), "%s",
		  err.msg);
	/* a set the spec does not name: an unknown property, warned of */
	cr_assert_eq(parse_caps("{\"all\": []}"), 0, "%s", err.msg);
	cr_assert(cfg.warnings && strstr(cfg.warnings, "capabilities.all: "
						       "unknown property"),
		  "%s", cfg.warnings ? cfg.warnings : "(none)");
}

Test(oci, malformed_json_names_the_line)
{
	refused("{\n\"ociVersion\": \"1.0.0\",\n\"root\": {,}\n}", ":3:");
	refused("{\"ociVersion\": \"1.0.0\",}", "config.json:1:");
	refused("", "unexpected end");
	refused("[1]", "a JSON object expected");
	refused("{} x", "config.json:1:");
}

Test(oci, required_fields)
{
	refused("{\"root\": {\"path\": \"r\"}, \"process\": {\"args\": "
		"[\"sh\"], \"cwd\": \"/\"}}",
		"ociVersion: required");
	refused("{\"ociVersion\": \"1.0.0\", \"process\": {\"args\": "
		"[\"sh\"], \"cwd\": \"/\"}}",
		"root: required");
	refused("{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"r\"}}",
		"process: required");
	refused("{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"r\"}, "
		"\"process\": {\"args\": [], \"cwd\": \"/\"}}",
		"process.args: empty");
	refused("{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"r\"}, "
		"\"process\": {\"args\": [\"sh\"]}}",
		"cwd: required");
	refused("{\"ociVersion\": \"2.0.0\", \"root\": {\"path\": \"r\"}, "
		"\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}}",
		"runtime-spec 1.x");
}

Test(oci, types_are_checked)
{
	refused("{\"ociVersion\": 1, \"root\": {\"path\": \"r\"}, "
		"\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}}",
		"ociVersion: a string expected");
	refused("{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"r\"}, "
		"\"process\": {\"args\": [\"sh\", 3], \"cwd\": \"/\"}}",
		"process.args[1]: a string expected");
	refused("{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"r\"}, "
		"\"process\": {\"args\": [\"sh\"], \"cwd\": \"rel\"}}",
		"process.cwd: `rel`: an absolute path");
	refused("{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"r\"}, "
		"\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"env\": "
		"[\"NOEQUALS\"]}}",
		"process.env[0]");
	refused("{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"r\"}, "
		"\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"user\": "
		"{\"uid\": -1}}}",
		"process.user.uid");
	refused("{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"r\"}, "
		"\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", "
		"\"rlimits\": [{\"type\": \"RLIMIT_BOGUS\", \"soft\": 1, "
		"\"hard\": 1}]}}",
		"process.rlimits[0].type");
	refused("{\"ociVersion\": \"1.0.0\", \"root\": {\"path\": \"r\"}, "
		"\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", "
		"\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 9, "
		"\"hard\": 1}]}}",
		"soft is above hard");
}

/* The spec: "Runtimes MUST NOT generate an error if they encounter an
 * unknown property" (config.md, Extensibility). Each is ignored, with a
 * warning that names it and its line. */
Test(oci, unknown_properties_are_warned_of_and_ignored)
{
	static const struct {
		const char *extra, *warning;
	} cases[] = {
		{ ", \"bogus\": 1", "config.json:4: bogus: unknown property" },
		{ ", \"linux\": {\"bogus\": {\"deep\": [1]}}",
		  "linux.bogus: unknown property" },
		{ ", \"linux\": {\"resources\": {\"bogus\": 1}}",
		  "linux.resources.bogus: unknown property" },
		{ ", \"linux\": {\"resources\": {\"memory\": {\"bogus\": 1}, "
		  "\"cpu\": {}, \"pids\": {}}}",
		  "linux.resources.memory.bogus: unknown property" },
		{ ", \"linux\": {\"resources\": {\"pids\": {\"bogus\": 1}}}",
		  "linux.resources.pids.bogus: unknown property" },
		{ ", \"linux\": {\"resources\": {\"cpu\": {\"bogus\": 1}}}",
		  "linux.resources.cpu.bogus: unknown property" },
		{ ", \"linux\": {\"namespaces\": [{\"type\": \"pid\"}, "
		  "{\"type\": \"network\", \"bogus\": 1}, {\"type\": \"ipc\"}, "
		  "{\"type\": \"uts\"}, {\"type\": \"mount\"}]}",
		  "linux.namespaces[1].bogus: unknown property" },
		{ ", \"mounts\": [{\"destination\": \"/t\", \"type\": "
		  "\"tmpfs\", \"bogus\": true}]",
		  "mounts[0].bogus: unknown property" },
		{ ", \"hooks\": {\"prestart\": [{\"path\": \"/bin/true\", "
		  "\"bogus\": 1}]}",
		  "hooks.prestart[0].bogus: unknown property" },
		{ ", \"hooks\": {\"bogus\": []}",
		  "hooks.bogus: unknown property" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(parse_with(cases[i].extra), 0, "%s: %s",
			     cases[i].extra, err.msg);
		cr_assert(cfg.warnings &&
				  strstr(cfg.warnings, cases[i].warning),
			  "%s: warnings `%s` lack `%s`", cases[i].extra,
			  cfg.warnings ? cfg.warnings : "(none)",
			  cases[i].warning);
		cr_assert_eq(strchr(cfg.warnings, '\n')[1], 0,
			     "one warning: %s", cfg.warnings);
	}
	/* in process, its user, rlimits, consoleSize, and root */
	cr_assert_eq(parse_text("{\"ociVersion\": \"1.0.0\", \"root\": "
				"{\"path\": \"r\", \"b1\": 1}, \"process\": "
				"{\"args\": [\"sh\"], \"cwd\": \"/\", "
				"\"b2\": 1, \"user\": {\"uid\": 0, \"b3\": 1}, "
				"\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", "
				"\"soft\": 1, \"hard\": 1, \"b4\": 1}], "
				"\"consoleSize\": {\"height\": 1, \"width\": "
				"1, \"b5\": 1}}}"),
		     0, "%s", err.msg);
	for (int k = 1; k <= 5; k++) {
		char b[16];

		snprintf(b, sizeof(b), ".b%d:", k);
		cr_assert(strstr(cfg.warnings, b), "`%s` lacks %s",
			  cfg.warnings, b);
	}
	/* none for a config of known properties only */
	cr_assert_eq(parse_with(""), 0, "%s", err.msg);
	cr_assert_null(cfg.warnings);
}

Test(oci, unknown_properties_past_the_first_are_counted)
{
	char extra[4096] = "";
	size_t o = 0;

	for (int k = 0; k < 40; k++)
		o += (size_t)snprintf(extra + o, sizeof(extra) - o,
				      ", \"bogus%d\": %d", k, k);
	cr_assert_eq(parse_with(extra), 0, "%s", err.msg);
	cr_assert(strstr(cfg.warnings, "bogus15: unknown"), "%s", cfg.warnings);
	cr_assert_null(strstr(cfg.warnings, "bogus16: unknown"), "%s",
		       cfg.warnings);
	cr_assert(strstr(cfg.warnings, "config.json: 24 more warnings of "
				       "unknown properties or capabilities"),
		  "%s", cfg.warnings);
}

Test(oci, process_json_unknown_properties)
{
	struct oci_process pr = { 0 };
	const char *doc = "{\"args\": [\"id\"], \"cwd\": \"/\",\n"
			  " \"bogus\": 1}";

	memset(&err, 0, sizeof(err));
	cr_assert_eq(oci_process_parse(doc, strlen(doc), "p.json", &pr, &err),
		     0, "%s", err.msg);
	cr_assert_str_eq(pr.warnings,
			 "p.json:2: bogus: unknown property, ignored\n");
	oci_process_free(&pr);
}

/* Properties of the spec keep their types, whether moat honours them or
 * only records them: one of the wrong type is an error naming it. */
Test(oci, known_properties_of_the_wrong_type_are_refused)
{
	refused_with(", \"hostname\": 5", "hostname: a string expected");
	refused_with(", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", "
		     "\"apparmorProfile\": 5}",
		     "process.apparmorProfile: a string expected");
	refused_with(", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", "
		     "\"capabilities\": []}",
		     "process.capabilities: an object expected");
	refused_with(", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", "
		     "\"oomScoreAdj\": \"x\"}",
		     "process.oomScoreAdj: an integer expected");
	refused_with(", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", "
		     "\"user\": {\"username\": 1}}",
		     "process.user.username: a string expected");
	refused_with(", \"linux\": {\"maskedPaths\": \"/proc/kcore\"}",
		     "linux.maskedPaths: a list of strings expected");
	refused_with(", \"linux\": {\"cgroupsPath\": 1}",
		     "linux.cgroupsPath: a string expected");
	refused_with(", \"linux\": {\"seccomp\": []}",
		     "linux.seccomp: an object expected");
	refused_with(", \"linux\": {\"resources\": {\"memory\": "
		     "{\"swap\": \"1G\"}}}",
		     "linux.resources.memory.swap: an integer expected");
	refused_with(", \"linux\": {\"resources\": {\"cpu\": "
		     "{\"cpus\": 2}}}",
		     "linux.resources.cpu.cpus: a string expected");
	refused_with(", \"mounts\": [{\"destination\": \"/t\", \"type\": "
		     "\"tmpfs\", \"uidMappings\": {}}]",
		     "mounts[0].uidMappings: a list expected");
	refused_with(", \"root\": {\"path\": \"r\", \"readonly\": 1}",
		     "root.readonly: true or false expected");
	/* null is as if absent, as Go's decoder (runc's) takes it */
	cr_assert_eq(parse_with(", \"linux\": {\"seccomp\": null, "
				"\"maskedPaths\": null}"),
		     0, "%s", err.msg);
}

/* Properties of the spec that moat does not honour stay refused, each
 * naming its field (docs/oci.md says why). */
Test(oci, known_properties_moat_refuses)
{
	refused_with(", \"windows\": {}", "windows: not a Linux container");
	refused_with(", \"freebsd\": {}", "freebsd: not a Linux container");
	refused_with(", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", "
		     "\"commandLine\": \"sh\"}",
		     "process.commandLine: not supported");
	refused_with(", \"linux\": {\"netDevices\": {}}",
		     "linux.netDevices: not supported");
	refused_with(", \"linux\": {\"resources\": {\"cpu\": "
		     "{\"realtimeRuntime\": 1}}}",
		     "linux.resources.cpu.realtimeRuntime: not supported");
	refused_with(", \"annotations\": {\"dev.moat.bogus\": \"1\"}",
		     "unknown moat annotation");
	refused_with(", \"linux\": {\"intelRdt\": {}}",
		     "linux.intelRdt: not supported");
	refused_with(", \"linux\": {\"resources\": {\"blockIO\": {}}}",
		     "linux.resources.blockIO: not supported");
	refused_with(", \"linux\": {\"sysctl\": {\"vm.swappiness\": \"1\"}}",
		     "linux.sysctl.vm.swappiness: not supported");
	refused_with(", \"hooks\": {\"createContainer\": []}",
		     "hooks.createContainer: not supported");
}

Test(oci, namespaces)
{
	cr_assert_eq(parse_with(", \"linux\": {\"namespaces\": [{\"type\": "
				"\"pid\"}, {\"type\": \"network\"}, {\"type\": "
				"\"ipc\"}, {\"type\": \"uts\"}, {\"type\": "
				"\"mount\"}, {\"type\": \"cgroup\"}]}"),
		     0, "%s", err.msg);
	refused_with(", \"linux\": {\"namespaces\": [{\"type\": \"pid\"}, "
		     "{\"type\": \"bogus\"}]}",
		     "linux.namespaces[1].type: `bogus` is not a namespace");
	refused_with(", \"linux\": {\"namespaces\": [{\"type\": \"mount\", "
		     "\"path\": \"/proc/1/ns/mnt\"}]}",
		     "linux.namespaces[0].path: joining an existing mount");
	/* an ipc, uts or pid path is a pod member's (cli/pod.c checks
	 * whose; a pid one is shareProcessNamespace) */
	cr_assert_eq(parse_with(", \"linux\": {\"namespaces\": [{\"type\": "
				"\"pid\", \"path\": \"/proc/1/ns/pid\"}, "
				"{\"type\": \"network\"}, {\"type\": "
				"\"ipc\", \"path\": \"/proc/1/ns/ipc\"}, "
				"{\"type\": \"uts\", \"path\": "
				"\"/proc/1/ns/uts\"}, {\"type\": \"mount\"}]}"),
		     0, "%s", err.msg);
	cr_assert_eq(cfg.nnspaths, 3);
	cr_assert_null(cfg.netns);
	refused_with(", \"linux\": {\"namespaces\": [{\"type\": \"network\", "
		     "\"path\": \"rel\"}]}",
		     "linux.namespaces[0].path: an absolute path");
	cr_assert_eq(parse_with(", \"linux\": {\"namespaces\": [{\"type\": "
				"\"pid\"}, {\"type\": \"network\", \"path\": "
				"\"/var/run/netns/pod\"}, {\"type\": "
				"\"ipc\"}, {\"type\": \"uts\"}, {\"type\": "
				"\"mount\"}]}"),
		     0, "%s", err.msg);
	cr_assert_str_eq(cfg.netns, "/var/run/netns/pod");
	/* kept for oci_config_load, which checks it is a network
	 * namespace's file (the parser looks at no host path) */
	cr_assert_eq(cfg.nnspaths, 1);
	cr_assert_eq(cfg.nspaths[0].nstype, CLONE_NEWNET);
	cr_assert_eq(cfg.nspaths[0].index, 1);
	cr_assert_str_eq(cfg.nspaths[0].path, "/var/run/netns/pod");
	refused_with(", \"linux\": {\"namespaces\": [{\"type\": \"network\"}, "
		     "{\"type\": \"mount\"}, {\"type\": \"ipc\"}, {\"type\": "
		     "\"uts\"}]}",
		     "no `pid` namespace");
}

Test(oci, mounts)
{
	cr_assert_eq(
		parse_with(
			",\n\"mounts\": [\n"
			"{\"destination\": \"/proc\", \"type\": \"proc\", "
			"\"source\": \"proc\"},\n"
			"{\"destination\": \"/dev/mqueue\", \"type\": "
			"\"mqueue\"},\n"
			"{\"destination\": \"/data\", \"type\": \"bind\", "
			"\"source\": \"/srv/data\", \"options\": [\"rbind\", "
			"\"ro\"]},\n"
			"{\"destination\": \"/etc/hosts\", \"source\": "
			"\"hosts\", \"options\": [\"bind\"]},\n"
			"{\"destination\": \"/run\", \"type\": \"tmpfs\", "
			"\"options\": [\"size=64m\", \"mode=755\"]}\n"
			"]"),
		0, "%s", err.msg);
	cr_assert_eq(cfg.nmounts, 5);
	cr_assert_eq(cfg.mounts[0].kind, OCI_MNT_SYNTH);
	cr_assert_eq(cfg.mounts[1].kind, OCI_MNT_IGNORE);
	cr_assert_eq(cfg.mounts[2].kind, OCI_MNT_BIND);
	cr_assert(cfg.mounts[2].ro);
	cr_assert_str_eq(cfg.mounts[2].src, "/srv/data");
	cr_assert_str_eq(cfg.mounts[3].src, "/b/hosts"); /* the bundle's */
	cr_assert_not(cfg.mounts[3].ro);
	cr_assert_eq(cfg.mounts[4].kind, OCI_MNT_TMPFS);
	cr_assert_eq(cfg.mounts[4].size, 64 << 20);
	cr_assert_eq(cfg.mounts[4].mode, 0755);
	cr_assert_eq(cfg.mounts[3].mode, 01777); /* the default */
}

Test(oci, bad_mounts)
{
	refused_with(", \"mounts\": [{\"destination\": \"rel\", \"type\": "
		     "\"tmpfs\"}]",
		     "mounts[0].destination: `rel`: an absolute path");
	refused_with(", \"mounts\": [{\"destination\": \"/a/../b\", \"type\": "
		     "\"tmpfs\"}]",
		     "mounts[0].destination");
	refused_with(", \"mounts\": [{\"type\": \"tmpfs\"}]",
		     "destination: required");
	refused_with(", \"mounts\": [{\"destination\": \"/x\", \"type\": "
		     "\"nfs\"}]",
		     "mounts[0].type: a `nfs` mount at /x is not supported");
	refused_with(", \"mounts\": [{\"destination\": \"/x\", \"type\": "
		     "\"bind\"}]",
		     "source: required");
	refused_with(", \"mounts\": [{\"destination\": \"/x\", \"type\": "
		     "\"bind\", \"source\": \"/s\", \"options\": "
		     "[\"remount\"]}]",
		     "mount option `remount`");
	refused_with(", \"mounts\": [{\"destination\": \"/x\", \"type\": "
		     "\"tmpfs\", \"options\": [\"mode=9\"]}]",
		     "`mode=9`: a number expected");
	refused_with(", \"mounts\": [{\"destination\": \"/x\", \"type\": "
		     "\"tmpfs\", \"options\": [\"tmpcopyup\"]}]",
		     "mount option `tmpcopyup`");
	refused_with(", \"mounts\": [{\"destination\": \"/proc/x\", "
		     "\"type\": \"bind\", \"source\": \"/s\"}]",
		     "a bind mount at /proc/x");
	refused_with(", \"mounts\": [{\"destination\": \"/x\", \"type\": "
		     "\"tmpfs\"}, {\"destination\": \"/x/\", \"type\": "
		     "\"tmpfs\"}]",
		     "/x is mounted twice");
	{
		/* PATH_MAX: 2,047 levels fit, 2,048 do not */
		char extra[4200], *q = extra;
		int i;

		q += sprintf(q, ", \"mounts\": [{\"destination\": \"");
		for (i = 0; i < 2048; i++)
			q += sprintf(q, "/a");
		sprintf(q, "\", \"type\": \"tmpfs\"}]");
		refused_with(extra, "mounts[0].destination: 4096 bytes long: "
				    "at most 4095");
		sprintf(q - 2, "\", \"type\": \"tmpfs\"}]");
		cr_assert_eq(parse_with(extra), 0, "%s", err.msg);
	}
}

Test(oci, resources)
{
	cr_assert_eq(parse_with(", \"linux\": {\"resources\": {\"memory\": "
				"{\"limit\": 536870912}, \"pids\": {\"limit\": "
				"64}, \"cpu\": {\"quota\": 50000, \"period\": "
				"100000, \"shares\": 1024}, \"devices\": "
				"[{\"allow\": false, \"access\": \"rwm\"}]}}"),
		     0, "%s", err.msg);
	cr_assert_eq(cfg.memory, 512ULL << 20);
	cr_assert_eq(cfg.pids, 64);
	cr_assert_float_eq(cfg.cpus, 0.5, 1e-9);
	cr_assert_eq(cfg.cpu_quota, 50000);
	cr_assert_eq(cfg.cpu_period, 100000);
	cr_assert_eq(cfg.cpu_shares, 1024);
	cr_assert_eq(cfg.swappiness, -1, "none given");
	cr_assert_null(cfg.cgroups_path);
}

/* What runc writes at cgroupsPath, and the path itself, are kept for the
 * sentry (sentry/limits.c); kernel memory is accepted and ignored, as by
 * runc 1.1. */
Test(oci, cgroups_path_and_the_rest_of_resources)
{
	cr_assert_eq(
		parse_with(", \"linux\": {\"cgroupsPath\": "
			   "\"/k8s.io/abc\", \"resources\": {\"memory\": "
			   "{\"limit\": 1048576, \"swap\": 2097152, "
			   "\"reservation\": -1, \"swappiness\": 10, "
			   "\"disableOOMKiller\": true, \"kernel\": 1, "
			   "\"kernelTCP\": 1}, \"cpu\": {\"cpus\": \"0-1,3\", "
			   "\"mems\": \"0\", \"shares\": null}}}"),
		0, "%s", err.msg);
	cr_assert_str_eq(cfg.cgroups_path, "/k8s.io/abc");
	cr_assert_eq(cfg.memory_swap, 2097152);
	cr_assert_eq(cfg.memory_reservation, -1);
	cr_assert_eq(cfg.swappiness, 10);
	cr_assert(cfg.disable_oom_killer);
	cr_assert_str_eq(cfg.cpuset_cpus, "0-1,3");
	cr_assert_str_eq(cfg.cpuset_mems, "0");
	cr_assert_eq(cfg.cpu_shares, 0, "null: as if absent");
	refused_with(", \"linux\": {\"resources\": {\"cpu\": "
		     "{\"cpus\": \"0\\n1\"}}}",
		     "linux.resources.cpu.cpus: a list of numbers");
	refused_with(", \"linux\": {\"resources\": {\"memory\": "
		     "{\"swappiness\": 101}}}",
		     "linux.resources.memory.swappiness: an integer from 0 "
		     "to 100");
}

Test(oci, id_maps_and_oom_score_adj)
{
	cr_assert_eq(parse_with(
			     ", \"linux\": {\"uidMappings\": [{"
			     "\"containerID\": 0, \"hostID\": 1000, \"size\": "
			     "2000}], \"gidMappings\": []}"),
		     0, "%s", err.msg);
	cr_assert_eq(cfg.nuid_maps, 1);
	cr_assert_eq(cfg.uid_maps[0].outside, 1000);
	cr_assert_eq(cfg.uid_maps[0].count, 2000);
	cr_assert_eq(cfg.ngid_maps, 0);
	refused_with(", \"linux\": {\"uidMappings\": [{\"containerID\": 0, "
		     "\"hostID\": 0, \"size\": 0}]}",
		     "linux.uidMappings[0].size: an integer from 1");
	refused_with(", \"linux\": {\"gidMappings\": [{\"containerID\": "
		     "4294967295, \"hostID\": 0, \"size\": 2}]}",
		     "linux.gidMappings[0]: containerID + size past");
	refused_with(", \"linux\": {\"gidMappings\": [{\"hostID\": 0}]}",
		     "linux.gidMappings[0]: containerID: required");
}

Test(oci, devices)
{
	cr_assert_eq(
		parse_with(", \"linux\": {\"devices\": [{\"path\": "
			   "\"/dev/net/tun\", \"type\": \"c\", \"major\": "
			   "10, \"minor\": 200, \"fileMode\": 8624, \"uid\": "
			   "5, \"gid\": 6}, {\"path\": \"/dev//f\", \"type\": "
			   "\"p\", \"major\": 8, \"minor\": 1}, {\"path\": "
			   "\"/dev/u\", \"type\": \"u\", \"major\": 1, "
			   "\"minor\": 3}]}"),
		0, "%s", err.msg);
	cr_assert_eq(cfg.ndevices, 3);
	cr_assert_str_eq(cfg.devices[0].path, "/dev/net/tun");
	/* fileMode's type bits are the type field's to say (runc's too) */
	cr_assert_eq(cfg.devices[0].mode, S_IFCHR | 0660);
	cr_assert_eq(cfg.devices[0].major, 10);
	cr_assert_eq(cfg.devices[0].minor, 200);
	cr_assert_eq(cfg.devices[0].uid, 5);
	cr_assert_eq(cfg.devices[0].gid, 6);
	cr_assert_str_eq(cfg.devices[1].path, "/dev/f");
	cr_assert_eq(cfg.devices[1].mode, S_IFIFO | 0666);
	cr_assert_eq(cfg.devices[1].major, 0); /* a FIFO has no number */
	cr_assert_eq(cfg.devices[2].mode, S_IFCHR | 0666);

	refused_with(", \"linux\": {\"devices\": [{\"path\": \"/dev/x\"}]}",
		     "linux.devices[0]: type: required");
	refused_with(", \"linux\": {\"devices\": [{\"type\": \"c\"}]}",
		     "linux.devices[0]: path: required");
	refused_with(", \"linux\": {\"devices\": [{\"path\": \"/dev/x\", "
		     "\"type\": \"q\"}]}",
		     "linux.devices[0].type: `q`: not a device type");
	refused_with(", \"linux\": {\"devices\": [{\"path\": \"/tmp/x\", "
		     "\"type\": \"c\"}]}",
		     "linux.devices[0].path: `/tmp/x`: moat makes device nodes "
		     "in the sandbox's /dev only");
	refused_with(", \"linux\": {\"devices\": [{\"path\": \"/dev\", "
		     "\"type\": \"c\"}]}",
		     "linux.devices[0].path: `/dev`");
	refused_with(", \"linux\": {\"devices\": [{\"path\": \"dev/x\", "
		     "\"type\": \"c\"}]}",
		     "linux.devices[0].path: `dev/x`: an absolute path");
	refused_with(", \"linux\": {\"devices\": [{\"path\": "
		     "\"/dev/pts/9\", \"type\": \"c\"}]}",
		     "`/dev/pts/9`: in a filesystem of its own");
	refused_with(", \"linux\": {\"devices\": [{\"path\": "
		     "\"/dev/shm\", \"type\": \"c\"}]}",
		     "`/dev/shm`: in a filesystem of its own");
	refused_with(", \"linux\": {\"devices\": [{\"path\": \"/dev/x\", "
		     "\"type\": \"c\", \"major\": 4096}]}",
		     "linux.devices[0].major: an integer from 0 to 4095");
	refused_with(", \"linux\": {\"devices\": [{\"path\": \"/dev/a\", "
		     "\"type\": \"c\"}, {\"path\": \"/dev/a\", "
		     "\"type\": \"b\"}]}",
		     "linux.devices[1].path: `/dev/a`: also linux.devices[0]");
	refused_with(", \"linux\": {\"devices\": [{\"path\": \"/dev/a/b\", "
		     "\"type\": \"c\"}, {\"path\": \"/dev/a\", "
		     "\"type\": \"b\"}]}",
		     "linux.devices[1].path: `/dev/a`: a device inside, or the "
		     "directory of, linux.devices[0]");
	refused_with(", \"linux\": {\"devices\": [{\"path\": \"/dev/a\", "
		     "\"type\": \"c\", \"bogus\": 1}]}",
		     "linux.devices[0].bogus: unknown field");
}

Test(oci, sysctl)
{
	cr_assert_eq(parse_with(", \"linux\": {\"sysctl\": {\"kernel.sem\": "
				"\"250 32000 100 128\", \"kernel.shmmax\": "
				"\"65536\", \"net.ipv4.ip_forward\": \"0\"}}"),
		     0, "%s", err.msg);
	cr_assert_eq(cfg.nsysctls, 3);
	cr_assert_str_eq(cfg.sysctls[0].name, "kernel.sem");
	cr_assert_str_eq(cfg.sysctls[1].value, "65536");
	refused_with(", \"linux\": {\"sysctl\": {\"kernel.sem\": \"250 1\"}}",
		     "linux.sysctl.kernel.sem: `250 1`: four numbers expected");
	refused_with(
		", \"linux\": {\"sysctl\": {\"kernel.sem\": "
		"\"250 32000 501 128\"}}",
		"`250 32000 501 128`: SEMOPM from 1 to 500: the sentry holds");
	refused_with(", \"linux\": {\"sysctl\": {\"kernel.shmmax\": \"x\"}}",
		     "linux.sysctl.kernel.shmmax: `x`: a number expected");
	refused_with(", \"linux\": {\"sysctl\": {\"kernel.shmmax\": 5}}",
		     "linux.sysctl.kernel.shmmax: a string expected");
	refused_with(", \"linux\": {\"sysctl\": {\"net.ipv4.ip_forward\": "
		     "\"1\"}}",
		     "linux.sysctl.net.ipv4.ip_forward: not supported by moat: "
		     "the sandbox's netstack never forwards packets");
	refused_with(", \"linux\": {\"sysctl\": "
		     "{\"net.ipv4.ip_local_port_range\": \"1024 65535\"}}",
		     "lwIP");
}

Test(oci, ping_group_range)
{
	cr_assert_eq(parse_with(", \"linux\": {\"sysctl\": "
				"{\"net.ipv4.ping_group_range\": \"0 0\"}}"),
		     0, "%s", err.msg);
	cr_assert(cfg.ping_range);
	cr_assert_eq(cfg.ping_hi, 0);
	refused_with(", \"linux\": {\"sysctl\": "
		     "{\"net.ipv4.ping_group_range\": \"0\"}}",
		     "two group ids");
}

Test(oci, masked_and_readonly_paths)
{
	cr_assert_eq(parse_with(", \"linux\": {\"maskedPaths\": [\"/etc/a\", "
				"\"rel/b\"], \"readonlyPaths\": [\"/ro\"]}"),
		     0, "%s", err.msg);
	cr_assert_str_eq(cfg.masked_paths[0], "/etc/a");
	cr_assert_str_eq(cfg.masked_paths[1], "/rel/b",
			 "taken from /, as runc");
	cr_assert_null(cfg.masked_paths[2]);
	cr_assert_str_eq(cfg.readonly_paths[0], "/ro");
	cr_assert_null(cfg.readonly_paths[1]);
	cr_assert_eq(parse_with(", \"linux\": {\"maskedPaths\": []}"), 0, "%s",
		     err.msg);
	cr_assert_null(cfg.masked_paths[0]);
	cr_assert_null(cfg.readonly_paths, "none given: NULL");
	refused_with(", \"linux\": {\"maskedPaths\": [\"/a\", 3]}",
		     "linux.maskedPaths[1]: a string expected");
	refused_with(", \"linux\": {\"readonlyPaths\": [\"\"]}",
		     "linux.readonlyPaths[0]: an empty path");
	refused_with(", \"linux\": {\"readonlyPaths\": \"/a\"}",
		     "linux.readonlyPaths: a list of strings expected");
}

Test(oci, resources_of_the_wrong_type)
{
	refused_with(", \"linux\": {\"resources\": {\"memory\": null}}",
		     "linux.resources.memory: an object expected");
	refused_with(", \"linux\": {\"resources\": {\"pids\": 5}}",
		     "linux.resources.pids: an object expected");
	refused_with(", \"linux\": {\"resources\": {\"cpu\": []}}",
		     "linux.resources.cpu: an object expected");
	cr_assert_eq(parse_with(", \"linux\": {\"resources\": {\"cpu\": "
				"{\"quota\": 9223372036854775807}}}"),
		     0, "%s", err.msg);
	cr_assert_float_eq(cfg.cpus, 4096, 1e-9);
}

Test(oci, moat_annotations)
{
	cr_assert_eq(parse_with(
			     ", \"annotations\": {\"dev.moat.net\": \"slirp\", "
			     "\"dev.moat.allow\": \"pypi.org:443, 10.0.0.1\", "
			     "\"dev.moat.timeout\": \"30\", \"other\": \"x\"}"),
		     0, "%s", err.msg);
	cr_assert_eq(cfg.net, NET_SLIRP);
	cr_assert_str_eq(cfg.allow, "pypi.org:443, 10.0.0.1");
	cr_assert_eq(cfg.timeout_s, 30);
	cr_assert_eq(cfg.nannotations, 4);
	refused_with(", \"annotations\": {\"dev.moat.net\": \"host\"}",
		     "annotations.dev.moat.net: `host`");
	refused_with(", \"annotations\": {\"dev.moat.bogus\": \"1\"}",
		     "unknown moat annotation");
	refused_with(", \"annotations\": {\"a\": 1}",
		     "annotations.a: a string");
}

/* dev.moat.credentials: the policy file's "credentials" list, by its
 * parser; what is wrong in it is named under the annotation. */
Test(oci, credentials_annotation)
{
	const struct credential *c;

	cr_assert_eq(parse_with(
			     ", \"annotations\": {\"dev.moat.credentials\": "
			     "\"[{\\\"name\\\": \\\"API_KEY\\\", "
			     "\\\"from\\\": \\\"env:REAL_KEY\\\", "
			     "\\\"hosts\\\": [\\\"api.example\\\"]}, "
			     "{\\\"name\\\": \\\"TOK\\\", "
			     "\\\"from\\\": \\\"file:/run/tok\\\", "
			     "\\\"hosts\\\": [\\\"*.example.org\\\"], "
			     "\\\"in\\\": [\\\"basic\\\"]}]\", "
			     "\"dev.moat.upstream-ca\": \"/etc/test-ca.pem\"}"),
		     0, "%s", err.msg);
	cr_assert_eq(cfg.cred.n, 2);
	c = &cfg.cred.v[0];
	cr_assert_str_eq(c->name, "API_KEY");
	cr_assert_eq(c->source, CRED_FROM_ENV);
	cr_assert_str_eq(c->src, "REAL_KEY");
	cr_assert_eq(c->nhosts, 1);
	cr_assert_str_eq(c->hosts[0], "api.example");
	cr_assert(c->where & CRED_IN_HEADER, "the default locations");
	c = &cfg.cred.v[1];
	cr_assert_eq(c->source, CRED_FROM_FILE);
	cr_assert_str_eq(c->src, "/run/tok");
	cr_assert_eq(c->where, CRED_IN_BASIC);
	cr_assert_str_eq(cfg.upstream_ca, "/etc/test-ca.pem");
	/* the annotation stays an annotation too (state.json shows it) */
	cr_assert_eq(cfg.nannotations, 2);
}

Test(oci, credentials_annotation_refused)
{
	refused_with(", \"annotations\": {\"dev.moat.credentials\": \"/f\"}",
		     "annotations.dev.moat.credentials: a JSON list of "
		     "credentials expected");
	refused_with(", \"annotations\": {\"dev.moat.credentials\": "
		     "\"{\\\"name\\\": \\\"A\\\"}\"}",
		     "annotations.dev.moat.credentials: a JSON list");
	/* a list, then more: it cannot add fields to what it is put in */
	refused_with(", \"annotations\": {\"dev.moat.credentials\": "
		     "\"[], \\\"inspect\\\": [\\\"*\\\"]\"}",
		     "annotations.dev.moat.credentials: a JSON list");
	/* a secret without hosts: the field is named */
	refused_with(", \"annotations\": {\"dev.moat.credentials\": "
		     "\"[{\\\"name\\\": \\\"A\\\", "
		     "\\\"from\\\": \\\"env:B\\\"}]\"}",
		     "annotations.dev.moat.credentials: credentials[0].hosts: "
		     "required");
	refused_with(", \"annotations\": {\"dev.moat.credentials\": "
		     "\"[{\\\"name\\\": \\\"A\\\", "
		     "\\\"from\\\": \\\"env:B\\\", \\\"hosts\\\": 3}]\"}",
		     "annotations.dev.moat.credentials: credentials[0].hosts");
	/* the engine passes no fds of the user's */
	refused_with(
		", \"annotations\": {\"dev.moat.credentials\": "
		"\"[{\\\"name\\\": \\\"A\\\", "
		"\\\"from\\\": \\\"fd:3\\\", "
		"\\\"hosts\\\": [\\\"a.example\\\"]}]\"}",
		"credentials[0].from: `fd:3`: an fd: source is for moat do");
	refused_with(", \"annotations\": {\"dev.moat.credentials\": "
		     "\"[{\\\"name\\\": \\\"A\\\", "
		     "\\\"from\\\": \\\"env:B\\\", "
		     "\\\"hosts\\\": [\\\"a.example\\\"]}, "
		     "{\\\"name\\\": \\\"A\\\", "
		     "\\\"from\\\": \\\"env:C\\\", "
		     "\\\"hosts\\\": [\\\"b.example\\\"]}]\"}",
		     "annotations.dev.moat.credentials: credentials[1].name: "
		     "`A` is named twice");
	refused_with(
		", \"annotations\": {\"dev.moat.upstream-ca\": \"ca.pem\"}",
		"annotations.dev.moat.upstream-ca: `ca.pem`: an absolute");
}

Test(oci, hooks)
{
	cr_assert_eq(parse_with(", \"hooks\": {\"prestart\": [{\"path\": "
				"\"/bin/true\", \"args\": [\"true\", \"x\"], "
				"\"timeout\": 5}], \"poststop\": [{\"path\": "
				"\"/bin/false\"}]}"),
		     0, "%s", err.msg);
	cr_assert_eq(cfg.hooks[OCI_HOOK_PRESTART].n, 1);
	cr_assert_str_eq(cfg.hooks[OCI_HOOK_PRESTART].h[0].args[1], "x");
	cr_assert_eq(cfg.hooks[OCI_HOOK_PRESTART].h[0].timeout, 5);
	cr_assert_eq(cfg.hooks[OCI_HOOK_POSTSTOP].n, 1);
	refused_with(", \"hooks\": {\"prestart\": [{\"path\": \"rel\"}]}",
		     "hooks.prestart[0].path: an absolute path");
	refused_with(", \"hooks\": {\"prestart\": [{\"args\": []}]}",
		     "path: required");
}

Test(oci, hooks_run_with_state_on_stdin)
{
	char out[] = "/tmp/moat-hook-XXXXXX", buf[256] = "";
	char *args[] = { "sh", "-c", NULL, NULL };
	char cmd[128];
	struct oci_hook h = { "/bin/sh", args, NULL, 5 };
	struct oci_hooks hs = { &h, 1 };
	FILE *f;
	int fd = mkstemp(out);

	cr_assert_geq(fd, 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cat > %s", out);
	args[2] = cmd;
	cr_assert_eq(oci_hooks_run(&hs, "prestart", "{\"id\":\"c1\"}", &err), 0,
		     "%s", err.msg);
	f = fopen(out, "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	unlink(out);
	cr_assert_str_eq(buf, "{\"id\":\"c1\"}");
	args[2] = "exit 3";
	cr_assert_eq(oci_hooks_run(&hs, "poststart", "{}", &err), -1, "%s",
		     err.msg);
	cr_assert(strstr(err.msg, "poststart: hook `/bin/sh`: exit status 3"),
		  "%s", err.msg);
	args[2] = "sleep 5";
	h.timeout = 1;
	cr_assert_eq(oci_hooks_run(&hs, "prestart", "{}", &err), -1);
	cr_assert(strstr(err.msg, "timed out"), "%s", err.msg);
}

Test(oci, process_json)
{
	struct oci_process pr;
	const char *text = "{\"args\": [\"ls\"], \"cwd\": \"/tmp\", "
			   "\"terminal\": true, \"env\": [\"X=1\"]}";

	cr_assert_eq(oci_process_parse(text, strlen(text), "p.json", &pr, &err),
		     0, "%s", err.msg);
	cr_assert_str_eq(pr.args[0], "ls");
	cr_assert(pr.terminal);
	oci_process_free(&pr);
	text = "{\"args\": [\"ls\"]}";
	cr_assert_eq(oci_process_parse(text, strlen(text), "p.json", &pr, &err),
		     -1);
	cr_assert(strstr(err.msg, "p.json:1: cwd: required"), "%s", err.msg);
	text = "{\"args\": [\"ls\"], \"cwd\": \"/\", \"oomScoreAdj\": -7}";
	cr_assert_eq(oci_process_parse(text, strlen(text), "p.json", &pr, &err),
		     0, "%s", err.msg);
	cr_assert(pr.has_oom_score_adj);
	cr_assert_eq(pr.oom_score_adj, -7);
	oci_process_free(&pr);
	text = "{\"args\": [\"ls\"], \"cwd\": \"/\", \"oomScoreAdj\": 1001}";
	cr_assert_eq(oci_process_parse(text, strlen(text), "p.json", &pr, &err),
		     -1);
	cr_assert(strstr(err.msg, "oomScoreAdj: an integer from -1000 to 1000"),
		  "%s", err.msg);
}
