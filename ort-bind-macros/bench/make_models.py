#!/usr/bin/env python3
"""Writes the models the expansion-time measurement uses (bench/measure.sh), outside git.

    python3 ort-bind-macros/bench/make_models.py [OUT_DIR]   # default /tmp/ort-bind-bench

- wide.onnx: 1,000 float32 inputs `in_<i>` of shape [batch, 16] and 1,000 outputs
  `out_<i>` = Relu(in_<i>) (about 150 KB);
- big.onnx: y = x + w[0:4] with a float32 initializer `w` of 2^28 elements stored in the
  file (1 GiB + a few bytes): the signature is tiny, the payload is what a reader must
  not touch.

Needs the `onnx` package (checked with onnx 1.23.2). The payload is written as raw
bytes in one protobuf field without materialising it in numpy.
"""

import os
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/ort-bind-bench"


def wide(n=1000):
    inputs = [helper.make_tensor_value_info(f"in_{i}", T.FLOAT, ["batch", 16]) for i in range(n)]
    outputs = [helper.make_tensor_value_info(f"out_{i}", T.FLOAT, ["batch", 16]) for i in range(n)]
    nodes = [helper.make_node("Relu", [f"in_{i}"], [f"out_{i}"]) for i in range(n)]
    graph = helper.make_graph(nodes, "wide", inputs, outputs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def big(elements=1 << 28):
    w = onnx.TensorProto()
    w.name = "w"
    w.data_type = T.FLOAT
    w.dims.append(elements)
    # 1 GiB of zero-ish bytes: deterministic, fast to make.
    w.raw_data = bytes(4 * elements)
    starts = helper.make_tensor("starts", T.INT64, [1], [0])
    ends = helper.make_tensor("ends", T.INT64, [1], [4])
    nodes = [
        helper.make_node("Slice", ["w", "starts", "ends"], ["w4"]),
        helper.make_node("Add", ["x", "w4"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "big",
        [helper.make_tensor_value_info("x", T.FLOAT, [4])],
        [helper.make_tensor_value_info("y", T.FLOAT, [4])],
        [w, starts, ends],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def main():
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "wide.onnx")
    onnx.save_model(wide(), path)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")
    path = os.path.join(OUT, "big.onnx")
    with open(path, "wb") as f:
        f.write(big().SerializeToString())
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
