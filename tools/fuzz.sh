#!/usr/bin/env bash
# Builds the libFuzzer targets (Fuzz/TesseraFuzz) with AddressSanitizer and runs one:
#
#   tools/fuzz.sh TARGET SECONDS [libFuzzer flags…]      (what `make fuzz TARGET=… SECONDS=…` runs)
#   tools/fuzz.sh all SECONDS                             every target in turn
#
# The build (debug, AddressSanitizer and coverage on; .build/fuzz-debug) is made once and
# reused; FUZZ_CONFIG=release builds it optimized instead (.build/fuzz-release: 1.4-2.1 times
# fewer CPU seconds per execution, for long runs, but three times the build time, so CI and
# short runs stay on debug; Docs/Reliability.md). The corpus lives in .build/fuzz/corpus/TARGET,
# seeded from Tests/Fixtures on first use; findings (crash-*, leak-*, timeout-*) go to
# .build/fuzz/findings/TARGET/ and make the run fail. Replay one with
# `swift run TesseraFuzz TARGET FILE` (any build) and add it as a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: tools/fuzz.sh TARGET SECONDS [libFuzzer flags]}
seconds=${2:-30}
shift 2 || true

runtime="$(dirname "$(dirname "$(readlink -f "$(command -v swiftc)")")")/lib/swift/clang/lib/linux"
fuzzer_lib="$runtime/libclang_rt.fuzzer_no_main-x86_64.a"
[ -f "$fuzzer_lib" ] || { echo "fuzz: $fuzzer_lib not found (libFuzzer ships with the Swift toolchain on Linux)" >&2; exit 1; }

config=${FUZZ_CONFIG:-debug}
scratch=.build/fuzz
# Coverage flags come from Package.swift under TESSERA_FUZZ_COVERAGE (trace-cmp outside the compute targets).
TESSERA_FUZZ_COVERAGE=1 swift build -c "$config" --product TesseraFuzz --scratch-path ".build/fuzz-$config" \
    --sanitize=address -Xswiftc -DTESSERA_LIBFUZZER \
    -Xlinker "$fuzzer_lib" -Xlinker -lstdc++ >&2
binary=".build/fuzz-$config/$config/TesseraFuzz"

if [ "$target" = all ]; then
    for name in $("$binary" list | cut -f1); do "$0" "$name" "$seconds" "$@"; done
    exit 0
fi

corpus="$scratch/corpus/$target"
findings="$scratch/findings/$target"
mkdir -p "$corpus" "$findings"
seeds="$scratch/seeds/$target"
[ -d "$seeds" ] || "$binary" seed "$target" "$seeds" >&2
log="$scratch/$target.log"
status=0
# TESSERA_MEMORY_LIMIT caps the shared buffer pool (and its cache at 1/8 of it): by default it
# may keep 10% of physical memory cached across inputs, which under AddressSanitizer pushed a
# long run past -rss_limit_mb with no input at fault. Each input's own limit is 4 MiB
# (MLModelConfiguration.fuzzTarget).
TESSERA_MEMORY_LIMIT="${TESSERA_MEMORY_LIMIT:-1G}" \
ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}" \
    "$binary" "$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 -malloc_limit_mb=3072 \
    -max_len=262144 -print_final_stats=1 -artifact_prefix="$findings/" "$@" "$corpus" "$seeds" 2>"$log" || status=$?
grep -E "^stat::(number_of_executed_units|peak_rss_mb|new_units_added)|^#[0-9]+ *DONE" "$log" | tail -4 | sed "s/^/$target: /"
echo "$target: corpus $(ls "$corpus" | wc -l) files, findings $(ls "$findings" | wc -l) (log $log)"
exit $status
