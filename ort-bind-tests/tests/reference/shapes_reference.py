#!/usr/bin/env python3
"""Reference outputs for the shape-inference fixtures in tests/fixtures/shapes/.

    /tmp/venv/bin/pip install onnx==1.23.2 onnxruntime==1.31.1 numpy
    /tmp/venv/bin/python tests/reference/shapes_reference.py      # from ort-bind-tests/

(re)writes the models with tests/fixtures/shapes/make_shape_fixtures.py, runs each with
Python onnxruntime 1.31.1 (CPUExecutionProvider, one intra-op thread) on two input sets of
different sizes (`INPUT_SETS` there, inputs from np.random.default_rng(1000 + set index)),
and writes tests/reference/shapes.txt: one record per line, fields separated by one space:

    case <model file stem> <set index>
    input <name> <dtype> <rank> <dim0> ... <dim(rank-1)> <v0> <v1> ...
    output <name> <dtype> <rank> <dim0> ... <dim(rank-1)> <v0> <v1> ...

dtype is float32, int64 or bool; values are row-major, all of them: float32 as Python's
repr(float(v)), int64 as integers, bool as 0/1. A rank-0 tensor has no dims and one value.
`input` lines follow graph-input order and `output` lines graph-output order; the shape on
an `output` line is the shape onnxruntime actually returned (for wrong_rank.onnx it is not
the declared one).
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "shapes"))

import make_shape_fixtures as fx  # noqa: E402

DTYPES = {np.dtype(np.float32): "float32", np.dtype(np.int64): "int64",
          np.dtype(np.bool_): "bool"}


def values(a):
    flat = a.reshape(-1)
    if a.dtype == np.float32:
        return [repr(float(v)) for v in flat]
    if a.dtype == np.int64:
        return [str(int(v)) for v in flat]
    if a.dtype == np.bool_:
        return ["1" if v else "0" for v in flat]
    raise TypeError(a.dtype)


def record(kind, name, a):
    a = np.asarray(a)
    fields = [kind, name, DTYPES[a.dtype], str(a.ndim)] + [str(d) for d in a.shape] + values(a)
    return " ".join(fields)


def main():
    models = fx.build()
    fx.write(models)
    lines = []
    for name, m in models.items():
        sess = fx.session(name)
        in_names = [i.name for i in sess.get_inputs()]
        out_names = [o.name for o in sess.get_outputs()]
        for idx, sizes in enumerate(fx.INPUT_SETS[name]):
            feeds = fx.make_inputs(name, sizes, 1000 + idx)
            assert sorted(feeds) == sorted(in_names), (name, in_names)
            got = sess.run(out_names, feeds)
            lines.append(f"case {name} {idx}")
            lines += [record("input", k, feeds[k]) for k in in_names]
            for o, v in zip(out_names, got):
                want = fx.TRUE_SHAPES[name][o](sizes)
                assert list(v.shape) == want, (name, idx, o, v.shape, want)
                assert v.size <= 5000, (name, idx, o, v.size)
                lines.append(record("output", o, v))
            print(f"{name} {idx} {sizes}: " +
                  ", ".join(f"{o} {list(v.shape)}" for o, v in zip(out_names, got)))
    path = os.path.join(HERE, "shapes.txt")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


if __name__ == "__main__":
    main()
