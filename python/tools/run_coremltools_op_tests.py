"""Runs coremltools' own op tests (from its installed wheel) with Tessera as the backend.

    python python/tools/run_coremltools_op_tests.py [--fp32] [--sample N] [--report FILE] [pytest args…]

The tests are ``coremltools/converters/mil/mil/ops/tests`` (iOS14–iOS18 op suites) with
``PYMIL_TEST_TARGETS=mlprogram`` (Tessera runs ML programs, not neural networks) and the
macOS-only prediction checks switched on by ``coremltools_backend_plugin``. ``--fp32`` also
runs the fp32 variants (``INCLUDE_MIL_FP32_UNIT_TESTS=1``). Prints pytest's summary and
writes per-outcome counts as JSON to ``--report`` (default
``.build/coremltools-op-tests.json``).
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fp32", action="store_true", help="also run the fp32 variants")
    parser.add_argument("--sample", type=int, default=1, help="run every Nth test only")
    parser.add_argument("--report", default=os.path.join(ROOT, ".build", "coremltools-op-tests.json"))
    arguments, rest = parser.parse_known_args()

    import coremltools

    tests = os.path.join(os.path.dirname(coremltools.__file__), "converters", "mil", "mil", "ops", "tests")
    environment = dict(os.environ)
    environment["PYMIL_TEST_TARGETS"] = "mlprogram"
    environment["TESSERA_CT_SAMPLE"] = str(arguments.sample)
    if arguments.fp32:
        environment["INCLUDE_MIL_FP32_UNIT_TESTS"] = "1"
    environment["PYTHONPATH"] = os.pathsep.join(
        [HERE, os.path.join(ROOT, "python")] + ([environment["PYTHONPATH"]] if environment.get("PYTHONPATH") else [])
    )
    junit = arguments.report + ".xml"
    environment["TESSERA_CT_OUTCOMES"] = arguments.report + ".outcomes.jsonl"
    command = [
        sys.executable, "-m", "pytest", tests, "-p", "coremltools_backend_plugin", "-p", "no:cacheprovider",
        "-q", "-rN", f"--junitxml={junit}", "-o", "junit_family=xunit1",
    ] + rest
    print(" ".join(command), flush=True)
    code = subprocess.call(command, env=environment, cwd=ROOT)
    counts = _counts(junit)
    counts["coremltools"] = coremltools.__version__
    counts["pytest_exit_code"] = code
    os.makedirs(os.path.dirname(arguments.report), exist_ok=True)
    with open(arguments.report, "w") as file:
        json.dump(counts, file, indent=1)
    print(json.dumps(counts))
    return 0 if code in (0, 1) else code


def _counts(junit: str) -> dict:
    import xml.etree.ElementTree as tree

    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    failures_by_file: dict = {}
    if not os.path.exists(junit):
        return counts
    for case in tree.parse(junit).iter("testcase"):
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
        counts[outcome] += 1
        if outcome in ("failed", "error"):
            key = case.get("classname", "")
            failures_by_file[key] = failures_by_file.get(key, 0) + 1
    counts["failing_classes"] = dict(sorted(failures_by_file.items(), key=lambda item: -item[1]))
    return counts


if __name__ == "__main__":
    sys.exit(main())
