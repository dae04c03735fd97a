"""Installs the built wheel into a fresh venv and predicts with it, without the Swift toolchain.

    python python/tools/check_wheel.py [--wheel-dir .build/dist]

The venv (``.build/wheel-check-venv``, made anew) gets the wheel and NumPy only. The check
runs with a minimal environment (``PATH=/usr/bin:/bin``, no ``LD_LIBRARY_PATH``), predicts
the digit classifier's held-out samples, and fails if any library was mapped from the Swift
toolchain (``/opt/swift`` or wherever ``swift`` lives) or the system's OpenBLAS instead of
the wheel.
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CHECK = r"""
import json, os, sys
import numpy as np
import tessera.coreml as tc
resources = sys.argv[1]
model = tc.MLModel(os.path.join(resources, "DigitsClassifier.mlpackage"))
samples = json.load(open(os.path.join(resources, "digits-samples.json")))
right = sum(model.predict({"image": (np.array(s["pixels"], np.float32) / 16).reshape(1, 64)})["classLabel"] == s["label"]
            for s in samples["samples"])
assert right == len(samples["samples"]), f"{right} of {len(samples['samples'])} right"
maps = {line.split()[-1] for line in open("/proc/self/maps") if ".so" in line}
forbidden = [path for path in maps if any(path.startswith(prefix) for prefix in sys.argv[2:])]
assert not forbidden, f"mapped from outside the wheel: {forbidden}"
lib = os.path.dirname(tc._model._native.library_path())
bundled = sorted(os.path.basename(path) for path in maps if path.startswith(lib))
print(f"predicted {right} digits; libraries from the wheel: {', '.join(bundled)}")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wheel-dir", default=os.path.join(ROOT, ".build", "dist"))
    arguments = parser.parse_args()
    (wheel,) = glob.glob(os.path.join(arguments.wheel_dir, "tessera_coreml-*.whl"))
    venv = os.path.join(ROOT, ".build", "wheel-check-venv")
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.check_call([sys.executable, "-m", "venv", venv])
    python = os.path.join(venv, "bin", "python")
    subprocess.check_call([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel, "numpy"])
    swift = shutil.which("swift")
    toolchain = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(swift)))) if swift else "/opt/swift"
    forbidden = [toolchain + "/", "/opt/swift/", "/usr/lib/x86_64-linux-gnu/openblas", "/usr/lib/x86_64-linux-gnu/libopenblas"]
    environment = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")}
    resources = os.path.join(ROOT, "Sources", "tessera", "Resources")
    subprocess.check_call([python, "-c", CHECK, resources] + forbidden, env=environment, cwd="/")
    print(f"{os.path.basename(wheel)}: {os.path.getsize(wheel) / 1e6:.1f} MB; installs and predicts without the Swift toolchain")
    return 0


if __name__ == "__main__":
    sys.exit(main())
