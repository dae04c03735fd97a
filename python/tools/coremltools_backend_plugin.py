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
