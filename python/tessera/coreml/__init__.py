"""Core ML models on Linux: ``MLModel`` with the API of ``coremltools.models.MLModel``.

>>> import tessera.coreml as tc                                         # doctest: +SKIP
>>> model = tc.MLModel("Digits.mlpackage")                               # doctest: +SKIP
>>> model.predict({"image": pixels})["classLabel"]                       # doctest: +SKIP

``install_coremltools_backend()`` makes unmodified coremltools code predict with Tessera;
``compare()`` reports how far a model's outputs are from reference outputs.
"""

from ._compare import OutputParity, ParityReport, compare
from ._errors import FeatureTypeError, TesseraError
from ._backend import (
    TESTED_COREMLTOOLS_VERSIONS,
    coremltools_backend_installed,
    install_coremltools_backend,
    uninstall_coremltools_backend,
)
from ._model import MLModel, MLState, compile_model

__all__ = [
    "MLModel",
    "MLState",
    "compare",
    "ParityReport",
    "OutputParity",
    "TesseraError",
    "FeatureTypeError",
    "compile_model",
    "install_coremltools_backend",
    "uninstall_coremltools_backend",
    "coremltools_backend_installed",
    "TESTED_COREMLTOOLS_VERSIONS",
]
