"""Feature descriptions in the shape coremltools gives them."""

from __future__ import annotations

from collections.abc import Mapping


class FeatureDescriptions(Mapping):
    """The inputs or outputs of a model, like coremltools' ``model.input_description``.

    Iterating yields the feature names in the model's order; ``descriptions[name]`` is the
    feature's short description (a string, possibly empty), as in coremltools.
    ``descriptions.feature(name)`` gives everything Tessera knows about it: ``type``
    (``"multiArray"``, ``"int64"``, ``"double"``, ``"string"``, ``"dictionary"``, …),
    ``dataType`` (a NumPy dtype name), ``shape``, ``shapeConstraint``,
    ``enumeratedShapes``, ``sizeRanges`` (upper bound -1 when unbounded), ``isOptional``.

    >>> model.input_description                 # doctest: +SKIP
    Features(image)
    >>> model.input_description.feature("image")["shape"]   # doctest: +SKIP
    [1, 64]
    """

    def __init__(self, features: list[dict]):
        self._features = {feature["name"]: feature for feature in features}

    def __getitem__(self, name: str) -> str:
        return self._features[name].get("shortDescription", "")

    def __iter__(self):
        return iter(self._features)

    def __len__(self) -> int:
        return len(self._features)

    def feature(self, name: str) -> dict:
        """Everything the model declares about feature ``name`` (a copy)."""
        return dict(self._features[name])

    def __repr__(self) -> str:
        return "Features(%s)" % ",".join(self._features)
