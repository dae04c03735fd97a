"""Model workload M2: ResNet-50 [1,3,224,224] (torchvision's architecture, written out here because
torchvision's compiled ops do not load with the CPU torch wheel; random weights, seed 0, batch-norm
statistics randomised so the folded convolutions are not the identity), as an ML Program package
(coremltools 9, float32), an ONNX file and PyTorch weights, beside M1 in the same directory; then
PyTorch eager and ONNX Runtime timed on it the way model_workloads.py times M1.

Usage:
  python model_resnet.py --make-models DIR                 # DIR/m2.{mlpackage,onnx,pt}, m2_{input,expected}.npy
  python model_resnet.py --models-dir DIR --json peers-m2.json [--threads 2]

compare_models.py merges the peers' figures into its table when DIR/m2.onnx exists; Tessera times
DIR/m2.mlpackage in `TesseraBenchmarks models`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np


def resnet50():
    """torchvision.models.resnet50(weights=None): bottleneck blocks [3, 4, 6, 3], stride on the 3×3."""
    import torch
    from torch import nn

    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            width = planes
            self.conv1 = nn.Conv2d(inplanes, width, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.conv3 = nn.Conv2d(width, planes * 4, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(planes * 4)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = downsample

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            return self.relu(out + identity)

    class ResNet(nn.Module):
        def __init__(self, layers=(3, 4, 6, 3), classes=1000):
            super().__init__()
            self.inplanes = 64
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            self.layer1 = self._layer(64, layers[0])
            self.layer2 = self._layer(128, layers[1], 2)
            self.layer3 = self._layer(256, layers[2], 2)
            self.layer4 = self._layer(512, layers[3], 2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512 * 4, classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, nn.BatchNorm2d):
                    # Random statistics (seeded), so each folded convolution has a real scale and bias.
                    nn.init.uniform_(m.weight, 0.5, 1.0)
                    nn.init.uniform_(m.bias, -0.1, 0.1)
                    m.running_mean.uniform_(-0.1, 0.1)
                    m.running_var.uniform_(0.5, 1.5)

        def _layer(self, planes, blocks, stride=1):
            downsample = None
            if stride != 1 or self.inplanes != planes * 4:
                downsample = nn.Sequential(
                    nn.Conv2d(self.inplanes, planes * 4, 1, stride, bias=False), nn.BatchNorm2d(planes * 4))
            layers = [Bottleneck(self.inplanes, planes, stride, downsample)]
            self.inplanes = planes * 4
            layers += [Bottleneck(self.inplanes, planes) for _ in range(1, blocks)]
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    return ResNet().eval()


def make_m2(directory: Path) -> None:
    import torch
    import coremltools as ct

    torch.manual_seed(0)
    directory.mkdir(parents=True, exist_ok=True)
    model = resnet50()
    example = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        expected = model(example)
        traced = torch.jit.trace(model, example)
    torch.save(model.state_dict(), directory / "m2.pt")
    np.save(directory / "m2_input.npy", example.numpy())
    np.save(directory / "m2_expected.npy", expected.numpy())
    mlmodel = ct.convert(
        traced,
        inputs=[ct.TensorType(name="input", shape=example.shape)],
        outputs=[ct.TensorType(name="output")],
        convert_to="mlprogram",
        compute_precision=ct.precision.FLOAT32,
        minimum_deployment_target=ct.target.iOS16,
    )
    mlmodel.save(str(directory / "m2.mlpackage"))
    torch.onnx.export(
        model, (example,), str(directory / "m2.onnx"), input_names=["input"], output_names=["output"], dynamo=False,
    )
    print("made m2", file=sys.stderr)


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


def run_m2_peers(directory: Path, runs: int, threads: int) -> dict:
    """{"torch": {"m2": …}, "onnxruntime": {"m2": …}}: medians and max |Δ| from PyTorch's output."""
    import torch
    import onnxruntime as ort

    torch.set_num_threads(threads)
    x = np.load(directory / "m2_input.npy")
    expected = np.load(directory / "m2_expected.npy")
    model = resnet50()
    model.load_state_dict(torch.load(directory / "m2.pt"))
    tx = torch.from_numpy(x)
    result = {"threads": threads, "torch": {}, "onnxruntime": {}}
    with torch.inference_mode():
        timing = _time(lambda: model(tx), runs)
        check = float(np.max(np.abs(model(tx).numpy() - expected)))
    result["torch"]["m2"] = {**timing, "max_abs_error": check}
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(directory / "m2.onnx"), options, providers=["CPUExecutionProvider"])
    feeds = {"input": x}
    timing = _time(lambda: session.run(None, feeds), runs)
    check = float(np.max(np.abs(session.run(None, feeds)[0] - expected)))
    result["onnxruntime"]["m2"] = {**timing, "max_abs_error": check}
    print(f"m2: torch {result['torch']['m2']['median_ms']:.2f} ms, "
          f"onnxruntime {result['onnxruntime']['m2']['median_ms']:.2f} ms", file=sys.stderr)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--make-models", type=Path, help="write m2's model files and its input/output here")
    parser.add_argument("--models-dir", type=Path, help="time the peers on m2 made here")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path, help="write the peers' figures here (default: stdout)")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    if args.make_models:
        make_m2(args.make_models)
    if args.models_dir:
        text = json.dumps(run_m2_peers(args.models_dir, args.runs, args.threads), indent=2)
        if args.json:
            args.json.write_text(text)
        else:
            print(text)


if __name__ == "__main__":
    main()
