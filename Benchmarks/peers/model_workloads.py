"""Model workloads M1 (MobileNetV2), M2 (ResNet-50), M3 (one transformer encoder layer), M4
(batches of M3's layer with a flexible batch axis), M6 (a BERT-base encoder) and M7 (a
Whisper-tiny-sized audio encoder): make the models, then time PyTorch eager and ONNX Runtime on them; Tessera times the
same .mlpackage files through its MLModel API (`TesseraBenchmarks models --models-dir DIR`).

Protocol (figures in Docs/Performance.md):
  * M1: MobileNetV2 (torchvision's architecture, written out here because torchvision's
    compiled ops do not match the CPU torch wheel; random weights, seed 0), input [1,3,224,224];
  * M2: ResNet-50 (model_resnet.py; random weights and batch-norm statistics, seed 0), input
    [1,3,224,224];
  * M3: one transformer encoder layer, d_model 256, 4 heads, feed-forward 1024, post-norm
    (what torch.nn.TransformerEncoderLayer computes, written with plain ops because
    coremltools 9 cannot convert the traced fused layer), input [1,128,256];
  * M6: a BERT-base encoder: 12 post-norm layers, hidden 768, 12 heads, feed-forward 3072 with
    GELU, an additive attention mask (the last 16 of 128 positions masked out, a constant of
    the model), input [1,128,768] (the embeddings' output; random weights, seed 6);
  * M7: a Whisper-tiny-sized audio encoder: log-mel [1,80,3000] -> conv1d(80->384, k3) + GELU
    -> conv1d(384->384, k3, stride 2) + GELU -> + sinusoidal positions -> 4 pre-norm layers
    (d 384, 6 heads, feed-forward 1536 with GELU) -> layer norm, output [1,1500,384] (seed 7);
  * M4: M3's layer with batch-agnostic reshapes, converted with dimension 0 a RangeDim(1, 64)
    (ONNX: a dynamic batch axis); input [1,128,256] per item, batches of 1, 8 and 32 items
    run as one [B,128,256] call next to a loop of B single calls;
  * M5 (ONNX Runtime): 8 Python threads each running 8 `session.run` on one shared M3 session
    (ORT releases the GIL in run), next to the same 64 runs serially; ms per prediction;
  * session creation (ONNX Runtime): median of 20 `ort.InferenceSession(...)` (M2, M6, M7: 5)
    on every model, and the first `run` of 5 fresh sessions, next to Tessera's
    `MLModel(contentsOf:)` of the package and of the compiled model and its first prediction;
  * float32; M1, M2, M3, M6 and M7 at 1 and at 2 threads (torch.set_num_threads, ORT
    intra_op_num_threads), everything else at 2; 5 warm-ups and the median of >= 30 single
    predictions (M2, M6, M7: 2 warm-ups, >= 8), M4: >= 5 per batch.

Usage:
  python model_workloads.py --make-models DIR      # DIR/{m1,m2,m3,m4,m6,m7}.{mlpackage,onnx,pt}, inputs/outputs .npy
  python model_workloads.py --make-models DIR --only m6,m7
  python model_workloads.py --models-dir DIR --json peers-models.json
  python model_workloads.py --models-dir DIR --single-only 1 --peers onnxruntime --json r.json  # one round
  python model_workloads.py --models-dir DIR --loads-only --only m1,m3 --json loads.json  # one round of loads

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

from model_resnet import resnet50

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


class _Attention:
    """Builds the multi-head self-attention module shared by M6 and M7 (plain ops: one packed
    q/k/v projection, `softmax(q @ k^T * scale + mask) @ v` per head, the output projection)."""

    @staticmethod
    def make(d_model: int, heads: int, tokens: int, mask=None):
        import torch
        from torch import nn

        class SelfAttention(nn.Module):
            def __init__(self):
                super().__init__()
                self.heads, self.d_model, self.tokens = heads, d_model, tokens
                self.scale = 1.0 / float(d_model // heads) ** 0.5
                self.qkv = nn.Linear(d_model, 3 * d_model)
                self.out = nn.Linear(d_model, d_model)
                if mask is not None:
                    self.register_buffer("mask", mask)
                else:
                    self.mask = None

            def forward(self, x):
                t, d, h = self.tokens, self.d_model, self.heads
                qkv = self.qkv(x).reshape(1, t, 3, h, d // h).permute(2, 0, 3, 1, 4)
                q, k, v = qkv[0], qkv[1], qkv[2]
                scores = (q @ k.transpose(-1, -2)) * self.scale
                if self.mask is not None:
                    scores = scores + self.mask
                y = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(1, t, d)
                return self.out(y)

        return SelfAttention()


def _encoder_layer(d_model: int, heads: int, feedforward: int, tokens: int, pre_norm: bool, mask=None):
    """One transformer encoder layer with a GELU feed-forward: post-norm (BERT:
    `norm(x + attention(x))`, then `norm(x + ff(x))`) or pre-norm (Whisper: `x + attention(norm(x))`,
    then `x + ff(norm(x))`)."""
    import torch
    from torch import nn

    class EncoderLayer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = _Attention.make(d_model, heads, tokens, mask)
            self.norm1 = nn.LayerNorm(d_model)
            self.ff1 = nn.Linear(d_model, feedforward)
            self.ff2 = nn.Linear(feedforward, d_model)
            self.norm2 = nn.LayerNorm(d_model)

        def forward(self, x):
            ff = lambda y: self.ff2(nn.functional.gelu(self.ff1(y)))  # noqa: E731
            if pre_norm:
                x = x + self.attention(self.norm1(x))
                return x + ff(self.norm2(x))
            x = self.norm1(x + self.attention(x))
            return self.norm2(x + ff(x))

    return EncoderLayer()


def _bert_encoder():
    """M6: a BERT-base encoder (12 post-norm layers, hidden 768, 12 heads, feed-forward 3072,
    GELU) over [1,128,768] embeddings, the last 16 positions masked out (additive mask)."""
    import torch
    from torch import nn

    tokens = 128
    mask = torch.zeros(1, 1, 1, tokens)
    mask[..., tokens - 16:] = -10000.0  # BERT's additive mask value
    layers = nn.Sequential(*[_encoder_layer(768, 12, 3072, tokens, pre_norm=False, mask=mask) for _ in range(12)])
    return layers.eval()


def _whisper_encoder():
    """M7: a Whisper-tiny-sized audio encoder: log-mel [1,80,3000] -> two conv1d + GELU (the
    second with stride 2) -> sinusoidal positions -> 4 pre-norm layers (d 384, 6 heads,
    feed-forward 1536) -> layer norm; output [1,1500,384]."""
    import math

    import torch
    from torch import nn

    d_model, tokens = 384, 1500

    class AudioEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv1d(80, d_model, 3, padding=1)
            self.conv2 = nn.Conv1d(d_model, d_model, 3, stride=2, padding=1)
            increment = math.log(10000) / (d_model // 2 - 1)
            scaled = torch.arange(tokens)[:, None] * torch.exp(-increment * torch.arange(d_model // 2))[None, :]
            self.register_buffer("positions", torch.cat([torch.sin(scaled), torch.cos(scaled)], dim=1)[None])
            self.layers = nn.Sequential(
                *[_encoder_layer(d_model, 6, 4 * d_model, tokens, pre_norm=True) for _ in range(4)])
            self.norm = nn.LayerNorm(d_model)

        def forward(self, mel):
            x = nn.functional.gelu(self.conv1(mel))
            x = nn.functional.gelu(self.conv2(x)).permute(0, 2, 1)
            return self.norm(self.layers(x + self.positions))

    return AudioEncoder().eval()


# name -> (builder, input shape). M1 and M3 keep the seed-0 sequence they were first made with
# (one torch.manual_seed(0) for both, in this order); the others seed their own (SEEDS), so
# making a subset (--only) makes the same weights.
SINGLE_MODELS = {
    "m1": (_mobilenet_v2, (1, 3, 224, 224)),
    "m3": (_transformer_layer, (1, 128, 256)),
    "m6": (_bert_encoder, (1, 128, 768)),
    "m7": (_whisper_encoder, (1, 80, 3000)),
    "m2": (resnet50, (1, 3, 224, 224)),
}
SEEDS = {"m6": 6, "m7": 7, "m2": 0}
# Large models: fewer timed runs (a BERT-base prediction takes ~0.1-0.5 s on 2 cores).
LARGE_MODELS = {"m2", "m6", "m7"}


def make_models(directory: Path, only: set[str] | None = None) -> None:
    import torch
    import coremltools as ct

    torch.manual_seed(0)
    directory.mkdir(parents=True, exist_ok=True)
    cases = {}
    for name, (builder, shape) in SINGLE_MODELS.items():
        if name in SEEDS:
            torch.manual_seed(SEEDS[name])
        model = builder()
        example = torch.randn(*shape)
        if only is None or name in only:
            cases[name] = (model, example)
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
    if only is None or "m4" in only:
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


SINGLE_THREADS = (1, 2)


def _single_predictions(directory: Path, runs: int, threads_list, peers) -> dict:
    """Times one prediction of every single model whose files are in `directory`, for each
    peer in `peers` ("torch", "onnxruntime") at each thread count of `threads_list`; returns
    `{peer: {str(threads): {name: timing}}}` (median_ms, best_ms, runs, max_abs_error)."""
    import torch
    import onnxruntime as ort

    torch.manual_seed(0)
    figures = {peer: {str(n): {} for n in threads_list} for peer in peers}
    for name, (builder, _) in SINGLE_MODELS.items():
        if not all((directory / f"{name}{suffix}").exists() for suffix in (".pt", ".onnx", "_input.npy")):
            continue
        x = np.load(directory / f"{name}_input.npy")
        expected = np.load(directory / f"{name}_expected.npy")
        model = None
        if "torch" in peers:
            # The same weights as the .mlpackage and the .onnx file.
            model = builder()
            model.load_state_dict(torch.load(directory / f"{name}.pt"))
        tx = torch.from_numpy(x)
        count, warmups = (max(8, runs // 4), 2) if name in LARGE_MODELS else (runs, 5)
        for threads in threads_list:
            line = [f"{name} at {threads} thread(s):"]
            if model is not None:
                torch.set_num_threads(threads)
                with torch.inference_mode():
                    timing = _time(lambda: model(tx), count, warmups)
                    check = float(np.max(np.abs(model(tx).numpy() - expected)))
                figures["torch"][str(threads)][name] = {**timing, "max_abs_error": check}
                line.append(f"torch {timing['median_ms']:.2f} ms")
            if "onnxruntime" in peers:
                session = ort.InferenceSession(
                    str(directory / f"{name}.onnx"), _session_options(ort, threads), providers=["CPUExecutionProvider"])
                feeds = {"input": x}
                timing = _time(lambda: session.run(None, feeds), count, warmups)
                check = float(np.max(np.abs(session.run(None, feeds)[0] - expected)))
                figures["onnxruntime"][str(threads)][name] = {**timing, "max_abs_error": check}
                line.append(f"onnxruntime {timing['median_ms']:.2f} ms")
                del session
            print(" ".join(line), file=sys.stderr)
    torch.set_num_threads(THREADS)
    return figures


def run_peers(directory: Path, runs: int) -> dict:
    """Times the peers. `torch[name]`/`onnxruntime[name]` are the 2-thread figures of a single
    prediction; `by_threads[str(n)][name]` those at n threads (1 and 2). Models whose files
    are missing from `directory` are left out."""
    import torch
    import onnxruntime as ort

    result = {"threads": THREADS, "torch": {"version": torch.__version__}, "onnxruntime": {"version": ort.__version__}}
    single = _single_predictions(directory, runs, SINGLE_THREADS, ("torch", "onnxruntime"))
    for peer in ("torch", "onnxruntime"):
        result[peer]["by_threads"] = single[peer]
        result[peer].update(single[peer][str(THREADS)])
    options = _session_options(ort, THREADS)
    if (directory / "m3.onnx").exists():
        session = ort.InferenceSession(str(directory / "m3.onnx"), options, providers=["CPUExecutionProvider"])
        result["onnxruntime"]["m5"] = _run_m5_onnxruntime(session, {"input": np.load(directory / "m3_input.npy")})
        del session
    if (directory / "m4.onnx").exists():
        result["onnxruntime"]["m4"] = _run_m4_onnxruntime(directory, options, ort)
    result["onnxruntime"]["session_creation"] = {
        name: _session_creation(directory / f"{name}.onnx", options, ort, 5 if name in LARGE_MODELS else 20)
        for name in ("m1", "m2", "m3", "m4", "m6", "m7") if (directory / f"{name}.onnx").exists()
    }
    return result


def run_loads_only(directory: Path, names: list[str]) -> dict:
    """One load round of `compare_models.py --rounds`: ONNX Runtime's session creation (2
    intra-op threads) and first run of `names`, as `{"onnxruntime": {"session_creation": ...}}`."""
    import onnxruntime as ort

    options = _session_options(ort, THREADS)
    return {"threads": THREADS, "onnxruntime": {"version": ort.__version__, "session_creation": {
        name: _session_creation(directory / f"{name}.onnx", options, ort, 5 if name in LARGE_MODELS else 20)
        for name in names if (directory / f"{name}.onnx").exists()
    }}}


def run_single_only(directory: Path, runs: int, threads: int, peers) -> dict:
    """One round of `compare_models.py --rounds`: the single predictions of `peers` at
    `threads` threads only, as `{"threads": n, peer: {"by_threads": {str(n): {name: timing}}}}`."""
    import onnxruntime as ort
    import torch

    versions = {"torch": torch.__version__, "onnxruntime": ort.__version__}
    single = _single_predictions(directory, runs, (threads,), peers)
    return {"threads": threads, **{peer: {"version": versions[peer], "by_threads": single[peer]} for peer in peers}}


def _session_options(ort, threads: int):
    """ORT session options with `threads` intra-op threads and one inter-op thread."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return options


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
    parser.add_argument("--only", help="with --make-models or --loads-only: a comma-separated subset (m1,m2,m3,m4,m6,m7)")
    parser.add_argument("--models-dir", type=Path, help="time the peers on the models made here")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--json", type=Path, help="write the peers' figures here (default: stdout)")
    parser.add_argument("--single-only", type=int, metavar="THREADS",
                        help="with --models-dir: only the single predictions, at this many threads")
    parser.add_argument("--peers", default="torch,onnxruntime",
                        help="with --single-only: the peers to time (torch, onnxruntime)")
    parser.add_argument("--loads-only", action="store_true",
                        help="with --models-dir: only ONNX Runtime's session creation, of the --only models")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))
    if args.make_models:
        make_models(args.make_models, set(args.only.split(",")) if args.only else None)
    if args.models_dir:
        if args.loads_only:
            names = args.only.split(",") if args.only else ["m1", "m2", "m3", "m4", "m6", "m7"]
            result = run_loads_only(args.models_dir, names)
        elif args.single_only:
            peers = tuple(peer for peer in ("torch", "onnxruntime") if peer in args.peers.split(","))
            result = run_single_only(args.models_dir, args.runs, args.single_only, peers)
        else:
            result = run_peers(args.models_dir, args.runs)
        text = json.dumps(result, indent=2)
        if args.json:
            args.json.write_text(text)
        else:
            print(text)


if __name__ == "__main__":
    main()
