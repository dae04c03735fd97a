"""Rank-0 values through the Python API (the Swift suite's ``RankZeroTests``, same fixtures from
``tools/make_rank0_fixtures.py``): scalar outputs come back as shape ``(1,)``, as Core ML gives
them and as coremltools' tests check them; a 0-d NumPy array is taken for a scalar input."""

import numpy as np
import pytest

import tessera.coreml as tc
from conftest import close, fixture, load_json

CASES = [case for case in load_json("rank0", "cases.json") if case["kind"] != "state"]


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_rank0_fixture_shapes_and_values(case):
    model = tc.MLModel(fixture("rank0", case["name"], "model.mlpackage"))
    inputs = {name: np.load(fixture("rank0", case["name"], f"{name}.npy")) for name in case["inputs"]}
    outputs = model.predict(inputs)
    for index, name in enumerate(case["outputs"]):
        expected = np.load(fixture("rank0", case["name"], f"expected_{index}.npy"))
        assert list(np.shape(outputs[name])) == case["expectedShapes"][index]
        close(outputs[name], expected, rtol=case["rtol"], atol=case["atol"])


def test_zero_dimensional_array_for_scalar_input():
    model = tc.MLModel(fixture("rank0", "input_scalar", "model.mlpackage"))
    v = np.load(fixture("rank0", "input_scalar", "v.npy"))
    out = model.predict({"s": np.array(1.5, np.float32), "v": v})["y"]
    close(out, np.load(fixture("rank0", "input_scalar", "expected_0.npy")))


def test_scalar_state_round_trip():
    model = tc.MLModel(fixture("rank0", "state_scalar", "model.mlpackage"))
    state = model.make_state()
    x = np.load(fixture("rank0", "state_scalar", "x.npy"))
    first = np.load(fixture("rank0", "state_scalar", "expected_0.npy"))
    y = model.predict({"x": x}, state)["y"]
    assert y.shape == (1,)
    close(y, first, rtol=1e-3, atol=1e-3)
    assert state.read_state("counter").shape == (1,)


def test_declared_shape_failure_is_a_load_error():
    with pytest.raises(tc.TesseraError, match="op type 'matmul'"):
        tc.MLModel(fixture("rank0", "invalid_matmul_declared_shapes", "model.mlpackage"))
