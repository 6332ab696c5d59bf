#!/usr/bin/env bash
# tests/oci/validation.sh RUNTIME_TOOLS_DIR [OUT]: the OCI runtime-tools
# validation suite (opencontainers/runtime-tools, validation/) against moat
# and runc side by side; `make test-oci-validation RUNTIME_TOOLS=DIR` runs
# it. Not part of `make test`: the suite is not in this repo (nor vendored)
# and needs a checkout of it, given by its path.
#
# The checkout is copied to OUT/src and built there (the original is never
# changed): `make runtimetest validation-executables` with Debian's Go and
# the checkout's vendor/ directory, no network. Debian 12's Go is 1.19
# while the suite's go.mod says 1.21: tests/oci/validation-go119.sh makes
# the smallest change that builds it (docs/oci.md says what and why).
#
# Each program runs once per runtime (as root, RT_TIMEOUT seconds at most,
# 60 by default), its TAP in OUT/<runtime>/<program>.tap (RT_REPORT_ONLY=1
# writes the report again from those, running nothing). The report,
# OUT/report.md: per program, assertions passed, failed and skipped under
# each; then every assertion runc passes and moat does not, with the reason
# from tests/oci/validation-reasons.txt (a line "PROGRAM:REGEX<TAB>reason":
# the first whose program and description match), or "no reason recorded".
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
SRC=${1:?usage: tests/oci/validation.sh RUNTIME_TOOLS_DIR [OUT]}
OUT=${2:-$root/build/oci-validation}
MOAT=${MOAT:-$root/build/moat}
RUNC=${RUNC:-$(command -v runc)}
TMO=${RT_TIMEOUT:-60}
REASONS=$root/tests/oci/validation-reasons.txt

die() { echo "validation: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (the suite creates containers)"
[ -d "$SRC/validation" ] || die "$SRC is no runtime-tools checkout (no validation/)"
[ -x "$MOAT" ] || die "$MOAT not built (make all)"
[ -n "$RUNC" ] || die "runc not installed (make deps)"
command -v go >/dev/null || die "go not installed (apt-get install golang-go)"

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
B=$OUT/src
if [ ! -x "$B/runtimetest" ] || [ "$SRC" -nt "$B/runtimetest" ]; then
	rm -rf "$B"
	mkdir -p "$B"
	(cd "$SRC" && tar -c --exclude=.git .) | (cd "$B" && tar -x) || die "copying $SRC"
	bash "$root/tests/oci/validation-go119.sh" "$B" >"$OUT/build.log" 2>&1 ||
		die "the Go 1.19 change failed (see $OUT/build.log)"
	(cd "$B" && GOFLAGS=-mod=vendor GOCACHE=$OUT/gocache make runtimetest validation-executables) \
		>>"$OUT/build.log" 2>&1 || die "the suite did not build (see $OUT/build.log)"
fi

# A container a program left (a failed one): gone before the next program.
# A program that ran without a mount namespace of its own (linux_ns_itype
# under runc) leaves the container's /proc, /sys and /dev mounted under its
# bundle in /tmp: unmounted first, and rm never crosses a mount.
leftovers()
{
	local rt=$1 id d
	for id in $("$rt" list -q 2>/dev/null); do
		"$rt" kill "$id" KILL >/dev/null 2>&1
		"$rt" delete --force "$id" >/dev/null 2>&1
	done
	for d in /tmp/ocitest*; do
		[ -d "$d" ] || continue
		grep -q " $d[/ ]" /proc/self/mountinfo && umount -R -l "$d" 2>/dev/null
		grep -q " $d[/ ]" /proc/self/mountinfo || rm -rf --one-file-system "$d"
	done
}

run_all()
{
	local name=$1 rt=$2 t n
	mkdir -p "$OUT/$name"
	for t in "$B"/validation/*/*.t; do
		n=$(basename "$t" .t)
		leftovers "$rt"
		(cd "$B" && RUNTIME=$rt timeout -k 10 "$TMO" "$t" </dev/null \
			>"$OUT/$name/$n.tap" 2>"$OUT/$name/$n.err")
		echo $? >"$OUT/$name/$n.rc"
	done
	leftovers "$rt"
}

# RT_REPORT_ONLY=1: the report again from OUT's TAP, nothing run
if [ -z "${RT_REPORT_ONLY:-}" ]; then
	echo "validation: runc ($RUNC)" >&2
	run_all runc "$RUNC"
	echo "validation: moat ($MOAT)" >&2
	run_all moat "$MOAT"
fi

# The report. Only column-0 TAP lines count: a program's nested runtimetest
# output, embedded in a YAML block, is indented.
python3 - "$OUT" "$REASONS" "$(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
	"$("$RUNC" --version | head -1)" "$("$MOAT" --version 2>/dev/null | head -1)" <<'PY'
import os, re, sys

out, reasons_file, rev, runc_v, moat_v = sys.argv[1:6]
line_re = re.compile(r'^(not ok|ok) (\d+)(?: - |\s*)?(.*)$')


def results(rt):
    res = {}
    d = os.path.join(out, rt)
    for f in sorted(os.listdir(d)):
        if not f.endswith('.tap'):
            continue
        prog = f[:-4]
        r = {}
        with open(os.path.join(d, f), errors='replace') as fh:
            for line in fh:
                m = line_re.match(line.rstrip('\n'))
                if not m:
                    continue
                verdict, num, desc = m.groups()
                skip = re.search(r'#\s*skip', desc, re.I) is not None
                r[int(num)] = ('skip' if skip else verdict, desc)
        rc = open(os.path.join(d, prog + '.rc')).read().strip()
        res[prog] = (r, rc)
    return res


reasons = []
if os.path.exists(reasons_file):
    for line in open(reasons_file):
        line = line.rstrip('\n')
        if not line or line.startswith('#') or '\t' not in line:
            continue
        pat, why = line.split('\t', 1)
        prog, _, rx = pat.partition(':')
        reasons.append((prog, re.compile(rx), why.strip()))


def reason(prog, desc):
    for p, rx, why in reasons:
        if (p == '*' or p == prog) and rx.search(desc):
            return why
    return 'no reason recorded'


runc, moat = results('runc'), results('moat')
tot = {k: [0, 0, 0] for k in ('runc', 'moat')}
rows, diffs = [], []
for prog in sorted(set(runc) | set(moat)):
    cells = []
    for name, res in (('runc', runc), ('moat', moat)):
        r, rc = res.get(prog, ({}, 'missing'))
        c = [sum(1 for v, _ in r.values() if v == x) for x in ('ok', 'not ok', 'skip')]
        for i in range(3):
            tot[name][i] += c[i]
        cells.append('%d / %d / %d%s' % (c[0], c[1], c[2], '' if rc == '0' else ' (exit %s)' % rc))
    rows.append('| %s | %s | %s |' % (prog, cells[0], cells[1]))
    rr = runc.get(prog, ({}, ''))[0]
    mr = moat.get(prog, ({}, ''))[0]
    # by description, not number: runtimetest checks some things in Go's
    # map order, which moves the numbers from run to run
    moat_ok = {}
    moat_v = {}
    for num, (v, desc) in mr.items():
        moat_v.setdefault(desc, v)
        if v == 'ok':
            moat_ok[desc] = moat_ok.get(desc, 0) + 1
    for num, (v, desc) in sorted(rr.items()):
        if v != 'ok':
            continue
        if moat_ok.get(desc, 0) > 0:
            moat_ok[desc] -= 1
            continue
        mv = moat_v.get(desc, 'not run')
        diffs.append('| %s | %d | %s | %s | %s |' % (prog, num, desc.replace('|', '\\|')[:120], mv, reason(prog, desc)))

print_ = []
print_.append('# OCI runtime-tools validation: moat and runc\n')
print_.append('runtime-tools %s; %s; %s. Cells: assertions passed / failed / skipped '
              '(a program that exited non-zero says so).\n' % (rev, runc_v, moat_v))
print_.append('| total | runc %d / %d / %d | moat %d / %d / %d |' % (*tot['runc'], *tot['moat']))
print_.append('|---|---:|---:|')
print_.extend(rows)
print_.append('\n## Passed under runc, not under moat (%d)\n' % len(diffs))
print_.append('| program | # | assertion | moat | reason |')
print_.append('|---|---:|---|---|---|')
print_.extend(diffs)
text = '\n'.join(print_) + '\n'
open(os.path.join(out, 'report.md'), 'w').write(text)
print('runc: %d passed, %d failed, %d skipped; moat: %d passed, %d failed, %d skipped; '
      '%d passed under runc only; report: %s' % (*tot['runc'], *tot['moat'], len(diffs),
                                                 os.path.join(out, 'report.md')))
PY
