#!/usr/bin/env bash
# Credentials, live (docs/credentials.md "Live control"): `moat secret
# rotate`, `revoke` and `set` while the sandbox runs, and the OCI
# annotation dev.moat.credentials. Rotate keeps the placeholder and the next request
# carries the new value; revoke blocks the next request (the broker's 403
# and an audit line) and resets the brokered connections that are open.
# After every case no value is anywhere the guest or the user sees: the
# guest's output, the audit log, `moat policy show`.
#
# The guest and the test take turns through a directory the guest may
# write (--mount rw): the guest says it made its first request, the test
# changes the secret, then tells the guest to go on. The upstreams are
# tests/e2e/lib.sh's echo servers in network namespaces (testkit_up),
# which record what they received.
. "$(dirname "$0")/../e2e/lib.sh"

AUDIT=$E2E_TMP/audit.jsonl

if ! net_ok; then
	echo "test_credentials_live.sh: needs root and iproute2"
	e2e_done
fi
testkit_up || {
	echo "FAIL  test_credentials_live.sh: the test hosts did not come up"
	exit 1
}

new_value()
{
	printf 'sk-live-%s' "$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
}

# A fresh directory the guest writes its turns to, at /sync.
sync_dir()
{
	SYNC=$(mktemp -d "$E2E_TMP/sync.XXXXXX")
	chmod 777 "$SYNC"
}

# The guest's side of a turn, in sh: wait for /sync/go (30 s at most).
GUEST_WAIT='i=0; while [ ! -e /sync/go ]; do sleep 0.1; i=$((i+1)); [ $i -lt 300 ] || exit 9; done'

# box NAME [moat do options] -- CMD...: a named sandbox on the test
# hosts' network, in the background (BOX_PID; output in box.out).
box()
{
	local name=$1
	shift
	timeout -k 5 "$MOAT_TIMEOUT" "$MOAT" do --name "$name" --net=slirp \
		--dns "$KIT_DNS" --audit "$AUDIT" --upstream-ca "$KIT_CA_PEM" \
		--allow api.test:443+private --mount "$SYNC:/sync:rw" "$@" \
		>box.out 2>&1 &
	BOX_PID=$!
}

# turn: wait until the guest has made its first request (30 s at most).
turn()
{
	for _ in $(seq 300); do
		[ -e "$SYNC/one" ] && return 0
		kill -0 "$BOX_PID" 2>/dev/null || fail "the sandbox ended early: $(cat box.out)"
		sleep 0.1
	done
	fail "the guest never made its first request: $(cat box.out)"
}

go_on()
{
	touch "$SYNC/go"
	wait "$BOX_PID"
	BOX_STATUS=$?
}

# No value in what the guest or the user sees.
nowhere()
{
	local v f
	for v in "$@"; do
		for f in box.out "$AUDIT"; do
			[ -f "$f" ] || continue
			if grep -qF -- "$v" "$f"; then
				fail "a value is in $f: $(grep -F -- "$v" "$f" | head -3)"
			fi
		done
	done
}

received() { cat "${ECHO_REC[$1]}"; }

# A case's start: its own sync directory, echo records and audit log.
fresh_case()
{
	sync_dir
	echo_reset
	: >"$AUDIT"
}

# The request a host received for path P, as one JSON line.
request_for() { grep -F "\"path\":\"$2\"" "${ECHO_REC[$1]}"; }

t_rotate_keeps_the_placeholder()
{
	local n=rot-$$ s1 s2 p
	s1=$(new_value) s2=$(new_value)
	export REAL_KEY=$s1 NEXT_KEY=$s2
	sync_dir
	echo_reset
	box "$n" --secret API_KEY=env:REAL_KEY@api.test -- sh -c '
		echo "P=$API_KEY"
		curl -sS -H "Authorization: Bearer $API_KEY" https://api.test/one; echo
		touch /sync/one
		'"$GUEST_WAIT"'
		curl -sS -H "Authorization: Bearer $API_KEY" https://api.test/two; echo
		echo "P2=$API_KEY"'
	turn
	# one that fails changes nothing, and says why
	assert_status 1 moat secret rotate "$n" NO_SUCH_KEY env:NEXT_KEY
	assert_contains "$ERR" "no such secret"
	assert_status 0 moat secret rotate "$n" API_KEY env:NEXT_KEY
	go_on
	cat box.out
	assert_eq 0 "$BOX_STATUS" "the guest ran to its end"
	p=$(sed -n 's/^P=//p' box.out)
	[ -n "$p" ] || fail "no placeholder"
	assert_contains "$(cat box.out)" "P2=$p" "the placeholder stayed"
	assert_contains "$(request_for api /one)" "Bearer $s1" "the first request had the first value"
	assert_contains "$(request_for api /two)" "Bearer $s2" "the next one had the new value"
	assert_not_contains "$(request_for api /two)" "$s1" "and nothing of the old"
	# the guest saw only the placeholder, twice
	assert_eq 2 "$(grep -cF "Bearer $p" box.out)" "the echoes show the placeholder"
	grep -F '"event":"secret-rotate"' "$AUDIT" | grep -qF '"secret":"API_KEY","result":0' ||
		fail "no audit line for the rotate: $(grep secret- "$AUDIT")"
	nowhere "$s1" "$s2"
}

t_revoke_blocks_the_next_request()
{
	local n=rev-$$ s1
	s1=$(new_value)
	export REAL_KEY=$s1
	fresh_case
	box "$n" --secret API_KEY=env:REAL_KEY@api.test -- sh -c '
		curl -sS -H "Authorization: Bearer $API_KEY" https://api.test/one; echo
		touch /sync/one
		'"$GUEST_WAIT"'
		curl -sS -w "status=%{http_code}\n" -H "Authorization: Bearer $API_KEY" https://api.test/two'
	turn
	# an fd that is not a sealed memfd is refused before the broker sees it
	capture $PY -c '
import array, os, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
fd = os.open("/etc/hostname", os.O_RDONLY)
s.sendmsg([b"secret-rotate API_KEY\n"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
print(s.recv(4096).decode().strip())' "/run/moat/$n"
	assert_contains "$OUT" "must come as a sealed memfd"
	assert_status 0 moat secret revoke "$n" API_KEY
	go_on
	cat box.out
	assert_contains "$(request_for api /one)" "Bearer $s1" "before the revoke: swapped"
	assert_contains "$(cat box.out)" "status=403" "after it: the broker's 403"
	assert_contains "$(cat box.out)" "moat: blocked" "which says why"
	[ -z "$(request_for api /two)" ] || fail "the blocked request went upstream: $(request_for api /two)"
	grep -F '"event":"secret-revoke"' "$AUDIT" | grep -qF '"result":0' ||
		fail "no audit line for the revoke"
	grep '"event":"credential"' "$AUDIT" | grep -q '"verdict":"blocked"' ||
		fail "no audit line for the blocked request: $(cat "$AUDIT")"
	nowhere "$s1"
}

# A keep-alive connection open across the revoke is reset: what was sent
# on it with the value swapped in cannot be followed by more.
t_revoke_closes_open_connections()
{
	local n=rcl-$$ s1
	s1=$(new_value)
	export REAL_KEY=$s1
	fresh_case
	box "$n" --secret API_KEY=env:REAL_KEY@api.test -- python3 -c '
import http.client, os, ssl, time
h = {"Authorization": "Bearer " + os.environ["API_KEY"]}
c = http.client.HTTPSConnection("api.test", context=ssl.create_default_context(), timeout=20)
c.request("GET", "/one", headers=h)
r = c.getresponse()
print("first", r.status, len(r.read()))
open("/sync/one", "w").close()
for _ in range(300):
    if os.path.exists("/sync/go"):
        break
    time.sleep(0.1)
try:
    c.request("GET", "/two", headers=h)
    r = c.getresponse()
    print("second", r.status, r.read()[:80])
except Exception as e:
    print("second failed:", type(e).__name__)'
	turn
	assert_status 0 moat secret revoke "$n" API_KEY
	go_on
	cat box.out
	assert_contains "$(cat box.out)" "first 200" "the first request went through"
	assert_contains "$(cat box.out)" "second failed:" "the open connection was closed"
	[ -z "$(request_for api /two)" ] || fail "the second request went upstream"
	grep -F '"event":"secret-revoke"' "$AUDIT" | grep -q '"flows_closed":[1-9]' ||
		fail "the revoke closed no flow: $(grep secret- "$AUDIT")"
	nowhere "$s1"
}

# dev.moat.credentials: an OCI container's credentials, from its
# annotation. Over plain HTTP to a host the credential opts in for
# (plain_http), so that busybox's wget is client enough.
t_oci_annotation_credentials()
{
	local b=$E2E_TMP/ocib root=$E2E_TMP/ociroot s1 creds
	s1=$(new_value)
	export REAL_KEY=$s1
	echo_reset
	. "$E2E_ROOT/tests/oci/lib_oci.sh"
	trap 'oci_cleanup' EXIT
	creds='[{"name": "API_KEY", "from": "env:REAL_KEY", "hosts": ["plain.test"], "plain_http": true, "ports": [80]}]'
	make_bundle "$b" '["sh", "-c", "echo P=$API_KEY; wget -q -O - --header \"Authorization: Bearer $API_KEY\" http://plain.test/echo; echo"]' \
		"c['annotations']={'dev.moat.net':'slirp','dev.moat.dns':'$KIT_DNS','dev.moat.allow':'plain.test:80+private','dev.moat.credentials':'''$creds''','dev.moat.upstream-ca':'$KIT_CA_PEM'}" ||
		fail "bundle"
	ln -sf busybox "$b/rootfs/bin/wget"
	# the sentry names its resolver in the rootfs's file, if it has one
	: >"$b/rootfs/etc/resolv.conf"
	mkdir -p "$root"
	capture timeout -k 5 60 "$MOAT" --root "$root" run --bundle "$b" "oci-cred-$$"
	echo "$OUT"
	echo "$ERR"
	assert_eq 0 "$STATUS" "the container ran"
	assert_match "$OUT" '^P=' "it has a placeholder"
	assert_not_contains "$OUT$ERR" "$s1" "never the value"
	assert_contains "$(request_for plain /echo)" "Bearer $s1" "the host got the value"
	# a bad annotation is refused at create, naming it
	make_bundle "$b.bad" '["true"]' \
		"c['annotations']={'dev.moat.credentials':'[{\"name\": \"API_KEY\", \"from\": \"env:REAL_KEY\"}]'}" ||
		fail "bundle"
	assert_status 1 timeout -k 5 60 "$MOAT" --root "$root" run --bundle "$b.bad" "oci-bad-$$"
	assert_contains "$ERR" "dev.moat.credentials: credentials[0].hosts: required"
}

# An OCI container's control socket takes `moat secret` too (its state
# directory's ctl, under the default --root /run/moat).
t_oci_rotate()
{
	local b=$E2E_TMP/ocir id=oci-rot-$$ s1 s2 creds st
	s1=$(new_value) s2=$(new_value)
	export REAL_KEY=$s1 NEXT_KEY=$s2
	sync_dir
	echo_reset
	. "$E2E_ROOT/tests/oci/lib_oci.sh"
	trap 'timeout 20 "$MOAT" delete --force "$id" >/dev/null 2>&1' EXIT
	creds='[{"name": "API_KEY", "from": "env:REAL_KEY", "hosts": ["plain.test"], "plain_http": true, "ports": [80]}]'
	make_bundle "$b" '["sh", "-c", "wget -q -O - --header \"Authorization: Bearer $API_KEY\" http://plain.test/one; echo >/sync/one; i=0; while [ ! -e /sync/go ]; do sleep 0.1; i=$((i+1)); [ $i -lt 300 ] || exit 9; done; wget -q -O - --header \"Authorization: Bearer $API_KEY\" http://plain.test/two"]' \
		"c['annotations']={'dev.moat.net':'slirp','dev.moat.dns':'$KIT_DNS','dev.moat.allow':'plain.test:80+private','dev.moat.credentials':'''$creds'''}" \
		"c['mounts'].append({'destination':'/sync','type':'bind','source':'$SYNC','options':['rbind','rw']})" ||
		fail "bundle"
	ln -sf busybox "$b/rootfs/bin/wget"
	: >"$b/rootfs/etc/resolv.conf"
	assert_status 0 timeout -k 5 60 "$MOAT" create --bundle "$b" "$id"
	assert_status 0 timeout -k 5 60 "$MOAT" start "$id"
	for _ in $(seq 300); do
		[ -e "$SYNC/one" ] && break
		sleep 0.1
	done
	[ -e "$SYNC/one" ] || fail "the container never made its first request"
	assert_status 0 moat secret rotate "$id" API_KEY env:NEXT_KEY
	touch "$SYNC/go"
	for _ in $(seq 300); do
		st=$(oci_status "$MOAT" /run/moat "$id")
		[ "$st" = stopped ] && break
		sleep 0.1
	done
	assert_eq stopped "$st" "the container ran to its end"
	assert_contains "$(request_for plain /one)" "Bearer $s1" "the first value first"
	assert_contains "$(request_for plain /two)" "Bearer $s2" "then the new one"
	assert_status 0 timeout 20 "$MOAT" delete --force "$id"
}

# moat policy set that no longer allows the secret's host resets that
# host's brokered connections: the next request on an open one fails,
# and nothing of it goes upstream.
t_policy_set_resets_brokered_connections()
{
	local n=pcl-$$ s1
	s1=$(new_value)
	export REAL_KEY=$s1
	fresh_case
	box "$n" --secret API_KEY=env:REAL_KEY@api.test -- python3 -c '
import http.client, os, ssl, time
h = {"Authorization": "Bearer " + os.environ["API_KEY"]}
c = http.client.HTTPSConnection("api.test", context=ssl.create_default_context(), timeout=20)
c.request("GET", "/one", headers=h)
r = c.getresponse()
print("first", r.status, len(r.read()))
open("/sync/one", "w").close()
for _ in range(300):
    if os.path.exists("/sync/go"):
        break
    time.sleep(0.1)
try:
    c.request("GET", "/two", headers=h)
    r = c.getresponse()
    print("second", r.status, r.read()[:80])
except Exception as e:
    print("second failed:", type(e).__name__)'
	turn
	capture moat policy show "$n"
	printf '%s\n' "$OUT" | sed 's/"api.test:443+private"//' >"$E2E_TMP/narrow.json"
	assert_status 0 moat policy set "$n" "$E2E_TMP/narrow.json"
	go_on
	cat box.out
	assert_contains "$(cat box.out)" "first 200" "the first request went through"
	assert_contains "$(cat box.out)" "second failed:" "the open connection was reset"
	[ -z "$(request_for api /two)" ] || fail "the second request went upstream"
	nowhere "$s1"
}

# moat secret set: a credential added while the sandbox runs. Its
# placeholder is printed; a process given it (here: read from /sync)
# gets the value swapped in at the new secret's host, and the broker's
# 403 at another secret's host. What a start would refuse is refused.
t_set_adds_a_credential()
{
	local n=set-$$ s1 s2 p
	s1=$(new_value) s2=$(new_value)
	export REAL_KEY=$s1 NEW_KEY=$s2 EMPTY_KEY=
	fresh_case
	box "$n" --secret API_KEY=env:REAL_KEY@api.test --allow other.test:443+private \
		--passthrough pinned.test -- sh -c '
		curl -sSk -H "Authorization: Bearer before" https://other.test/zero; echo
		touch /sync/one
		'"$GUEST_WAIT"'
		P=$(cat /sync/ph)
		echo "NEW_ENV=${OTHER_KEY:-unset}"
		curl -sS -H "Authorization: Bearer $P" https://other.test/one; echo
		curl -sS -w "status=%{http_code}\n" -H "Authorization: Bearer $P" https://api.test/two'
	turn
	# refused: a name it has, no hosts, a passed-through host, an empty
	# value, a source that does not parse; none of them changes anything
	assert_status 1 moat secret set "$n" API_KEY env:NEW_KEY@other.test
	assert_contains "$ERR" "API_KEY exists"
	assert_status 1 moat secret set "$n" OTHER_KEY env:NEW_KEY
	assert_contains "$ERR" "--secret"
	assert_status 1 moat secret set "$n" OTHER_KEY env:NEW_KEY@pinned.test
	assert_contains "$ERR" "pinned.test"
	assert_status 1 moat secret set "$n" OTHER_KEY env:EMPTY_KEY@other.test
	assert_contains "$ERR" "nothing sent"
	assert_status 1 moat secret set "$n" OTHER_KEY value:$s2@other.test
	assert_not_contains "$ERR" "$s2" "a refusal never repeats a would-be value"
	capture moat policy show "$n"
	assert_not_contains "$OUT" "OTHER_KEY" "no refused set is in the policy"
	# the set itself
	assert_status 0 moat secret set "$n" OTHER_KEY env:NEW_KEY@other.test
	p=$OUT
	assert_match "$p" '^[A-Za-z0-9]{16,}$' "it printed the placeholder"
	assert_not_contains "$p" "$s2"
	printf '%s' "$p" >"$SYNC/ph"
	capture moat policy show "$n"
	assert_contains "$OUT" '"OTHER_KEY"' "policy show lists it"
	assert_contains "$OUT" '"env:NEW_KEY"' "by its source"
	assert_not_contains "$OUT" "$s2"
	go_on
	cat box.out
	assert_eq 0 "$BOX_STATUS" "the guest ran to its end"
	assert_contains "$(request_for other /zero)" "Bearer before" "before the set: passed through"
	assert_contains "$(cat box.out)" "NEW_ENV=unset" "a running process never gets it"
	assert_contains "$(request_for other /one)" "Bearer $s2" "after it: swapped at its host"
	assert_contains "$(cat box.out)" "Bearer $p" "and the echo shows the placeholder"
	assert_contains "$(cat box.out)" "status=403" "another secret's host gets the 403"
	[ -z "$(request_for api /two)" ] || fail "the blocked request went upstream: $(request_for api /two)"
	grep -F '"event":"secret-set"' "$AUDIT" | grep -qF '"secret":"OTHER_KEY","result":0' ||
		fail "no audit line for the set: $(grep secret- "$AUDIT")"
	grep '"event":"credential"' "$AUDIT" | grep '"verdict":"swapped"' | grep -qF '"secret":"OTHER_KEY"' ||
		fail "no swap audited for it: $(grep credential "$AUDIT")"
	nowhere "$s1" "$s2"
}

# A set secret is like one given at the start: rotate and revoke act on
# it. A sandbox without a broker says how to get one; `--broker` starts
# one with no secret, and a set then works there.
t_set_with_broker_then_revoke()
{
	local n=setb-$$ s1 s2 p
	s1=$(new_value) s2=$(new_value)
	export NEW_KEY=$s1 NEXT_KEY=$s2
	fresh_case
	box "nob-$n" -- sh -c "$GUEST_WAIT"
	for _ in $(seq 100); do
		[ -S "/run/moat/nob-$n" ] && break
		sleep 0.1
	done
	assert_status 1 moat secret set "nob-$n" API_KEY env:NEW_KEY@api.test
	assert_contains "$ERR" "--broker"
	touch "$SYNC/go"
	wait "$BOX_PID"
	rm -f "$SYNC/go"
	box "$n" --broker -- sh -c '
		touch /sync/one
		'"$GUEST_WAIT"'
		P=$(cat /sync/ph)
		curl -sS -H "Authorization: Bearer $P" https://api.test/one; echo
		touch /sync/two
		i=0; while [ ! -e /sync/go2 ]; do sleep 0.1; i=$((i+1)); [ $i -lt 300 ] || exit 9; done
		curl -sS -w "status=%{http_code}\n" -H "Authorization: Bearer $P" https://api.test/two'
	turn
	assert_status 0 moat secret set "$n" API_KEY fd:3@api.test 3<<<"$s1"
	p=$OUT
	printf '%s' "$p" >"$SYNC/ph"
	assert_status 0 moat secret rotate "$n" API_KEY env:NEXT_KEY
	touch "$SYNC/go"
	for _ in $(seq 300); do
		[ -e "$SYNC/two" ] && break
		sleep 0.1
	done
	assert_status 0 moat secret revoke "$n" API_KEY
	touch "$SYNC/go2"
	wait "$BOX_PID"
	cat box.out
	assert_contains "$(request_for api /one)" "Bearer $s2" "the rotated value went"
	assert_contains "$(cat box.out)" "status=403" "after the revoke: the 403"
	[ -z "$(request_for api /two)" ] || fail "the revoked request went upstream"
	nowhere "$s1" "$s2"
}

# A `file:` source of a set is read by `moat secret set`, on the host. One
# the guest can see (in its tree, or through a --mount) is refused, since
# the guest may have read it already; so is one with another name (a hard
# link). One out of its view is taken, and stays out of it.
t_set_file_sources()
{
	local n=setf-$$ s1 vis=/var/tmp/moat-setkey-$$ hidden shown
	s1=$(new_value)
	fresh_case
	# the host's /tmp: the guest's is its own
	hidden=$(mktemp -d /tmp/moat-setf.XXXXXX)
	shown=$(mktemp -d /tmp/moat-setf.XXXXXX)
	printf '%s\n' "$s1" >"$shown/key"
	printf '%s\n' "$s1" >"$vis"
	printf '%s\n' "$s1" >"$SYNC/key"
	printf '%s\n' "$s1" >"$hidden/key"
	box "$n" --broker --mount "$shown:/keys" -- sh -c '
		touch /sync/one
		'"$GUEST_WAIT"'
		P=$(cat /sync/ph)
		cat '"$hidden/key"' 2>&1 | head -c 200; echo
		curl -sS -H "Authorization: Bearer $P" https://api.test/one; echo'
	turn
	assert_status 1 moat secret set "$n" API_KEY "file:$vis@api.test"
	assert_contains "$ERR" "in the guest's view"
	assert_status 1 moat secret set "$n" API_KEY "file:$SYNC/key@api.test"
	assert_contains "$ERR" "in the guest's view"
	assert_status 1 moat secret set "$n" API_KEY "file:$shown/key@api.test"
	assert_contains "$ERR" "through --mount $shown:/keys"
	ln "$hidden/key" "$hidden/key2"
	assert_status 1 moat secret set "$n" API_KEY "file:$hidden/key@api.test"
	assert_contains "$ERR" "hard links"
	rm "$hidden/key2"
	assert_status 0 moat secret set "$n" API_KEY "file:$hidden/key@api.test"
	printf '%s' "$OUT" >"$SYNC/ph"
	rm -f "$vis" "$SYNC/key"
	go_on
	cat box.out
	rm -rf "$hidden" "$shown"
	assert_contains "$(request_for api /one)" "Bearer $s1" "the file's value went"
	assert_not_contains "$(cat box.out)" "$s1" "the guest could not read the file"
	nowhere "$s1"
}

# What the guest's view shows now is the guest's doing: a rootfs file whose
# name it removed (after opening it: it reads the host file live) is still
# refused. So is a file of a --rootfs, which the guest sees under another
# name than the host's.
t_set_file_sources_hidden_by_the_guest()
{
	local n=seth-$$ vis=/var/tmp/moat-seth-$$ r=$E2E_TMP/seth-root
	fresh_case
	printf 'not-yet\n' >"$vis"
	chmod 644 "$vis"
	box "$n" --broker -- sh -c '
		exec 3<'"$vis"'; rm -f '"$vis"'
		touch /sync/one
		'"$GUEST_WAIT"'
		cat <&3 >/dev/null'
	turn
	printf 'sk-would-be-%s\n' "$$" >"$vis"
	assert_status 1 moat secret set "$n" API_KEY "file:$vis@api.test"
	assert_contains "$ERR" "in the guest's rootfs"
	go_on
	rm -f "$vis"
	sync_dir
	make_busybox_rootfs "$r"
	mkdir -p "$r/srv"
	printf 'sk-would-be-%s\n' "$$" >"$r/srv/key"
	box "$n-r" --broker --rootfs "$r" -- sh -c '
		touch /sync/one
		'"$GUEST_WAIT"
	turn
	assert_status 1 moat secret set "$n-r" API_KEY "file:$r/srv/key@api.test"
	assert_contains "$ERR" "in the rootfs"
	go_on
	rm -rf "$r"
}

# A set the broker takes after the sentry stopped waiting for it (5 s)
# is held by the broker and not by the sentry; the same set again brings
# the two together: the new value, the placeholder the broker made, and
# the credential in the sentry's policy. Here the broker is held stopped.
t_set_retried_after_a_timeout()
{
	local n=sett-$$ s1 s2 sentry brk p
	s1=$(new_value) s2=$(new_value)
	export K1=$s1 K2=$s2
	fresh_case
	box "$n" --broker -- sh -c '
		touch /sync/one
		'"$GUEST_WAIT"'
		P=$(cat /sync/ph)
		curl -sS -H "Authorization: Bearer $P" https://api.test/one; echo'
	turn
	sentry=$(pgrep -f "^$MOAT do --name $n " | head -1)
	brk=$(pgrep -P "$sentry" -f "moat broker" | head -1)
	[ -n "$brk" ] || fail "no broker under the sentry ($sentry)"
	kill -STOP "$brk"
	assert_status 1 moat secret set "$n" API_KEY env:K1@api.test
	kill -CONT "$brk"
	assert_contains "$ERR" "did not answer"
	sleep 1
	assert_status 0 moat secret set "$n" API_KEY env:K2@api.test
	p=$OUT
	printf '%s' "$p" >"$SYNC/ph"
	capture moat policy show "$n"
	assert_contains "$OUT" '"API_KEY"' "the sentry's policy has it now"
	go_on
	cat box.out
	assert_contains "$(request_for api /one)" "Bearer $s2" "the retry's value went"
	nowhere "$s1" "$s2"
}

run_test rotate_keeps_the_placeholder t_rotate_keeps_the_placeholder
run_test revoke_blocks_the_next_request t_revoke_blocks_the_next_request
run_test revoke_closes_open_connections t_revoke_closes_open_connections
run_test policy_set_resets_brokered_connections t_policy_set_resets_brokered_connections
run_test oci_annotation_credentials t_oci_annotation_credentials
run_test oci_rotate t_oci_rotate
run_test set_adds_a_credential t_set_adds_a_credential
run_test set_with_broker_then_revoke t_set_with_broker_then_revoke
run_test set_file_sources t_set_file_sources
run_test set_file_sources_hidden_by_the_guest t_set_file_sources_hidden_by_the_guest
run_test set_retried_after_a_timeout t_set_retried_after_a_timeout
e2e_done
