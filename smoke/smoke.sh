#!/usr/bin/env bash
# Smoke test of kreassign against a running Kafka cluster with brokers 1, 2 and 3 (racks set), such as the
# one of smoke/docker-compose.yml:
#
#   smoke/smoke.sh localhost:19092
#
# Uses `kreassign` from PATH (or $KREASSIGN_COMMAND, a command line that runs it: kreassign's image beside the
# brokers, `docker exec kreassign-smoke-tool kreassign`, see docker-compose.yml), and smoke_helper.py (run with $KREASSIGN_SMOKE_PYTHON, default: python3, which
# must have kreassign's confluent-kafka) to create topics with data and to read replicas and throttle
# configs. It runs --generate, a batched and throttled --execute, --verify --fail-if-incomplete,
# --progress, --list, and --cancel of a running batched plan, all with --output json where it exists,
# and checks the results, the exit codes, and that no throttle is left on any broker or topic.
# Exit 0 when everything holds; otherwise the failing step is named on stderr, exit 1.
#
# SMOKE_SKIP="progress" skips a step (a space-separated list of step names); for development only.
set -euo pipefail

BOOTSTRAP=${1:?usage: smoke.sh BOOTSTRAP_SERVER (host:port of a broker)}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=${KREASSIGN_SMOKE_PYTHON:-python3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kreassign-smoke.XXXXXX")
RUN_ID=$(date +%s)-$$
MOVES="smoke-moves-$RUN_ID"
SLOW="smoke-cancel-$RUN_ID"
BACKGROUND_PID=""

cleanup() {
  if [ -n "$BACKGROUND_PID" ] && kill -0 "$BACKGROUND_PID" 2>/dev/null; then
    kill -TERM "$BACKGROUND_PID" 2>/dev/null || true
    wait "$BACKGROUND_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

say() { echo "smoke: $*" >&2; }
fail() {
  echo "smoke: FAILED: $*" >&2
  exit 1
}
skipped() { [[ " ${SMOKE_SKIP:-} " == *" $1 "* ]]; }
helper() { "$PY" "$HERE/smoke_helper.py" --bootstrap-server "$BOOTSTRAP" "$@"; }
field() { "$PY" "$HERE/smoke_helper.py" field "$@"; }
expect_field() { # file path expected-json
  local got
  got=$(field "$1" "$2") || fail "no field $2 in $1: $(cat "$1")"
  [ "$got" = "$3" ] || fail "$2 is $got in $1, expected $3: $(cat "$1")"
}
read -r -a KREASSIGN <<<"${KREASSIGN_COMMAND:-kreassign}"
kr() { "${KREASSIGN[@]}" --bootstrap-server "$BOOTSTRAP" "$@"; }

if [ -n "${KREASSIGN_COMMAND:-}" ]; then
  chmod 1777 "$WORK" # the image's user (not root, not this one) writes its journals there
else
  command -v kreassign >/dev/null || fail "kreassign is not on PATH"
fi
say "$("${KREASSIGN[@]}" --version), bootstrap $BOOTSTRAP, work dir $WORK"

# ---- topics: one to move, one large enough that a throttled move is still running when cancelled
say "creating topics $MOVES (6 partitions) and $SLOW (2 partitions, 8 MB) on brokers 1,2"
helper create-topic "$MOVES" --partitions 6 --replicas 1,2 --messages 3000 --size 200
helper create-topic "$SLOW" --partitions 2 --replicas 1,2 --messages 8000 --size 1000

# ---- generate
say "generate"
printf '{"version":1,"topics":[{"topic":"%s"}]}\n' "$MOVES" >"$WORK/topics.json"
kr --generate --topics-to-move-json-file "$WORK/topics.json" --broker-list 1,2,3 --seed 7 --output json \
  >"$WORK/generate.json" || fail "--generate exited $?: $(cat "$WORK/generate.json")"
expect_field "$WORK/generate.json" kind '"generate"'
expect_field "$WORK/generate.json" version 1
field "$WORK/generate.json" proposed >"$WORK/plan.json"
for p in 0 1 2 3 4 5; do
  field "$WORK/plan.json" "partitions.$p.replicas" >/dev/null || fail "the proposal has no partition $p"
done

# ---- execute, batched and throttled; stays attached until done
say "execute (batched: 2 partitions, 1 replica per step, throttled to 5 MB/s)"
status=0
kr --execute --reassignment-json-file "$WORK/plan.json" --max-partition-movements 2 --max-replica-movements 1 \
  --throttle 5000000 --journal-file "$WORK/moves-journal.json" --poll-interval-ms 500 --output json \
  >"$WORK/execute.json" || status=$?
[ "$status" = 0 ] || fail "batched --execute exited $status: $(cat "$WORK/execute.json")"
expect_field "$WORK/execute.json" kind '"batched-outcome"'
expect_field "$WORK/execute.json" status '"completed"'
expect_field "$WORK/execute.json" partitions_done 6
expect_field "$WORK/execute.json" throttles_restored true
helper replicas "$MOVES" --expect "$WORK/plan.json" >/dev/null || fail "$MOVES is not at the proposed assignment"
[ -f "$WORK/moves-journal-original.json" ] || fail "no rollback file next to the journal"

# ---- verify: everything done, so exit 0 even with --fail-if-incomplete
say "verify --fail-if-incomplete"
status=0
kr --verify --reassignment-json-file "$WORK/plan.json" --fail-if-incomplete >"$WORK/verify.txt" || status=$?
[ "$status" = 0 ] || fail "--verify --fail-if-incomplete exited $status: $(cat "$WORK/verify.txt")"
[ "$(grep -c "^Reassignment of partition $MOVES-[0-5] is completed\.$" "$WORK/verify.txt")" = 6 ] \
  || fail "--verify does not report 6 completed partitions: $(cat "$WORK/verify.txt")"

# ---- progress
if skipped progress; then
  say "progress: SKIPPED (SMOKE_SKIP)"
else
  say "progress --output json"
  status=0
  kr --progress --reassignment-json-file "$WORK/plan.json" --output json >"$WORK/progress.json" || status=$?
  [ "$status" = 0 ] || fail "--progress exited $status: $(cat "$WORK/progress.json")"
  expect_field "$WORK/progress.json" kind '"progress"'
  expect_field "$WORK/progress.json" version 1
fi

# ---- cancel a running batched plan
say "execute a slow batched plan (50 kB/s) in the background, then cancel it"
printf '{"version":1,"partitions":[{"topic":"%s","partition":0,"replicas":[3,1]},{"topic":"%s","partition":1,"replicas":[3,2]}]}\n' \
  "$SLOW" "$SLOW" >"$WORK/slow.json"
kr --execute --reassignment-json-file "$WORK/slow.json" --max-partition-movements 1 --throttle 50000 \
  --journal-file "$WORK/slow-journal.json" --poll-interval-ms 500 --output json >"$WORK/slow-execute.json" &
BACKGROUND_PID=$!
for _ in $(seq 1 120); do
  kr --list --output json >"$WORK/list.json" || fail "--list exited $?: $(cat "$WORK/list.json")"
  expect_field "$WORK/list.json" kind '"list"'
  grep -q "\"$SLOW\"" "$WORK/list.json" && break
  kill -0 "$BACKGROUND_PID" 2>/dev/null || fail "the slow batched run ended early: $(cat "$WORK/slow-execute.json")"
  sleep 0.5
done
grep -q "\"$SLOW\"" "$WORK/list.json" || fail "the slow plan never showed up in --list"
kr --cancel --reassignment-json-file "$WORK/slow.json" --journal-file "$WORK/slow-journal.json" --output json \
  >"$WORK/cancel.json" || fail "--cancel exited $?: $(cat "$WORK/cancel.json")"
expect_field "$WORK/cancel.json" kind '"batched-cancel"'
status=0
wait "$BACKGROUND_PID" || status=$?
BACKGROUND_PID=""
[ "$status" = 4 ] || fail "the cancelled batched run exited $status, expected 4: $(cat "$WORK/slow-execute.json")"
expect_field "$WORK/slow-execute.json" status '"cancelled"'
kr --list --output json >"$WORK/list.json"
! grep -q "\"$SLOW\"" "$WORK/list.json" || fail "a reassignment of $SLOW still runs: $(cat "$WORK/list.json")"
helper replicas "$SLOW" --expect "$WORK/slow-journal-original.json" >/dev/null \
  || fail "$SLOW is not back at its original assignment"

# ---- nothing left behind
say "no throttle left"
helper throttles "$MOVES" "$SLOW" >"$WORK/throttles.txt" || fail "throttles left: $(cat "$WORK/throttles.txt")"

say "OK"
