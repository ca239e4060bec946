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
| `strings.onnx` | string tensors (opset 20): `echo = Identity(a)`, `joined = StringConcat(a, b)`, both string `[n]`; `lengths = Shape(a)` |
| `sequences.onnx` | sequences (opset 17): `pair = SequenceConstruct(x, y)` (float32 `[n]`, `[m]`), `pieces = SplitToSequence(x)` (n tensors `[1]`), `second = SequenceAt(pair, 1)`; sequence input `s` (seq(float32)): `count = SequenceLength(s)`, `first = SequenceAt(s, 0)`, `echo = Identity(s)`; `words = SplitToSequence(text)` over a string `[k]` input |
| `maps.onnx` | `ai.onnx.ml` (opset 17 + ml 3): `by_id = ZipMap(probs, classlabels_int64s = [10, 20, 30])` (seq(map(int64, float32))), `by_name = ZipMap(probs, classlabels_strings = ["cat", "dog", "eel"])`; map input `m` (map(string, float32)): `dense = DictVectorizer(m, vocabulary ["a", "b", "c"])`, and `m` is also returned as output `m_echo` |
| `optionals.onnx` | optionals (opset 18): `some = Optional(x)` (optional(tensor float32 `[n]`)), `none = Optional()` of that type (no value), `some_seq = Optional(SequenceConstruct(x, x))`; optional input `o` (optional(tensor float32)): `has = OptionalHasElement(o)` |
| `empties.onnx` | empty sequences (opset 17): sequence inputs `s` (seq(float32)) and `t` (seq(string)), float32 input `x` `[n]`; `s_count = SequenceLength(s)`, `s_echo = Identity(s)`, `grown = SequenceInsert(s, x)`, `t_count = SequenceLength(t)`, `t_echo = Identity(t)`; `made = SequenceEmpty(dtype = int64)` (an empty sequence ONNX Runtime makes itself) |
| `slow.onnx` | `y = tanh(...tanh(x @ W) @ W ...)`, 64 MatMul+Tanh pairs, x float32 `[m, 256]`, W = I/2 + 1e-3 (a 256x256 initializer): the run time grows with `m` (about 0.24 s at `m = 2048` with one intra-op thread here). A row of `x` whose elements are all `c` stays constant: each layer maps `v` to `tanh(v * (0.5 + 256e-3))`, which the tests compute to check results, so runs can be cancelled mid-way |
| `elementwise.onnx` | `y = tanh(0.9 * ... tanh(0.9 * x))`, 12 Mul+Tanh pairs over float32 `[m, 131072]` (512 KiB rows, no weights): a model that does not gain from batching on a CPU (nothing is shared between rows, and a batch of 8 rows outgrows the L2 cache): the serving benchmark's "loses" fixture, beside `slow.onnx` that gains |
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


def elementwise(layers=12, width=131072):
    nodes, prev = [], "x"
    for i in range(layers):
        nodes.append(helper.make_node("Mul", [prev, "c"], [f"m{i}"]))
        out = "y" if i == layers - 1 else f"t{i}"
        nodes.append(helper.make_node("Tanh", [f"m{i}"], [out]))
        prev = out
    g = helper.make_graph(
        nodes, "elementwise",
        [helper.make_tensor_value_info("x", T.FLOAT, ["m", width])],
        [helper.make_tensor_value_info("y", T.FLOAT, ["m", width])],
        [numpy_helper.from_array(np.array(0.9, dtype=np.float32), "c")])
    return finish(g, "12 x (Mul by 0.9, Tanh) over 512 KiB rows: no weights to share, so batching "
                     "does not help and a bigger batch falls out of the caches")


def opset_model(graph, doc, opsets):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                          producer_name="ort-bind-runtime tests/data/make_models.py",
                          producer_version="1", doc_string=doc)
    m.ir_version = IR if all(v <= 18 for d, v in opsets if d == "") else 9
    onnx.checker.check_model(m, full_check=True)
    return m


def strings():
    s = lambda n, dims: helper.make_tensor_value_info(n, T.STRING, dims)  # noqa: E731
    nodes = [
        helper.make_node("Identity", ["a"], ["echo"]),
        helper.make_node("StringConcat", ["a", "b"], ["joined"]),
        helper.make_node("Shape", ["a"], ["lengths"]),
    ]
    g = helper.make_graph(nodes, "strings", [s("a", ["n"]), s("b", ["n"])],
                          [s("echo", ["n"]), s("joined", ["n"]),
                           helper.make_tensor_value_info("lengths", T.INT64, [1])])
    return opset_model(g, "string Identity and StringConcat", [("", 20)])


def sequences():
    f = lambda n, dims: helper.make_tensor_value_info(n, T.FLOAT, dims)  # noqa: E731
    seq_f = lambda n: helper.make_value_info(n, helper.make_sequence_type_proto(  # noqa: E731
        helper.make_tensor_type_proto(T.FLOAT, [None])))
    one = numpy_helper.from_array(np.array(1, dtype=np.int64), "one")
    zero = numpy_helper.from_array(np.array(0, dtype=np.int64), "zero")
    nodes = [
        helper.make_node("SequenceConstruct", ["x", "y"], ["pair"]),
        helper.make_node("SplitToSequence", ["x"], ["pieces"]),
        helper.make_node("SequenceAt", ["pair", "one"], ["second"]),
        helper.make_node("SequenceLength", ["s"], ["count"]),
        helper.make_node("SequenceAt", ["s", "zero"], ["first"]),
        helper.make_node("Identity", ["s"], ["echo"]),
        helper.make_node("SplitToSequence", ["text"], ["words"]),
    ]
    g = helper.make_graph(
        nodes, "sequences",
        [f("x", ["n"]), f("y", ["m"]), seq_f("s"),
         helper.make_tensor_value_info("text", T.STRING, ["k"])],
        [seq_f("pair"), seq_f("pieces"), f("second", ["m"]),
         helper.make_tensor_value_info("count", T.INT64, []), f("first", [None]), seq_f("echo"),
         helper.make_value_info("words", helper.make_sequence_type_proto(
             helper.make_tensor_type_proto(T.STRING, [None])))],
        [one, zero])
    return opset_model(g, "SequenceConstruct, SplitToSequence, SequenceAt, SequenceLength",
                       [("", 17)])


def empties():
    seq = lambda n, elem: helper.make_value_info(n, helper.make_sequence_type_proto(  # noqa: E731
        helper.make_tensor_type_proto(elem, [None])))
    count = lambda n: helper.make_tensor_value_info(n, T.INT64, [])  # noqa: E731
    nodes = [
        helper.make_node("SequenceLength", ["s"], ["s_count"]),
        helper.make_node("Identity", ["s"], ["s_echo"]),
        helper.make_node("SequenceInsert", ["s", "x"], ["grown"]),
        helper.make_node("SequenceLength", ["t"], ["t_count"]),
        helper.make_node("Identity", ["t"], ["t_echo"]),
        helper.make_node("SequenceEmpty", [], ["made"], dtype=T.INT64),
    ]
    g = helper.make_graph(
        nodes, "empties",
        [seq("s", T.FLOAT), seq("t", T.STRING), helper.make_tensor_value_info("x", T.FLOAT, ["n"])],
        [count("s_count"), seq("s_echo", T.FLOAT), seq("grown", T.FLOAT), count("t_count"),
         seq("t_echo", T.STRING), helper.make_value_info("made", helper.make_sequence_type_proto(
             helper.make_tensor_type_proto(T.INT64, None)))])
    return opset_model(g, "SequenceLength, Identity and SequenceInsert over sequence inputs "
                       "that may be empty; SequenceEmpty", [("", 17)])


def maps():
    probs = helper.make_tensor_value_info("probs", T.FLOAT, ["N", 3])
    m_type = helper.make_map_type_proto(T.STRING, helper.make_tensor_type_proto(T.FLOAT, []))
    seq_map = lambda n, k: helper.make_value_info(n, helper.make_sequence_type_proto(  # noqa: E731
        helper.make_map_type_proto(k, helper.make_tensor_type_proto(T.FLOAT, []))))
    nodes = [
        helper.make_node("ZipMap", ["probs"], ["by_id"], domain="ai.onnx.ml",
                         classlabels_int64s=[10, 20, 30]),
        helper.make_node("ZipMap", ["probs"], ["by_name"], domain="ai.onnx.ml",
                         classlabels_strings=["cat", "dog", "eel"]),
        helper.make_node("DictVectorizer", ["m"], ["dense"], domain="ai.onnx.ml",
                         string_vocabulary=["a", "b", "c"]),
    ]
    # `m` is returned as an output too: the graph input itself (no ONNX op maps maps to maps).
    g = helper.make_graph(
        nodes, "maps", [probs, helper.make_value_info("m", m_type)],
        [seq_map("by_id", T.INT64), seq_map("by_name", T.STRING),
         helper.make_tensor_value_info("dense", T.FLOAT, [1, 3]),
         helper.make_value_info("m", m_type)])
    return opset_model(g, "ZipMap to seq(map), DictVectorizer over a map input, a map output",
                       [("", 17), ("ai.onnx.ml", 3)])


def optionals():
    f = lambda n, dims: helper.make_tensor_value_info(n, T.FLOAT, dims)  # noqa: E731
    opt_t = helper.make_optional_type_proto(helper.make_tensor_type_proto(T.FLOAT, ["n"]))
    opt_any = helper.make_optional_type_proto(helper.make_tensor_type_proto(T.FLOAT, None))
    opt_seq = helper.make_optional_type_proto(
        helper.make_sequence_type_proto(helper.make_tensor_type_proto(T.FLOAT, None)))
    nodes = [
        helper.make_node("Optional", ["x"], ["some"]),
        helper.make_node("Optional", [], ["none"], type=helper.make_tensor_type_proto(T.FLOAT, None)),
        helper.make_node("SequenceConstruct", ["x", "x"], ["xx"]),
        helper.make_node("Optional", ["xx"], ["some_seq"]),
        helper.make_node("OptionalHasElement", ["o"], ["has"]),
    ]
    g = helper.make_graph(
        nodes, "optionals", [f("x", ["n"]), helper.make_value_info("o", opt_any)],
        [helper.make_value_info("some", opt_t), helper.make_value_info("none", opt_any),
         helper.make_value_info("some_seq", opt_seq),
         helper.make_tensor_value_info("has", T.BOOL, [])])
    return opset_model(g, "Optional, OptionalHasElement", [("", 18)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    bad = 0
    for name, model in {"add": add(), "affine": affine(), "slow": slow(), "elementwise": elementwise(), "strings": strings(),
                        "sequences": sequences(), "empties": empties(), "maps": maps(), "optionals": optionals()}.items():
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
