/* oci/config.h: an OCI bundle's config.json (runtime-spec 1.x), parsed
 * with json-c (lib/jdoc.h) and checked against what moat can honour.
 *
 * Every field is one of three kinds (docs/oci.md has the whole list):
 *  - honoured: it changes what the container gets (process, root, mounts,
 *    maskedPaths, readonlyPaths, hostname, resources, hooks, rlimits,
 *    dev.moat.* annotations);
 *  - given by the sandbox already, accepted and recorded: the container
 *    always has its own namespaces, a synthetic /proc, /sys and /dev, no
 *    host capability and no host syscall (seccomp,
 *    apparmor/selinux labels, uid mappings);
 *  - refused: any other property of the runtime spec, with a message
 *    naming the field and its line ("config.json:9: linux.intelRdt: not
 *    supported by moat"); a known property of the wrong JSON type too;
 *  - unknown (no property of the runtime spec): ignored, as the spec
 *    requires, with a warning naming it (oci_config.warnings).
 * Nothing is silently ignored.
 */
#ifndef MOAT_OCI_CONFIG_H
#define MOAT_OCI_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/util.h"
#include "policy/credentials.h"
#include "sentry/caps.h"

#define OCI_CONFIG_MAX (4 << 20) /* bytes of config.json */
#define OCI_VERSION "1.1.0"	 /* the runtime-spec version moat implements */

enum oci_mount_kind {
	OCI_MNT_BIND,	/* a host directory or file: a gofer of its own */
	OCI_MNT_TMPFS,	/* the sentry's own tmpfs */
	OCI_MNT_SYNTH,	/* /proc, /sys, /dev, /dev/pts, ...: the sentry's */
	OCI_MNT_IGNORE, /* the sentry gives it already (cgroup, mqueue) */
};

struct oci_mount {
	char *dst;     /* canonical absolute path */
	char *type;    /* as given ("bind", "tmpfs", "proc", ...) */
	char *src;     /* bind: absolute host path (from the bundle);
			* tmpfs: the source as given, or NULL */
	int kind;      /* enum oci_mount_kind */
	bool ro;       /* "ro" among the options */
	bool noexec;   /* "noexec" (and no "exec" after it) */
	uint64_t size; /* tmpfs size=, 0: the default */
	mode_t mode;   /* tmpfs mode= (default 01777) */
	uid_t uid;     /* tmpfs uid=, gid= (default 0) */
	gid_t gid;
};

struct oci_hook {
	char *path;
	char **args; /* NULL-terminated; NULL: just path */
	char **env;  /* NULL-terminated; NULL: empty */
	int timeout; /* seconds, 0: none */
};

struct oci_hooks {
	struct oci_hook *h;
	size_t n;
};

enum oci_hook_kind {
	OCI_HOOK_PRESTART,
	OCI_HOOK_CREATE_RUNTIME,
	OCI_HOOK_POSTSTART,
	OCI_HOOK_POSTSTOP,
	OCI_HOOK_KINDS
};

struct oci_rlimit {
	int resource; /* RLIMIT_* */
	uint64_t soft, hard;
};

/* linux.devices: a node of the sandbox's /dev (sentry/fs_dev.c). */
#define OCI_DEVICES_MAX 256
struct oci_device {
	char *path;  /* canonical, below /dev */
	mode_t mode; /* S_IFCHR, S_IFBLK or S_IFIFO, and fileMode's
			 * permission bits (default 0666, as runc's) */
	uint32_t major, minor;
	uid_t uid;
	gid_t gid;
};

/* linux.uidMappings, gidMappings: what /proc/<pid>/uid_map shows. */
#define OCI_IDMAPS_MAX 340 /* Linux's lines of a uid_map */
struct oci_idmap {
	uint32_t inside, outside, count; /* containerID, hostID, size */
};

struct oci_annotation {
	char *key, *value;
};

struct oci_process {
	char **args; /* NULL-terminated, at least one */
	char **env;  /* NULL-terminated */
	char *cwd;   /* absolute */
	bool terminal;
	uid_t uid;
	gid_t gid;
	gid_t *gids; /* additionalGids */
	size_t ngids;
	bool has_umask;
	mode_t umask;
	struct oci_rlimit *rlimits;
	size_t nrlimits;
	bool no_new_privileges;
	/* capabilities, as runc sets them before the exec (sentry/caps.h);
	 * has_caps false: none given, the process keeps root's */
	bool has_caps;
	struct cap_sets caps;
	unsigned console_rows, console_cols; /* consoleSize, 0: none */
	/* oci_process_parse: its unknown properties, one line each
	 * ("p.json:3: user.bogus: unknown property, ignored\n"), or NULL */
	char *warnings;
	bool has_oom_score_adj; /* oomScoreAdj */
	int oom_score_adj;
};

struct oci_config {
	char *oci_version;
	char *bundle; /* absolute */
	char *root;   /* absolute path of the rootfs */
	bool root_ro;
	char *hostname; /* NULL: none given */
	struct oci_process process;
	struct oci_mount *mounts;
	size_t nmounts;
	struct oci_hooks hooks[OCI_HOOK_KINDS];
	struct oci_annotation *annotations;
	size_t nannotations;
	/* linux.resources (0: none) */
	uint64_t memory;
	int64_t pids;
	double cpus;
	/* the rest of linux.resources that cgroups hold, written at
	 * cgroupsPath as runc writes them (sentry/limits.c) */
	int64_t memory_swap;	    /* memory+swap; 0: none, -1: unlimited */
	int64_t memory_reservation; /* 0: none, -1: unlimited */
	int64_t swappiness;	    /* -1: none */
	bool disable_oom_killer;
	uint64_t cpu_shares;		 /* 0: none */
	int64_t cpu_quota;		 /* 0: none, -1: unlimited */
	uint64_t cpu_period;		 /* 0: none */
	char *cpuset_cpus, *cpuset_mems; /* NULL: none */
	/* linux.cgroupsPath; NULL: none given (the container's ID, as runc) */
	char *cgroups_path;
	/* dev.moat.* annotations */
	int net;	   /* enum net_mode */
	char *allow;	   /* dev.moat.allow: comma-separated rules */
	char *deny;	   /* dev.moat.deny */
	char *policy_file; /* dev.moat.policy */
	char *dns;	   /* dev.moat.dns */
	/* dev.moat.credentials: the policy file's "credentials" list, as
	 * JSON, parsed (policy/credentials.h); checked alone here, and with
	 * dev.moat.policy's when the two are put together (cli/oci.c) */
	struct cred_policy cred;
	char *upstream_ca; /* dev.moat.upstream-ca: a host path */
	uint64_t disk;	   /* dev.moat.disk */
	int timeout_s;	   /* dev.moat.timeout */
	/* linux.namespaces: the network namespace's path, or NULL */
	char *netns;
	/* linux.maskedPaths, linux.readonlyPaths: absolute paths in the
	 * container (NULL-terminated; NULL: none), applied by the sentry
	 * after the mounts, as runc applies them */
	char **masked_paths;
	char **readonly_paths;
	/* linux.namespaces entries that name a path, for oci_config_load to
	 * check on the host: each must be a namespace file of its type */
	struct oci_nspath {
		int nstype;   /* CLONE_NEW* */
		size_t index; /* in linux.namespaces, for the message */
		char *path;
	} * nspaths;
	size_t nnspaths;
	struct oci_device *devices; /* linux.devices */
	size_t ndevices;
	struct oci_idmap *uid_maps, *gid_maps; /* linux.{uid,gid}Mappings */
	size_t nuid_maps, ngid_maps;
	/* linux.sysctl: net.ipv4.ping_group_range, and the others the sentry
	 * honours (sentry/sysctl.h), checked, in the config's order */
	bool ping_range;
	gid_t ping_lo, ping_hi;
	struct oci_sysctl {
		char *name, *value;
	} * sysctls;
	size_t nsysctls;
	/* the properties the runtime spec does not define, ignored: one
	 * line each ("config.json:9: process.bogus: unknown property,
	 * ignored\n"), for the caller to show; NULL: none */
	char *warnings;
};

/* Parse and check text (len bytes) as the config.json of the bundle at
 * bundle_dir (absolute). 0 and *out filled (oci_config_free), or -1 and
 * err saying what, and where. Paths are not looked at on the host. */
int oci_config_parse(const char *text, size_t len, const char *bundle_dir,
		     struct oci_config *out, struct moat_error *err);
/* bundle_dir/config.json, read and parsed; the rootfs must be a
 * directory, and each namespace path a namespace file of its entry's
 * type (as runc's setns with the type would insist). */
int oci_config_load(const char *bundle_dir, struct oci_config *out,
		    struct moat_error *err);
void oci_config_free(struct oci_config *c);

/* A process.json (`moat exec --process F`): the "process" object alone. */
int oci_process_parse(const char *text, size_t len, const char *origin,
		      struct oci_process *out, struct moat_error *err);
void oci_process_free(struct oci_process *p);

/* The default config.json of `moat spec` (malloc'd JSON text). */
char *oci_spec_default(void);

/* Run the hooks of one kind on the host, each given state (the state
 * JSON) on stdin; 0, or -1 with err naming the hook that failed. */
int oci_hooks_run(const struct oci_hooks *hooks, const char *kind_name,
		  const char *state, struct moat_error *err);

#endif
