"""Column batches (name -> array of rows) to and from Core ML predictions.

Shared by ``tessera.ray`` and ``tessera.mlserver``: row ``i`` of column ``x`` is the value of
input ``x`` for item ``i``. A row one dimension short of the declared shape gets the
declared leading 1 (so rows of ``[64]`` feed an input of shape ``[1, 64]``), and the
outputs then lose it again. Outputs are stacked into columns; a classifier's probability
dictionary becomes a ``[rows, classes]`` array in label order.
"""

from __future__ import annotations

import numpy as np


def rows_to_items(model, columns: dict) -> tuple[list[dict], bool]:
    """The per-item input dicts of a column batch, and whether a leading 1 was added."""
    names = [name for name in model.input_description if name in columns]
    missing = [name for name in model.input_description if name not in columns]
    optional = {name for name in missing if model.input_description.feature(name).get("isOptional")}
    if set(missing) - optional:
        raise ValueError(f"the batch has no column for input(s) {sorted(set(missing) - optional)}; it has {sorted(columns)}")
    count = len(columns[names[0]]) if names else 0
    expanded = False
    items = [dict() for _ in range(count)]
    for name in names:
        column = columns[name]
        if len(column) != count:
            raise ValueError(f"column {name!r} has {len(column)} rows; {names[0]!r} has {count}")
        feature = model.input_description.feature(name)
        shape = feature.get("shape")
        if feature["type"] == "multiArray":
            column = np.asarray(column)
            if shape and column.ndim == len(shape) and shape[0] == 1:
                column = column[:, None]
                expanded = True
            for index in range(count):
                items[index][name] = column[index]
        else:
            for index in range(count):
                value = column[index]
                items[index][name] = value.item() if isinstance(value, np.generic) else value
    return items, expanded


def outputs_to_columns(model, outputs: list[dict], expanded: bool) -> dict:
    """Stacks per-item outputs into columns (see the module's docstring)."""
    if not outputs:
        return {}
    labels = model.class_labels
    columns = {}
    for name in outputs[0]:
        values = [output[name] for output in outputs]
        first = values[0]
        if isinstance(first, dict):
            keys = labels if labels and len(labels) == len(first) else sorted(first)
            columns[name] = np.array([[value[key] for key in keys] for value in values], dtype=np.float64)
        elif isinstance(first, np.ndarray):
            stacked = np.stack(values)
            if expanded and stacked.ndim >= 2 and stacked.shape[1] == 1:
                stacked = stacked[:, 0]
            columns[name] = stacked
        else:
            columns[name] = np.array(values)
    return columns
