#!/usr/bin/env python3
"""Compares the public symbols of Tessera's library modules with the checked-in allow-list.

`import Tessera` must give Apple's Core ML API and the documented Tessera extensions, nothing
else. This script extracts the symbol graph of every library module of the `Tessera` product
(the API modules the umbrella re-exports, and the machinery modules below them, whose public
members would leak through member lookup) from a finished build, writes one line per public
symbol and per conformance, and compares the sorted lines with `tools/public-api.txt`.

    tools/check-public-api.py [--bin-path .build/debug] [--update] [--symbol-graph-dir DIR]

A line that is not in the allow-list is a leak; a line of the list that is gone is an API
removal. Either fails with a diff. `--update` rewrites the list from the build instead (review
the diff: the list may hold only Core ML API and documented Tessera extensions).

`tools/public-api-pending.txt`, when present, lists public symbols that are known not to be API and
are waiting to become `package`; they are accepted, and reported, until they are gone. The
script drops lines that have disappeared from it when run with `--update`; it never adds any.

Standard library only (CI has no virtual environment for it). Needs `swift-symbolgraph-extract`,
which ships with the toolchain.
"""

import argparse
import difflib
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALLOW_LIST = os.path.join(ROOT, "tools", "public-api.txt")
PENDING_LIST = os.path.join(ROOT, "tools", "public-api-pending.txt")

# Every library module linked into the `Tessera` product. The API modules are the ones
# Sources/Tessera/Tessera.swift re-exports; the others must have no public symbols at all.
MODULES = [
    "Tessera",
    "TesseraTensor",
    "TesseraMultiArray",
    "TesseraModels",
    "TesseraCoreVideo",
    "TesseraImaging",
    "TesseraKernels",
    "TesseraGraph",
    "TesseraProtobuf",
]

# Conformances every type has implicitly; listing them would only add noise.
IMPLICIT_PROTOCOLS = {
    "Swift.Copyable",
    "Swift.Escapable",
    "Swift.BitwiseCopyable",
    "Swift.SendableMetatype",
}

HEADER = """\
# The public surface of `import Tessera`: one line per public symbol or conformance of a library
# module in the Tessera product. Only Core ML API and documented Tessera extensions belong here.
# Checked by tools/check-public-api.py (`make check-api`); regenerate with `make api-list` after
# an intended API change, and review the diff.
"""

PENDING_HEADER = """\
# Public symbols that are not API and wait to become `package` (see tools/public-api.txt).
# tools/check-public-api.py accepts them until they are gone; `make api-list` drops lines that no
# longer exist. Never add lines here: make the symbol `package` instead.
"""


def extract(bin_path, output_dir):
    """Runs swift-symbolgraph-extract for every module into `output_dir`."""
    modules_dir = os.path.join(bin_path, "Modules")
    if not os.path.isdir(modules_dir):
        sys.exit(f"check-public-api: no build at {bin_path} (run `swift build` first)")
    extractor = shutil.which("swift-symbolgraph-extract")
    if extractor is None:
        sys.exit("check-public-api: swift-symbolgraph-extract is not on PATH")
    # The C modules the Swift modules import, as SwiftPM passes them to the compiler: the module
    # maps SwiftPM generates for C targets with an umbrella header, and the hand-written ones of
    # the system-library targets. Found by globbing so a new C target needs no edit here.
    module_maps = sorted(glob.glob(os.path.join(bin_path, "*.build", "module.modulemap")))
    module_maps += sorted(glob.glob(os.path.join(ROOT, "Sources", "*", "module.modulemap")))
    arguments = [extractor, "-I", modules_dir, "-output-dir", output_dir]
    for module_map in module_maps:
        arguments += ["-Xcc", f"-fmodule-map-file={module_map}"]
    arguments += [
        "-target", target_triple(),
        "-minimum-access-level", "public",
        "-emit-extension-block-symbols",
        "-skip-synthesized-members",
    ]
    for module in MODULES:
        result = subprocess.run(arguments + ["-module-name", module], capture_output=True, text=True)
        if result.returncode != 0:
            sys.stderr.write(result.stdout + result.stderr)
            sys.exit(f"check-public-api: swift-symbolgraph-extract failed for {module}")


def target_triple():
    output = subprocess.run(["swift", "-print-target-info"], capture_output=True, text=True, check=True).stdout
    return json.loads(output)["target"]["triple"]


def declaration(symbol):
    return "".join(fragment["spelling"] for fragment in symbol.get("declarationFragments", []))


def constraint_text(constraints):
    if not constraints:
        return ""
    parts = []
    for constraint in constraints:
        relation = "==" if constraint["kind"] == "sameType" else ":"
        parts.append(f"{constraint['lhs']} {relation} {constraint['rhs']}")
    return " where " + ", ".join(parts)


def surface(graph_dir):
    """The sorted lines: `Path.to.symbol  declaration` and `Type: Protocol`."""
    graphs = []
    for name in sorted(os.listdir(graph_dir)):
        if name.endswith(".symbols.json"):
            with open(os.path.join(graph_dir, name), encoding="utf-8") as file:
                graphs.append(json.load(file))
    names = {}
    for graph in graphs:
        for symbol in graph["symbols"]:
            names[symbol["identifier"]["precise"]] = ".".join(symbol["pathComponents"])
    lines = set()
    for graph in graphs:
        for symbol in graph["symbols"]:
            if symbol["kind"]["identifier"] == "swift.extension":
                continue
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            path = ".".join(symbol["pathComponents"])
            extension = symbol.get("swiftExtension", {})
            where = ""
            # Members of constrained extensions: the declaration does not show the constraint.
            if extension.get("constraints") and " where " not in declaration(symbol):
                where = constraint_text(extension["constraints"])
            lines.add(f"{path}  {declaration(symbol)}{where}")
        for relationship in graph["relationships"]:
            if relationship["kind"] not in ("conformsTo", "inheritsFrom"):
                continue
            target = names.get(relationship["target"], relationship.get("targetFallback"))
            if target is None or target in IMPLICIT_PROTOCOLS:
                continue
            source = names.get(relationship["source"])
            if source is None:
                continue
            lines.add(f"{source}: {target}{constraint_text(relationship.get('swiftConstraints'))}")
    return sorted(lines)


def read_list(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as file:
        return [line.rstrip("\n") for line in file if line.strip() and not line.startswith("#")]


def write_list(path, header, lines):
    with open(path, "w", encoding="utf-8") as file:
        file.write(header)
        for line in lines:
            file.write(line + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin-path", help="the build's bin path (default: `swift build --show-bin-path`)")
    parser.add_argument("--symbol-graph-dir", help="keep the extracted symbol graphs here")
    parser.add_argument("--update", action="store_true", help="rewrite the allow-list from the build")
    options = parser.parse_args()

    bin_path = options.bin_path
    if bin_path is None:
        bin_path = subprocess.run(
            ["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()

    with tempfile.TemporaryDirectory() as temporary:
        graph_dir = options.symbol_graph_dir or temporary
        os.makedirs(graph_dir, exist_ok=True)
        extract(bin_path, graph_dir)
        actual = surface(graph_dir)

    pending = read_list(PENDING_LIST)
    pending_set = set(pending)
    if options.update:
        still_pending = [line for line in pending if line in set(actual)]
        allowed = [line for line in actual if line not in pending_set]
        write_list(ALLOW_LIST, HEADER, allowed)
        if os.path.exists(PENDING_LIST):
            if still_pending:
                write_list(PENDING_LIST, PENDING_HEADER, still_pending)
            else:
                os.remove(PENDING_LIST)
        print(f"check-public-api: wrote {len(allowed)} lines to {os.path.relpath(ALLOW_LIST, ROOT)}", end="")
        print(f", {len(still_pending)} still pending" if still_pending else "")
        return 0

    expected = read_list(ALLOW_LIST)
    checked = [line for line in actual if line not in pending_set]
    if checked != expected:
        diff = difflib.unified_diff(
            expected, checked, "tools/public-api.txt (allowed)", "build (actual)", lineterm="", n=0
        )
        print("\n".join(diff))
        print(
            "\ncheck-public-api: the public surface differs from tools/public-api.txt.\n"
            "  '+' lines are public symbols that are not in the list: make them `package` unless they\n"
            "  are Core ML API or a documented Tessera extension.\n"
            "  '-' lines are listed symbols that are gone: an API removal.\n"
            "  After an intended change, run `make api-list` and review the diff.",
            file=sys.stderr,
        )
        return 1
    present_pending = [line for line in pending if line in set(actual)]
    message = f"check-public-api: {len(checked)} public symbols, all in tools/public-api.txt"
    if present_pending:
        message += f"; {len(present_pending)} known non-API symbols pending in tools/public-api-pending.txt"
    print(message)
    return 0


if __name__ == "__main__":
    sys.exit(main())
