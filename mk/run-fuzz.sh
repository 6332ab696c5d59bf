#!/usr/bin/env bash
# Run the libFuzzer targets built in build/fuzz/.
#   mk/run-fuzz.sh SECONDS NAME...   fuzz each target for SECONDS
#   mk/run-fuzz.sh smoke NAME...     seeds + 2000 mutations, fixed seed
# Seeds in tests/fuzz/corpus/<name>/ are copied into build/fuzz/corpus/<name>/
# so a run never modifies the repo; a dictionary tests/fuzz/<name>.dict is
# used when present.  Crashes land in build/fuzz/artifacts/<name>/.
set -uo pipefail
cd "$(dirname "$0")/.."

mode=$1
shift
if [ $# -eq 0 ]; then
	echo "fuzz: no targets under tests/fuzz/"
	exit 0
fi

failed=()
for name in "$@"; do
	bin=build/fuzz/fuzz_$name
	corpus=build/fuzz/corpus/$name
	artifacts=build/fuzz/artifacts/$name/
	mkdir -p "$corpus" "$artifacts"
	if [ -d "tests/fuzz/corpus/$name" ]; then
		cp -a "tests/fuzz/corpus/$name/." "$corpus/"
	fi
	args=(-artifact_prefix="$artifacts" -print_final_stats=0)
	[ -f "tests/fuzz/$name.dict" ] && args+=(-dict="tests/fuzz/$name.dict")
	if [ "$mode" = smoke ]; then
		args+=(-seed=1 -runs=2000 -max_total_time=60)
	else
		args+=(-max_total_time="$mode" -print_final_stats=1)
	fi
	echo "== fuzz ($mode): $name"
	if ! "$bin" "${args[@]}" "$corpus" 2>"build/fuzz/$name.log"; then
		tail -40 "build/fuzz/$name.log" >&2
		failed+=("$name")
	else
		grep -E '^(Done|stat::number_of_executed_units|#[0-9]+ +DONE)' \
			"build/fuzz/$name.log" | tail -2
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz ($mode): FAILED: ${failed[*]} (inputs in build/fuzz/artifacts/)" >&2
	exit 1
fi
echo "fuzz ($mode): $# targets ok"
