"""``install_coremltools_backend()``: unmodified coremltools code predicts with Tessera.

**This patches another package's private surface.** coremltools predicts through a native
extension, ``coremltools.libcoremlpython``, that exists only in its macOS wheels: both
``coremltools.models.MLModel`` and ``CompiledMLModel`` import ``_MLModelProxy`` from it and
construct it as ``_MLModelProxy(path, compute_units.name, function_name, hints, asset)``, then
call ``.predict(data, state)``, ``.batchPredict(list)`` and ``.newState()``. Some paths are
also gated on ``_macos_version()``, which is ``()`` on Linux.

``install_coremltools_backend()`` registers a module of that name whose ``_MLModelProxy``
runs :class:`tessera.coreml.MLModel`, binds it where coremltools has already imported
``None``, and makes the version gates see macOS :data:`CLAIMED_MACOS_VERSION`. It is opt-in,
affects only the calling process, and refuses coremltools versions it was not tested with
(:data:`TESTED_COREMLTOOLS_VERSIONS`) unless ``force=True``.
"""

from __future__ import annotations

import os
import sys
import time
import types

from ._errors import TesseraError
from ._model import MLModel, compile_model

#: The coremltools releases (major.minor) whose private surface this shim was tested against.
TESTED_COREMLTOOLS_VERSIONS = ("9.0",)

#: The macOS version coremltools' gates see: the OS whose Core ML (iOS 18 / macOS 15 opsets,
#: states, multi-function models) Tessera implements.
CLAIMED_MACOS_VERSION = (15, 0)

#: The newest Core ML specification version the shim lets coremltools load (macOS 15's).
MAXIMUM_SPECIFICATION_VERSION = 9


class _MLModelProxy:
    """What coremltools' native ``_MLModelProxy`` does, run by Tessera."""

    def __init__(self, path, compute_units="ALL", function_name="", optimization_hints=None, asset=None):
        if asset is not None:
            raise RuntimeError("Tessera's coremltools backend cannot load an MLModelAsset; load the model from a path")
        started = time.perf_counter_ns()
        try:
            self._model = MLModel(path, compute_units=compute_units, function_name=function_name or None)
        except (TesseraError, FileNotFoundError) as error:
            # coremltools turns a RuntimeError at load into "You will not be able to run predict()".
            raise RuntimeError(f"Tessera: {error}") from error
        self._load_ns = time.perf_counter_ns() - started
        self._predict_ns = None
        self._path = path
        self._compiled = None

    def predict(self, data, state=None):
        started = time.perf_counter_ns()
        try:
            return self._model.predict(data, state)
        finally:
            self._predict_ns = time.perf_counter_ns() - started

    def batchPredict(self, data):  # noqa: N802 (coremltools' name)
        started = time.perf_counter_ns()
        try:
            return self._model.predict(list(data))
        finally:
            self._predict_ns = time.perf_counter_ns() - started

    def newState(self):  # noqa: N802
        return self._model.make_state()

    def get_compiled_model_path(self):
        if self._compiled is None:
            if self._path.rstrip("/").endswith((".mlpackage", ".mlmodel")):
                self._compiled = compile_model(self._path)
            else:
                self._compiled = self._path
        return self._compiled

    def get_load_duration_in_nano_seconds(self):
        return self._load_ns

    def get_last_predict_duration_in_nano_seconds(self):
        return self._predict_ns

    @staticmethod
    def maximum_supported_specification_version():
        return MAXIMUM_SPECIFICATION_VERSION

    @staticmethod
    def auto_set_specification_version(spec):
        # Core ML lowers the version to the oldest that supports the model; keeping the
        # version coremltools wrote is always valid.
        return spec

    @staticmethod
    def compileModel(path):  # noqa: N802
        return compile_model(path)

    @staticmethod
    def get_available_compute_devices():
        return []

    @staticmethod
    def create_model_asset_from_path(path):
        raise RuntimeError("Tessera's coremltools backend has no MLModelAsset")

    @staticmethod
    def create_model_asset_from_memory(spec_data, blob_mapping):
        raise RuntimeError("Tessera's coremltools backend has no MLModelAsset")


class _MLModelAssetProxy:
    """Placeholder: coremltools checks ``isinstance(proxy, _MLModelAssetProxy)``; Tessera makes none."""

    def __init__(self, *arguments, **keywords):
        raise RuntimeError("Tessera's coremltools backend has no MLModelAsset")


_installed = {}


def _claimed_macos_version():
    return CLAIMED_MACOS_VERSION


def install_coremltools_backend(force: bool = False) -> None:
    """Makes coremltools' ``MLModel``, ``CompiledMLModel`` and ``make_state`` run on Tessera.

    After this call, in this process, unmodified code such as
    ``coremltools.models.MLModel("m.mlpackage").predict({...})`` predicts with Tessera.
    Calling it again does nothing. Raises ``RuntimeError`` when the installed coremltools is
    not one of :data:`TESTED_COREMLTOOLS_VERSIONS` (unless ``force``), or when coremltools
    already has its own native runtime (macOS).
    """
    import coremltools

    if _installed:
        return
    version = coremltools.__version__
    if not force and ".".join(version.split(".")[:2]) not in TESTED_COREMLTOOLS_VERSIONS:
        raise RuntimeError(
            f"tessera.coreml.install_coremltools_backend() patches coremltools' private surface and was "
            f"tested with coremltools {', '.join(TESTED_COREMLTOOLS_VERSIONS)}; this is coremltools {version}. "
            "Pass force=True to try anyway."
        )
    existing = sys.modules.get("coremltools.libcoremlpython")
    if existing is not None and not getattr(existing, "__tessera__", False) and not force:
        raise RuntimeError(
            "coremltools already has its native Core ML runtime (coremltools.libcoremlpython); "
            "Tessera's backend is for platforms without one. Pass force=True to replace it."
        )
    from coremltools.models import _compiled_model, model, utils

    module = types.ModuleType("coremltools.libcoremlpython")
    module.__doc__ = "Tessera's stand-in for coremltools' native runtime (tessera.coreml._backend)."
    module.__tessera__ = True
    module._MLModelProxy = _MLModelProxy
    module._MLModelAssetProxy = _MLModelAssetProxy
    patches = [
        (sys.modules, "coremltools.libcoremlpython", module),
        (coremltools, "libcoremlpython", module),
        (model, "_MLModelProxy", _MLModelProxy),
        (model, "_MLModelAssetProxy", _MLModelAssetProxy),
        (_compiled_model, "_MLModelProxy", _MLModelProxy),
        (model, "_macos_version", _claimed_macos_version),
        (model, "_is_macos", lambda: True),
        (_compiled_model, "_macos_version", _claimed_macos_version),
        (utils, "_macos_version", _claimed_macos_version),
    ]
    for target, name, value in patches:
        if isinstance(target, dict):
            _installed[(id(target), name)] = (target, name, target.get(name, _MISSING))
            target[name] = value
        else:
            _installed[(id(target), name)] = (target, name, getattr(target, name, _MISSING))
            setattr(target, name, value)


def uninstall_coremltools_backend() -> None:
    """Undoes :func:`install_coremltools_backend` (for tests)."""
    for target, name, previous in reversed(list(_installed.values())):
        if isinstance(target, dict):
            if previous is _MISSING:
                target.pop(name, None)
            else:
                target[name] = previous
        elif previous is _MISSING:
            delattr(target, name)
        else:
            setattr(target, name, previous)
    _installed.clear()


def coremltools_backend_installed() -> bool:
    """Whether :func:`install_coremltools_backend` is in effect."""
    return bool(_installed)


_MISSING = object()
