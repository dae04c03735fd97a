"""Builds Tessera's C ABI library with SwiftPM and puts it into the package.

``pip install ./python`` (or ``make python``) runs ``swift build -c release --product
TesseraCoreMLC`` in the repository root and copies ``libTesseraCoreMLC.so`` into
``tessera/_lib``. That package needs the Swift toolchain's runtime at run time (it is found
through the library's rpath); ``make wheel`` (``tools/build_wheel.py``) builds a wheel that
carries the runtime instead.

Environment:
- ``TESSERA_PREBUILT_LIB_DIR``: a directory whose ``*.so*`` files go into ``tessera/_lib``
  as they are (no Swift build); ``make wheel`` uses it for the bundled runtime.
- ``TESSERA_SWIFT_CONFIGURATION``: ``release`` (default) or ``debug``.
"""

import glob
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # wheel is a build requirement; keep setup.py importable without it
    bdist_wheel = None

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class BuildWithSwift(build_py):
    """build_py that also provides ``tessera/_lib/libTesseraCoreMLC.so``."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "tessera", "_lib")
        os.makedirs(target, exist_ok=True)
        prebuilt = os.environ.get("TESSERA_PREBUILT_LIB_DIR")
        if prebuilt:
            files = [path for path in glob.glob(os.path.join(prebuilt, "*.so*")) if os.path.isfile(path)]
            if not any(os.path.basename(path) == "libTesseraCoreMLC.so" for path in files):
                raise SystemExit(f"TESSERA_PREBUILT_LIB_DIR={prebuilt} has no libTesseraCoreMLC.so")
        else:
            if not os.path.exists(os.path.join(ROOT, "Package.swift")):
                raise SystemExit(
                    f"cannot build Tessera's native library: no Package.swift in {ROOT} "
                    "(install from a checkout of the repository, or from a wheel)"
                )
            configuration = os.environ.get("TESSERA_SWIFT_CONFIGURATION", "release")
            subprocess.check_call(
                ["swift", "build", "-c", configuration, "--product", "TesseraCoreMLC"], cwd=ROOT
            )
            files = [os.path.join(ROOT, ".build", configuration, "libTesseraCoreMLC.so")]
        for path in files:
            shutil.copy2(path, os.path.join(target, os.path.basename(path)))


commands = {"build_py": BuildWithSwift}

if bdist_wheel is not None:

    class PlatformWheel(bdist_wheel):
        """A wheel for this platform (it carries a native library) that any Python 3 loads (ctypes)."""

        def finalize_options(self):
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):
            _, _, platform = super().get_tag()
            return "py3", "none", platform

    commands["bdist_wheel"] = PlatformWheel

setup(cmdclass=commands)
