#!/usr/bin/env bash
# Runs the test suite (ava) and ends with the plain line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
# the models and clips the tests make, made once for the whole run and shared by the test files (test/helpers/fixtures.ts)
JETPROF_TEST_CACHE=$(mktemp -d -t jetprof-test-cache-XXXXXX)
export JETPROF_TEST_CACHE
trap 'rm -rf "$JETPROF_TEST_CACHE"' EXIT
# the commands a test or a job starts as processes run from a build of these sources (dist/, 2 s to make): 0.5 s of
# CPU less each than through tsx (src/util/process.ts cliCommand); a build with errors leaves them on tsx
if npm run --silent build >"$log" 2>&1; then
  export JETPROF_BUILD="$PWD/dist"
else
  echo "the build failed, so the tests start jetprof's commands from source:"; cat "$log"
fi
# files at once: at least 4, as several wait on real time (nsys, one session at a time machine-wide; RTSP at its frame
# rate; the board stand-in's GPU time) and leave a core idle; on this 2-core VM 4 took 5:45-5:57 against 7:20-7:38 for
# ava's default of 2, and less CPU (docs/MEASUREMENTS.md)
cores=$(nproc 2>/dev/null || echo 2)
npx ava --tap --concurrency "$((cores > 4 ? cores : 4))" "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
pass=$(grep -E '^# pass ' "$log" | tail -1 | awk '{print $3}')
fail=$(grep -E '^# fail ' "$log" | tail -1 | awk '{print $3}')
skip=$(grep -E '^# skip ' "$log" | tail -1 | awk '{print $3}')
rm -f "$log"
if [ -z "$pass" ] && [ -z "$fail" ]; then
  echo "ava printed no summary (exit code $rc)"
  echo "0 passed, 1 failed"
  exit 1
fi
[ -n "$skip" ] && [ "$skip" != 0 ] && echo "$skip skipped (their reasons are in the lines above)"
echo "${pass:-0} passed, ${fail:-0} failed"
exit $rc
