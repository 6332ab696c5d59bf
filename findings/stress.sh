#!/usr/bin/env bash
# Brokered flows in every state (mid-download closes, half-closes, a guest
# that never reads, mid-upload closes) while the host removes the host from
# the policy, puts it back, and kills the broker. Run with the ASan build:
#   MOAT=$PWD/build/asan/moat bash findings/stress.sh
# Passes when the sentry neither crashes nor hangs (the guest's script ends
# and moat exits with its status).
. "$(dirname "$0")/../tests/e2e/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}
trap e2e_cleanup EXIT
testkit_up || exit 1
export REAL_KEY=sk-live-stress
cd "$E2E_TMP" || exit 1
"$MOAT" do --name "st$$" --net=slirp --dns "$KIT_DNS" --upstream-ca "$KIT_CA_PEM" \
	--allow api.test:443+private --allow plain.test:80+private \
	--secret API_KEY=env:REAL_KEY@api.test -- \
	python3 "$HERE/stress_guest.py" 10 >out.txt 2>&1 &
pid=$!
sleep 3
"$MOAT" policy show "st$$" >pol.json
python3 -c '
import json,sys
p=json.load(open("pol.json"))
p["egress"]["allow"]=[a for a in p["egress"]["allow"] if "api.test" not in a]
json.dump(p,open("pol2.json","w"))'
"$MOAT" policy set "st$$" pol2.json
sleep 1
"$MOAT" policy set "st$$" pol.json
sleep 1
spid=$pid
bpid=$(pgrep -P "$spid" -f 'broker --ctl' | head -1)
echo "sentry $spid broker $bpid"
[ -n "$bpid" ] && kill -9 "$bpid"
timeout 60 tail --pid="$pid" -f /dev/null
wait "$pid"
rc=$?
cat out.txt
echo "moat exit: $rc"
grep -q "ERROR: AddressSanitizer\|runtime error" out.txt && exit 1
[ "$rc" -eq 0 ]
