#!/usr/bin/env python3
"""Writes the benchmark's workload models into this folder (deterministic: same bytes every run).

    python3 ort-bind-bench/models/make_models.py            # write (or rewrite) the models
    python3 ort-bind-bench/models/make_models.py --check    # fail if a written model differs
                                                            # from the committed bytes
    python3 ort-bind-bench/models/make_models.py --metadata DIR
        # also write the >= 1 GiB metadata models into DIR (never commit them):
        # DIR/weights_1gib.onnx (weights as initializers) and
        # DIR/weights_1gib_external.onnx + .data (the same weights as external data)

Needs `onnx` (written with onnx 1.23.2) and `numpy`. The models are committed (they are a
few hundred bytes, plus the 15 KB `light_squeezenet.onnx`) so that the bench crate's
`build.rs` can generate typed bindings for them on any machine, before any Python runs;
`scripts/bench.sh` reruns this script with `--check` so they cannot drift from it.

| file | what it is |
| --- | --- |
| `tiny.onnx` | `z = x + y`, float32 `[16]` (overhead-bound) |
| `big.onnx` | `z = x + y`, float32 `[4096, 4096]` (64 MiB per tensor; memory-bound) |
| `dynamic.onnx` | `z = x + y`, float32 `[batch, 1024]` (`batch` is a `dim_param`) |
| `light_squeezenet.onnx` | copied from the onnx wheel: `onnx/backend/test/data/light/` (SqueezeNet 1.0 with its weights made by `ConstantOfShape`; input `data_0` `[1,3,224,224]`, output `softmaxout_1` `[1,1000,1,1]`) |
| `light_squeezenet_output_0.pb` | its expected output (TensorProto) for the input `arange(n)/n`, as ONNX's backend test runner makes it |
"""

import argparse
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17
IR = 8


def add_model(name, shape, doc):
    vi = lambda n: helper.make_tensor_value_info(n, T.FLOAT, shape)  # noqa: E731
    graph = helper.make_graph([helper.make_node("Add", ["x", "y"], ["z"])], name,
                              [vi("x"), vi("y")], [vi("z")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="ort-bind-bench make_models.py", producer_version="1",
                          doc_string=doc)
    m.ir_version = IR
    onnx.checker.check_model(m, full_check=True)
    return m


def models():
    # Doc strings end up in rustdoc: no square brackets (rustdoc reads them as links).
    return {
        "tiny": add_model("tiny", [16], "z = x + y over float32 tensors of shape (16,): overhead-bound"),
        "big": add_model("big", [4096, 4096],
                         "z = x + y over float32 tensors of shape (4096, 4096): memory-bound"),
        "dynamic": add_model("dynamic", ["batch", 1024],
                             "z = x + y over float32 tensors of shape (batch, 1024): dynamic batch"),
    }


def light_dir():
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def write_all(check):
    """Writes every model; with `check`, returns the names whose bytes differ from the files."""
    wanted = {f"{n}.onnx": m.SerializeToString() for n, m in models().items()}
    for f in ("light_squeezenet.onnx", "light_squeezenet_output_0.pb"):
        with open(os.path.join(light_dir(), f), "rb") as fh:
            wanted[f] = fh.read()
    differ = []
    for f, data in wanted.items():
        path = os.path.join(HERE, f)
        old = open(path, "rb").read() if os.path.exists(path) else None
        if old != data:
            differ.append(f)
            if not check:
                with open(path, "wb") as fh:
                    fh.write(data)
    return differ


def metadata_models(out_dir, gib=1.0):
    """A model of `gib` GiB of float32 initializers (16 weights of equal size, each added in
    turn to the input), saved once inline and once with external data."""
    os.makedirs(out_dir, exist_ok=True)
    inline = os.path.join(out_dir, "weights_1gib.onnx")
    external = os.path.join(out_dir, "weights_1gib_external.onnx")
    data_name = "weights_1gib_external.onnx.data"
    want = int(gib * (1 << 30))
    count = 16
    side = int((want // count // 4) ** 0.5)
    while count * side * side * 4 < want:
        side += 1
    done = (os.path.exists(inline) and os.path.getsize(inline) >= want
            and os.path.exists(external) and os.path.exists(os.path.join(out_dir, data_name))
            and os.path.getsize(os.path.join(out_dir, data_name)) >= want)
    if done:
        print(f"metadata models already in {out_dir}")
        return
    vi = lambda n: helper.make_tensor_value_info(n, T.FLOAT, ["batch", side, side])  # noqa: E731
    nodes, inits, prev = [], [], "x"
    for i in range(count):
        w = np.full((side, side), float(i + 1), dtype=np.float32)
        inits.append(numpy_helper.from_array(w, name=f"w{i}"))
        out = "y" if i == count - 1 else f"h{i}"
        nodes.append(helper.make_node("Add", [prev, f"w{i}"], [out]))
        prev = out
    graph = helper.make_graph(nodes, "weights_1gib", [vi("x")], [vi("y")], initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="ort-bind-bench make_models.py")
    m.ir_version = IR
    onnx.save_model(m, inline)
    onnx.save_model(m, external, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=data_name, size_threshold=0)
    print(f"wrote {inline} ({os.path.getsize(inline) / (1 << 30):.2f} GiB) and {external} + {data_name}")


def deep_model(out_dir, blocks=250):
    """`deep_5000.onnx`: 250 blocks of 20 nodes (5,000) as transformer exports write them:
    q/k/v reshaped to heads through Shape -> Gather -> Unsqueeze -> Concat -> Reshape,
    MatMul, Softmax, Transpose, a residual Add and LayerNormalization, over
    `h [batch, seq, 32]`; the output is declared `[unk__0, unk__1, 32]`, so every axis
    comes from shape inference (what a build pays for it)."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "deep_5000.onnx")
    rng = np.random.default_rng(7)
    inits = [
        numpy_helper.from_array((rng.standard_normal((32, 32)) * 0.1).astype(np.float32), "w"),
        numpy_helper.from_array(np.array([0], np.int64), "i0"),
        numpy_helper.from_array(np.array([1], np.int64), "i1"),
        numpy_helper.from_array(np.array([4, 8], np.int64), "heads"),
        numpy_helper.from_array(np.array([0, 0, 32], np.int64), "back"),
        numpy_helper.from_array(np.ones(32, np.float32), "gamma"),
    ]
    nodes, prev = [], "h"
    for b in range(blocks):
        p = f"b{b}_"
        out = "out" if b == blocks - 1 else f"{p}out"
        nodes += [
            helper.make_node("Shape", [prev], [p + "s"]),
            helper.make_node("Gather", [p + "s", "i0"], [p + "n"], axis=0),
            helper.make_node("Gather", [p + "s", "i1"], [p + "t"], axis=0),
            helper.make_node("Concat", [p + "n", p + "t", "heads"], [p + "shape"], axis=0),
            helper.make_node("MatMul", [prev, "w"], [p + "q"]),
            helper.make_node("MatMul", [prev, "w"], [p + "k"]),
            helper.make_node("MatMul", [prev, "w"], [p + "v"]),
            helper.make_node("Reshape", [p + "q", p + "shape"], [p + "q4"]),
            helper.make_node("Reshape", [p + "k", p + "shape"], [p + "k4"]),
            helper.make_node("Reshape", [p + "v", p + "shape"], [p + "v4"]),
            helper.make_node("Transpose", [p + "q4"], [p + "qt"], perm=[0, 2, 1, 3]),
            helper.make_node("Transpose", [p + "k4"], [p + "kt"], perm=[0, 2, 3, 1]),
            helper.make_node("Transpose", [p + "v4"], [p + "vt"], perm=[0, 2, 1, 3]),
            helper.make_node("MatMul", [p + "qt", p + "kt"], [p + "scores"]),
            helper.make_node("Softmax", [p + "scores"], [p + "probs"], axis=-1),
            helper.make_node("MatMul", [p + "probs", p + "vt"], [p + "ctx"]),
            helper.make_node("Transpose", [p + "ctx"], [p + "ctxt"], perm=[0, 2, 1, 3]),
            helper.make_node("Reshape", [p + "ctxt", "back"], [p + "merged"]),
            helper.make_node("Add", [p + "merged", prev], [p + "res"]),
            helper.make_node("LayerNormalization", [p + "res", "gamma"], [out], axis=-1),
        ]
        prev = out
    graph = helper.make_graph(
        nodes, "deep_5000",
        [helper.make_tensor_value_info("h", T.FLOAT, ["batch", "seq", 32])],
        [helper.make_tensor_value_info("out", T.FLOAT, ["unk__0", "unk__1", 32])],
        initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="ort-bind-bench make_models.py")
    m.ir_version = IR
    onnx.save_model(m, path)
    print(f"wrote {path} ({len(nodes)} nodes)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if a committed model differs from what this writes")
    ap.add_argument("--metadata", metavar="DIR", help="also write the 1 GiB metadata models into DIR")
    args = ap.parse_args()
    differ = write_all(args.check)
    if args.check and differ:
        print(f"committed models differ from make_models.py output: {differ}; "
              f"rerun python3 {os.path.relpath(__file__)}", file=sys.stderr)
        sys.exit(1)
    if not args.check:
        print(f"models written to {HERE}" + (f" (changed: {differ})" if differ else " (unchanged)"))
    if args.metadata:
        metadata_models(args.metadata)
        deep_model(args.metadata)


if __name__ == "__main__":
    main()
