"""``tessera.coreml.MLModel``: coremltools' ``MLModel`` API over Tessera's C ABI."""

from __future__ import annotations

import array
import ctypes
import json
import os
import shutil
import struct
import tempfile

import numpy as np

from .. import _native
from ._descriptions import FeatureDescriptions
from ._errors import FeatureTypeError, TesseraError, error_for

# MLFeatureType raw values.
_INT64, _DOUBLE, _STRING, _IMAGE, _MULTI_ARRAY, _DICTIONARY, _SEQUENCE = 1, 2, 3, 4, 5, 6, 7
_KINDS = {"int64": 1, "double": 2, "string": 3, "image": 4, "multiArray": 5, "dictionary": 6, "sequence": 7}

# MLMultiArrayDataType raw values by NumPy dtype.
_DATA_TYPE_CODES = {
    np.dtype(np.float64): 65600,
    np.dtype(np.float32): 65568,
    np.dtype(np.float16): 65552,
    np.dtype(np.int32): 131104,
    np.dtype(np.int8): 131080,
}
_CODE_DATA_TYPES = {code: dtype for dtype, code in _DATA_TYPE_CODES.items()}

# MLComputeUnits raw values by coremltools' ComputeUnit names.
_COMPUTE_UNITS = {"CPU_ONLY": 0, "CPU_AND_GPU": 1, "ALL": 2, "CPU_AND_NE": 3}


def _compute_units_code(compute_units) -> tuple[int, str]:
    if compute_units is None:
        return 2, "ALL"
    name = getattr(compute_units, "name", compute_units)
    if not isinstance(name, str) or name.upper() not in _COMPUTE_UNITS:
        raise TypeError(
            f"compute_units must be a coremltools.ComputeUnit or one of {sorted(_COMPUTE_UNITS)}, "
            f"not {compute_units!r}"
        )
    return _COMPUTE_UNITS[name.upper()], name.upper()


def _call_with_error(function, *arguments):
    """Calls a C ABI function whose last two parameters are the error out-parameters."""
    lib = _native.load()
    code = ctypes.c_int32(0)
    message = ctypes.c_void_p()
    result = function(*arguments, ctypes.byref(code), ctypes.byref(message))
    if not result:
        raise error_for(code.value, _native.take_string(lib, message.value) or "Tessera reported an error")
    return result


class _Input:
    """What predict needs to know about one declared input, computed once."""

    __slots__ = ("name", "encoded", "kind", "dtype", "code", "type")

    def __init__(self, feature: dict):
        self.name = feature["name"]
        self.encoded = self.name.encode("utf-8")
        self.type = feature["type"]
        self.kind = _KINDS.get(self.type, 0)
        self.dtype = np.dtype(feature["dataType"]) if feature.get("dataType") else None
        self.code = _DATA_TYPE_CODES.get(self.dtype, 0) if self.dtype is not None else 0


class MLState:
    """The state of a stateful model, from :meth:`MLModel.make_state` (coremltools' ``MLState``).

    Pass it to :meth:`MLModel.predict` for each step; read and write its buffers with
    :meth:`read_state` and :meth:`write_state`. A state belongs to the model that made it.
    """

    def __init__(self, model: "MLModel"):
        self._model = model
        self._lib = _native.load()
        self._handle = self._lib.tessera_model_make_state(model._handle)
        self._buffers = {feature["name"]: feature for feature in model._description["states"]}

    def _buffer(self, name: str) -> dict:
        if name not in self._buffers:
            raise ValueError(f"the model has no state named {name!r} (states: {sorted(self._buffers)})")
        return self._buffers[name]

    def read_state(self, name: str) -> np.ndarray:
        """A copy of the buffer of state ``name``, of its declared shape and dtype."""
        feature = self._buffer(name)
        out = np.empty(feature["shape"], dtype=np.dtype(feature["dataType"]))
        if self._lib.tessera_state_copy(self._handle, name.encode(), out.ctypes.data, out.nbytes, 0) != 0:
            raise TesseraError(f"cannot read state {name!r}")
        return out

    def write_state(self, name: str, value) -> None:
        """Overwrites the buffer of state ``name`` with ``value`` (cast to its dtype)."""
        feature = self._buffer(name)
        array = np.ascontiguousarray(value, dtype=np.dtype(feature["dataType"]))
        if list(array.shape) != list(feature["shape"]):
            raise ValueError(f"state {name!r} has shape {feature['shape']}, not {list(array.shape)}")
        if self._lib.tessera_state_copy(self._handle, name.encode(), array.ctypes.data, array.nbytes, 1) != 0:
            raise TesseraError(f"cannot write state {name!r}")

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            self._lib.tessera_state_free(handle)


class MLModel:
    """A Core ML model run by Tessera, with the API of ``coremltools.models.MLModel``.

    ``model`` is a path to an ``.mlpackage``, an ``.mlmodel`` (ML program) or a model compiled
    by Tessera (:func:`compile_model`), or a ``coremltools.models.MLModel`` object (for
    example what ``ct.convert`` returned). ``compute_units`` takes a ``coremltools.ComputeUnit``
    or its name; on Linux every choice runs on the CPU. ``function_name`` picks a function of
    a multi-function model.

    >>> model = MLModel("Digits.mlpackage")                      # doctest: +SKIP
    >>> model.predict({"image": pixels})["classLabel"]            # doctest: +SKIP
    '7'

    Predictions may run from many threads at once on one model; each releases the GIL for
    the whole of the computation.
    """

    def __init__(self, model, compute_units=None, function_name: str | None = None):
        self._handle = None
        self._lib = _native.load()
        self._ct_model = None
        self._temporary = None
        if isinstance(model, (str, os.PathLike)):
            path = os.path.expanduser(os.fspath(model))
            if not os.path.exists(path):
                raise FileNotFoundError(f"no model at {path}")
        elif hasattr(model, "get_spec") and hasattr(model, "package_path"):
            self._ct_model = model
            path = self._path_of_coremltools_model(model)
            if compute_units is None:
                compute_units = getattr(model, "compute_unit", None)
            if function_name is None:
                function_name = getattr(model, "function_name", None) or None
        else:
            raise TypeError(
                "model must be a path to an .mlpackage, .mlmodel or compiled model, or a "
                f"coremltools.models.MLModel, not {type(model).__name__}"
            )
        units, self.compute_unit = _compute_units_code(compute_units)
        self.path = path
        self.function_name = function_name or None
        self.is_package = path.rstrip("/").endswith(".mlpackage")
        self._handle = _call_with_error(
            self._lib.tessera_model_load,
            path.encode("utf-8"),
            units,
            function_name.encode("utf-8") if function_name else None,
        )
        self._description = json.loads(_native.take_string(self._lib, self._lib.tessera_model_description(self._handle)))
        self._inputs = {feature["name"]: _Input(feature) for feature in self._description["inputs"]}
        self.input_description = FeatureDescriptions(self._description["inputs"])
        self.output_description = FeatureDescriptions(self._description["outputs"])
        self.state_description = FeatureDescriptions(self._description["states"])
        self._describe_words = 64  # grows to what the largest result description needed

    def _path_of_coremltools_model(self, model) -> str:
        if getattr(model, "is_package", False) and getattr(model, "package_path", None):
            return model.package_path
        self._temporary = tempfile.mkdtemp(prefix="tessera-")
        path = os.path.join(self._temporary, "model.mlmodel")
        model.save(path)
        return path

    # Descriptions -------------------------------------------------------------------------

    @property
    def short_description(self) -> str:
        """The model's description from its metadata ("" when it has none)."""
        return self._description["metadata"].get("shortDescription", "")

    @property
    def author(self) -> str:
        return self._description["metadata"].get("author", "")

    @property
    def license(self) -> str:
        return self._description["metadata"].get("license", "")

    @property
    def version(self) -> str:
        return self._description["metadata"].get("versionString", "")

    @property
    def user_defined_metadata(self) -> dict:
        return dict(self._description["userDefined"])

    @property
    def class_labels(self) -> list | None:
        """A classifier's labels (strings or integers), in output order; None otherwise."""
        return self._description.get("classLabels")

    @property
    def predicted_feature_name(self) -> str | None:
        return self._description.get("predictedFeatureName")

    @property
    def predicted_probabilities_name(self) -> str | None:
        return self._description.get("predictedProbabilitiesName")

    def get_spec(self):
        """The model's protobuf specification (needs coremltools)."""
        if self._ct_model is not None:
            return self._ct_model.get_spec()
        try:
            from coremltools.models.utils import load_spec
        except ImportError as error:
            raise ImportError("get_spec() needs coremltools (pip install coremltools)") from error
        if not self.path.rstrip("/").endswith((".mlpackage", ".mlmodel")):
            raise ValueError(f"{self.path} is a compiled model; its specification is not a coremltools file")
        return load_spec(self.path)

    # Prediction ---------------------------------------------------------------------------

    def make_state(self) -> MLState:
        """A new, zero-filled state for stateful predictions (empty for a stateless model)."""
        return MLState(self)

    def predict(self, data, state: MLState | None = None):
        """Predicts the outputs of one input (a dict) or of a batch (a list of dicts).

        Values are what coremltools takes: NumPy arrays (or anything ``np.asarray`` accepts,
        cast to the declared dtype) for multi-array inputs, Python or NumPy scalars for int64
        and double inputs, ``str`` for strings, dicts for dictionaries. Outputs are a dict per
        input: NumPy arrays of the declared dtype, ``int``, ``float``, ``str``, and for a
        classifier its label and ``{label: probability}``.

        Raises ``TypeError`` for a value of the wrong Python type, and ``ValueError`` (a
        :class:`TesseraError`; a :class:`FeatureTypeError` is both) with Tessera's message
        for anything the model refuses.
        """
        if type(data) is dict:
            batch = [data]
        elif type(data) is list:
            if not data:
                return []
            if not all(type(item) is dict for item in data):
                raise TypeError('"data" list must contain only dictionaries')
            if state is not None:
                raise ValueError("state can only be used for unbatched predictions")
            batch = data
        else:
            raise TypeError(f'"data" parameter must be either a dict or list of dict, but got {type(data)}.')
        if state is not None:
            if not isinstance(state, MLState):
                raise TypeError(f"state must come from make_state(), not {type(state).__name__}")
            if state._model is not self:
                raise ValueError("the state was made by another model")
        outputs = self._run(batch, state._handle if state is not None else None)
        return outputs[0] if type(data) is dict else outputs

    def _run(self, batch: list[dict], state_handle):
        lib = self._lib
        items, names, kinds, codes, ranks, integers, doubles, pointers = [], [], [], [], [], [], [], []
        dims: list[int] = []
        keep = []
        for index, item in enumerate(batch):
            for name, value in item.items():
                spec = self._inputs.get(name)
                if spec is None:
                    continue  # Core ML ignores features the model does not declare.
                integer, real, pointer, code, rank = 0, 0.0, 0, 0, 0
                kind = spec.kind
                if kind == _MULTI_ARRAY:
                    elements = self._array(spec, value)
                    keep.append(elements)
                    code, rank, pointer = _DATA_TYPE_CODES[elements.dtype], elements.ndim, elements.ctypes.data
                    dims.extend(elements.shape)
                elif kind == _INT64:
                    integer = _integer(spec, value)
                elif kind == _DOUBLE:
                    real = _real(spec, value)
                elif kind == _STRING:
                    if not isinstance(value, str):
                        raise TypeError(f"input {name!r} is a string feature; got {type(value).__name__}")
                    text = ctypes.c_char_p(value.encode("utf-8"))
                    keep.append(text)
                    pointer = ctypes.cast(text, ctypes.c_void_p).value
                elif kind == _DICTIONARY:
                    text, integer = _dictionary_json(spec, value)
                    text = ctypes.c_char_p(text)
                    keep.append(text)
                    pointer = ctypes.cast(text, ctypes.c_void_p).value
                elif kind == _IMAGE:
                    raise TypeError(
                        f"input {name!r} is an image feature; Tessera has no image features yet, so it "
                        "cannot run this model (convert it with a multi-array input instead)"
                    )
                else:
                    raise TypeError(f"input {name!r} is a {spec.type} feature, which Tessera's Python API cannot pass")
                items.append(index)
                names.append(spec.encoded)
                kinds.append(kind)
                codes.append(code)
                ranks.append(rank)
                integers.append(integer)
                doubles.append(real)
                pointers.append(pointer)
        count = len(names)
        # The int32 columns in one buffer and the int64 ones in another: few allocations,
        # passed to the C ABI as plain addresses. Inputs are C-contiguous (see _array), so
        # their strides follow from their shapes.
        strides: list[int] = []
        offset = 0
        for rank in ranks:
            step = 1
            run = []
            for dimension in reversed(dims[offset : offset + rank]):
                run.append(step)
                step *= dimension
            strides.extend(reversed(run))
            offset += rank
        total = len(dims)
        small = array.array("i", items + kinds + codes + ranks + [0])
        wide = array.array("q", dims + strides + integers + pointers + [0])
        real_values = array.array("d", doubles + [0.0])
        c_names = (ctypes.c_char_p * max(count, 1))(*names)
        base32 = small.buffer_info()[0]
        base64 = wide.buffer_info()[0]
        result = _call_with_error(
            lib.tessera_model_predict,
            self._handle,
            state_handle,
            len(batch),
            count,
            base32,
            c_names,
            base32 + 4 * count,
            base32 + 8 * count,
            base32 + 12 * count,
            base64,
            base64 + 8 * total,
            base64 + 8 * (2 * total + count),
            base64 + 8 * 2 * total,
            real_values.buffer_info()[0],
        )
        try:
            return [self._outputs(result, item) for item in range(len(batch))]
        finally:
            lib.tessera_result_free(result)
            del keep, small, wide, real_values, c_names

    def _array(self, spec: _Input, value) -> np.ndarray:
        array = value if type(value) is np.ndarray else np.asarray(value)
        if array.dtype.kind not in "biuf":
            raise TypeError(
                f"input {spec.name!r} is a multi-array feature; got an array of dtype {array.dtype}, not numbers"
            )
        dtype = spec.dtype if spec.code else (array.dtype if array.dtype in _DATA_TYPE_CODES else np.dtype(np.float32))
        if array.dtype != dtype:
            array = array.astype(dtype)
        if not array.flags.c_contiguous or not array.flags.aligned:
            array = np.ascontiguousarray(array)
        return array

    def _outputs(self, result, item: int) -> dict:
        lib = self._lib
        words = np.empty(self._describe_words, dtype=np.int64)
        needed = lib.tessera_result_describe(result, item, words.ctypes.data, len(words))
        if needed > len(words):
            self._describe_words = needed
            words = np.empty(needed, dtype=np.int64)
            lib.tessera_result_describe(result, item, words.ctypes.data, needed)
        values = words[:needed].tolist()
        outputs = {}
        offset = 0
        index = 0
        while offset < needed:
            address, kind, code, rank, integer, real_bits, text = values[offset : offset + 7]
            key = ctypes.c_char_p(address).value.decode("utf-8")
            if kind == _MULTI_ARRAY:
                out = np.empty(values[offset + 7 : offset + 7 + rank], dtype=_CODE_DATA_TYPES[code])
                if lib.tessera_result_copy_array(result, item, index, out.ctypes.data, out.nbytes) != 0:
                    raise TesseraError(f"cannot copy output {key!r}")
                outputs[key] = out
            elif kind == _INT64:
                outputs[key] = integer
            elif kind == _DOUBLE:
                outputs[key] = _double_from_bits(real_bits)
            elif kind == _STRING:
                outputs[key] = ctypes.c_char_p(text).value.decode("utf-8")
            elif kind == _DICTIONARY:
                outputs[key] = self._dictionary(key, json.loads(ctypes.c_char_p(text).value), integer == 1)
            offset += 7 + rank
            index += 1
        return outputs

    def _dictionary(self, key: str, values: dict, integer_keys: bool) -> dict:
        labels = self._description.get("classLabels")
        if key == self._description.get("predictedProbabilitiesName") and labels and len(labels) == len(values):
            # In the classifier's label order, as Core ML's dictionaries print.
            return {label: values[str(label)] for label in labels}
        if integer_keys:
            return {int(label): probability for label, probability in values.items()}
        return values

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            self._lib.tessera_model_free(handle)
        temporary = getattr(self, "_temporary", None)
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)

    def __repr__(self) -> str:
        return f"tessera.coreml.MLModel({self.path!r}, inputs={list(self.input_description)}, outputs={list(self.output_description)})"


def _double_from_bits(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<q", bits))[0]


def _integer(spec: _Input, value) -> int:
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(()).item()
    if isinstance(value, (bool, int, np.integer)) or (isinstance(value, (float, np.floating)) and float(value).is_integer()):
        return int(value)
    raise TypeError(f"input {spec.name!r} is an int64 feature; got {type(value).__name__}")


def _real(spec: _Input, value) -> float:
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.reshape(()).item()
    if isinstance(value, (bool, int, float, np.integer, np.floating)):
        return float(value)
    raise TypeError(f"input {spec.name!r} is a double feature; got {type(value).__name__}")


def _dictionary_json(spec: _Input, value) -> tuple[bytes, int]:
    if not isinstance(value, dict):
        raise TypeError(f"input {spec.name!r} is a dictionary feature; got {type(value).__name__}")
    keys = {type(key) for key in value}
    integer_keys = all(isinstance(key, (int, np.integer)) and not isinstance(key, bool) for key in value)
    if not integer_keys and not all(isinstance(key, str) for key in value):
        raise TypeError(f"input {spec.name!r}: dictionary keys must be all str or all int, not {keys}")
    for key, number in value.items():
        if not isinstance(number, (int, float, np.integer, np.floating)) or isinstance(number, bool):
            raise TypeError(f"input {spec.name!r}: the value for key {key!r} is not a number")
    encoded = json.dumps({str(key): float(number) for key, number in value.items()}).encode("utf-8")
    return encoded, 1 if integer_keys and value else 0


def compile_model(path: str) -> str:
    """Compiles an ``.mlpackage`` or ``.mlmodel`` with Tessera; returns the compiled directory."""
    lib = _native.load()
    pointer = _call_with_error(lib.tessera_compile_model, os.fspath(path).encode("utf-8"))
    return _native.take_string(lib, pointer)
