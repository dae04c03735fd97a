#!/bin/bash
# Harvests whole coremltools op test files, one folder per file, for LoweringHarvestTests.
#
#   PYTHON=/path/to/venv/bin/python tools/harvest_families.sh iOS17/test_conv iOS18/test_transformers ...
#
# Each file goes to Tests/Fixtures/harvested/<iOSxx>_<file>/ (every parametrization; set
# HARVEST_SAMPLE=n to keep every n-th, and name the folder sample<n>_… yourself). A file is
# claimed with `mkdir <folder>.claim` and marked `<folder>.done` when finished, so several
# workers can share one list (start each with the list in a different order) and a rerun skips
# what is done. Runs at nice 19: the harvest is hours of conversions on a small machine.
set -u
PYTHON=${PYTHON:-python3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/Tests/Fixtures/harvested
TESTS=$("$PYTHON" -c "import os, coremltools.converters.mil.mil.ops.tests as t; print(os.path.dirname(t.__file__))" 2>/dev/null)
mkdir -p "$OUT"
for file in "$@"; do
  name=$(echo "$file" | tr / _)
  [ -f "$OUT/$name.done" ] && continue
  mkdir "$OUT/$name.claim" 2>/dev/null || continue
  rm -rf "${OUT:?}/$name"
  echo "$(date +%T) start $name"
  INCLUDE_MIL_FP32_UNIT_TESTS=1 nice -n 19 "$PYTHON" "$ROOT/tools/harvest_coremltools_op_tests.py" "$OUT/$name" \
    "$TESTS/$file.py" > "$OUT/$name.log" 2>&1
  echo "$(date +%T) done $name: $(ls "$OUT/$name" | wc -l) cases"
  touch "$OUT/$name.done"
done
