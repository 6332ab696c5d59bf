#!/usr/bin/env bash
# The credentials policy as moat do and moat policy take it: --secret,
# --inspect, --passthrough, --upstream-ca and the policy file's
# "credentials", "inspect" and "passthrough". What is refused is refused
# before the sandbox starts (exit 2, the option or the file's field and
# line at fault), never repeating what may be a secret's value; `policy
# show` gives each secret's source, never its value; a live `policy set`
# may not change the credentials.
. "$(dirname "$0")/lib.sh"

# A value that would show if anything printed it.
S=$(random_token)
export H3_REAL_KEY=$S

t_secret_forms_are_refused()
{
	assert_status 2 moat do --secret "API_KEY=$S@api.example" -- true
	assert_contains "$ERR" "moat: --secret API_KEY: the source must be env:VAR, file:PATH or fd:N" \
		"a value where the source belongs is refused"
	assert_not_contains "$ERR" "$S" "the refusal does not repeat the value"
	assert_status 2 moat do --secret "API_KEY=$S" -- true
	assert_not_contains "$ERR" "$S" "nor without hosts"
	assert_status 2 moat do --secret "$S" -- true
	assert_contains "$ERR" "moat: --secret: expected NAME=SOURCE@HOST[,HOST...]"
	assert_not_contains "$ERR" "$S" "nor without a name"
	assert_status 2 moat do --secret "API_KEY=env:H3_REAL_KEY" -- true
	assert_contains "$ERR" "moat: --secret API_KEY: no hosts: expected NAME=SOURCE@HOST[,HOST...] (a secret without hosts would be sent anywhere)"
	assert_status 2 moat do --secret "API_KEY=env:H3_REAL_KEY@*" -- true
	assert_contains "$ERR" "moat: --secret API_KEY: \`*\` is for inspect only: name the hosts"
	assert_status 2 moat do --secret "API_KEY=file:key.txt@api.example" -- true
	assert_contains "$ERR" "moat: --secret API_KEY: file:PATH: PATH must be an absolute path"
	assert_status 2 moat do --secret "API_KEY=fd:1@api.example" -- true
	assert_contains "$ERR" "moat: --secret API_KEY: fd:N: N must be 3 or more"
	assert_status 2 moat do --secret "1KEY=env:H3_REAL_KEY@api.example" -- true
	assert_contains "$ERR" "moat: --secret: NAME (before \`=\`) is not a variable's name"
	assert_status 2 moat do --secret "API_KEY=env:H3_REAL_KEY@bad..name" -- true
	assert_contains "$ERR" "moat: --secret API_KEY: \`bad..name\` is not a DNS name or *.domain"
	assert_status 2 moat do --inspect 'bad_host!' -- true
	assert_contains "$ERR" "moat: --inspect: \`bad_host!\` is not a DNS name or *.domain"
	assert_status 2 moat do --passthrough '*' -- true
	assert_contains "$ERR" "moat: --passthrough: \`*\` is for inspect only: name the hosts"
	assert_status 2 moat do --env API_KEY=x \
		--secret "API_KEY=env:H3_REAL_KEY@api.example" -- true
	assert_contains "$ERR" "moat: secret API_KEY: the guest's API_KEY holds its placeholder: it may not be set otherwise too"
	assert_status 2 moat do --upstream-ca "$E2E_TMP/none.pem" -- true
	assert_contains "$ERR" "moat: --upstream-ca \`$E2E_TMP/none.pem\`: No such file or directory"
}

t_a_secret_whose_source_is_missing_is_refused()
{
	assert_status 2 env -u H3_REAL_KEY "$MOAT" do \
		--secret "API_KEY=env:H3_REAL_KEY@api.example" -- true
	assert_contains "$ERR" "moat: secret API_KEY: env:H3_REAL_KEY: H3_REAL_KEY is not set in moat's environment"
	assert_status 2 moat do --secret "API_KEY=file:$E2E_TMP/none@api.example" -- true
	assert_contains "$ERR" "moat: secret API_KEY: file:$E2E_TMP/none: No such file or directory"
	assert_status 2 moat do --secret "API_KEY=fd:9@api.example" -- true 9>&-
	assert_contains "$ERR" "moat: secret API_KEY: fd:9: Bad file descriptor"
}

t_a_policy_without_hosts_is_refused()
{
	cat >"$E2E_TMP/p.json" <<'EOF'
{
  "credentials": [
    {"name": "API_KEY", "from": "env:H3_REAL_KEY",
     "in": ["header:authorization"]}
  ]
}
EOF
	assert_status 2 moat do --policy "$E2E_TMP/p.json" -- true
	assert_eq "moat: --policy: $E2E_TMP/p.json:3: credentials[0].hosts: required: a secret without hosts would be sent to any host" \
		"$ERR" "the refusal names the field and its line"
	cat >"$E2E_TMP/p.json" <<'EOF'
{
  "credentials": [
    {"name": "API_KEY", "from": "env:H3_REAL_KEY",
     "hosts": []}
  ]
}
EOF
	assert_status 2 moat do --policy "$E2E_TMP/p.json" -- true
	assert_eq "moat: --policy: $E2E_TMP/p.json:4: credentials[0].hosts: empty: a list of hosts (names, or *.domain) expected" \
		"$ERR" "an empty list of hosts too"
}

t_a_secret_bound_to_a_passed_through_host_is_refused()
{
	cat >"$E2E_TMP/p.json" <<'EOF'
{
  "credentials": [
    {"name": "API_KEY", "from": "env:H3_REAL_KEY",
     "hosts": ["api.example", "pinned.example"]}
  ],
  "passthrough": ["pinned.example"]
}
EOF
	assert_status 2 moat do --policy "$E2E_TMP/p.json" -- true
	assert_eq "moat: --policy: $E2E_TMP/p.json:4: credentials[0].hosts: \`pinned.example\` is passed through (passthrough \`pinned.example\`): a secret bound to a host that is passed through would never be swapped" \
		"$ERR" "refused at load, naming the field and its line"
	assert_status 2 moat do --secret "API_KEY=env:H3_REAL_KEY@api.example" \
		--passthrough '*.example' -- true
	assert_eq "moat: --secret API_KEY: \`api.example\` is passed through (passthrough \`*.example\`): a secret bound to a host that is passed through would never be swapped" \
		"$ERR" "on the command line too"
	# the file's secret and the command line's passthrough, together
	cat >"$E2E_TMP/p.json" <<'EOF'
{"credentials": [{"name": "API_KEY", "from": "env:H3_REAL_KEY",
                  "hosts": ["api.example"]}]}
EOF
	assert_status 2 moat do --policy "$E2E_TMP/p.json" --passthrough api.example -- true
	assert_contains "$ERR" "moat: $E2E_TMP/p.json:2: credentials[0].hosts: \`api.example\` is passed through"
	assert_status 2 moat do --policy "$E2E_TMP/p.json" \
		--secret "API_KEY=env:H3_REAL_KEY@b.example" -- true
	assert_eq "moat: --secret API_KEY: \`API_KEY\` is named twice (also $E2E_TMP/p.json:1: credentials[0].name)" \
		"$ERR" "one name, once"
}

# show gives the sources; set keeps the credentials as they are.
t_policy_show_gives_sources_never_values()
{
	local name=h3cred$$ pid i
	cat >"$E2E_TMP/p.json" <<'EOF'
{
  "credentials": [
    {"name": "FILE_KEY", "from": "env:H3_REAL_KEY",
     "hosts": ["files.example"], "placeholder": "sk-{rand}"}
  ],
  "inspect": ["other.example"]
}
EOF
	moat do --name "$name" --policy "$E2E_TMP/p.json" \
		--secret "API_KEY=env:H3_REAL_KEY@api.example" -- sleep 30 \
		>/dev/null 2>"$E2E_TMP/do.err" &
	pid=$!
	for i in $(seq 200); do
		"$MOAT" policy show "$name" >/dev/null 2>&1 && break
		sleep 0.05
	done
	capture moat policy show "$name"
	assert_eq 0 "$STATUS" "policy show answers"
	assert_contains "$OUT" '"from": "env:H3_REAL_KEY"' "the source as written"
	assert_contains "$OUT" '"name": "API_KEY"' "the command line's secret"
	assert_contains "$OUT" '"api.example"'
	assert_contains "$OUT" '"placeholder": "sk-{rand}"'
	assert_contains "$OUT" '"other.example"'
	assert_not_contains "$OUT" "$S" "never the value"
	printf '%s\n' "$OUT" >"$E2E_TMP/shown.json"
	# the same credentials (as show gave them), other egress: taken
	sed 's/"allow": \[/"allow": ["api.example:443"/' "$E2E_TMP/shown.json" >"$E2E_TMP/same.json"
	assert_status 0 moat policy set "$name" "$E2E_TMP/same.json"
	capture moat policy show "$name"
	assert_contains "$OUT" '"api.example:443"' "the new egress is in force"
	assert_contains "$OUT" '"name": "FILE_KEY"' "the credentials stay"
	# other credentials: refused, and the old ones stay
	cat >"$E2E_TMP/other.json" <<'EOF'
{"credentials": [{"name": "API_KEY", "from": "env:OTHER_KEY",
                  "hosts": ["api.example"]}]}
EOF
	assert_status 1 moat policy set "$name" "$E2E_TMP/other.json"
	assert_contains "$ERR" "credentials change through \`moat secret\`"
	echo '{"egress": {}}' >"$E2E_TMP/none.json"
	assert_status 1 moat policy set "$name" "$E2E_TMP/none.json"
	assert_contains "$ERR" "credentials change through \`moat secret\`" \
		"dropping them is a change too"
	capture moat policy show "$name"
	assert_contains "$OUT" '"from": "env:H3_REAL_KEY"' "the old credentials stay"
	assert_contains "$OUT" '"api.example:443"' "and so does the egress of the last set"
	"$MOAT" kill "$name" KILL 2>/dev/null
	wait "$pid" 2>/dev/null
	assert_not_contains "$(cat "$E2E_TMP/do.err")" "$S" "moat do said nothing of the value"
}

run_test secret_forms_are_refused t_secret_forms_are_refused
run_test a_secret_whose_source_is_missing_is_refused t_a_secret_whose_source_is_missing_is_refused
run_test a_policy_without_hosts_is_refused t_a_policy_without_hosts_is_refused
run_test a_secret_bound_to_a_passed_through_host_is_refused t_a_secret_bound_to_a_passed_through_host_is_refused
run_test policy_show_gives_sources_never_values t_policy_show_gives_sources_never_values
e2e_done
