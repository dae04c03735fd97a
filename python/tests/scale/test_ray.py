"""Ray Data: tessera.ray.Predictor on a local two-worker cluster, thousands of rows."""

import json
import os

import numpy as np
import pytest

from conftest import RESOURCES

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield
    ray.shutdown()


def _samples():
    with open(os.path.join(RESOURCES, "digits-samples.json")) as file:
        return json.load(file)


def test_map_batches_with_two_workers(cluster):
    import tessera.ray

    samples = _samples()
    pixels = np.array([sample["pixels"] for sample in samples["samples"]], np.float32) / 16
    repeats = 200  # 4,000 rows
    rows = np.tile(pixels, (repeats, 1))
    ids = np.arange(len(rows))
    ds = ray.data.from_items([{"image": row, "id": i} for i, row in zip(ids, rows)])
    out = ds.map_batches(
        tessera.ray.Predictor,
        fn_constructor_kwargs={"model": os.path.join(RESOURCES, "DigitsClassifier.mlpackage"), "passthrough": ("id",)},
        concurrency=2,
        batch_size=256,
        batch_format="numpy",
    ).take_all()
    assert len(out) == len(rows)
    expected_labels = [sample["label"] for sample in samples["samples"]]
    expected_probabilities = np.array([sample["probabilities"] for sample in samples["samples"]])
    for row in out:
        index = int(row["id"]) % len(pixels)
        assert row["classLabel"] == expected_labels[index]
        np.testing.assert_allclose(row["classLabel_probs"], expected_probabilities[index], rtol=1e-4, atol=1e-5)
