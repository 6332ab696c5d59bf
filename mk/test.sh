#!/usr/bin/env bash
# `make test`: every phase runs, even after an earlier one failed (except
# when build/moat itself does not build), and the run ends with one line
# "test: N passed, N failed" that adds up the unit cases (Criterion), the
# e2e/escape cases, and one check each for format, docs and fuzz smoke.
# Logs of each phase: build/test-logs/<phase>.log.
set -uo pipefail
cd "$(dirname "$0")/.."

MAKE=${MAKE:-make}
NPROC=${NPROC:-$(nproc)}
logs=build/test-logs
mkdir -p "$logs"

passed=0
failed=0
failed_phases=()

strip_ansi() { sed -e 's/\x1b\[[0-9;]*m//g'; }

# phase NAME KIND MAKE-TARGETS...
#   KIND: check (one pass/fail), criterion (sum Synthesis lines),
#         e2e (the harness's "N passed, N failed" line)
phase() {
	local name=$1 kind=$2
	shift 2
	local log=$logs/$name.log rc
	echo
	echo "==== $name"
	$MAKE --no-print-directory -j"$NPROC" "$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	local p=0 f=0
	case $kind in
	criterion)
		read -r p f < <(strip_ansi <"$log" | awk '
			/Synthesis: Tested:/ {
				for (i = 1; i <= NF; i++) {
					if ($i == "Passing:") p += $(i+1)
					if ($i == "Failing:") f += $(i+1)
					if ($i == "Crashing:") f += $(i+1)
				}
			}
			END { print p+0, f+0 }')
		;;
	e2e)
		read -r p f < <(strip_ansi <"$log" |
			sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/p' | tail -1)
		p=${p:-0}
		f=${f:-0}
		;;
	check)
		if [ "$rc" -eq 0 ]; then p=1; else f=1; fi
		;;
	esac
	# A phase that failed without reporting a failed case (a build error, a
	# suite that crashed before its synthesis) still counts as one failure.
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$rc" -ne 0 ]; then
		failed_phases+=("$name")
	fi
	return "$rc"
}

summary() {
	echo
	if [ ${#failed_phases[@]} -gt 0 ]; then
		echo "failed phases: ${failed_phases[*]} (logs in $logs/)"
	fi
	echo "test: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

if ! phase build check all; then
	echo "build failed; later phases need build/moat" >&2
	summary
fi
phase format-check check format-check
phase docs-check check docs-check
phase unit criterion unit
phase unit-asan criterion unit-asan
phase fuzz-smoke check fuzz-smoke
phase e2e e2e e2e
phase e2e-asan e2e e2e-asan
phase cpython e2e cpython
summary
