#!/usr/bin/env python3
"""Writes the Core ML model fixtures for the TesseraModels format tests.

Regenerate (from the repository root; coremltools 9.0 saves packages on Linux x86_64):

    python3 -m venv tools/.venv-coreml
    tools/.venv-coreml/bin/pip install coremltools numpy
    tools/.venv-coreml/bin/python tools/make_model_fixtures.py

Output, in Tests/Fixtures/models/:

* `<name>.mlpackage/`: small ML Program packages built with the MIL builder (no torch);
* `<name>.json`: what a parser must find in that package, read back with coremltools' own
  protobuf classes (`get_spec()`) and a byte walk of `weight.bin` written here; the Swift
  tests compare their parse against it, so the expectations come from coremltools, not from
  the code under test;
* `neural_network.mlmodel`: a one-layer NeuralNetwork model (a ReLU), for compiling and
  loading a NeuralNetwork `.mlmodel` and for the compute plan of a non-program model.

A fixed seed makes the weights reproducible.
"""

import json
import os
import shutil
import struct

import numpy as np
import coremltools as ct
from coremltools.converters.mil import Builder as mb
from coremltools.converters.mil.mil import get_new_symbol

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "models")
rng = np.random.default_rng(20261201)

MULTIARRAY_TYPES = {65568: "float32", 65600: "float64", 131104: "int32", 131080: "int8", 65552: "float16"}
MIL_TYPES = {
    1: "bool", 2: "string", 10: "float16", 11: "float32", 12: "float64", 13: "bfloat16", 21: "int8",
    22: "int16", 23: "int32", 24: "int64", 25: "int4", 31: "uint8", 32: "uint16", 33: "uint32",
    34: "uint64",
}
BLOB_TYPES = {1: "float16", 2: "float32", 3: "uint8", 4: "int8"}


def feature(desc):
    """The parts of a FeatureDescription the Swift parser exposes."""
    kind = desc.type.WhichOneof("Type")
    out = {"name": desc.name, "kind": kind, "isOptional": desc.type.isOptional}
    if desc.shortDescription:
        out["shortDescription"] = desc.shortDescription
    if kind == "multiArrayType":
        t = desc.type.multiArrayType
        out["shape"] = list(t.shape)
        out["dataType"] = MULTIARRAY_TYPES[t.dataType]
        flex = t.WhichOneof("ShapeFlexibility")
        if flex == "enumeratedShapes":
            out["enumeratedShapes"] = [list(s.shape) for s in t.enumeratedShapes.shapes]
        elif flex == "shapeRange":
            out["shapeRange"] = [[r.lowerBound, r.upperBound] for r in t.shapeRange.sizeRanges]
    elif kind == "dictionaryType":
        out["keyType"] = desc.type.dictionaryType.WhichOneof("KeyType")
    return out


def value_summary(value):
    """A compact description of a MIL Value: a blob reference or an immediate value."""
    which = value.WhichOneof("value")
    tensor_type = value.type.tensorType
    base = {"dataType": MIL_TYPES.get(tensor_type.dataType, str(tensor_type.dataType)),
            "shape": [d.constant.size for d in tensor_type.dimensions]}
    if which == "blobFileValue":
        base.update(kind="blob", fileName=value.blobFileValue.fileName, offset=value.blobFileValue.offset)
    else:
        tensor = value.immediateValue.tensor
        field = tensor.WhichOneof("value")
        base.update(kind="immediate", field=field)
        if field == "strings":
            base["values"] = list(tensor.strings.values)
        elif field == "bytes":
            base["byteCount"] = len(tensor.bytes.values)
        elif field in ("floats", "ints", "bools", "longInts", "doubles"):
            values = list(getattr(tensor, field).values)
            base["values"] = [bool(v) if field == "bools" else v for v in values]
    return base


def walk_blobs(path):
    """Every blob_metadata record in a MILBlob v2 file, walked as StorageReader does."""
    data = open(path, "rb").read()
    count, version = struct.unpack_from("<II", data, 0)
    blobs, offset = [], 64
    for _ in range(count):
        sentinel, dtype, size, data_offset, padding = struct.unpack_from("<IIQQQ", data, offset)
        assert sentinel == 0xDEADBEEF
        blobs.append({"metadataOffset": offset, "dataType": BLOB_TYPES[dtype], "sizeInBytes": size,
                      "dataOffset": data_offset, "paddingBits": padding})
        offset = (data_offset + size + 63) // 64 * 64
    return {"count": count, "version": version, "fileSize": len(data), "blobs": blobs}


def save(name, model, weights=None, extra=None):
    """Saves the package and its summary; `weights` maps a const name to the numpy value."""
    package = os.path.join(OUT, name + ".mlpackage")
    shutil.rmtree(package, ignore_errors=True)
    model.save(package)
    spec = model.get_spec()
    program = spec.mlProgram
    function_name = "main"
    function = program.functions[function_name]
    block = function.block_specializations[function.opset]
    operations = []
    for op in block.operations:
        entry = {"type": op.type, "outputs": [o.name for o in op.outputs],
                 "inputs": {k: [b.name if b.WhichOneof("binding") == "name" else "<value>" for b in v.arguments]
                            for k, v in sorted(op.inputs.items())}}
        attributes = {k: value_summary(v) for k, v in sorted(op.attributes.items()) if k != "name"}
        if attributes:
            entry["attributes"] = attributes
        operations.append(entry)
    meta = spec.description.metadata
    summary = {
        "specificationVersion": spec.specificationVersion,
        "modelType": spec.WhichOneof("Type"),
        "inputs": [feature(d) for d in spec.description.input],
        "outputs": [feature(d) for d in spec.description.output],
        "predictedFeatureName": spec.description.predictedFeatureName,
        "predictedProbabilitiesName": spec.description.predictedProbabilitiesName,
        "metadata": {"author": meta.author, "license": meta.license, "shortDescription": meta.shortDescription,
                     "versionString": meta.versionString, "userDefined": dict(meta.userDefined)},
        "program": {
            "version": program.version,
            "functions": sorted(program.functions.keys()),
            "opset": function.opset,
            "functionInputs": [{"name": i.name,
                                "dataType": MIL_TYPES[i.type.tensorType.dataType],
                                "rank": i.type.tensorType.rank}
                               for i in function.inputs],
            "blockOutputs": list(block.outputs),
            "operations": operations,
        },
    }
    weight_path = os.path.join(package, "Data", "com.apple.CoreML", "weights", "weight.bin")
    if os.path.exists(weight_path):
        summary["weightFile"] = walk_blobs(weight_path)
    if weights:
        # Each source array, found among the blobs by value: its blob's metadata offset and a
        # few of its values, so the Swift reader's decoding is checked against numpy's source.
        blob_data = open(weight_path, "rb").read()
        found = {}
        for blob in summary["weightFile"]["blobs"]:
            raw = blob_data[blob["dataOffset"]:blob["dataOffset"] + blob["sizeInBytes"]]
            decoded = np.frombuffer(raw, dtype=np.dtype(blob["dataType"]))
            for key, value in weights.items():
                source = value.astype(np.float16) if blob["dataType"] == "float16" else value
                if decoded.size == value.size and np.array_equal(decoded, source.ravel().astype(decoded.dtype)):
                    found[key] = {"metadataOffset": blob["metadataOffset"], "count": int(value.size),
                                  "first": source.ravel()[:4].astype(np.float64).tolist(),
                                  "last": source.ravel()[-2:].astype(np.float64).tolist()}
        missing = set(weights) - set(found)
        assert not missing, f"{name}: arrays not found in weight.bin: {missing}"
        summary["weightValues"] = found
    if extra:
        summary.update(extra)
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")


def set_metadata(model, author):
    model.author = author
    model.license = "MIT"
    model.short_description = "Tessera test fixture"
    model.version = "1.0"


def linear_relu_softmax():
    w = rng.standard_normal((16, 8)).astype(np.float32)
    b = np.arange(16, dtype=np.float32) / 16

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 8))])
    def prog(x):
        return mb.softmax(x=mb.relu(x=mb.linear(x=x, weight=w, bias=b)), axis=-1)

    model = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS15,
                       compute_precision=ct.precision.FLOAT32)
    set_metadata(model, "Tessera")
    model.input_description["x"] = "an input row"
    save("linear_relu_softmax", model, weights={"weight": w, "bias": b})


def conv_fp32():
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 3, 8, 8))])
    def prog(image):
        y = mb.conv(x=image, weight=w, bias=b, pad_type="same", strides=[1, 1], dilations=[1, 1], groups=1)
        y = mb.max_pool(x=mb.relu(x=y), kernel_sizes=[2, 2], strides=[2, 2], pad_type="valid")
        return mb.reduce_mean(x=y, axes=[-2, -1], keep_dims=False)

    model = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS15,
                       compute_precision=ct.precision.FLOAT32)
    save("conv_fp32", model, weights={"weight": w})


def conv_fp16():
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 3, 8, 8))])
    def prog(image):
        return mb.relu(x=mb.conv(x=image, weight=w, bias=b, pad_type="valid"))

    model = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
                       compute_precision=ct.precision.FLOAT16)
    save("conv_fp16", model, weights={"weight": w.astype(np.float16)})


def flexible_shapes():
    w = rng.standard_normal((4, 8)).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, get_new_symbol(), 8)),
                             mb.TensorSpec(shape=(1, get_new_symbol(), 8))],
                opset_version=ct.target.iOS16)
    def prog(tokens, mask):
        return mb.linear(x=tokens, weight=w), mb.relu(x=mask)

    model = ct.convert(
        prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
        compute_precision=ct.precision.FLOAT32,
        inputs=[ct.TensorType(name="tokens", shape=ct.Shape(shape=(1, ct.RangeDim(1, 64, default=4), 8))),
                ct.TensorType(name="mask", shape=ct.EnumeratedShapes(shapes=[(1, 2, 8), (1, 4, 8), (1, 16, 8)],
                                                                        default=(1, 4, 8)))])
    save("flexible_shapes", model, weights={"weight": w})


def classifier():
    w = rng.standard_normal((3, 4)).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 4))])
    def prog(features):
        return mb.softmax(x=mb.linear(x=features, weight=w), axis=-1)

    model = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS15,
                       compute_precision=ct.precision.FLOAT32,
                       classifier_config=ct.ClassifierConfig(["cat", "dog", "bird"]))
    set_metadata(model, "Tessera classifier")
    save("classifier", model, weights={"weight": w})


def quantized():
    """int8 and uint8 payloads in weight.bin via constexpr_affine_dequantize (iOS16); the float16
    constant folds away at conversion."""
    q8 = rng.integers(-128, 127, size=(6, 4)).astype(np.int8)
    u8 = rng.integers(0, 255, size=(6, 4)).astype(np.uint8)
    half = rng.standard_normal(12).astype(np.float16)

    @mb.program(input_specs=[mb.TensorSpec(shape=(2, 4))], opset_version=ct.target.iOS16)
    def prog(x):
        wi = mb.constexpr_affine_dequantize(quantized_data=q8, zero_point=np.int8(0), scale=np.float32(0.5), axis=0)
        wu = mb.constexpr_affine_dequantize(quantized_data=u8, zero_point=np.uint8(128), scale=np.float32(0.25),
                                            axis=0)
        y = mb.add(x=mb.linear(x=x, weight=wi), y=mb.linear(x=x, weight=wu))
        return mb.add(x=y, y=mb.cast(x=mb.reduce_sum(x=mb.const(val=half), axes=[0], keep_dims=True),
                                     dtype="fp32"))

    model = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
                       compute_precision=ct.precision.FLOAT32)
    save("quantized", model, weights={"int8": q8, "uint8": u8})


def neural_network():
    from coremltools.models import datatypes
    from coremltools.models.neural_network import NeuralNetworkBuilder

    builder = NeuralNetworkBuilder([("x", datatypes.Array(4))], [("y", datatypes.Array(4))])
    builder.add_activation("relu", "RELU", "x", "y")
    path = os.path.join(OUT, "neural_network.mlmodel")
    ct.models.MLModel(builder.spec).save(path)


# Batch fixtures (see "Batches" in Docs/Architecture.md): models whose dimension 0 is flexible, so a batch of
# predictions can run as one execution, and a NumPy reference for a few items of each.
BATCH_EXPECTED = {}


def layer_norm_np(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def softmax_np(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def batch_case(inputs, outputs):
    arrays = lambda d: {k: {"shape": list(np.shape(v)), "values": [float(x) for x in np.ravel(v)]}
                        for k, v in d.items()}
    return {"inputs": arrays(inputs), "outputs": arrays(outputs)}


def batch_mlp():
    """Two inputs with a RangeDim(1, 64) batch axis: linear, relu, layer_norm, a reshape that
    keeps dimension 0, softmax over the last axis, transpose, a reduction over a non-batch axis
    and an element-wise add of the second input."""
    w1 = rng.standard_normal((16, 8)).astype(np.float32)
    b1 = rng.standard_normal(16).astype(np.float32)
    gamma = rng.standard_normal(16).astype(np.float32)
    beta = rng.standard_normal(16).astype(np.float32)
    w2 = rng.standard_normal((3, 16)).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=(get_new_symbol(), 8)),
                             mb.TensorSpec(shape=(get_new_symbol(), 4))], opset_version=ct.target.iOS16)
    def prog(x, z):
        h = mb.layer_norm(x=mb.relu(x=mb.linear(x=x, weight=w1, bias=b1)), axes=[-1], gamma=gamma, beta=beta)
        s = mb.softmax(x=mb.reshape(x=h, shape=[-1, 4, 4]), axis=-1)
        t = mb.reduce_sum(x=mb.transpose(x=s, perm=[0, 2, 1]), axes=[2], keep_dims=False)
        y = mb.add(x=t, y=z, name="y")
        logits = mb.linear(x=mb.reshape(x=s, shape=[-1, 16]), weight=w2, name="logits")
        return y, logits

    model = ct.convert(
        prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
        compute_precision=ct.precision.FLOAT32,
        inputs=[ct.TensorType(name="x", shape=ct.Shape(shape=(ct.RangeDim(1, 64, default=1), 8))),
                ct.TensorType(name="z", shape=ct.Shape(shape=(ct.RangeDim(1, 64, default=1), 4)))])
    save("batch_mlp", model, weights={"w1": w1})

    def reference(x, z):
        h = layer_norm_np(np.maximum(x @ w1.T + b1, 0), gamma, beta)
        s = softmax_np(h.reshape(-1, 4, 4))
        return {"y": s.transpose(0, 2, 1).sum(axis=2) + z, "logits": s.reshape(-1, 16) @ w2.T}

    cases = []
    for rows in (1, 1, 3):
        x = rng.standard_normal((rows, 8)).astype(np.float32)
        z = rng.standard_normal((rows, 4)).astype(np.float32)
        cases.append(batch_case({"x": x, "z": z}, reference(x, z)))
    BATCH_EXPECTED["batch_mlp"] = cases


def conv2d_np(x, w, b):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + h - kh + 1, j:j + wd - kw + 1]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out + b.reshape(1, -1, 1, 1)


def batch_cnn():
    """An image input with a RangeDim(1, 16) batch axis: conv, relu, max_pool, a flatten that
    keeps dimension 0, linear and softmax."""
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    w2 = rng.standard_normal((5, 36)).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=(get_new_symbol(), 3, 8, 8))], opset_version=ct.target.iOS16)
    def prog(image):
        y = mb.relu(x=mb.conv(x=image, weight=w, bias=b, pad_type="valid"))
        y = mb.max_pool(x=y, kernel_sizes=[2, 2], strides=[2, 2], pad_type="valid")
        y = mb.reshape(x=y, shape=[-1, 36])
        return mb.softmax(x=mb.linear(x=y, weight=w2), axis=-1, name="probabilities")

    model = ct.convert(
        prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
        compute_precision=ct.precision.FLOAT32,
        inputs=[ct.TensorType(name="image", shape=ct.Shape(shape=(ct.RangeDim(1, 16, default=1), 3, 8, 8)))])
    save("batch_cnn", model, weights={"weight": w})

    def reference(image):
        y = np.maximum(conv2d_np(image.astype(np.float64), w, b), 0)
        n = y.shape[0]
        y = y.reshape(n, 4, 3, 2, 3, 2).max(axis=(3, 5)).reshape(n, 36)
        return {"probabilities": softmax_np(y @ w2.T)}

    cases = []
    for rows in (1, 2):
        image = rng.standard_normal((rows, 3, 8, 8)).astype(np.float32)
        cases.append(batch_case({"image": image}, reference(image)))
    BATCH_EXPECTED["batch_cnn"] = cases


def batch_mixing():
    """Dimension 0 is flexible, but the program mixes across it (softmax over axis 0, a mean
    over axis 0 subtracted back), so a batch must not run as one execution."""
    w = rng.standard_normal((6, 8)).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=(get_new_symbol(), 8))], opset_version=ct.target.iOS16)
    def prog(x):
        p = mb.softmax(x=mb.linear(x=x, weight=w), axis=0, name="p")
        c = mb.sub(x=x, y=mb.reduce_mean(x=x, axes=[0], keep_dims=True), name="centered")
        return p, c

    model = ct.convert(
        prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
        compute_precision=ct.precision.FLOAT32,
        inputs=[ct.TensorType(name="x", shape=ct.Shape(shape=(ct.RangeDim(1, 64, default=2), 8)))])
    save("batch_mixing", model, weights={"weight": w})

    cases = []
    for rows in (2, 3, 2):
        x = rng.standard_normal((rows, 8)).astype(np.float32)
        cases.append(batch_case({"x": x}, {"p": softmax_np(x @ w.T, axis=0),
                                           "centered": x - x.mean(axis=0, keepdims=True)}))
    BATCH_EXPECTED["batch_mixing"] = cases


def batch_enumerated():
    """Dimension 0 is one of an enumerated list (1, 2, 4, 8): a batch runs as one execution
    only when the stacked shape is in the list."""
    w = rng.standard_normal((5, 8)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=(get_new_symbol(), 8))], opset_version=ct.target.iOS16)
    def prog(x):
        return mb.relu(x=mb.linear(x=x, weight=w, bias=b), name="y")

    model = ct.convert(
        prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
        compute_precision=ct.precision.FLOAT32,
        inputs=[ct.TensorType(name="x", shape=ct.EnumeratedShapes(shapes=[(1, 8), (2, 8), (4, 8), (8, 8)],
                                                                   default=(1, 8)))])
    save("batch_enumerated", model, weights={"weight": w})

    cases = []
    for rows in (1, 1, 1, 2):
        x = rng.standard_normal((rows, 8)).astype(np.float32)
        cases.append(batch_case({"x": x}, {"y": np.maximum(x @ w.T + b, 0)}))
    BATCH_EXPECTED["batch_enumerated"] = cases


def batch_regroup():
    """A reshape to a constant leading size ([4, -1]) regroups an item's elements: alone, a
    [2, 8] item becomes [4, 4], but two stacked items would become [4, 8] (the batch seemingly on
    axis 1), so a softmax over axis 0 would mix items. Every shape is consistent; only the
    reshape rule (the dimensions before the batch axis must hold as many elements as before)
    refuses, so the batch must loop."""

    @mb.program(input_specs=[mb.TensorSpec(shape=(get_new_symbol(), 8))], opset_version=ct.target.iOS16)
    def prog(x):
        s = mb.softmax(x=mb.reshape(x=x, shape=[4, -1]), axis=0)
        return mb.reshape(x=s, shape=[-1, 8], name="y")

    model = ct.convert(
        prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
        compute_precision=ct.precision.FLOAT32,
        inputs=[ct.TensorType(name="x", shape=ct.Shape(shape=(ct.RangeDim(1, 64, default=2), 8)))])
    save("batch_regroup", model)

    cases = []
    for _ in range(2):
        x = rng.standard_normal((2, 8)).astype(np.float32)
        cases.append(batch_case({"x": x}, {"y": softmax_np(x.reshape(4, -1), axis=0).reshape(-1, 8)}))
    BATCH_EXPECTED["batch_regroup"] = cases


def batch_attention():
    """Self-attention over a RangeDim(1, 16) batch axis, written as converters emit it: a fused
    qkv linear, a reshape to heads, a transpose that moves the batch to axis 1, q and v picked
    with slice_by_index (squeezing axis 0) and k with gather, matmul with transpose_y, softmax,
    matmul, transpose back, reshape and a concat with the input along the last axis."""
    w = rng.standard_normal((24, 8)).astype(np.float32)
    b = rng.standard_normal(24).astype(np.float32)

    @mb.program(input_specs=[mb.TensorSpec(shape=(get_new_symbol(), 4, 8))], opset_version=ct.target.iOS16)
    def prog(x):
        qkv = mb.reshape(x=mb.linear(x=x, weight=w, bias=b), shape=[-1, 4, 3, 2, 4])
        qkv = mb.transpose(x=qkv, perm=[2, 0, 3, 1, 4])
        pick = lambda i: mb.slice_by_index(x=qkv, begin=[i, 0, 0, 0, 0], end=[i + 1, 0, 0, 0, 0],
                                           end_mask=[False, True, True, True, True],
                                           squeeze_mask=[True, False, False, False, False])
        q, v = pick(0), pick(2)
        k = mb.gather(x=qkv, indices=np.int32(1), axis=0)
        scores = mb.mul(x=mb.matmul(x=q, y=k, transpose_y=True), y=np.float32(0.5))
        y = mb.matmul(x=mb.softmax(x=scores, axis=-1), y=v)
        y = mb.reshape(x=mb.transpose(x=y, perm=[0, 2, 1, 3]), shape=[-1, 4, 8])
        return mb.concat(values=[y, x], axis=-1, name="y")

    model = ct.convert(
        prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
        compute_precision=ct.precision.FLOAT32,
        inputs=[ct.TensorType(name="x", shape=ct.Shape(shape=(ct.RangeDim(1, 16, default=1), 4, 8)))])
    save("batch_attention", model, weights={"weight": w})

    def reference(x):
        qkv = (x @ w.T + b).reshape(-1, 4, 3, 2, 4).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        y = softmax_np(q @ k.transpose(0, 1, 3, 2) * 0.5) @ v
        return {"y": np.concatenate([y.transpose(0, 2, 1, 3).reshape(-1, 4, 8), x], axis=-1)}

    cases = []
    for _ in range(3):
        x = rng.standard_normal((2, 4, 8)).astype(np.float32)
        cases.append(batch_case({"x": x}, reference(x)))
    BATCH_EXPECTED["batch_attention"] = cases


def batch_fixtures():
    batch_mlp()
    batch_cnn()
    batch_mixing()
    batch_enumerated()
    batch_regroup()
    batch_attention()
    with open(os.path.join(OUT, "batch_expected.json"), "w") as f:
        json.dump(BATCH_EXPECTED, f, indent=1)
        f.write("\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    linear_relu_softmax()
    conv_fp32()
    conv_fp16()
    flexible_shapes()
    classifier()
    quantized()
    neural_network()
    batch_fixtures()


if __name__ == "__main__":
    main()
