"""From Python, in one process: tessera.coreml.MLModel.predict next to ONNX Runtime's
InferenceSession.run on the same models and inputs.

    python Benchmarks/peers/python_binding.py --models-dir DIR [--runs 30] [--json out.json]

DIR holds m1/m3 .mlpackage and .onnx twins with their inputs (model_workloads.py
--make-models DIR). Measured, float32, 2 threads each (TESSERA_NUM_THREADS=2,
intra_op_num_threads=2):

  * per-call overhead of the binding: the median call of a model that does almost nothing
    (y = x + 1 on [1, 8], made here for both runtimes), in µs;
  * M1 (MobileNetV2) and M3 (transformer layer): median latency of one call, and the
    outputs' max-abs difference from the recorded PyTorch output;
  * 2-thread throughput: two Python threads sharing one model (one session) each making
    --throughput-runs calls, predictions per second, next to the same calls made serially.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

THREADS = 2


def _median_us(fn, runs: int, warmups: int = 5) -> float:
    for _ in range(warmups):
        fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def _throughput(fn, calls_per_thread: int, threads: int) -> float:
    fn()
    def work():
        for _ in range(calls_per_thread):
            fn()
    workers = [threading.Thread(target=work) for _ in range(threads)]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return threads * calls_per_thread / (time.perf_counter() - start)


def _native_predict_us(model, feeds: dict, runs: int) -> float:
    """The median time of the foreign tessera_model_predict call alone (Tessera's own work:
    feature providers, checks, the program), timed from inside the binding."""
    import tessera.coreml._model as binding

    original = binding._call_with_error
    samples = []

    def timed(function, *arguments):
        start = time.perf_counter()
        try:
            return original(function, *arguments)
        finally:
            if function is model._lib.tessera_model_predict:
                samples.append(time.perf_counter() - start)

    binding._call_with_error = timed
    try:
        for _ in range(runs):
            model.predict(feeds)
    finally:
        binding._call_with_error = original
    return statistics.median(samples[50:] or samples) * 1e6


def _tiny_models(directory: str):
    import coremltools as ct
    import onnx
    from coremltools.converters.mil import Builder as mb
    from onnx import TensorProto, helper

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 8))])
    def program(x):
        return mb.add(x=x, y=np.float32(1), name="y")

    package = os.path.join(directory, "tiny.mlpackage")
    ct.convert(program, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
               compute_precision=ct.precision.FLOAT32).save(package)
    one = helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "one"], ["y"])], "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], [one])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path = os.path.join(directory, "tiny.onnx")
    onnx.save(model, path)
    return package, path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models-dir", required=True, type=Path)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--overhead-runs", type=int, default=2000)
    parser.add_argument("--throughput-runs", type=int, default=20)
    parser.add_argument("--json", type=Path)
    arguments = parser.parse_args()
    os.environ.setdefault("TESSERA_NUM_THREADS", str(THREADS))

    import onnxruntime as ort

    import tessera.coreml as tc

    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.inter_op_num_threads = 1
    result = {"threads": THREADS, "onnxruntime": ort.__version__, "workloads": {}}

    with tempfile.TemporaryDirectory() as scratch:
        package, onnx_path = _tiny_models(scratch)
        model = tc.MLModel(package)
        session = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
        x = np.arange(8, dtype=np.float32).reshape(1, 8)
        np.testing.assert_array_equal(model.predict({"x": x})["y"], session.run(None, {"x": x})[0])
        tessera_us = _median_us(lambda: model.predict({"x": x}), arguments.overhead_runs, 50)
        ort_us = _median_us(lambda: session.run(None, {"x": x}), arguments.overhead_runs, 50)
        native_us = _native_predict_us(model, {"x": x}, arguments.overhead_runs)
        result["overhead_us"] = {"tessera": tessera_us, "tessera_native_call": native_us, "onnxruntime": ort_us}
        print(f"per-call overhead (y = x + 1 on [1, 8]): tessera {tessera_us:.1f} us (of which the foreign "
              f"predict call {native_us:.1f} us, the Python binding {tessera_us - native_us:.1f} us), "
              f"onnxruntime {ort_us:.1f} us ({tessera_us / ort_us:.2f}x)", flush=True)

    for name in ("m1", "m3"):
        x = np.load(arguments.models_dir / f"{name}_input.npy")
        expected = np.load(arguments.models_dir / f"{name}_expected.npy")
        model = tc.MLModel(str(arguments.models_dir / f"{name}.mlpackage"))
        session = ort.InferenceSession(str(arguments.models_dir / f"{name}.onnx"), options,
                                       providers=["CPUExecutionProvider"])
        tessera_call = lambda: model.predict({"input": x})  # noqa: E731
        ort_call = lambda: session.run(None, {"input": x})  # noqa: E731
        entry = {
            "tessera_max_abs_error": float(np.abs(tessera_call()["output"] - expected).max()),
            "onnxruntime_max_abs_error": float(np.abs(ort_call()[0] - expected).max()),
        }
        # ABBA order, lowest median per side (the host's speed drifts).
        medians = {"tessera": [], "onnxruntime": []}
        for side in ("tessera", "onnxruntime", "onnxruntime", "tessera"):
            medians[side].append(_median_us(tessera_call if side == "tessera" else ort_call, arguments.runs) / 1e3)
        entry["tessera_ms"] = min(medians["tessera"])
        entry["onnxruntime_ms"] = min(medians["onnxruntime"])
        for side, call in (("tessera", tessera_call), ("onnxruntime", ort_call)):
            entry[f"{side}_serial_per_s"] = _throughput(call, arguments.throughput_runs, 1)
            entry[f"{side}_2threads_per_s"] = _throughput(call, arguments.throughput_runs, 2)
        result["workloads"][name] = entry
        print(f"{name}: tessera {entry['tessera_ms']:.2f} ms, onnxruntime {entry['onnxruntime_ms']:.2f} ms "
              f"(tessera/ort time {entry['tessera_ms'] / entry['onnxruntime_ms']:.2f}x); "
              f"2 threads: tessera {entry['tessera_2threads_per_s']:.1f}/s (serial {entry['tessera_serial_per_s']:.1f}/s), "
              f"onnxruntime {entry['onnxruntime_2threads_per_s']:.1f}/s (serial {entry['onnxruntime_serial_per_s']:.1f}/s); "
              f"max abs error tessera {entry['tessera_max_abs_error']:.2e}, ort {entry['onnxruntime_max_abs_error']:.2e}",
              flush=True)
    if arguments.json:
        arguments.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
