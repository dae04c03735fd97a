"""``tessera.coreml.compare``: how far a Core ML model's outputs are from a reference."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class OutputParity:
    """One output's error against its reference, over every compared input."""

    name: str
    shape: tuple
    dtype: str
    max_abs: float
    max_rel: float
    #: The largest ``|got - expected| / (atol + rtol * |expected|)``: at most 1 means within
    #: ``np.isclose`` tolerances ``atol``, ``rtol`` of the report.
    worst_tolerance_ratio: float
    mismatches: int
    count: int


@dataclass
class ParityReport:
    """Per-output errors of :func:`compare`; ``str(report)`` is a table."""

    outputs: dict
    rtol: float
    atol: float

    @property
    def ok(self) -> bool:
        """Whether every element is within ``atol + rtol * |expected|``."""
        return all(parity.mismatches == 0 for parity in self.outputs.values())

    def __str__(self) -> str:
        rows = [("output", "shape", "dtype", "max abs", "max rel", f"mismatches (atol={self.atol:g}, rtol={self.rtol:g})")]
        for parity in self.outputs.values():
            rows.append(
                (
                    parity.name,
                    "x".join(map(str, parity.shape)) or "scalar",
                    parity.dtype,
                    f"{parity.max_abs:.3e}",
                    f"{parity.max_rel:.3e}",
                    f"{parity.mismatches} / {parity.count}",
                )
            )
        widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
        lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
        lines.insert(1, "  ".join("-" * width for width in widths))
        return "\n".join(lines)


def _as_model(model):
    from ._model import MLModel

    return model if isinstance(model, MLModel) else MLModel(model)


def _is_torch_module(reference) -> bool:
    try:
        import torch
    except ImportError:
        return False
    return isinstance(reference, torch.nn.Module)


def _reference_outputs(reference, model, inputs: list[dict]) -> list[dict]:
    names = list(model.output_description)
    if isinstance(reference, dict):
        return [reference]
    if isinstance(reference, list) and all(isinstance(item, dict) for item in reference):
        return reference
    if _is_torch_module(reference):
        import torch

        results = []
        with torch.no_grad():
            for item in inputs:
                arguments = [torch.from_numpy(np.asarray(item[name])) for name in model.input_description]
                results.append(_name_outputs(reference(*arguments), names))
        return results
    if callable(reference):
        return [_name_outputs(reference(item), names) for item in inputs]
    raise TypeError(
        "reference must be a dict of outputs, a list of them (one per input), a torch.nn.Module or a "
        f"callable; got {type(reference).__name__}"
    )


def _name_outputs(value, names: list[str]) -> dict:
    if isinstance(value, dict):
        return value
    values = list(value) if isinstance(value, (tuple, list)) else [value]
    if len(values) > len(names):
        raise ValueError(f"the reference returned {len(values)} outputs; the model has {len(names)}: {names}")
    return {name: _to_numpy(item) for name, item in zip(names, values)}


def _to_numpy(value):
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return value


def compare(model, reference, inputs, rtol: float = 1e-3, atol: float = 1e-4, verbose: bool = True) -> ParityReport:
    """Predicts ``inputs`` with ``model`` and reports each output's error against ``reference``.

    - ``model``: a :class:`tessera.coreml.MLModel`, a path, or a ``coremltools`` model.
    - ``reference``: the expected outputs (a dict of name → array, or a list of such dicts,
      one per input), or a ``torch.nn.Module`` (called with the inputs in the model's input
      order, its outputs matched to the model's outputs in order), or any callable taking an
      input dict and returning outputs likewise.
    - ``inputs``: a dict or a list of dicts, as :meth:`MLModel.predict` takes.

    Prints the table unless ``verbose`` is False, and returns a :class:`ParityReport` with
    max-abs and max-relative error per output (relative to ``|expected|``, zeros excluded
    unless the error is nonzero) and the elements outside ``atol + rtol * |expected|``.
    Classifier probability dictionaries are compared by label; labels must be equal.

    >>> report = compare(model, torch_module, {"x": x})      # doctest: +SKIP
    >>> report.outputs["y"].max_abs                           # doctest: +SKIP
    3.1e-07
    """
    model = _as_model(model)
    items = [inputs] if isinstance(inputs, dict) else list(inputs)
    expected_items = _reference_outputs(reference, model, items)
    if len(expected_items) != len(items):
        raise ValueError(f"{len(expected_items)} reference outputs for {len(items)} inputs")
    got_items = model.predict(items)
    pairs: dict = {}
    for got, expected in zip(got_items, expected_items):
        for name, value in expected.items():
            if name not in got:
                raise ValueError(f"the reference has output {name!r}; the model's are {sorted(got)}")
            left, right = _comparable(name, got[name], _to_numpy(value))
            pairs.setdefault(name, []).append((left, right))
    outputs = {}
    for name, values in pairs.items():
        got = np.concatenate([pair[0].reshape(-1) for pair in values])
        expected = np.concatenate([pair[1].reshape(-1) for pair in values])
        error = np.abs(got - expected)
        scale = np.abs(expected)
        with np.errstate(divide="ignore", invalid="ignore"):
            relative = np.where(scale > 0, error / scale, np.where(error > 0, np.inf, 0.0))
            ratio = error / (atol + rtol * scale)
        both_nan = np.isnan(got) & np.isnan(expected)
        error, relative, ratio = (np.where(both_nan, 0.0, array) for array in (error, relative, ratio))
        first = values[0][0]
        outputs[name] = OutputParity(
            name=name,
            shape=tuple(first.shape),
            dtype=str(first.dtype),
            max_abs=float(error.max()) if error.size else 0.0,
            max_rel=float(relative.max()) if relative.size else 0.0,
            worst_tolerance_ratio=float(ratio.max()) if ratio.size else 0.0,
            mismatches=int((ratio > 1).sum() + (np.isnan(got) ^ np.isnan(expected)).sum()),
            count=int(got.size),
        )
    report = ParityReport(outputs=outputs, rtol=rtol, atol=atol)
    if verbose:
        print(report)
    return report


def _comparable(name, got, expected):
    if isinstance(got, dict):
        if not isinstance(expected, dict) or set(map(str, got)) != set(map(str, expected)):
            raise ValueError(f"output {name!r}: the labels differ from the reference's")
        keys = sorted(got, key=str)
        lookup = {str(key): value for key, value in expected.items()}
        return np.array([got[key] for key in keys], np.float64), np.array([lookup[str(key)] for key in keys], np.float64)
    if isinstance(got, (str, int)) and not isinstance(expected, np.ndarray) and isinstance(expected, (str, int)):
        return np.array([0.0 if str(got) == str(expected) else np.inf]), np.array([0.0])
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    if got.size != expected.size:
        raise ValueError(f"output {name!r} has shape {got.shape}; the reference's is {expected.shape}")
    return got.reshape(expected.shape), expected
