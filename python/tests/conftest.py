"""Shared paths and helpers for the tests of the Python package.

The fixtures are the Swift test suite's (``Tests/Fixtures``, made by ``tools/`` scripts with
NumPy and coremltools), so both suites check Tessera against the same expected values.
"""

import json
import os

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(ROOT, "Tests", "Fixtures")
RESOURCES = os.path.join(ROOT, "Sources", "tessera", "Resources")


def fixture(*parts: str) -> str:
    """The path of a file under ``Tests/Fixtures``."""
    return os.path.join(FIXTURES, *parts)


def load_json(*parts: str):
    with open(fixture(*parts)) as file:
        return json.load(file)


def close(got, expected, rtol=1e-4, atol=1e-5) -> None:
    """Asserts ``|got - expected| <= atol + rtol * |expected|`` elementwise, as the Swift tests do."""
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, f"shape {got.shape} vs {expected.shape}"
    bad = ~(np.abs(got - expected) <= atol + rtol * np.abs(expected))
    bad &= ~(np.isnan(got) & np.isnan(expected))
    bad &= ~((got == expected) & np.isinf(expected))
    assert not bad.any(), f"{bad.sum()} of {got.size} elements differ; first at {np.argwhere(bad)[0]}: {got[bad][0]} vs {expected[bad][0]}"


@pytest.fixture(scope="session")
def digits():
    """The demo's digit classifier and its held-out samples."""
    import tessera.coreml as tc

    with open(os.path.join(RESOURCES, "digits-samples.json")) as file:
        samples = json.load(file)
    return tc.MLModel(os.path.join(RESOURCES, "DigitsClassifier.mlpackage")), samples


def digit_input(sample) -> dict:
    return {"image": (np.array(sample["pixels"], dtype=np.float32) / 16).reshape(1, 64)}
