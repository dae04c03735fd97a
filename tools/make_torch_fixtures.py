"""PyTorch-converted fixtures for the lowering tests: a small CNN (conv, batch norm, ReLU6,
depthwise conv, residual add, pooling, linear) in float32 and with float16 compute, and a
transformer encoder block (attention with matmul/softmax, layer norm, GELU), converted with
coremltools from TorchScript traces, with PyTorch's own outputs as the references.

Writes Tests/Fixtures/lowering/<case>/{model.mlpackage, x.npy, expected_0.npy} and adds the
cases to Tests/Fixtures/lowering/cases.json (the format tools/make_lowering_fixtures.py uses).

Needs torch and coremltools (Benchmarks/peers/.venv has both after
`pip install coremltools`): `Benchmarks/peers/.venv/bin/python tools/make_torch_fixtures.py`.
coremltools 9 is tested with torch up to 2.7; these models convert with the torch 2.13 CPU wheel
used here (the conversion warns that the version is untested).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import torch
from torch import nn
import coremltools as ct

ROOT = Path(__file__).resolve().parent.parent / "Tests" / "Fixtures" / "lowering"


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU6())
        self.expand = nn.Sequential(nn.Conv2d(8, 16, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU6())
        self.depthwise = nn.Sequential(nn.Conv2d(16, 16, 3, 1, 1, groups=16, bias=False), nn.BatchNorm2d(16), nn.ReLU6())
        self.project = nn.Sequential(nn.Conv2d(16, 8, 1, bias=False), nn.BatchNorm2d(8))
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        x = self.stem(x)
        x = x + self.project(self.depthwise(self.expand(x)))
        x = torch.nn.functional.max_pool2d(x, 2)
        x = torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return torch.softmax(self.head(x), dim=-1)


class EncoderBlock(nn.Module):
    """Pre-norm attention block with fixed sizes (no shape arithmetic in the trace)."""

    def __init__(self, d=32, heads=2, tokens=8):
        super().__init__()
        self.d, self.heads, self.tokens = d, heads, tokens
        self.scale = 1.0 / float(d // heads) ** 0.5
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ff1, self.ff2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        t, d, h = self.tokens, self.d, self.heads
        qkv = self.qkv(self.norm1(x)).reshape(1, t, 3, h, d // h).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attention = torch.softmax((q @ k.transpose(-1, -2)) * self.scale, dim=-1)
        x = x + self.out((attention @ v).transpose(1, 2).reshape(1, t, d))
        return x + self.ff2(torch.nn.functional.gelu(self.ff1(self.norm2(x))))


def convert(model, example, precision):
    with torch.no_grad():
        traced = torch.jit.trace(model, example)
    return ct.convert(
        traced,
        inputs=[ct.TensorType(name="x", shape=example.shape)],
        outputs=[ct.TensorType(name="output")],
        convert_to="mlprogram",
        compute_precision=precision,
        minimum_deployment_target=ct.target.iOS16,
    )


def op_types(mlmodel) -> list[str]:
    spec = mlmodel.get_spec()
    types = set()
    for function in spec.mlProgram.functions.values():
        for block in function.block_specializations.values():
            types.update(op.type for op in block.operations if op.type != "const")
    return sorted(types)


def main() -> None:
    torch.manual_seed(0)
    cnn = SmallCNN().eval()
    with torch.no_grad():
        for module in cnn.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.uniform_(-0.2, 0.2)
                module.running_var.uniform_(0.5, 1.5)
    block = EncoderBlock().eval()
    cases = [
        ("torch_cnn_fp32", cnn, torch.randn(1, 3, 16, 16), ct.precision.FLOAT32, 1e-4, 1e-5),
        ("torch_cnn_fp16", cnn, torch.randn(1, 3, 16, 16), ct.precision.FLOAT16, 1e-2, 1e-3),
        ("torch_transformer_fp32", block, torch.randn(1, 8, 32), ct.precision.FLOAT32, 1e-4, 1e-5),
    ]
    index_path = ROOT / "cases.json"
    index = [case for case in json.loads(index_path.read_text()) if not case["name"].startswith("torch_")]
    for name, model, example, precision, rtol, atol in cases:
        directory = ROOT / name
        if directory.exists():
            shutil.rmtree(directory)
        directory.mkdir(parents=True)
        with torch.no_grad():
            expected = model(example).numpy().astype(np.float32)
        mlmodel = convert(model, example, precision)
        mlmodel.save(str(directory / "model.mlpackage"))
        np.save(directory / "x.npy", example.numpy().astype(np.float32))
        np.save(directory / "expected_0.npy", expected)
        index.append({"name": name, "inputs": ["x"], "outputs": ["output"], "rtol": rtol, "atol": atol,
                      "ops": op_types(mlmodel)})
        print(name, op_types(mlmodel))
    index_path.write_text(json.dumps(index, indent=1) + "\n")


if __name__ == "__main__":
    main()
