#!/usr/bin/env python3
"""Trains the image classifier `tessera demo` runs and writes it, with sample images, as resources.

A small CNN learns to tell four shapes (circle, square, triangle, cross) drawn by PIL in random
colors, sizes and positions on noisy backgrounds. coremltools converts it to an ML Program with an
**image input** (`image`, RGB 32 × 32, scale 1/255 and a bias inside the program) and a
classifier output (`classLabel`, `classLabel_probs`). The script then draws eight sample pictures
the network has never seen, at sizes other than 32 × 32 so the demo shows the crop-and-scale step,
and saves them as PNG and JPEG files (one JPEG stored sideways with an EXIF orientation tag).

Regenerate (from the repository root; torch, torchvision and coremltools, no download at run time):

    Benchmarks/peers/.venv/bin/python tools/make_demo_image_model.py

Output, in Sources/tessera/Resources/: `ShapesClassifier.mlpackage`, `shapes/*.png|jpg` and
`shapes/labels.json` (each file's true label and PyTorch's probabilities for the 32 × 32 RGB image
PIL decodes and resizes bilinearly, for reference).
"""

import json
import os
import shutil

import coremltools as ct
import numpy as np
import torch
from PIL import Image, ImageDraw, ImageFilter

ROOT = os.path.join(os.path.dirname(__file__), "..", "Sources", "tessera", "Resources")
LABELS = ["circle", "square", "triangle", "cross"]
SIZE = 32


def draw(label, rng, size=SIZE):
    background = tuple(int(v) for v in rng.integers(0, 120, 3))
    image = Image.new("RGB", (size, size), background)
    noise = rng.integers(0, 40, (size, size, 3), dtype=np.uint8)
    image = Image.fromarray(np.clip(np.asarray(image, np.int16) + noise, 0, 255).astype(np.uint8))
    pen = ImageDraw.Draw(image)
    color = tuple(int(v) for v in rng.integers(140, 256, 3))
    r = rng.uniform(0.22, 0.38) * size
    cx, cy = rng.uniform(r + 1, size - r - 1, 2)
    if label == "circle":
        pen.ellipse([cx - r, cy - r, cx + r, cy + r], fill=color)
    elif label == "square":
        pen.rectangle([cx - r, cy - r, cx + r, cy + r], fill=color)
    elif label == "triangle":
        pen.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=color)
    else:
        w = r / 3
        pen.rectangle([cx - r, cy - w, cx + r, cy + w], fill=color)
        pen.rectangle([cx - w, cy - r, cx + w, cy + r], fill=color)
    return image.filter(ImageFilter.GaussianBlur(0.4 * size / SIZE))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 12, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(12, 24, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(24, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1))
        self.head = torch.nn.Linear(32, len(LABELS))

    def forward(self, x):
        return torch.softmax(self.head(self.features(x).flatten(1)), dim=1)


def tensor(images):
    return torch.tensor(np.stack([np.asarray(i, np.float32) for i in images]).transpose(0, 3, 1, 2)) / 255 - 0.5


def main():
    torch.manual_seed(7)
    rng = np.random.default_rng(7)
    labels = rng.integers(0, len(LABELS), 4000)
    images = [draw(LABELS[k], rng) for k in labels]
    x, y = tensor(images), torch.tensor(labels)
    net = Net()
    optimizer = torch.optim.Adam(net.parameters(), lr=3e-3)
    for epoch in range(12):
        order = torch.randperm(len(x))
        for start in range(0, len(x), 100):
            batch = order[start:start + 100]
            loss = torch.nn.functional.nll_loss(torch.log(net(x[batch]) + 1e-9), y[batch])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    net.eval()
    test_labels = rng.integers(0, len(LABELS), 400)
    with torch.no_grad():
        predicted = net(tensor([draw(LABELS[k], rng) for k in test_labels])).argmax(1).numpy()
    print(f"held-out accuracy {np.mean(predicted == test_labels):.3f}")

    traced = torch.jit.trace(net, torch.rand(1, 3, SIZE, SIZE))
    model = ct.convert(
        traced, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
        inputs=[ct.ImageType(name="image", shape=(1, 3, SIZE, SIZE), scale=1 / 255, bias=[-0.5] * 3,
                             color_layout=ct.colorlayout.RGB)],
        classifier_config=ct.ClassifierConfig(LABELS), compute_precision=ct.precision.FLOAT32)
    model.short_description = "Tells circles, squares, triangles and crosses apart in 32x32 RGB pictures"
    model.author = "Tessera (tools/make_demo_image_model.py)"
    model.license = "Apache-2.0"
    package = os.path.join(ROOT, "ShapesClassifier.mlpackage")
    if os.path.exists(package):
        shutil.rmtree(package)
    model.save(package)

    samples = os.path.join(ROOT, "shapes")
    shutil.rmtree(samples, ignore_errors=True)
    os.makedirs(samples)
    record = {}
    sample_rng = np.random.default_rng(2026)
    for index, (label, size, ext) in enumerate([
            ("circle", 96, "png"), ("square", 64, "jpg"), ("triangle", 80, "png"), ("cross", 72, "jpg"),
            ("triangle", 64, "jpg"), ("circle", 48, "jpg"), ("cross", 100, "png"), ("square", 90, "png")]):
        image = draw(label, sample_rng, size)
        name = f"{index + 1}-{label}.{ext}"
        path = os.path.join(samples, name)
        if index == 5:
            # Stored sideways: the EXIF tag (6) says to rotate it 90° clockwise to view.
            exif = Image.Exif()
            exif[0x0112] = 6
            image.transpose(Image.Transpose.ROTATE_90).save(path, quality=92, exif=exif)
        elif ext == "jpg":
            image.save(path, quality=92)
        else:
            image.save(path)
        with torch.no_grad():
            p = net(tensor([image.resize((SIZE, SIZE), Image.Resampling.BILINEAR)]))[0].numpy()
        record[name] = {"label": label, "probabilities": dict(zip(LABELS, p.round(4).tolist()))}
    with open(os.path.join(samples, "labels.json"), "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
