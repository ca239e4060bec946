#!/usr/bin/env python3
"""A report, not a test: how far two Python shape-inference tools get on the fixtures in
tests/fixtures/shapes/ when the graph outputs say nothing about their shape.

    /tmp/venv/bin/pip install onnx==1.23.2 onnxruntime==1.31.1 numpy sympy
    /tmp/venv/bin/python tests/reference/shape_infer_compare.py     # from ort-bind-tests/

writes tests/reference/shape_infer_compare.txt (and prints it).

For each fixture, every graph output's shape is removed entirely (no rank either) and
graph.value_info is cleared; then
  (a) onnxruntime.tools.symbolic_shape_infer.SymbolicShapeInference.infer_shapes(
          model, auto_merge=True)
  (b) onnx.shape_inference.infer_shapes(model, data_prop=True)
run on it. An output counts as fully determined when it has a shape and every axis is an
int or an expression whose only free names are the model's input dim_params (not a fresh
symbol such as `unk__0`, `<node>_o0__d1`, or an unset dim). A determined result is then
evaluated (sympy, floor/ceil as integers) at every size of the fixture's sweep
(make_shape_fixtures.SWEEPS) and compared with the true shape (make_shape_fixtures.
TRUE_SHAPES, itself checked against onnxruntime runs by `make_shape_fixtures.py
--verify`).
"""

import io
import os
import re
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "shapes")
sys.path.insert(0, FIXTURES)

import onnx  # noqa: E402
import sympy  # noqa: E402
from onnx import shape_inference  # noqa: E402

import make_shape_fixtures as fx  # noqa: E402

FUNCS = {"floor", "ceil", "ceiling", "Max", "Min", "Mod", "max", "min", "mod", "Abs", "CeilToInt",
         "FloorToInt", "sqrt"}


def stripped(name):
    m = onnx.load(os.path.join(FIXTURES, name + ".onnx"))
    for o in m.graph.output:
        o.type.tensor_type.ClearField("shape")
    del m.graph.value_info[:]
    return m


def input_symbols(m):
    syms = set()
    for i in m.graph.input:
        for d in i.type.tensor_type.shape.dim:
            if d.HasField("dim_param"):
                syms.add(d.dim_param)
    return syms


def dims_of(vi):
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    out = []
    for d in t.shape.dim:
        if d.HasField("dim_value"):
            out.append(d.dim_value)
        elif d.HasField("dim_param"):
            out.append(d.dim_param)
        else:
            out.append("?")
    return out


def determined(dims, syms):
    if dims is None:
        return False
    for d in dims:
        if isinstance(d, int):
            continue
        if d == "?":
            return False
        names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", d)) - FUNCS
        if not names <= syms:
            return False
    return True


def evaluate(dims, syms, sizes):
    local = {s: sympy.Symbol(s, integer=True, nonnegative=True) for s in syms}
    local.update({"floor": sympy.floor, "ceil": sympy.ceiling, "ceiling": sympy.ceiling,
                  "Max": sympy.Max,
                  "Min": sympy.Min, "Mod": sympy.Mod})
    out = []
    for d in dims:
        if isinstance(d, int):
            out.append(d)
            continue
        e = sympy.sympify(d, locals=local)
        v = e.subs({local[k]: v for k, v in sizes.items() if k in local})
        out.append(int(v))
    return out


def check_on_sweep(name, output, dims, syms):
    """'' when dims equal the true shape on every sweep size, else a short description."""
    wrong = []
    sweep = fx.SWEEPS[name]
    for sizes in sweep:
        want = fx.TRUE_SHAPES[name][output](sizes)
        try:
            got = evaluate(dims, syms, sizes)
        except Exception as e:  # noqa: BLE001
            return f"cannot evaluate: {type(e).__name__}"
        if got != want:
            wrong.append(f"{sizes}: {got} vs true {want}")
    if wrong:
        return f"WRONG at {len(wrong)} of {len(sweep)} sweep sizes, e.g. {wrong[0]}"
    return f"= truth on all {len(sweep)} sweep sizes"


def run_tool(fn, m):
    """(model or None, error text). Quietens the tools' own logging."""
    err = io.StringIO()
    old = sys.stderr
    sys.stderr = err
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(m)
        if out is None:
            return None, "returned None"
        return out, ""
    except Exception as e:  # noqa: BLE001
        first = (str(e).strip().splitlines() or [""])[0][:160]
        return None, f"{type(e).__name__}: {first}"
    finally:
        sys.stderr = old


def sym_infer(m):
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference
    return SymbolicShapeInference.infer_shapes(m, auto_merge=True)


def onnx_infer(m):
    return shape_inference.infer_shapes(m, data_prop=True)


def describe(model, err, name, output, syms):
    if model is None:
        return f"failed: {err}"
    vi = {o.name: o for o in model.graph.output}.get(output)
    dims = dims_of(vi) if vi is not None else None
    shown = "no shape" if dims is None else "[" + ", ".join(str(d) for d in dims) + "]"
    if not determined(dims, syms):
        return f"not determined: {shown}"
    return f"**{shown}** ({check_on_sweep(name, output, dims, syms)})"


def main():
    import onnxruntime
    lines = [
        "# Shape inference on tests/fixtures/shapes/ with the output shapes removed",
        "",
        f"onnx {onnx.__version__}, onnxruntime {onnxruntime.__version__}, "
        f"sympy {sympy.__version__}. Written by shape_infer_compare.py. Bold: fully "
        "determined (ints and expressions of input dim_params only), then checked against "
        "the true shape over the fixture's sweep of sizes.",
        "",
        "| model | output | true shape | symbolic_shape_infer (auto_merge) "
        "| onnx infer_shapes(data_prop) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name in fx.BUILDERS:
        m = stripped(name)
        syms = input_symbols(m)
        a, aerr = run_tool(sym_infer, stripped(name))
        b, berr = run_tool(onnx_infer, stripped(name))
        for o in m.graph.output:
            truth = fx.TRUE_SHAPE_TEXT[name][o.name]
            lines.append(f"| {name} | {o.name} | {truth} | "
                         f"{describe(a, aerr, name, o.name, syms)} | "
                         f"{describe(b, berr, name, o.name, syms)} |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(HERE, "shape_infer_compare.txt"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
