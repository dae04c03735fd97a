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
# The C modules' maps as SwiftPM passes them to the compiler: generated ones for C targets,
# hand-written ones for the system libraries (globbed, so a new C target needs no edit here).
module_map_flags=()
for module_map in "$bin_path"/*.build/module.modulemap "$PWD"/Sources/*/module.modulemap; do
    if [ -f "$module_map" ]; then
        module_map_flags+=(-Xcc "-fmodule-map-file=$module_map")
    fi
done
swift-symbolgraph-extract \
    -module-name Tessera \
    -I "$bin_path/Modules" \
    "${module_map_flags[@]}" \
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
