#!/usr/bin/env python3
"""Harvests coremltools' own MIL op unit tests into lowering fixtures (model + inputs + expected).

coremltools ships its op tests inside the wheel (`coremltools/converters/mil/mil/ops/tests/`).
On Linux they only convert (prediction needs macOS), but each test hands its model, inputs and
hand-written or NumPy/torch-computed expected outputs to `compare_backend`. This script runs
the tests under pytest with `compare_backend` replaced by a recorder that saves, per call with
an ML-program fp32 model:

    <out>/<n>/model.mlpackage, input_<i>.npy, expected_<i>.npy, case.json
    (case.json: test id, input and output names, atol, rtol, the program's op types)

Usage (from the repository root; needs `pip install pytest scipy` in the venv, and torch for
the test files that import it):

    INCLUDE_MIL_FP32_UNIT_TESTS=1 tools/.venv-coreml/bin/python tools/harvest_coremltools_op_tests.py \
        OUT_DIR [pytest selection args...]

Without selection arguments it runs every op test file coremltools ships (iOS14-iOS18 and the
Core ML dialect: tens of thousands of parametrizations, hours on two cores); pass test files
or `-k` expressions to harvest one op family, and set `HARVEST_SAMPLE=n` to keep every n-th
parametrization of each test function (the big families: the iOS 18 compression tests have
~2,400 fp32 cases). Ops in nested blocks (`cond`, `while_loop`)
count as the program's ops.

The output is large (thousands of packages), so it is not committed; the Swift test
`LoweringHarvestTests` runs whatever it finds in `Tests/Fixtures/harvested/` (gitignored) and
prints the pass rate per op.
"""

import itertools
import json
import os
import sys

import numpy as np

OUT = None
COUNTER = itertools.count()


def record(mlmodel, input_key_values, expected_outputs, dtype="fp32", atol=1e-04, rtol=1e-05,
           also_compare_shapes=True, state=None, allow_mismatch_ratio=0.0):
    """Stands in for `compare_backend`: saves fp32 ML-program cases, predicts nothing."""
    if dtype != "fp32" or state is not None or expected_outputs is None:
        return None
    spec = mlmodel.get_spec()
    if spec.WhichOneof("Type") != "mlProgram":
        return None
    if not all(isinstance(v, np.ndarray) or np.isscalar(v) for v in expected_outputs.values()):
        return None
    directory = os.path.join(OUT, f"{next(COUNTER):05d}")
    os.makedirs(directory)
    mlmodel.save(os.path.join(directory, "model.mlpackage"))
    inputs = list(input_key_values.keys())
    for i, name in enumerate(inputs):
        value = np.asarray(input_key_values[name])
        if value.dtype in (np.float64, np.float16):
            value = value.astype(np.float32)
        elif value.dtype.kind in "iu":
            value = value.astype(np.int32)
        elif value.dtype == np.bool_:
            value = value.astype(np.int32)
        np.save(os.path.join(directory, f"input_{i}.npy"), np.array(value, order="C"))
    outputs = list(expected_outputs.keys())
    for i, name in enumerate(outputs):
        np.save(os.path.join(directory, f"expected_{i}.npy"),
                np.array(expected_outputs[name], dtype=np.float32, order="C"))
    function = spec.mlProgram.functions["main"]
    ops = sorted(op_types(function.block_specializations[function.opset]) - {"const"})
    with open(os.path.join(directory, "case.json"), "w") as f:
        json.dump(dict(test=os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0], inputs=inputs,
                       outputs=outputs, atol=float(atol), rtol=float(rtol), ops=ops), f)
    return None


def op_types(block):
    """The op types of `block` and of every block nested in its ops (cond, while_loop)."""
    types = set()
    for op in block.operations:
        types.add(op.type)
        for nested in op.blocks:
            types |= op_types(nested)
    return types


def default_selection():
    """Every op test file coremltools ships (iOS14-iOS18 and the Core ML dialect)."""
    import coremltools.converters.mil.mil.ops.tests as tests
    root = os.path.dirname(tests.__file__)
    return sorted(os.path.join(dirpath, name) for dirpath, _, names in os.walk(root)
                  for name in names if name.startswith("test_") and name.endswith(".py")
                  and os.path.basename(dirpath) != "tests")


class Recorder:
    """A pytest plugin that installs `record` before the test modules import `compare_backend`."""

    def pytest_configure(self, config):
        import coremltools.converters.mil.testing_utils as testing_utils
        testing_utils.compare_backend = record
        import coremltools.converters.mil.mil.ops.tests.testing_utils as op_testing_utils
        op_testing_utils.compare_backend = record

    def pytest_collection_modifyitems(self, config, items):
        """Drops the parametrizations that `record` would not save (NeuralNetwork or fp16
        backends), so their conversions are not run."""
        kept, dropped = [], []
        for item in items:
            backend = getattr(getattr(item, "callspec", None), "params", {}).get("backend")
            kind = getattr(backend, "backend", backend[0] if isinstance(backend, tuple) else None)
            precision = getattr(backend, "precision", backend[1] if isinstance(backend, tuple) else None)
            wanted = backend is None or (kind in (None, "mlprogram") and precision in (None, "fp32"))
            (kept if wanted else dropped).append(item)
        # HARVEST_SAMPLE=n keeps every n-th parametrization of each test function (the first
        # included), for the families too large to harvest whole.
        sample = int(os.environ.get("HARVEST_SAMPLE", "1"))
        if sample > 1:
            seen = {}
            sampled = []
            for item in kept:
                key = (item.module.__name__, item.cls.__name__ if item.cls else "", item.originalname)
                seen[key] = seen.get(key, -1) + 1
                (sampled if seen[key] % sample == 0 else dropped).append(item)
            kept = sampled
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept


def main():
    global OUT
    OUT = os.path.abspath(sys.argv[1])
    os.makedirs(OUT, exist_ok=True)
    import pytest
    selection = sys.argv[2:] or default_selection()
    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", *selection], plugins=[Recorder()]))


if __name__ == "__main__":
    main()
