"""Model workloads M1 (MobileNetV2), M3 (one transformer encoder layer) and M4 (batches of M3's
layer with a flexible batch axis): make the models, then time PyTorch eager and ONNX Runtime on them; Tessera times the same .mlpackage files
through its MLModel API (`TesseraBenchmarks models --models-dir DIR`).

Protocol (figures in Docs/Performance.md):
  * M1: MobileNetV2 (torchvision's architecture, written out here because torchvision's
    compiled ops do not match the CPU torch wheel; random weights, seed 0), input [1,3,224,224];
  * M3: one transformer encoder layer, d_model 256, 4 heads, feed-forward 1024, post-norm
    (what torch.nn.TransformerEncoderLayer computes, written with plain ops because
    coremltools 9 cannot convert the traced fused layer), input [1,128,256];
  * M4: M3's layer with batch-agnostic reshapes, converted with dimension 0 a RangeDim(1, 64)
    (ONNX: a dynamic batch axis); input [1,128,256] per item, batches of 1, 8 and 32 items
    run as one [B,128,256] call next to a loop of B single calls;
  * M5 (ONNX Runtime): 8 Python threads each running 8 `session.run` on one shared M3 session
    (ORT releases the GIL in run), next to the same 64 runs serially; ms per prediction;
  * session creation (ONNX Runtime): median of 10 `ort.InferenceSession(...)` on m1, m3, m4,
    next to Tessera's `MLModel(contentsOf:)` of the package and of the compiled model;
  * float32, 2 threads, 5 warm-ups, median of >= 30 single predictions (M4: >= 5 per batch).

Usage:
  python model_workloads.py --make-models DIR      # DIR/{m1,m3,m4}.{mlpackage,onnx}, inputs/outputs .npy
  python model_workloads.py --models-dir DIR --json peers-models.json

compare_models.py runs this and Tessera's `models compile` areas and prints one table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np

THREADS = 2


def _mobilenet_v2():
    import torch
    from torch import nn

    def conv_bn(inp, out, kernel, stride, groups=1, relu=True):
        layers = [
            nn.Conv2d(inp, out, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
            nn.BatchNorm2d(out),
        ]
        if relu:
            layers.append(nn.ReLU6(inplace=True))
        return layers

    class InvertedResidual(nn.Module):
        def __init__(self, inp, out, stride, expand):
            super().__init__()
            hidden = inp * expand
            self.use_residual = stride == 1 and inp == out
            layers = []
            if expand != 1:
                layers += conv_bn(inp, hidden, 1, 1)
            layers += conv_bn(hidden, hidden, 3, stride, groups=hidden)
            layers += conv_bn(hidden, out, 1, 1, relu=False)
            self.conv = nn.Sequential(*layers)

        def forward(self, x):
            return x + self.conv(x) if self.use_residual else self.conv(x)

    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    layers = conv_bn(3, 32, 3, 2)
    inp = 32
    for t, c, n, s in settings:
        for i in range(n):
            layers.append(InvertedResidual(inp, c, s if i == 0 else 1, t))
            inp = c
    layers += conv_bn(inp, 1280, 1, 1)

    class MobileNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(*layers)
            self.classifier = nn.Linear(1280, 1000)

        def forward(self, x):
            x = self.features(x)
            x = torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)
            return self.classifier(x)

    model = MobileNetV2().eval()
    # Non-trivial batch-norm statistics, so folding them is exercised.
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.uniform_(-0.1, 0.1)
                module.running_var.uniform_(0.5, 1.5)
    return model


def _transformer_layer(batch_agnostic=False):
    """One post-norm transformer encoder layer (as torch.nn.TransformerEncoderLayer computes
    it: self-attention, residual, layer norm, ReLU feed-forward, residual, layer norm), written
    with plain ops so that every converter takes the same graph. `batch_agnostic` reshapes with
    -1 for the batch (M4), so the converted model accepts any batch size."""
    import torch
    from torch import nn

    class EncoderLayer(nn.Module):
        def __init__(self, d_model=256, heads=4, feedforward=1024, tokens=128):
            super().__init__()
            # Fixed sizes (not read from x.shape), so the traced graph has no shape arithmetic.
            self.heads, self.d_model, self.tokens = heads, d_model, tokens
            self.scale = 1.0 / float(d_model // heads) ** 0.5
            self.qkv = nn.Linear(d_model, 3 * d_model)
            self.out = nn.Linear(d_model, d_model)
            self.norm1 = nn.LayerNorm(d_model)
            self.ff1 = nn.Linear(d_model, feedforward)
            self.ff2 = nn.Linear(feedforward, d_model)
            self.norm2 = nn.LayerNorm(d_model)

        def forward(self, x):
            t, d, h = self.tokens, self.d_model, self.heads
            n = -1 if batch_agnostic else 1
            qkv = self.qkv(x).reshape(n, t, 3, h, d // h).permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            attention = torch.softmax((q @ k.transpose(-1, -2)) * self.scale, dim=-1)
            y = (attention @ v).transpose(1, 2).reshape(n, t, d)
            x = self.norm1(x + self.out(y))
            return self.norm2(x + self.ff2(torch.relu(self.ff1(x))))

    return EncoderLayer().eval()


def make_models(directory: Path) -> None:
    import torch
    import coremltools as ct

    torch.manual_seed(0)
    directory.mkdir(parents=True, exist_ok=True)
    cases = {
        "m1": (_mobilenet_v2(), torch.randn(1, 3, 224, 224)),
        "m3": (_transformer_layer(), torch.randn(1, 128, 256)),
    }
    for name, (model, example) in cases.items():
        with torch.no_grad():
            expected = model(example)
            traced = torch.jit.trace(model, example)
        torch.save(model.state_dict(), directory / f"{name}.pt")
        np.save(directory / f"{name}_input.npy", example.numpy())
        np.save(directory / f"{name}_expected.npy", expected.numpy())
        mlmodel = ct.convert(
            traced,
            inputs=[ct.TensorType(name="input", shape=example.shape)],
            outputs=[ct.TensorType(name="output")],
            convert_to="mlprogram",
            compute_precision=ct.precision.FLOAT32,
            minimum_deployment_target=ct.target.iOS16,
        )
        mlmodel.save(str(directory / f"{name}.mlpackage"))
        torch.onnx.export(
            model, (example,), str(directory / f"{name}.onnx"), input_names=["input"], output_names=["output"],
            dynamo=False,
        )
        print(f"made {name}", file=sys.stderr)
    _make_m4(directory)


M4_BATCHES = (1, 8, 32)


def _make_m4(directory: Path) -> None:
    """M4: M3's layer with its weights, batch-agnostic, dimension 0 a RangeDim(1, 64)."""
    import torch
    import coremltools as ct

    model = _transformer_layer(batch_agnostic=True)
    model.load_state_dict(torch.load(directory / "m3.pt"))
    torch.manual_seed(4)
    example = torch.randn(1, 128, 256)
    with torch.no_grad():
        expected = model(example)
        traced = torch.jit.trace(model, torch.randn(2, 128, 256))
    torch.save(model.state_dict(), directory / "m4.pt")
    np.save(directory / "m4_input.npy", example.numpy())
    np.save(directory / "m4_expected.npy", expected.numpy())
    mlmodel = ct.convert(
        traced,
        inputs=[ct.TensorType(name="input", shape=ct.Shape(shape=(ct.RangeDim(1, 64, default=1), 128, 256)))],
        outputs=[ct.TensorType(name="output")],
        convert_to="mlprogram",
        compute_precision=ct.precision.FLOAT32,
        minimum_deployment_target=ct.target.iOS16,
    )
    mlmodel.save(str(directory / "m4.mlpackage"))
    torch.onnx.export(
        model, (example,), str(directory / "m4.onnx"), input_names=["input"], output_names=["output"],
        dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}, dynamo=False,
    )
    print("made m4", file=sys.stderr)


def _time(fn, runs: int, warmups: int = 5) -> dict:
    for _ in range(warmups):
        fn()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e3)
    samples.sort()
    return {"median_ms": statistics.median(samples), "best_ms": samples[0], "runs": runs}


def run_peers(directory: Path, runs: int) -> dict:
    import torch
    import onnxruntime as ort

    torch.set_num_threads(THREADS)
    torch.manual_seed(0)
    result = {"threads": THREADS, "torch": {"version": torch.__version__}, "onnxruntime": {"version": ort.__version__}}
    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.inter_op_num_threads = 1
    for name in ("m1", "m3"):
        x = np.load(directory / f"{name}_input.npy")
        expected = np.load(directory / f"{name}_expected.npy")
        # The same weights as the .mlpackage and the .onnx file.
        model = _mobilenet_v2() if name == "m1" else _transformer_layer()
        model.load_state_dict(torch.load(directory / f"{name}.pt"))
        tx = torch.from_numpy(x)
        with torch.inference_mode():
            timing = _time(lambda: model(tx), runs)
            check = float(np.max(np.abs(model(tx).numpy() - expected)))
        result["torch"][name] = {**timing, "max_abs_error": check}
        session = ort.InferenceSession(str(directory / f"{name}.onnx"), options, providers=["CPUExecutionProvider"])
        feeds = {"input": x}
        timing = _time(lambda: session.run(None, feeds), runs)
        check = float(np.max(np.abs(session.run(None, feeds)[0] - expected)))
        result["onnxruntime"][name] = {**timing, "max_abs_error": check}
        print(f"{name}: torch {result['torch'][name]['median_ms']:.2f} ms, "
              f"onnxruntime {result['onnxruntime'][name]['median_ms']:.2f} ms", file=sys.stderr)
        if name == "m3":
            result["onnxruntime"]["m5"] = _run_m5_onnxruntime(session, feeds)
    result["onnxruntime"]["m4"] = _run_m4_onnxruntime(directory, options, ort)
    result["onnxruntime"]["session_creation"] = {
        name: _session_creation(directory / f"{name}.onnx", options, ort) for name in ("m1", "m3", "m4")
    }
    return result


M5_THREADS = 8
M5_PER_THREAD = 8


def _run_m5_onnxruntime(session, feeds: dict) -> dict:
    """M5 on ONNX Runtime: 8 threads x 8 `session.run` on one shared session (ORT releases the
    GIL while it runs), next to the same 64 runs on one thread; ms per prediction."""
    total = M5_THREADS * M5_PER_THREAD

    def concurrent():
        def worker():
            for _ in range(M5_PER_THREAD):
                session.run(None, feeds)

        threads = [threading.Thread(target=worker) for _ in range(M5_THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def serial():
        for _ in range(total):
            session.run(None, feeds)

    concurrent_timing = _time(concurrent, 5, warmups=1)
    serial_timing = _time(serial, 5, warmups=1)
    figures = {
        "threads": M5_THREADS, "predictions_per_thread": M5_PER_THREAD,
        "concurrent_ms_per_prediction": concurrent_timing["median_ms"] / total,
        "serial_ms_per_prediction": serial_timing["median_ms"] / total,
    }
    print(f"m5 {M5_THREADS} threads x {M5_PER_THREAD}: onnxruntime "
          f"{figures['concurrent_ms_per_prediction']:.3f} ms per prediction concurrent, "
          f"{figures['serial_ms_per_prediction']:.3f} ms serial", file=sys.stderr)
    return figures


def _session_creation(path: Path, options, ort, runs: int = 10) -> dict:
    """Median time of `ort.InferenceSession(path, ...)` (reading and optimizing the graph,
    allocating its weights), from a warm page cache; each session is dropped before the next.
    Also `first_run_ms`: the median first `run` of 5 fresh sessions, on `<model>_input.npy`."""
    timing = _time(lambda: ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"]),
                   runs, warmups=1)
    feeds = {"input": np.load(path.with_name(f"{path.stem}_input.npy"))}
    first = []
    for _ in range(5):
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        start = time.perf_counter()
        session.run(None, feeds)
        first.append((time.perf_counter() - start) * 1e3)
    timing["first_run_ms"] = statistics.median(first)
    print(f"{path.stem}: onnxruntime session creation {timing['median_ms']:.1f} ms, "
          f"first run {timing['first_run_ms']:.1f} ms", file=sys.stderr)
    return timing


def _run_m4_onnxruntime(directory: Path, options, ort) -> dict:
    """M4 on ONNX Runtime: a [B,128,256] batch in one run next to B single runs."""
    x = np.load(directory / "m4_input.npy")
    expected = np.load(directory / "m4_expected.npy")
    session = ort.InferenceSession(str(directory / "m4.onnx"), options, providers=["CPUExecutionProvider"])
    # A new session's first runs are slow (ORT plans its memory over them): without these, the
    # batch of 1, timed first, measured 1.9-5.5 ms per input against 1.1 ms looped.
    for _ in range(5):
        session.run(None, {"input": x})
    figures = {}
    for size in M4_BATCHES:
        batch = np.concatenate([x] * size, axis=0)
        batched = _time(lambda: session.run(None, {"input": batch}), 5, warmups=1)
        loop = _time(lambda: [session.run(None, {"input": x}) for _ in range(size)], 5, warmups=1)
        check = float(np.max(np.abs(session.run(None, {"input": batch})[0] - np.concatenate([expected] * size))))
        figures[f"batch{size}"] = {
            "batched_ms_per_input": batched["median_ms"] / size, "loop_ms_per_input": loop["median_ms"] / size,
            "max_abs_error": check,
        }
        print(f"m4 batch of {size}: onnxruntime {batched['median_ms'] / size:.3f} ms per input batched, "
              f"{loop['median_ms'] / size:.3f} ms per input looped", file=sys.stderr)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--make-models", type=Path, help="write the models and their inputs here")
    parser.add_argument("--models-dir", type=Path, help="time the peers on the models made here")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", type=Path, help="write the peers' figures here (default: stdout)")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))
    if args.make_models:
        make_models(args.make_models)
    if args.models_dir:
        result = run_peers(args.models_dir, args.runs)
        text = json.dumps(result, indent=2)
        if args.json:
            args.json.write_text(text)
        else:
            print(text)


if __name__ == "__main__":
    main()
