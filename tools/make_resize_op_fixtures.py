#!/usr/bin/env python3
"""Writes the fixtures of the MIL ops `resize_bilinear`, `resize` (iOS 17) and 3-D
`conv_transpose` to Tests/Fixtures/resize-ops/ (tests: TesseraModelsTests/ResizeOpTests.swift).

Same format and program builder as tools/make_new_op_fixtures.py (whose `save_case` this
reuses). Expected outputs come from PyTorch: bilinear values by
`torch.nn.functional.grid_sample` (align_corners=True) at the sample points coremltools'
`resize_bilinear` documentation defines for each `sampling_mode`; `NEAREST_NEIGHBOR` as
TensorFlow's `resize_nearest_neighbor(half_pixel_centers=True)` (`floor((i + 0.5) · in / out)`),
which coremltools converts to `resize`'s `DEFAULT` mode; the transposed convolutions by
`torch.nn.functional.conv_transpose3d`.

    Benchmarks/peers/.venv/bin/python tools/make_resize_op_fixtures.py
"""
import json
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_new_op_fixtures as base  # noqa: E402
import coremltools as ct  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from coremltools.converters.mil import Builder as mb  # noqa: E402

base.OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "resize-ops")
rng = np.random.default_rng(2117)


def grid(mode, xin, xout):
    """coremltools' resize_bilinear grid for `sampling_mode`, clamped to [0, xin - 1]."""
    i = np.arange(xout, dtype=np.float64)
    if mode == "STRICT_ALIGN_CORNERS":
        points = i * (xin - 1) / (xout - 1) if xout > 1 else np.zeros(1)
    elif mode == "ALIGN_CORNERS":
        points = i * (xin - 1) / (xout - 1) if xout > 1 else np.array([(xin - 1) / 2])
    elif mode == "DEFAULT":
        points = i * (xin - xin / xout) / (xout - 1) if xout > 1 else np.zeros(1)
    elif mode == "OFFSET_CORNERS":
        delta = max(1, xin - 1) / xout
        points = 0.5 * delta + i * delta
    else:  # UNALIGN_CORNERS
        spacing = xin / xout
        points = i * spacing + 0.5 * spacing - 0.5
    return np.clip(points, 0, xin - 1)


def bilinear(x, ys, xs):
    """x [..., H, W] sampled bilinearly at the rows ys and columns xs, by torch.grid_sample."""
    h, w = x.shape[-2:]
    planes = x.reshape(-1, 1, h, w)
    gy, gx = np.meshgrid(2 * ys / max(h - 1, 1) - 1, 2 * xs / max(w - 1, 1) - 1, indexing="ij")
    g = torch.from_numpy(np.stack([gx, gy], axis=-1)[None].astype(np.float32)).expand(planes.shape[0], -1, -1, -1)
    out = F.grid_sample(torch.from_numpy(planes), g, mode="bilinear", align_corners=True).numpy()
    return out.reshape(*x.shape[:-2], len(ys), len(xs))


def resize_bilinear_cases():
    modes = ("STRICT_ALIGN_CORNERS", "ALIGN_CORNERS", "DEFAULT", "OFFSET_CORNERS", "UNALIGN_CORNERS")
    for mode in modes:
        for shape, (oh, ow) in (((1, 2, 4, 5), (7, 3)), ((2, 3, 3), (1, 6)), ((1, 1, 5, 2), (2, 1))):
            x = base.rand(*shape)
            expected = bilinear(x, grid(mode, shape[-2], oh), grid(mode, shape[-1], ow))
            base.save_case(
                f"resize_bilinear_{mode.lower()}_{'x'.join(map(str, shape))}_to_{oh}x{ow}", {"x": x},
                lambda x, oh=oh, ow=ow, mode=mode: mb.resize_bilinear(
                    x=x, target_size_height=oh, target_size_width=ow, sampling_mode=mode),
                expected, target=ct.target.iOS15)


def nearest_sources(xin, xout):
    return np.minimum(np.floor((np.arange(xout) + 0.5) * xin / xout), xin - 1).astype(int)


def resize_cases():
    for mode in ("DEFAULT", "ALIGN_CORNERS", "UNALIGN_CORNERS"):
        x = base.rand(1, 2, 3, 4)
        expected = bilinear(x, grid(mode, 3, 5), grid(mode, 4, 6))
        base.save_case(f"resize_linear_{mode.lower()}", {"x": x},
                       lambda x, mode=mode: mb.resize(x=x, shape=np.array([1, 5, 6], np.int32),
                                                      resized_dims=np.uint32(2), interpolation_mode="LINEAR",
                                                      sampling_mode=mode),
                       expected, target=ct.target.iOS17)
    # Target sizes read at run time, a 0 keeping an axis; one resized axis.
    x = base.rand(2, 3, 4)
    shape = np.array([0, 7], np.int32)
    rows = nearest_sources(4, 7)
    base.save_case("resize_nearest_runtime_shape", {"x": x, "shape": shape},
                   lambda x, shape: mb.resize(x=x, shape=shape, resized_dims=np.uint32(2),
                                              interpolation_mode="NEAREST_NEIGHBOR"),
                   x[:, :, rows], target=ct.target.iOS17)
    x = base.rand(1, 1, 5, 3)
    base.save_case("resize_nearest_downsample", {"x": x},
                   lambda x: mb.resize(x=x, shape=np.array([2, 2], np.int32), resized_dims=np.uint32(2),
                                       interpolation_mode="NEAREST_NEIGHBOR"),
                   x[:, :, nearest_sources(5, 2)][:, :, :, nearest_sources(3, 2)], target=ct.target.iOS17)
    x = base.rand(1, 2, 6)
    base.save_case("resize_linear_one_axis", {"x": x},
                   lambda x: mb.resize(x=x, shape=np.array([4], np.int32), resized_dims=np.uint32(1)),
                   bilinear(x[:, :, None, :], np.zeros(1), grid("DEFAULT", 6, 4))[:, :, 0, :],
                   target=ct.target.iOS17)


def conv_transpose3d_cases():
    cases = [
        # name, C_in, C_out, kernel, strides, dilations, groups, pad_type, pad, output_shape
        ("basic", 2, 3, (2, 3, 2), (1, 1, 1), (1, 1, 1), 1, "valid", None, None),
        ("strided", 2, 2, (3, 2, 3), (2, 1, 2), (1, 1, 1), 1, "valid", None, None),
        ("custom_pad", 3, 2, (3, 3, 3), (2, 2, 1), (1, 1, 1), 1, "custom", (1, 1, 0, 1, 1, 0), None),
        ("grouped_dilated", 4, 6, (2, 2, 2), (1, 2, 1), (2, 1, 1), 2, "valid", None, None),
        ("same", 2, 2, (3, 3, 3), (2, 2, 2), (1, 1, 1), 1, "same", None, None),
        ("output_shape", 2, 3, (3, 3, 3), (2, 2, 2), (1, 1, 1), 1, "custom", (1, 1, 1, 1, 1, 1), (1, 3, 6, 4, 6)),
    ]
    for name, c_in, c_out, k, s, d, g, pad_type, pad, out_shape in cases:
        x = base.rand(1, c_in, 3, 2, 3)
        w = base.rand(c_in, c_out // g, *k)
        b = base.rand(c_out)
        full = F.conv_transpose3d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), stride=s,
                                  dilation=d, groups=g).numpy()
        sizes = x.shape[2:]
        if pad_type == "valid":
            expected = full
        elif pad_type == "same":
            starts, counts = [], []
            for i in range(3):
                total = max(0, full.shape[2 + i] - sizes[i] * s[i])
                starts.append(total // 2)
                counts.append(sizes[i] * s[i])
            expected = full[:, :, starts[0]:starts[0] + counts[0], starts[1]:starts[1] + counts[1],
                            starts[2]:starts[2] + counts[2]]
        else:
            before = pad[0::2]
            counts = out_shape[2:] if out_shape else [full.shape[2 + i] - pad[2 * i] - pad[2 * i + 1] for i in range(3)]
            # An output_shape past the full result: torch's output_padding gives those positions.
            extra = [max(0, before[i] + counts[i] - full.shape[2 + i]) for i in range(3)]
            if any(extra):
                full = F.conv_transpose3d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), stride=s,
                                          dilation=d, groups=g, output_padding=tuple(extra)).numpy()
            expected = full[:, :, before[0]:before[0] + counts[0], before[1]:before[1] + counts[1],
                            before[2]:before[2] + counts[2]]

        def build(x, w=w, b=b, s=s, d=d, g=g, pad_type=pad_type, pad=pad, out_shape=out_shape):
            kwargs = dict(x=x, weight=w, bias=b, strides=list(s), dilations=list(d), groups=g, pad_type=pad_type)
            if pad is not None:
                kwargs["pad"] = list(pad)
            if out_shape is not None:
                kwargs["output_shape"] = list(out_shape)
            return mb.conv_transpose(**kwargs)

        base.save_case(f"conv_transpose3d_{name}", {"x": x}, build, expected, target=ct.target.iOS15)


def main():
    shutil.rmtree(base.OUT, ignore_errors=True)
    os.makedirs(base.OUT)
    resize_bilinear_cases()
    resize_cases()
    conv_transpose3d_cases()
    with open(os.path.join(base.OUT, "cases.json"), "w") as f:
        json.dump(base.CASES, f, indent=1)
    print(f"{len(base.CASES)} cases")


if __name__ == "__main__":
    main()
