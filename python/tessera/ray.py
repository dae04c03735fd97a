"""Ray Data: a callable class for ``Dataset.map_batches`` that predicts with Tessera.

>>> import ray, tessera.ray                                            # doctest: +SKIP
>>> ds = ray.data.from_numpy(pixels).rename_columns({"data": "image"}) # doctest: +SKIP
>>> out = ds.map_batches(tessera.ray.Predictor, fn_constructor_kwargs={"model": "Digits.mlpackage"},
...                      concurrency=2, batch_format="numpy")          # doctest: +SKIP

Each Ray worker (actor) loads the model once; every batch runs as one Tessera batch
prediction with the GIL released. Input columns are named like the model's inputs; see
``tessera._batch`` for how rows map to features and outputs to columns.
"""

from __future__ import annotations

from ._batch import outputs_to_columns, rows_to_items
from .coreml import MLModel


class Predictor:
    """Loads ``model`` once per worker; called with a ``dict[str, np.ndarray]`` batch.

    ``passthrough`` lists input columns to copy into the output batch (for example an id).
    """

    def __init__(self, model, compute_units=None, function_name=None, passthrough=()):
        self.model = MLModel(model, compute_units=compute_units, function_name=function_name)
        self.passthrough = tuple(passthrough)

    def __call__(self, batch: dict) -> dict:
        items, expanded = rows_to_items(self.model, batch)
        columns = outputs_to_columns(self.model, self.model.predict(items), expanded)
        for name in self.passthrough:
            columns[name] = batch[name]
        return columns
