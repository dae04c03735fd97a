#!/usr/bin/env bash
# valgrind's memcheck over `TesseraSoak leaks COUNT` (what `make leaks` runs): COUNT predictions
# on a stateless and a stateful model, a load every 100 predictions and a failing load of each
# committed package fuzz finding as often (Soak/TesseraSoak/LeakLoop.swift). Fails when memcheck
# reports anything definitely lost or any memory error; the log is .build/leaks/valgrind.log.
# The build is debug; LEAKS_CONFIG=release runs the optimized build instead (about three times
# fewer seconds per prediction under memcheck, for long runs such as COUNT=10000).
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-1000}
command -v valgrind >/dev/null || { echo "leaks: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
config=${LEAKS_CONFIG:-debug}
swift build -c "$config" --product TesseraSoak >&2
mkdir -p .build/leaks
# valgrind 3.19 cannot read the toolchain's DWARF 5 and gives up; the symbol table alone names
# the frames of its stacks.
objcopy --strip-debug "$(swift build -c "$config" --show-bin-path)/TesseraSoak" .build/leaks/TesseraSoak
status=0
# OPENBLAS_CORETYPE: valgrind 3.19 does not decode AVX-512, so OpenBLAS runs its Haswell kernels.
# --undef-value-errors=no: the Swift runtime reads multi-payload enum tags from spare bits memcheck
# counts as uninitialized (thousands of reports in swift_getEnumCaseMultiPayload); invalid reads
# and writes are still errors.
OPENBLAS_CORETYPE=Haswell SWIFT_BACKTRACE=enable=no \
valgrind --leak-check=full --undef-value-errors=no --show-leak-kinds=definite --errors-for-leak-kinds=definite --error-exitcode=1 \
    --num-callers=30 .build/leaks/TesseraSoak leaks "$count" 2>.build/leaks/valgrind.log || status=$?
grep -E "definitely lost|indirectly lost|ERROR SUMMARY" .build/leaks/valgrind.log | sed 's/^==[0-9]*== */leaks: /'
exit $status
