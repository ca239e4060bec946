#!/usr/bin/env python3
"""Writes the tiny models the runtime's own tests run (deterministic: same bytes every run).

    python3 ort-bind-runtime/tests/data/make_models.py          # write (or rewrite) them
    python3 ort-bind-runtime/tests/data/make_models.py --check  # fail if one differs

Needs `onnx` (written with onnx 1.23.2) and `numpy`. They are committed (a few KB) so the
runtime's tests need neither Python nor the repository's other fixtures.

| file | what it is |
| --- | --- |
| `add.onnx` | `sum = x + y`, float32 `[n]` (`n` is a `dim_param`) |
| `affine.onnx` | `y = x * 2 + 1`, float32 `[batch, 4]`; `shape = Shape(x)` (int64 `[rank]`: `rank` is on no input, so ONNX Runtime allocates it) |
| `slow.onnx` | `y = tanh(...tanh(x @ W) @ W ...)`, 64 MatMul+Tanh pairs, x float32 `[m, 256]`, W = I/2 + 1e-3 (a 256x256 initializer): the run time grows with `m` (about 0.24 s at `m = 2048` with one intra-op thread here). A row of `x` whose elements are all `c` stays constant: each layer maps `v` to `tanh(v * (0.5 + 256e-3))`, which the tests compute to check results, so runs can be cancelled mid-way |
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17
IR = 8


def finish(graph, doc):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="ort-bind-runtime tests/data/make_models.py",
                          producer_version="1", doc_string=doc)
    m.ir_version = IR
    onnx.checker.check_model(m, full_check=True)
    return m


def add():
    vi = lambda n: helper.make_tensor_value_info(n, T.FLOAT, ["n"])  # noqa: E731
    g = helper.make_graph([helper.make_node("Add", ["x", "y"], ["sum"])], "add",
                          [vi("x"), vi("y")], [vi("sum")])
    return finish(g, "sum = x + y")


def affine():
    two = numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two")
    one = numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one")
    nodes = [
        helper.make_node("Mul", ["x", "two"], ["scaled"]),
        helper.make_node("Add", ["scaled", "one"], ["y"]),
        helper.make_node("Shape", ["x"], ["shape"]),
    ]
    g = helper.make_graph(
        nodes, "affine",
        [helper.make_tensor_value_info("x", T.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", T.FLOAT, ["batch", 4]),
         helper.make_tensor_value_info("shape", T.INT64, ["rank"])],
        [two, one])
    return finish(g, "y = 2x + 1; shape = Shape(x)")


def slow(layers=64, width=256):
    w = (np.eye(width, dtype=np.float32) * 0.5 + np.float32(1e-3)).astype(np.float32)
    nodes, prev = [], "x"
    for i in range(layers):
        nodes.append(helper.make_node("MatMul", [prev, "w"], [f"m{i}"]))
        out = "y" if i == layers - 1 else f"t{i}"
        nodes.append(helper.make_node("Tanh", [f"m{i}"], [out]))
        prev = out
    g = helper.make_graph(
        nodes, "slow",
        [helper.make_tensor_value_info("x", T.FLOAT, ["m", width])],
        [helper.make_tensor_value_info("y", T.FLOAT, ["m", width])],
        [numpy_helper.from_array(w, "w")])
    return finish(g, "64 x (MatMul by W, Tanh): slow on purpose")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    bad = 0
    for name, model in {"add": add(), "affine": affine(), "slow": slow()}.items():
        data = model.SerializeToString(deterministic=True)
        path = os.path.join(HERE, f"{name}.onnx")
        if args.check:
            with open(path, "rb") as f:
                if f.read() != data:
                    print(f"{path} differs from what this script writes", file=sys.stderr)
                    bad += 1
        else:
            with open(path, "wb") as f:
                f.write(data)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
