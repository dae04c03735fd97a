#!/usr/bin/env bash
# Builds the DocC catalog Sources/Tessera/Tessera.docc against the symbols `import Tessera` gives
# (the umbrella and the API modules it re-exports), treating every DocC warning — a broken
# ``symbol`` link, an ambiguous overload, a missing article — as an error.
#
#   tools/build-docs.sh [bin-path]     # default: `swift build --show-bin-path`; needs a finished build
#
# Output: .build/docs/Tessera.doccarchive (open it with `docc preview`, or serve it statically).
set -euo pipefail
cd "$(dirname "$0")/.."

bin_path="${1:-$(swift build --show-bin-path)}"
graphs=.build/docs/symbol-graphs
archive=.build/docs/Tessera.doccarchive
triple="$(swift -print-target-info | sed -n 's/^ *"triple": "\(.*\)",*$/\1/p' | head -n 1)"

rm -rf "$graphs" "$archive"
mkdir -p "$graphs"
# The umbrella's symbol graph with the symbols of the modules it re-exports, so the catalog
# documents one module, `Tessera`, as users import it.
swift-symbolgraph-extract \
    -module-name Tessera \
    -I "$bin_path/Modules" \
    -Xcc "-fmodule-map-file=$bin_path/CTesseraSIMD.build/module.modulemap" \
    -Xcc "-fmodule-map-file=$PWD/Sources/COpenBLAS/module.modulemap" \
    -Xcc "-fmodule-map-file=$PWD/Sources/CLibPNG/module.modulemap" \
    -Xcc "-fmodule-map-file=$bin_path/CTesseraJPEG.build/module.modulemap" \
    -target "$triple" \
    -minimum-access-level public \
    -experimental-allowed-reexported-modules=TesseraTensor,TesseraMultiArray,TesseraModels,TesseraCoreVideo \
    -output-dir "$graphs"

docc convert Sources/Tessera/Tessera.docc \
    --additional-symbol-graph-dir "$graphs" \
    --fallback-display-name Tessera \
    --fallback-bundle-identifier org.tessera.Tessera \
    --warnings-as-errors \
    --output-path "$archive"
