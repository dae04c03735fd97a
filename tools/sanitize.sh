#!/usr/bin/env bash
# Runs the Swift test suite under a sanitizer and counts its reports:
#
#   tools/sanitize.sh thread  [FILTER]     (make tsan)
#   tools/sanitize.sh address [FILTER]     (make asan)
#
# Each sanitizer has its own build directory (.build/tsan, .build/asan), built once and reused.
# The run fails when a test fails or the sanitizer reports anything; the full output is in
# .build/<name>/sanitizer.log.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizer=${1:?usage: tools/sanitize.sh thread|address [FILTER]}
filter=${2:-}
case "$sanitizer" in
    # TESSERA_TSAN: the locks become pthread mutexes ThreadSanitizer can see
    # (Sources/TesseraKernels/Threading/SanitizerVisibleMutex.swift).
    thread) scratch=.build/tsan; pattern="WARNING: ThreadSanitizer"; flags=(-Xswiftc -DTESSERA_TSAN) ;;
    address) scratch=.build/asan; pattern="ERROR: (AddressSanitizer|LeakSanitizer)"; flags=() ;;
    *) echo "sanitize: thread or address, not $sanitizer" >&2; exit 2 ;;
esac
swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" "${flags[@]}" >&2
log="$scratch/sanitizer.log"
status=0
start=$(date +%s)
# halt_on_error=0: every report is collected, not just the first. Leak checking stays off for
# the test runner (the Swift runtime and Foundation keep caches alive at exit); LSan runs in the
# soak and the fuzz targets instead.
TSAN_OPTIONS="halt_on_error=0:second_deadlock_stack=1:${TSAN_OPTIONS:-}" \
ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" \
    swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" ${filter:+--filter "$filter"} \
    >"$log" 2>&1 || status=$?
reports=$(grep -cE "$pattern" "$log" || true)
grep -E "Test run with|tests? failed|✘" "$log" | tail -3 || true
echo "$sanitizer sanitizer: $reports reports, $(($(date +%s) - start)) s (log $log)"
[ "$reports" -eq 0 ] && [ "$status" -eq 0 ]
