"""A pytest plugin that runs coremltools' own tests with Tessera as its Core ML runtime.

Loaded with ``-p coremltools_backend_plugin`` (``run_coremltools_op_tests.py`` does it)
before coremltools' test modules are imported, it installs
``tessera.coreml.install_coremltools_backend()`` and switches on the tests' macOS-only
checks: ``coremltools._deps._IS_MACOS`` (read by ``testing_utils`` at import) and
``coremltools.models.utils._is_macos()``, so ``compare_backend`` predicts and compares
instead of returning early. The claimed macOS version is Tessera's
(``CLAIMED_MACOS_VERSION``), so iOS 15–18 targets all run.
"""

import coremltools._deps as _deps
import coremltools.models.utils as _utils

import tessera.coreml as _tc

_tc.install_coremltools_backend()
_deps._IS_MACOS = True
_utils._is_macos = lambda: True


def pytest_report_header(config):
    return f"Tessera is coremltools' backend (claimed macOS {'.'.join(map(str, _tc._backend.CLAIMED_MACOS_VERSION))})"


_outcomes = None


def pytest_configure(config):
    # One JSON line per test outcome, written as the run goes, so a run stopped early still
    # has its counts ($TESSERA_CT_OUTCOMES).
    global _outcomes
    import os

    path = os.environ.get("TESSERA_CT_OUTCOMES")
    if path:
        _outcomes = open(path, "w", buffering=1)


def pytest_runtest_logreport(report):
    if _outcomes is None:
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        import json

        _outcomes.write(json.dumps({"test": report.nodeid, "outcome": report.outcome, "when": report.when}) + "\n")


def pytest_collection_modifyitems(config, items):
    # $TESSERA_CT_SAMPLE=N keeps every Nth test (a deterministic, evenly spread sample of the
    # whole suite, for machines where all ~8,000 conversions take too long).
    import os

    stride = int(os.environ.get("TESSERA_CT_SAMPLE", "1"))
    if stride > 1:
        kept = items[::stride]
        config.hook.pytest_deselected(items=[item for index, item in enumerate(items) if index % stride])
        items[:] = kept
