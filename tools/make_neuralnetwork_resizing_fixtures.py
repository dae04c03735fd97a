#!/usr/bin/env python3
"""Writes the NeuralNetwork `resizeBilinear` and `cropResize` fixtures under
Tests/Fixtures/neuralnetwork-resizing/ (kept apart from make_neuralnetwork_fixtures.py's folder,
which that script rewrites whole).

Each case is a one-layer NeuralNetworkBuilder model, its inputs and the outputs PyTorch
computes: `torch.nn.functional.grid_sample` (bilinear, align_corners=True, so a normalized
coordinate maps to pixel `(g + 1) / 2 · (size - 1)`) evaluated at the sample points that
NeuralNetwork.proto's SamplingMode defines (STRICT_ALIGN_ENDPOINTS / ALIGN_ENDPOINTS /
UPSAMPLE / ROI_ALIGN for a resize; the two corner-aligned modes over a box for a crop).

    Benchmarks/peers/.venv/bin/python tools/make_neuralnetwork_resizing_fixtures.py
"""
import json
import os
import shutil
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from coremltools.models import datatypes  # noqa: E402
from coremltools.models.neural_network import NeuralNetworkBuilder  # noqa: E402
from coremltools.models.utils import save_spec  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "neuralnetwork-resizing")
CASES = []
rng = np.random.default_rng(21)


def grid(mode, xin, xout):
    """The SamplingMode grid of NeuralNetwork.proto, clamped to [0, xin - 1]."""
    i = np.arange(xout, dtype=np.float64)
    if mode == "STRICT_ALIGN_ENDPOINTS_MODE":
        points = np.linspace(0, xin - 1, xout) if xout > 1 else np.zeros(1)
    elif mode == "ALIGN_ENDPOINTS_MODE":
        points = np.linspace(0, xin - 1, xout) if xout > 1 else np.array([(xin - 1) / 2])
    elif mode == "UPSAMPLE_MODE":
        points = np.linspace(0, xin - xin / xout, xout) if xout > 1 else np.zeros(1)
    else:  # ROI_ALIGN_MODE
        spacing = max(1, xin - 1) / xout
        points = 0.5 * spacing + i * spacing
    return np.clip(points, 0, xin - 1)


def sample(image, ys, xs):
    """Bilinear values of image [C, H, W] at every (ys[i, j], xs[i, j]) pixel point, by torch."""
    c, h, w = image.shape
    gx = 2 * xs / max(w - 1, 1) - 1
    gy = 2 * ys / max(h - 1, 1) - 1
    g = torch.from_numpy(np.stack([gx, gy], axis=-1)[None].astype(np.float32))
    out = F.grid_sample(torch.from_numpy(image[None]), g, mode="bilinear", align_corners=True)
    return out[0].numpy()


def save(name, nb, inputs, outputs, rtol=1e-5, atol=1e-5, error=None):
    folder = os.path.join(ROOT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    save_spec(nb.spec, os.path.join(folder, "model.mlmodel"))
    for key, value in inputs.items():
        np.save(os.path.join(folder, key + ".npy"), np.asarray(value, dtype=np.float32))
    for key, value in outputs.items():
        np.save(os.path.join(folder, "expected_" + key + ".npy"), np.asarray(value, dtype=np.float32))
    layers = sorted({layer.WhichOneof("layer") for layer in nb.spec.neuralNetwork.layers})
    entry = dict(name=name, inputs=list(inputs), outputs=list(outputs), rtol=rtol, atol=atol, layers=layers)
    if error:
        entry["error"] = error
    CASES.append(entry)


def resize_cases():
    for mode in ("STRICT_ALIGN_ENDPOINTS_MODE", "ALIGN_ENDPOINTS_MODE", "UPSAMPLE_MODE", "ROI_ALIGN_MODE"):
        for (h, w), (oh, ow) in (((4, 5), (7, 3)), ((3, 3), (1, 6)), ((5, 2), (2, 1))):
            x = rng.uniform(-1, 1, size=(1, 2, 3, h, w)).astype(np.float32)
            nb = NeuralNetworkBuilder([("x", datatypes.Array(*x.shape))], [("y", None)],
                                      disable_rank5_shape_mapping=True)
            nb.add_resize_bilinear("resize", "x", "y", target_height=oh, target_width=ow, mode=mode)
            ys, xs = np.meshgrid(grid(mode, h, oh), grid(mode, w, ow), indexing="ij")
            y = np.stack([sample(plane, ys, xs) for plane in x.reshape(2, 3, h, w)]).reshape(1, 2, 3, oh, ow)
            save(f"resize_bilinear_{mode.lower()}_{h}x{w}_to_{oh}x{ow}", nb, {"x": x}, {"y": y})


def crop_points(box, mode, count, size, normalized, scale):
    start, end = box
    factor = scale * ((size - 1) if normalized else 1)
    start, end = start * factor, end * factor
    if count == 1:
        return np.array([start if mode == "STRICT_ALIGN_ENDPOINTS_MODE" else (start + end) / 2])
    return start + np.arange(count) / (count - 1) * (end - start)


def corners(box, box_mode):
    """(y0, x0, y1, x1) of a box given in `box_mode`."""
    a, b, c, d = box
    if box_mode == "CORNERS_HEIGHT_FIRST":
        return a, b, c, d
    if box_mode == "CORNERS_WIDTH_FIRST":
        return b, a, d, c
    cy, cx, sy, sx = (a, b, c, d) if box_mode == "CENTER_SIZE_HEIGHT_FIRST" else (b, a, d, c)
    return cy - sy / 2, cx - sx / 2, cy + sy / 2, cx + sx / 2


def crop_cases():
    h, w, channels, batch = 6, 7, 2, 2
    x = rng.uniform(-1, 1, size=(1, batch, channels, h, w)).astype(np.float32)
    # Boxes inside the image in every mode (pixel units; normalized ones are divided by H-1, W-1).
    pixel_boxes = {
        "CORNERS_HEIGHT_FIRST": [[0.5, 1.0, 4.5, 5.5], [2.0, 0.0, 3.0, 6.0], [4.0, 5.0, 1.0, 2.0]],
        "CORNERS_WIDTH_FIRST": [[1.0, 0.5, 5.5, 4.5], [0.0, 2.0, 6.0, 3.0]],
        "CENTER_SIZE_HEIGHT_FIRST": [[2.5, 3.0, 3.0, 4.0], [3.0, 3.0, 1.0, 5.0]],
        "CENTER_SIZE_WIDTH_FIRST": [[3.0, 2.5, 4.0, 3.0]],
    }
    for box_mode, boxes in pixel_boxes.items():
        for mode in ("STRICT_ALIGN_ENDPOINTS_MODE", "ALIGN_ENDPOINTS_MODE"):
            for normalized, indexed, (th, tw), scale in ((False, False, (3, 4), 1.0), (True, True, (1, 5), 1.0),
                                                          (False, True, (2, 1), 0.5)):
                boxes_array = np.array(boxes, dtype=np.float64)
                if scale != 1.0:
                    boxes_array = boxes_array / scale
                if normalized:
                    height_first = box_mode.endswith("HEIGHT_FIRST")
                    divisor = [h - 1, w - 1] * 2 if height_first else [w - 1, h - 1] * 2
                    boxes_array = boxes_array / np.array(divisor)
                n = len(boxes)
                if indexed:
                    images = np.arange(n) % batch
                    roi = np.concatenate([images[:, None], boxes_array], axis=1).reshape(n, 1, 5, 1, 1)
                else:
                    roi = boxes_array.reshape(n, 1, 4, 1, 1)
                nb = NeuralNetworkBuilder([("x", datatypes.Array(*x.shape)), ("roi", datatypes.Array(*roi.shape))],
                                          [("y", None)], disable_rank5_shape_mapping=True)
                nb.add_crop_resize("crop", ["x", "roi"], "y", target_height=th, target_width=tw, mode=mode,
                                   normalized_roi=normalized, box_indices_mode=box_mode, spatial_scale=scale)
                crops = []
                for k in range(n):
                    y0, x0, y1, x1 = corners(boxes_array[k], box_mode)
                    ys = crop_points((y0, y1), mode, th, h, normalized, scale)
                    xs = crop_points((x0, x1), mode, tw, w, normalized, scale)
                    gy, gx = np.meshgrid(ys, xs, indexing="ij")
                    sources = [images[k]] if indexed else range(batch)
                    crops.append(np.stack([sample(x[0, b], gy, gx) for b in sources]))
                y = np.stack(crops)  # [N, B or 1, C, th, tw]
                kind = "indexed" if indexed else "every"
                norm = "normalized" if normalized else "pixels"
                save(f"crop_resize_{box_mode.lower()}_{mode.lower()}_{kind}_{norm}_{th}x{tw}", nb,
                     {"x": x, "roi": roi.astype(np.float32)}, {"y": y}, rtol=1e-4, atol=1e-5)


def refused_cases():
    """A crop in a grid mode that has no meaning for a box must fail the load."""
    x = np.zeros((1, 1, 1, 4, 4), dtype=np.float32)
    roi = np.array([0, 0, 3, 3], dtype=np.float32).reshape(1, 1, 4, 1, 1)
    nb = NeuralNetworkBuilder([("x", datatypes.Array(*x.shape)), ("roi", datatypes.Array(*roi.shape))],
                              [("y", None)], disable_rank5_shape_mapping=True)
    nb.add_crop_resize("crop", ["x", "roi"], "y", target_height=2, target_width=2, mode="UPSAMPLE_MODE")
    save("crop_resize_upsample_mode_refused", nb, {"x": x, "roi": roi}, {}, error="sampling method DEFAULT")


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    os.makedirs(ROOT)
    resize_cases()
    crop_cases()
    refused_cases()
    with open(os.path.join(ROOT, "cases.json"), "w") as f:
        json.dump(CASES, f, indent=1)
    print(f"{len(CASES)} cases in {ROOT}")


if __name__ == "__main__":
    sys.exit(main())
