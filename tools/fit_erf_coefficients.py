#!/usr/bin/env python3
"""Fits the coefficient table of Tessera's float32 erf (Sources/CTesseraSIMD/CTesseraSIMD.c,
`tessera_erf_coefficients`) and reports its error.

|x| clamped to 4 is cut into eight intervals of width 1/2; on interval i, erf(i/2 + t) for t in
[0, 1/2) is a degree-7 polynomial in t. Each is a near-minimax fit: least squares on Chebyshev
nodes, reweighted by the residual (Lawson's iteration) until the error equioscillates. Interval 0
fits erf(t)/t with degree 6 and multiplies by t, so the polynomial has no constant term and tiny
x keeps its relative precision. The float32 evaluation (index, t, Horner by FMA, copysign) is
emulated in double to give the error against SciPy's erf.

Needs NumPy and SciPy (e.g. Benchmarks/peers/.venv). Prints the C rows to paste.
"""

import numpy as np
from scipy.special import erf

DEGREE = 7
INTERVALS = 8
WIDTH = 0.5
F32 = np.float32


def fit_interval(i):
    n = 2000
    t = (np.cos(np.pi * (np.arange(n) + 0.5) / n) + 1) / 2 * WIDTH
    if i == 0:
        t = t + 1e-9
        y = erf(t) / t
        powers = range(0, DEGREE)
    else:
        y = erf(i * WIDTH + t)
        powers = range(0, DEGREE + 1)
    v = np.stack([t**k for k in powers], 1)
    w = np.ones(n)
    for _ in range(200):
        root = np.sqrt(w)
        c, *_ = np.linalg.lstsq(v * root[:, None], y * root, rcond=None)
        w = w * np.abs(v @ c - y)
        w /= w.sum()
    return np.concatenate([[0.0], c]) if i == 0 else c


def evaluate(table, x):
    """The C kernel's operations in float32 (each FMA rounded once)."""
    x = np.asarray(x, dtype=F32)
    z = np.minimum(F32(4), np.abs(x))
    scaled = np.minimum(F32(INTERVALS - 1), np.nan_to_num(z * F32(2)))
    index = scaled.astype(np.int32)
    t = (index.astype(np.float64) * -0.5 + z.astype(np.float64)).astype(F32)
    p = table[index, DEGREE]
    for k in range(DEGREE - 1, -1, -1):
        p = (p.astype(np.float64) * t.astype(np.float64) + table[index, k].astype(np.float64)).astype(F32)
    return np.copysign(p, x)


def main():
    table = np.array([fit_interval(i) for i in range(INTERVALS)]).astype(F32)
    points = np.linspace(-10, 10, 4_000_001, dtype=F32)
    got = evaluate(table, points).astype(np.float64)
    error = np.abs(got - erf(points.astype(np.float64)))
    print(f"// max abs error on [-10, 10]: {error.max():.3g} at {points[np.argmax(error)]}")
    for k in range(DEGREE + 1):
        print("    {" + ", ".join(f"{table[i][k]:.9e}f" for i in range(INTERVALS)) + "},")


if __name__ == "__main__":
    main()
