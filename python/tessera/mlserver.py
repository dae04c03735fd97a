"""MLServer: ``CoreMLRuntime`` serves a Core ML model over the Open Inference Protocol (REST
and gRPC, KServe v2) with Tessera.

``model-settings.json``::

    {"name": "digits", "implementation": "tessera.mlserver.CoreMLRuntime",
     "parameters": {"uri": "./DigitsClassifier.mlpackage"}}

then ``mlserver start .``. Each request input is a tensor whose first dimension is the
batch (rows), named like a model input; outputs come back likewise (a classifier's label as
BYTES, its probabilities as FP64 ``[rows, classes]`` in label order). Predictions run in a
worker thread (the GIL is released), so the event loop keeps serving.
"""

from __future__ import annotations

import asyncio

import numpy as np
from mlserver import MLModel as _MLServerModel
from mlserver.codecs import NumpyCodec, StringCodec
from mlserver.errors import MLServerError
from mlserver.types import InferenceRequest, InferenceResponse, MetadataTensor
from mlserver.utils import get_model_uri

from ._batch import outputs_to_columns, rows_to_items
from .coreml import MLModel, TesseraError

_DATATYPES = {"float32": "FP32", "float16": "FP16", "float64": "FP64", "int32": "INT32", "int8": "INT8"}


class CoreMLRuntime(_MLServerModel):
    """An MLServer runtime for ``.mlpackage`` / ``.mlmodel`` / compiled Core ML models."""

    async def load(self) -> bool:
        uri = await get_model_uri(self._settings)
        self._model = MLModel(uri)
        described = self._model.input_description
        self._settings.inputs = [
            MetadataTensor(
                name=name,
                datatype=_DATATYPES.get(described.feature(name).get("dataType"), "BYTES"),
                shape=[-1] + list(described.feature(name).get("shape") or []),
            )
            for name in described
        ]
        self.ready = True
        return self.ready

    async def predict(self, payload: InferenceRequest) -> InferenceResponse:
        columns = {}
        for request_input in payload.inputs:
            if request_input.datatype == "BYTES":
                columns[request_input.name] = StringCodec.decode_input(request_input)
            else:
                columns[request_input.name] = NumpyCodec.decode_input(request_input)
        try:
            items, expanded = rows_to_items(self._model, columns)
            outputs = await asyncio.get_running_loop().run_in_executor(None, self._model.predict, items)
        except (TesseraError, ValueError, TypeError) as error:
            raise MLServerError(str(error), status_code=400) from error
        response = []
        for name, column in outputs_to_columns(self._model, outputs, expanded).items():
            if column.dtype.kind in "US":
                response.append(StringCodec.encode_output(name, [str(value) for value in column]))
            else:
                response.append(NumpyCodec.encode_output(name, np.ascontiguousarray(column)))
        return InferenceResponse(model_name=self.name, model_version=self.version, outputs=response)
