#!/usr/bin/env bash
# tests/oci/validation-go119.sh DIR: the smallest change that builds a copy
# of opencontainers/runtime-tools (go.mod "go 1.21") with Debian 12's Go
# 1.19 from its vendor/ directory, no network (tests/oci/validation.sh runs
# it on its own copy; docs/oci.md says why). With Go 1.21 or later it
# changes nothing. Idempotent.
#   1. go.mod and vendor/modules.txt: "go 1.21" lowered to 1.19, so that
#      Go 1.19 accepts the module (and drops the toolchain line).
#   2. the standard library's "slices" (1.21): a vendored stand-in with the
#      two functions used (Contains, DeleteFunc); Go 1.19 resolves a
#      dotless import missing from GOROOT under vendor/.
#   3. sync.OnceValues / sync.OnceValue (1.21) and strings.CutPrefix (1.20),
#      in vendored moby/sys/capability and in validate/capabilities: local
#      stand-ins of the same behaviour.
set -euo pipefail
D=${1:?usage: tests/oci/validation-go119.sh RUNTIME_TOOLS_DIR}
cd "$D"
minor=$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
if [ "${minor:-0}" -ge 21 ]; then
	echo "validation-go119: Go 1.$minor builds it as it is"
	exit 0
fi
sed -i 's/^go 1\.2[0-9]*\(\.[0-9]*\)\?$/go 1.19/; /^toolchain /d' go.mod
sed -i 's/^## explicit; go 1\.2[0-9]*\(\.[0-9]*\)\?$/## explicit; go 1.19/' vendor/modules.txt
if [ ! -f vendor/slices/slices.go ]; then
	mkdir -p vendor/slices
	cat >vendor/slices/slices.go <<'GO'
// Package slices stands in for Go 1.21's, for Go 1.19: what runtime-tools
// and moby/sys/capability use of it.
package slices

func Contains[S ~[]E, E comparable](s S, v E) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func DeleteFunc[S ~[]E, E any](s S, del func(E) bool) S {
	out := s[:0]
	for _, x := range s {
		if !del(x) {
			out = append(out, x)
		}
	}
	return out
}
GO
fi
C=vendor/github.com/moby/sys/capability
if [ -d "$C" ] && grep -q 'sync\.OnceValues(\|strings\.CutPrefix(' "$C"/*.go; then
	cat >"$C/compat_go119.go" <<'GO'
package capability

import (
	"strings"
	"sync"
)

// onceValues stands in for Go 1.21's sync.OnceValues.
func onceValues[T1, T2 any](f func() (T1, T2)) func() (T1, T2) {
	var once sync.Once
	var r1 T1
	var r2 T2
	return func() (T1, T2) {
		once.Do(func() { r1, r2 = f() })
		return r1, r2
	}
}

// cutPrefix stands in for Go 1.20's strings.CutPrefix.
func cutPrefix(s, prefix string) (string, bool) {
	if !strings.HasPrefix(s, prefix) {
		return s, false
	}
	return s[len(prefix):], true
}
GO
	sed -i 's/sync\.OnceValues(/onceValues(/g; s/strings\.CutPrefix(/cutPrefix(/g' "$C"/*.go
	# an import left unused by the change
	for f in "$C"/*.go; do
		[ "$f" = "$C/compat_go119.go" ] && continue
		for pkg in sync strings; do
			grep -q "\b$pkg\." "$f" || sed -i "/^\t\"$pkg\"$/d" "$f"
		done
	done
fi
V=validate/capabilities
if grep -q 'sync\.OnceValue(' "$V/validate.go" 2>/dev/null; then
	cat >"$V/compat_go119.go" <<'GO'
package capabilities

import "sync"

// onceValue stands in for Go 1.21's sync.OnceValue.
func onceValue[T any](f func() T) func() T {
	var once sync.Once
	var r T
	return func() T {
		once.Do(func() { r = f() })
		return r
	}
}
GO
	sed -i 's/sync\.OnceValue(/onceValue(/g' "$V/validate.go"
	grep -q '\bsync\.' "$V/validate.go" || sed -i '/^\t"sync"$/d' "$V/validate.go"
fi
echo "validation-go119: applied to $D"
