"""Image fixtures for Tessera's image tests (Tests/Fixtures/images/).

Writes, from PIL, NumPy, PyTorch and coremltools (never from Tessera):

- PNG and JPEG files (RGB, gray, EXIF-rotated) with their decoded pixels as PIL reads them
  (upright: `ImageOps.exif_transpose`), and damaged ones (truncated, garbage, 0×0, a
  100,000 × 100,000 header);
- `oriented.json`: an EXIF-tagged PNG's stored pixels turned by each of the eight orientations
  as PIL turns them (`--oriented` makes only this), for the `orientation:` initialisers;
- crop-and-scale references: Vision's `centerCrop` / `scaleFit` / `scaleFill` geometry sampled by
  `torch.nn.functional.grid_sample` (bilinear, `align_corners=False`, border padding), rounded
  to 8 bits;
- ML Program image models converted by coremltools from small PyTorch modules (RGB, BGR,
  grayscale, scale + bias, a range of sizes, enumerated sizes, an image output), each with the
  PyTorch output for a bundled PNG;
- an "older coremltools" package: a coremltools package whose weight.bin metadata records carry
  garbage in the padding-bits field of byte-sized blobs, as packages of older versions did.

- arithmetic-coded JPEGs, transcoded losslessly from the Huffman ones by libjpeg-turbo's
  `jpegtran -arithmetic` (Debian: libjpeg-turbo-progs), with PIL's pixels; one whose
  compressed data stops after a quarter (arithmetic decoding, unlike Huffman, does not warn);
  `--arithmetic` makes only these.

- NeuralNetwork image models (RGB, BGR, grayscale with a preprocessing scaler) and a float16
  grayscale ML program (`models-more.json`; `--more` makes only these).

Run with the peers venv: Benchmarks/peers/.venv/bin/python tools/make_image_fixtures.py
"""

import io
import json
import os
import shutil
import struct
import subprocess
import zlib

import coremltools as ct
import numpy as np
import torch
from PIL import Image, ImageOps

OUT = os.path.join(os.path.dirname(__file__), "..", "Tests", "Fixtures", "images")
torch.manual_seed(17)
rng = np.random.default_rng(17)


def smooth_rgb(width, height):
    """A smooth color image (low frequencies only, so resamplers agree within ±1)."""
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    r = 128 + 100 * np.sin(x / width * 2.1 + 0.3)
    g = 128 + 90 * np.cos(y / height * 1.7 + 0.5)
    b = 40 + 180 * (x + y) / (width + height)
    return np.clip(np.stack([r, g, b], -1).round(), 0, 255).astype(np.uint8)


def save_json(name, value):
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(value, f, separators=(",", ":"))


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def exif_orientation(value):
    """A little-endian TIFF header with one IFD entry: orientation."""
    return b"II*\x00" + struct.pack("<I", 8) + struct.pack("<H", 1) + struct.pack("<HHII", 0x0112, 3, 1, value) + b"\x00\x00\x00\x00"


def decoded(path):
    image = ImageOps.exif_transpose(Image.open(path))
    mode = "L" if image.mode == "L" else "RGB"
    pixels = np.asarray(image.convert(mode))
    return {"width": image.width, "height": image.height, "channels": 1 if mode == "L" else 3,
            "pixels": pixels.reshape(-1).tolist()}


def jpegtran(arguments, source, destination):
    """Runs libjpeg-turbo's jpegtran on a fixture (a lossless transcode)."""
    with open(destination, "wb") as out:
        subprocess.run(["jpegtran", *arguments, source], stdout=out, check=True)


def make_arithmetic_files(cases):
    """Arithmetic-coded JPEGs from the Huffman fixtures, and their PIL pixels."""
    for name in ("smooth", "gray"):
        path = os.path.join(OUT, f"{name}-arith.jpg")
        jpegtran(["-arithmetic"], os.path.join(OUT, f"{name}.jpg"), path)
        cases[f"{name}-arith.jpg"] = decoded(path)
    # The compressed data of gray-arith.jpg cut after a quarter, then EOI: 20 rows declared,
    # data for the first few.
    data = open(os.path.join(OUT, "gray-arith.jpg"), "rb").read()
    sos = data.find(b"\xff\xda")
    start = sos + 2 + struct.unpack(">H", data[sos + 2: sos + 4])[0]
    end = data.rfind(b"\xff\xd9")
    with open(os.path.join(OUT, "truncated-arith.jpg"), "wb") as f:
        f.write(data[: start + (end - start) // 4] + b"\xff\xd9")


def make_oriented_cases():
    """oriented.json: oriented-6.png's stored pixels turned by each EXIF orientation as PIL does
    (ImageOps.exif_transpose's transposition for that tag), for the `orientation:` initialisers,
    which apply the given orientation instead of the file's own tag."""
    methods = {1: None, 2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180,
               4: Image.Transpose.FLIP_TOP_BOTTOM, 5: Image.Transpose.TRANSPOSE, 6: Image.Transpose.ROTATE_270,
               7: Image.Transpose.TRANSVERSE, 8: Image.Transpose.ROTATE_90}
    stored = Image.open(os.path.join(OUT, "oriented-6.png")).convert("RGB")
    cases = {}
    for orientation, method in methods.items():
        image = stored if method is None else stored.transpose(method)
        pixels = np.asarray(image)
        cases[str(orientation)] = {"width": image.width, "height": image.height, "channels": 3,
                                   "pixels": pixels.reshape(-1).tolist()}
    save_json("oriented.json", cases)


def make_files():
    cases = {}
    rgb = smooth_rgb(40, 30)
    Image.fromarray(rgb).save(os.path.join(OUT, "smooth.png"))
    Image.fromarray(rgb).save(os.path.join(OUT, "smooth.jpg"), quality=92)
    gray = np.clip(np.add.outer(np.arange(20) * 6, np.arange(24) * 4), 0, 255).astype(np.uint8)
    Image.fromarray(gray, "L").save(os.path.join(OUT, "gray.png"))
    Image.fromarray(gray, "L").save(os.path.join(OUT, "gray.jpg"), quality=95)
    # An asymmetric image so every orientation is distinguishable.
    small = rng.integers(0, 256, size=(5, 7, 3), dtype=np.uint8)
    for orientation in (3, 6, 8, 5):
        exif = Image.Exif()
        exif[0x0112] = orientation
        Image.fromarray(small).save(os.path.join(OUT, f"oriented-{orientation}.jpg"), quality=100, exif=exif)
    # A PNG with an eXIf chunk (orientation 6), written by hand after IHDR.
    buffer = io.BytesIO()
    Image.fromarray(small).save(buffer, format="PNG")
    raw = buffer.getvalue()
    ihdr_end = 8 + 25
    with open(os.path.join(OUT, "oriented-6.png"), "wb") as f:
        f.write(raw[:ihdr_end] + png_chunk(b"eXIf", exif_orientation(6)) + raw[ihdr_end:])
    for name in ("smooth.png", "smooth.jpg", "gray.png", "gray.jpg", "oriented-3.jpg", "oriented-6.jpg",
                 "oriented-8.jpg", "oriented-5.jpg", "oriented-6.png"):
        cases[name] = decoded(os.path.join(OUT, name))
    make_arithmetic_files(cases)
    save_json("decoded.json", cases)

    # Damaged files.
    png = open(os.path.join(OUT, "smooth.png"), "rb").read()
    jpg = open(os.path.join(OUT, "smooth.jpg"), "rb").read()
    open(os.path.join(OUT, "truncated.png"), "wb").write(png[: len(png) // 2])
    open(os.path.join(OUT, "truncated.jpg"), "wb").write(jpg[: len(jpg) // 2])
    open(os.path.join(OUT, "garbage.png"), "wb").write(png[:16] + bytes(rng.integers(0, 256, 200, dtype=np.uint8)))
    open(os.path.join(OUT, "not-an-image.txt"), "wb").write(b"hello, this is text\n")

    def header_only(width, height):
        ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
        idat = zlib.compress(b"\x00" * 16)
        return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", idat) + png_chunk(b"IEND", b"")

    open(os.path.join(OUT, "empty.png"), "wb").write(header_only(0, 0))
    open(os.path.join(OUT, "huge.png"), "wb").write(header_only(100_000, 100_000))
    # A JPEG whose SOF0 declares 65000 × 65000 (the largest JPEG allows).
    sof = jpg.find(b"\xff\xc0")
    huge = bytearray(jpg)
    huge[sof + 5: sof + 9] = struct.pack(">HH", 65000, 65000)
    open(os.path.join(OUT, "huge.jpg"), "wb").write(bytes(huge))


def vision_grid(src_w, src_h, region, out_w, out_h, rule):
    """Source pixel coordinates (x, y) for each output pixel, and a mask of padded pixels.

    Vision's rules: centerCrop scales until the shorter side fits and cuts the rest evenly;
    scaleFit scales until the longer side fits and centres it; scaleFill scales each axis.
    """
    rx, ry, rw, rh = region
    sx, sy = out_w / rw, out_h / rh
    xs = np.arange(out_w) + 0.5
    ys = np.arange(out_h) + 0.5
    mask_x = np.ones(out_w, bool)
    mask_y = np.ones(out_h, bool)
    if rule == "centerCrop":
        s = max(sx, sy)
        vis_w, vis_h = out_w / s, out_h / s
        px = rx + (rw - vis_w) / 2 + xs / s
        py = ry + (rh - vis_h) / 2 + ys / s
    elif rule == "scaleFit":
        s = min(sx, sy)
        off_x, off_y = (out_w - rw * s) / 2, (out_h - rh * s) / 2
        px = rx + (xs - off_x) / s
        py = ry + (ys - off_y) / s
        mask_x = (xs >= off_x) & (xs < off_x + rw * s)
        mask_y = (ys >= off_y) & (ys < off_y + rh * s)
    else:
        px = rx + xs / sx
        py = ry + ys / sy
    return px - 0.5, py - 0.5, np.outer(mask_y, mask_x)


def resample(image, region, out_w, out_h, rule):
    h, w, c = image.shape
    px, py, mask = vision_grid(w, h, region, out_w, out_h, rule)
    # grid_sample's normalized coordinates (align_corners=False): x_norm = (2 x + 1) / W - 1.
    gx = (2 * px + 1) / w - 1
    gy = (2 * py + 1) / h - 1
    grid = torch.tensor(np.stack(np.meshgrid(gx, gy), -1)[None], dtype=torch.float64)
    source = torch.tensor(image, dtype=torch.float64).permute(2, 0, 1)[None]
    out = torch.nn.functional.grid_sample(source, grid, mode="bilinear", padding_mode="border", align_corners=False)
    out = out[0].permute(1, 2, 0).numpy()
    out = np.clip(np.round(out), 0, 255).astype(np.uint8)
    out[~mask] = 0
    return out


def make_resize_cases():
    image = smooth_rgb(40, 30)
    cases = []
    for rule in ("centerCrop", "scaleFit", "scaleFill"):
        for (out_w, out_h) in ((16, 16), (24, 10), (64, 48)):
            for region in (None, (4.0, 3.0, 20.0, 18.0)):
                r = region or (0.0, 0.0, 40.0, 30.0)
                out = resample(image, r, out_w, out_h, rule)
                cases.append({"rule": rule, "width": out_w, "height": out_h, "region": list(r) if region else None,
                              "pixels": out.reshape(-1).tolist()})
    save_json("resize.json", {"source": "smooth.png", "cases": cases})


class Preprocessed(torch.nn.Module):
    """A small CNN whose input arrives already scaled and biased (coremltools adds those ops)."""

    def __init__(self, channels, out=4):
        super().__init__()
        self.conv = torch.nn.Conv2d(channels, out, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(out, out, 3, stride=2)

    def forward(self, x):
        return self.conv2(torch.relu(self.conv(x)))


class Pooled(torch.nn.Module):
    """Fully convolutional, then a global mean: runs at any image size."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 5, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x)).mean(dim=(2, 3))


class ImageToImage(torch.nn.Module):
    """Brightens, mixes channels and overshoots 0...255 so the output clamps."""

    def forward(self, x):
        mixed = torch.cat([x[:, 1:2], x[:, 2:3], x[:, 0:1]], 1)
        return mixed * 2.2 - 150


def pixels_chw(path, mode):
    image = np.asarray(Image.open(path).convert(mode), dtype=np.float32)
    if mode == "L":
        return image[None]
    return image.transpose(2, 0, 1)


def convert(module, example, inputs, outputs=None):
    traced = torch.jit.trace(module.eval(), example)
    return ct.convert(traced, inputs=inputs, outputs=outputs, convert_to="mlprogram",
                      minimum_deployment_target=ct.target.iOS16, compute_precision=ct.precision.FLOAT32)


def make_models():
    cases = {}
    rgb = smooth_rgb(16, 12)
    Image.fromarray(rgb).save(os.path.join(OUT, "input-16x12.png"))
    gray = np.asarray(Image.fromarray(rgb).convert("L"))
    Image.fromarray(gray, "L").save(os.path.join(OUT, "input-gray-16x12.png"))
    scale, bias = 1 / 127.5, [-1.0, -0.9, -0.8]

    for name, layout, mode in (("image_rgb", ct.colorlayout.RGB, "RGB"), ("image_bgr", ct.colorlayout.BGR, "RGB"),
                               ("image_gray", ct.colorlayout.GRAYSCALE, "L")):
        channels = 1 if mode == "L" else 3
        module = Preprocessed(channels)
        example = torch.rand(1, channels, 12, 16)
        b = [bias[0]] if channels == 1 else bias
        model = convert(module, example, [ct.ImageType(name="image", shape=(1, channels, 12, 16), scale=scale,
                                                       bias=b, color_layout=layout)],
                        [ct.TensorType(name="features")])
        model.save(os.path.join(OUT, f"{name}.mlpackage"))
        source = "input-gray-16x12.png" if mode == "L" else "input-16x12.png"
        x = pixels_chw(os.path.join(OUT, source), mode)
        if layout == ct.colorlayout.BGR:
            x = x[::-1].copy()
        x = torch.tensor(x)[None] * scale + torch.tensor(b, dtype=torch.float32).view(1, -1, 1, 1)
        with torch.no_grad():
            expected = module(x).numpy()
        cases[name] = {"input": source, "output": "features", "shape": list(expected.shape),
                       "expected": expected.reshape(-1).tolist()}

    module = Pooled()
    shape = (1, 3, ct.RangeDim(8, 64, default=12), ct.RangeDim(8, 64, default=16))
    model = convert(module, torch.rand(1, 3, 12, 16),
                    [ct.ImageType(name="image", shape=shape, scale=1 / 255.0, color_layout=ct.colorlayout.RGB)],
                    [ct.TensorType(name="features")])
    model.save(os.path.join(OUT, "image_flexible.mlpackage"))
    rgb_large = smooth_rgb(24, 20)
    Image.fromarray(rgb_large).save(os.path.join(OUT, "input-24x20.png"))
    for source in ("input-16x12.png", "input-24x20.png"):
        x = torch.tensor(pixels_chw(os.path.join(OUT, source), "RGB"))[None] / 255.0
        with torch.no_grad():
            expected = module(x).numpy()
        cases[f"image_flexible:{source}"] = {"model": "image_flexible", "input": source, "output": "features",
                                             "shape": list(expected.shape), "expected": expected.reshape(-1).tolist()}

    module = Pooled()
    shapes = ct.EnumeratedShapes(shapes=[(1, 3, 12, 16), (1, 3, 20, 24)], default=(1, 3, 12, 16))
    model = convert(module, torch.rand(1, 3, 12, 16),
                    [ct.ImageType(name="image", shape=shapes, scale=1 / 255.0, color_layout=ct.colorlayout.BGR)],
                    [ct.TensorType(name="features")])
    model.save(os.path.join(OUT, "image_enumerated.mlpackage"))
    for source in ("input-16x12.png", "input-24x20.png"):
        x = torch.tensor(pixels_chw(os.path.join(OUT, source), "RGB")[::-1].copy())[None] / 255.0
        with torch.no_grad():
            expected = module(x).numpy()
        cases[f"image_enumerated:{source}"] = {"model": "image_enumerated", "input": source, "output": "features",
                                               "shape": list(expected.shape),
                                               "expected": expected.reshape(-1).tolist()}

    module = ImageToImage()
    model = convert(module, torch.rand(1, 3, 12, 16),
                    [ct.ImageType(name="image", shape=(1, 3, 12, 16), color_layout=ct.colorlayout.RGB)],
                    [ct.ImageType(name="styled", color_layout=ct.colorlayout.BGR)])
    model.save(os.path.join(OUT, "image_to_image.mlpackage"))
    x = torch.tensor(pixels_chw(os.path.join(OUT, "input-16x12.png"), "RGB"))[None]
    with torch.no_grad():
        y = module(x).numpy()[0]  # BGR planes, as the output declares
    # Core ML's pixel buffer: clamp to 0...255, round to nearest; BGRA bytes.
    planes = np.clip(np.round(y), 0, 255).astype(np.uint8)
    cases["image_to_image"] = {"input": "input-16x12.png", "output": "styled", "width": 16, "height": 12,
                               "bgr": planes.transpose(1, 2, 0).reshape(-1).tolist()}
    save_json("models.json", cases)


def make_old_package():
    """A package whose byte-sized blobs carry garbage padding bits, as older coremltools wrote."""
    module = torch.nn.Sequential(torch.nn.Linear(8, 6), torch.nn.ReLU(), torch.nn.Linear(6, 3)).eval()
    example = torch.rand(1, 8)
    model = ct.convert(torch.jit.trace(module, example), inputs=[ct.TensorType(name="x", shape=(1, 8))],
                       outputs=[ct.TensorType(name="y")], convert_to="mlprogram",
                       minimum_deployment_target=ct.target.iOS16, compute_precision=ct.precision.FLOAT32)
    path = os.path.join(OUT, "old_padding.mlpackage")
    if os.path.exists(path):
        shutil.rmtree(path)
    model.save(path)
    weights = os.path.join(path, "Data", "com.apple.CoreML", "weights", "weight.bin")
    data = bytearray(open(weights, "rb").read())
    count = struct.unpack_from("<I", data, 0)[0]
    offset, patched = 64, 0
    for _ in range(count):
        sentinel, _kind, size, data_offset = struct.unpack_from("<IIQQ", data, offset)
        assert sentinel == 0xDEADBEEF
        struct.pack_into("<Q", data, offset + 24, 13654009360)
        patched += 1
        offset = (data_offset + size + 63) // 64 * 64
    open(weights, "wb").write(bytes(data))
    x = np.linspace(-1, 1, 8, dtype=np.float32)[None]
    with torch.no_grad():
        y = module(torch.tensor(x)).numpy()
    save_json("old_padding.json", {"x": x.reshape(-1).tolist(), "y": y.reshape(-1).tolist(), "patched": patched})


def make_more_models():
    """NeuralNetwork image models (their scale and bias live in the spec's `preprocessing`
    scaler, not in the program) and a float16 grayscale ML program, with PyTorch outputs.

    Tessera's NeuralNetwork support wires the scaler to `ImagePreprocessing.tensor(...)`; until
    then these are fixtures only.
    """
    cases = {}
    scale, bias = 1 / 127.5, [-1.0, -0.9, -0.8]
    for name, layout, mode in (("nn_image_rgb", ct.colorlayout.RGB, "RGB"), ("nn_image_bgr", ct.colorlayout.BGR, "RGB"),
                               ("nn_image_gray", ct.colorlayout.GRAYSCALE, "L")):
        channels = 1 if mode == "L" else 3
        module = Preprocessed(channels).eval()
        b = [bias[0]] if channels == 1 else bias
        traced = torch.jit.trace(module, torch.rand(1, channels, 12, 16))
        # The NeuralNetwork builder takes a grayscale bias as a number.
        model = ct.convert(traced, convert_to="neuralnetwork", minimum_deployment_target=ct.target.iOS14,
                           inputs=[ct.ImageType(name="image", shape=(1, channels, 12, 16), scale=scale,
                                                bias=b[0] if channels == 1 else b, color_layout=layout)])
        spec = model.get_spec()
        output = spec.description.output[0].name
        model.save(os.path.join(OUT, f"{name}.mlmodel"))
        source = "input-gray-16x12.png" if mode == "L" else "input-16x12.png"
        x = pixels_chw(os.path.join(OUT, source), mode)
        if layout == ct.colorlayout.BGR:
            x = x[::-1].copy()
        x = torch.tensor(x)[None] * scale + torch.tensor(b, dtype=torch.float32).view(1, -1, 1, 1)
        with torch.no_grad():
            expected = module(x).numpy()
        cases[name] = {"model": f"{name}.mlmodel", "input": source, "output": output, "shape": list(expected.shape),
                       "expected": expected.reshape(-1).tolist()}
    try:
        module = Preprocessed(1).eval()
        model = convert(module, torch.rand(1, 1, 12, 16),
                        [ct.ImageType(name="image", shape=(1, 1, 12, 16), color_layout=ct.colorlayout.GRAYSCALE_FLOAT16)],
                        [ct.TensorType(name="features")])
        model.save(os.path.join(OUT, "image_gray16.mlpackage"))
        x = torch.tensor(pixels_chw(os.path.join(OUT, "input-gray-16x12.png"), "L"))[None]
        with torch.no_grad():
            expected = module(x).numpy()
        cases["image_gray16"] = {"model": "image_gray16.mlpackage", "input": "input-gray-16x12.png",
                                 "output": "features", "shape": list(expected.shape),
                                 "expected": expected.reshape(-1).tolist()}
    except Exception as error:  # coremltools refuses some combinations; record why
        print("image_gray16 not made:", error)
    save_json("models-more.json", cases)


if __name__ == "__main__":
    import sys
    os.makedirs(OUT, exist_ok=True)
    if sys.argv[1:] == ["--more"]:
        make_more_models()
        sys.exit()
    if sys.argv[1:] == ["--arithmetic"]:
        with open(os.path.join(OUT, "decoded.json")) as f:
            existing = json.load(f)
        make_arithmetic_files(existing)
        save_json("decoded.json", existing)
        sys.exit()
    if sys.argv[1:] == ["--oriented"]:
        make_oriented_cases()
        sys.exit()
    for entry in os.listdir(OUT):
        if entry.endswith(".mlpackage"):
            shutil.rmtree(os.path.join(OUT, entry))
    make_files()
    make_oriented_cases()
    make_resize_cases()
    make_models()
    make_old_package()
    make_more_models()
