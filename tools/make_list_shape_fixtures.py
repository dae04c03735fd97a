#!/usr/bin/env python3
"""Writes the fixtures of lists whose element shape is known only at run time (a size the
program computes, or a symbol) to Tests/Fixtures/list-shapes/ (tests:
TesseraModelsTests/ListElementShapeTests.swift).

Same format and builder as tools/make_mil_op_fixtures.py (whose `save_case` this reuses);
expected values from NumPy.

    Benchmarks/peers/.venv/bin/python tools/make_list_shape_fixtures.py
"""
import json
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_mil_op_fixtures as base  # noqa: E402
import coremltools as ct  # noqa: E402
from coremltools.converters.mil import Builder as mb  # noqa: E402

base.OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "list-shapes")
rng = np.random.default_rng(2121)


def cases():
    x = rng.uniform(-1, 1, size=(2, 3)).astype(np.float32)

    def computed(x):
        # elem_shape from the input's shape: (x.shape[0], 3).
        rows = mb.gather(x=mb.shape(x=x), indices=0)
        ls = mb.make_list(init_length=3, elem_shape=[rows, mb.const(val=np.int32(3))], dtype="fp32")
        ls = mb.list_write(ls=ls, index=1, value=x)
        return mb.list_gather(ls=ls, indices=[1, 0, 2]), mb.list_length(ls=ls)

    base.save_case("list_computed_element_shape", {"x": x}, computed,
                   [np.stack([x, np.zeros_like(x), np.zeros_like(x)]), np.array(3)], target=ct.target.iOS15)

    def symbolic(x):
        # A symbolic size: the first write fixes the element shape; the unwritten row reads zeros.
        ls = mb.make_list(init_length=2, elem_shape=["is0", 3], dtype="fp32")
        ls = mb.list_write(ls=ls, index=0, value=x)
        ls = mb.list_scatter(ls=ls, indices=[3], value=mb.expand_dims(x=mb.mul(x=x, y=np.float32(2)), axes=[0]))
        return mb.list_read(ls=ls, index=3), mb.list_gather(ls=ls, indices=[0, 1])

    base.save_case("list_symbolic_element_shape", {"x": x}, symbolic,
                   [x * 2, np.stack([x, np.zeros_like(x)])], target=ct.target.iOS15)

    v = rng.uniform(-1, 1, size=(4,)).astype(np.float32)

    def symbolic_in_loop(x):
        def cond(i, ls):
            return mb.less(x=i, y=np.int32(3))

        def body(i, ls):
            return mb.add(x=i, y=np.int32(1)), mb.list_write(ls=ls, index=i, value=mb.mul(
                x=x, y=mb.cast(x=i, dtype="fp32")))

        ls = mb.make_list(init_length=0, elem_shape=["is1"], dtype="fp32")
        _, final = mb.while_loop(_cond=cond, _body=body, loop_vars=(np.int32(0), ls))
        return mb.list_gather(ls=final, indices=[2, 1])

    base.save_case("list_symbolic_in_while_loop", {"x": v}, symbolic_in_loop, np.stack([v * 2, v]),
                   target=ct.target.iOS15)


def main():
    shutil.rmtree(base.OUT, ignore_errors=True)
    os.makedirs(base.OUT)
    cases()
    with open(os.path.join(base.OUT, "cases.json"), "w") as f:
        json.dump(base.CASES, f, indent=1)
    print(f"{len(base.CASES)} cases")


if __name__ == "__main__":
    main()
