#!/usr/bin/env bash
# Barrier: host secrets stay out. The host's / is served as a user that
# owns no host file (the sandbox's helper uid, docs/security.md), so
# root-only files are unreadable; the caller's environment does not reach
# the guest unless passed with --env.
. "$(dirname "$0")/../e2e/lib.sh"

t_shadow_unreadable()
{
	[ -e /etc/shadow ] || fail "this host has no /etc/shadow to protect"
	capture moat do -- /bin/cat /etc/shadow
	assert_ne 0 "$STATUS" "reading /etc/shadow fails"
	assert_contains "$ERR" "Permission denied" "with EACCES"
	assert_eq "" "$OUT" "nothing of it is printed"
}

t_private_dir_unreadable()
{
	local d
	d=$(mktemp -d /tmp/moat-private.XXXXXX) # 0700, owned by root
	echo "private-$(random_token)" >"$d/secret"
	capture moat do -- /bin/cat "$d/secret"
	rm -rf "$d"
	assert_ne 0 "$STATUS" "a file in a 0700 root directory is out of reach"
	assert_not_contains "$OUT" "private-" "its content is not printed"
}

t_env_not_inherited()
{
	local tok
	tok=$(random_token)
	MOAT_TEST_SECRET=$tok capture moat do -- /usr/bin/env
	assert_eq 0 "$STATUS" "env runs"
	assert_not_contains "$OUT" "$tok" "the caller's variables do not reach the guest"
	capture moat do --env VISIBLE=yes -- /usr/bin/env
	assert_contains "$OUT" "VISIBLE=yes" "--env passes what the caller chooses"
}

t_proc_environ_clean()
{
	local tok
	tok=$(random_token)
	MOAT_TEST_SECRET=$tok capture moat do -- /bin/sh -c 'cat /proc/1/environ /proc/self/environ | tr "\0" "\n"'
	assert_not_contains "$OUT" "$tok" "no secret in /proc/*/environ"
}

run_test "/etc/shadow is unreadable" t_shadow_unreadable
run_test "a private host directory is unreadable" t_private_dir_unreadable
run_test "the caller's environment is not inherited" t_env_not_inherited
run_test "/proc environ holds no caller secret" t_proc_environ_clean
e2e_done
