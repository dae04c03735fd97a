"""Tessera: Apple's Core ML programming model on Linux, from Python.

``tessera.coreml`` runs Core ML models (``.mlpackage``, ``.mlmodel``, compiled models or
``coremltools.models.MLModel`` objects) with the API of ``coremltools.models.MLModel``;
``tessera.ray`` and ``tessera.mlserver`` put it behind Ray Data and MLServer.
"""

__version__ = "0.1.0"
