#!/usr/bin/env python3
"""The narrow element types (float8 x5, int4/uint4, int2/uint2, float4e2m1): a fixture
model that moves each type ONNX Runtime 1.31.1 accepts across the graph boundary in both
directions, and reference values from ONNX's own reference implementation.

    /tmp/sk/bin/pip install numpy==2.3.5 onnx==1.23.2 onnxruntime==1.31.1 ml-dtypes==0.6.0
    /tmp/sk/bin/python tests/reference/narrow_reference.py     # from ort-bind-tests/

writes tests/fixtures/narrow.onnx (opset 25, IR 12) and tests/reference/narrow.txt.

What ONNX Runtime 1.31.1 (CPU) accepts, checked with small models (`probe()` below,
printed when the script runs):
- float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz: Cast to and from float32
  (opset 21+), Identity, QuantizeLinear/DequantizeLinear;
- float8e8m0: Cast to and from float32 from opset 24 on (no Identity, no Q/DQ);
- int4, uint4: Cast, QuantizeLinear/DequantizeLinear (opset 21+), no Identity;
- int2, uint2: Cast, QuantizeLinear/DequantizeLinear (opset 25), no Identity;
- float4e2m1: a model with a float4e2m1 graph input or output loads only when no node
  reads or writes it: Cast, Identity, QuantizeLinear and DequantizeLinear have no CPU
  kernel for it. It is not in the model below; its conversions are checked against
  ml_dtypes' table instead.

The model (x: float32[5], and per type T an input `in_T: T[5]`; five elements, so the
packed 4- and 2-bit tensors have a partly used last byte):
- float8 types: `q_T = Cast(x, to=T)` (T[5]) and `d_T = Cast(in_T, to=float32)`;
- int4/uint4/int2/uint2: `q_T = QuantizeLinear(x, 0.5, zero_point 0 of T)` (T[5]) and
  `d_T = DequantizeLinear(in_T, 0.5)`.

narrow.txt, one line each (values as bits in hex for narrow types, repr for float32):
    x <5 float32>
    in <T> <5 codes: byte codes for float8; element values for the packed types>
    ort q <T> <5 codes>          ONNX Runtime's q_T for x (element values when packed)
    ort d <T> <5 float32>        ONNX Runtime's d_T for in_T
    ref q <T> <5 codes>          onnx.reference's Cast/QuantizeLinear of x
    ref d <T> <5 float32>        onnx.reference's Cast/DequantizeLinear of in_T
    cast <T> <f32 as repr> <code>   onnx.reference's Cast of one value (many values per
                                    type, incl. NaN, infinities, ties, subnormals)
    decode <T> <code> <f32 as repr> every code of the 8-bit types and all 16 of float4
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

FLOAT8 = ["float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "float8e8m0"]
PACKED = ["int4", "uint4", "int2", "uint2"]
X = [0.3, -1.7, 100.0, 1e9, -3.0625]
# Byte codes for the float8 inputs: a subnormal (or 2^-126 for e8m0), 1.0-ish, the largest
# finite, a negative, and a NaN where the format has one.
IN_CODES = {
    "float8e4m3fn": [0x01, 0x38, 0x7E, 0xB8, 0x7F],
    "float8e4m3fnuz": [0x01, 0x40, 0x7F, 0xC0, 0x80],
    "float8e5m2": [0x01, 0x3C, 0x7B, 0xBC, 0x7C],
    "float8e5m2fnuz": [0x01, 0x40, 0x7F, 0xC0, 0x80],
    "float8e8m0": [0x01, 0x7F, 0xFE, 0x00, 0xFF],
}
IN_PACKED = {"int4": [-8, 7, 0, -1, 5], "uint4": [0, 15, 3, 8, 9],
             "int2": [-2, 1, 0, -1, 1], "uint2": [0, 3, 1, 2, 3]}
CAST_VALUES = [0.0, -0.0, 1.0, -1.0, 0.3, -1.7, 100.0, 1e9, -1e9, 448.0, 464.0, 240.0,
               57344.0, 61440.0, 1.0625, 1.1875, 2.0 ** -9, 2.0 ** -10, 2.0 ** -17,
               2.0 ** -20, 3e-5, 0.75, 2.5, 5.0, 7.0, 6.5, 0.25, 1e-40, float("inf"),
               float("-inf"), float("nan"), 65504.0, 2.0 ** 127, 3.0e38]


def onnx_type(name):
    from onnx import TensorProto
    return getattr(TensorProto, name.upper())


def ml(name):
    import ml_dtypes
    return {"float8e4m3fn": ml_dtypes.float8_e4m3fn, "float8e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
            "float8e5m2": ml_dtypes.float8_e5m2, "float8e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
            "float8e8m0": ml_dtypes.float8_e8m0fnu, "float4e2m1": ml_dtypes.float4_e2m1fn,
            "int4": ml_dtypes.int4, "uint4": ml_dtypes.uint4, "int2": ml_dtypes.int2,
            "uint2": ml_dtypes.uint2}[name]


def build():
    from onnx import TensorProto, helper
    vi = helper.make_tensor_value_info
    inputs = [vi("x", TensorProto.FLOAT, [5])]
    outputs, nodes, inits = [], [], [helper.make_tensor("scale", TensorProto.FLOAT, [], [0.5])]
    for t in FLOAT8:
        code = onnx_type(t)
        inputs.append(vi(f"in_{t}", code, [5]))
        nodes.append(helper.make_node("Cast", ["x"], [f"q_{t}"], to=code))
        nodes.append(helper.make_node("Cast", [f"in_{t}"], [f"d_{t}"], to=TensorProto.FLOAT))
        outputs += [vi(f"q_{t}", code, [5]), vi(f"d_{t}", TensorProto.FLOAT, [5])]
    for t in PACKED:
        code = onnx_type(t)
        inits.append(helper.make_tensor(f"zp_{t}", code, [], [0]))
        inputs.append(vi(f"in_{t}", code, [5]))
        nodes.append(helper.make_node("QuantizeLinear", ["x", "scale", f"zp_{t}"], [f"q_{t}"]))
        nodes.append(helper.make_node("DequantizeLinear", [f"in_{t}", "scale"], [f"d_{t}"]))
        outputs += [vi(f"q_{t}", code, [5]), vi(f"d_{t}", TensorProto.FLOAT, [5])]
    graph = helper.make_graph(nodes, "narrow", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)],
                              ir_version=12, producer_name="narrow_reference.py")
    return model


PER_BYTE = {"int4": 2, "uint4": 2, "int2": 4, "uint2": 4}


def pack(values, t):
    """ONNX's packing: element i in bits (i % k) * w .. of byte i // k, first one lowest."""
    k = PER_BYTE[t]
    width = 8 // k
    out = [0] * ((len(values) + k - 1) // k)
    for i, v in enumerate(values):
        out[i // k] |= (int(v) & ((1 << width) - 1)) << (width * (i % k))
    return out


def unpack(data, t, n):
    k = PER_BYTE[t]
    width = 8 // k
    out = []
    for i in range(n):
        raw = (data[i // k] >> (width * (i % k))) & ((1 << width) - 1)
        if t.startswith("int") and raw >= 1 << (width - 1):
            raw -= 1 << width
        out.append(raw)
    return out


def ort_feeds():
    """OrtValues for the model's inputs: float8 as their bytes, packed types packed (in a
    uint8 array as long as the element count, which is how Python onnxruntime takes them)."""
    import onnxruntime as ort
    out = {"x": ort.OrtValue.ortvalue_from_numpy(np.array(X, np.float32))}
    for t in FLOAT8:
        data = np.array(IN_CODES[t], np.uint8)
        out[f"in_{t}"] = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(data, onnx_type(t))
    for t in PACKED:
        data = np.zeros(5, np.uint8)
        packed = pack(IN_PACKED[t], t)
        data[:len(packed)] = packed
        out[f"in_{t}"] = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(data, onnx_type(t))
    return out


def ort_codes(value, t):
    """Codes of an OrtValue of a narrow type, read from its memory."""
    import ctypes
    if t in PACKED:
        raw = ctypes.string_at(value.data_ptr(), (5 + PER_BYTE[t] - 1) // PER_BYTE[t])
        return " ".join(str(v) for v in unpack(raw, t, 5))
    raw = ctypes.string_at(value.data_ptr(), 5)
    return " ".join(f"{b:#04x}" for b in raw)


def ref_feeds():
    out = {"x": np.array(X, np.float32)}
    for t in FLOAT8:
        out[f"in_{t}"] = np.array(IN_CODES[t], np.uint8).view(ml(t))
    for t in PACKED:
        out[f"in_{t}"] = np.array(IN_PACKED[t]).astype(ml(t))
    return out


def codes(arr, t):
    a = np.asarray(arr)
    if t in PACKED:
        return " ".join(str(int(v)) for v in a.astype(np.int64))
    return " ".join(f"{int(v):#04x}" for v in a.view(np.uint8))


def floats(arr):
    return " ".join(repr(float(v)) for v in np.asarray(arr, np.float32))


def probe():
    """Which types ONNX Runtime accepts across the graph boundary, op by op."""
    import onnxruntime as ort
    from onnx import TensorProto, helper
    vi = helper.make_tensor_value_info
    for t in FLOAT8 + ["float4e2m1"] + PACKED:
        code = onnx_type(t)
        found = []
        for what, node in [("Cast from", helper.make_node("Cast", ["x"], ["y"], to=1)),
                           ("Identity", helper.make_node("Identity", ["x"], ["y"]))]:
            out_type = TensorProto.FLOAT if what == "Cast from" else code
            g = helper.make_graph([node], "p", [vi("x", code, [5])], [vi("y", out_type, [5])])
            m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 25)], ir_version=12)
            try:
                ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
                found.append(f"{what}: loads")
            except Exception as e:  # noqa: BLE001 (the message is what we print)
                found.append(f"{what}: {str(e).split(':')[2].strip()[:40]}")
        print(f"  {t:16} {'; '.join(found)}")


def main():
    import onnx
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator
    assert ort.__version__ == "1.31.1", ort.__version__
    assert onnx.__version__ == "1.23.2", onnx.__version__
    print("ONNX Runtime 1.31.1, CPU, opset 25:")
    probe()
    model = build()
    onnx.checker.check_model(model, full_check=True)
    path = os.path.join(ROOT, "tests", "fixtures", "narrow.onnx")
    onnx.save_model(model, path)
    print(f"wrote {path}")

    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [o.name for o in model.graph.output]
    ort_out = dict(zip(names, session.run_with_ort_values(None, ort_feeds())))
    ref = ReferenceEvaluator(model)
    feeds = ref_feeds()
    ref_out = dict(zip(names, ref.run(None, feeds)))
    lines = ["x " + floats(X)]
    differ = []
    for t in FLOAT8 + PACKED:
        ort_q = ort_codes(ort_out[f"q_{t}"], t)
        ort_d = floats(ort_out[f"d_{t}"].numpy())
        ref_q, ref_d = codes(ref_out[f"q_{t}"], t), floats(ref_out[f"d_{t}"])
        lines.append(f"in {t} {codes(feeds[f'in_{t}'], t)}")
        lines.append(f"ort q {t} {ort_q}")
        lines.append(f"ort d {t} {ort_d}")
        lines.append(f"ref q {t} {ref_q}")
        lines.append(f"ref d {t} {ref_d}")
        if ort_q != ref_q:
            differ.append(f"q_{t}: ONNX Runtime {ort_q}, onnx.reference {ref_q}")
        if ort_d != ref_d:
            differ.append(f"d_{t}: ONNX Runtime {ort_d}, onnx.reference {ref_d}")
    from onnx.reference.ops.op_cast import cast_to
    for t in FLOAT8 + ["float4e2m1"]:
        for v in CAST_VALUES:
            out = cast_to(np.array([v], np.float32), onnx_type(t), saturate=True)
            lines.append(f"cast {t} {float(np.float32(v))!r} {codes(out, t)}")
    for t in FLOAT8 + ["float4e2m1"]:
        # float4e2m1 codes are nibbles; ml_dtypes keeps them one per byte.
        n = 16 if t == "float4e2m1" else 256
        values = np.arange(n, dtype=np.uint8).view(ml(t)).astype(np.float32)
        for c, v in zip(range(n), values):
            lines.append(f"decode {t} {c:#04x} {float(v)!r}")
    out = os.path.join(HERE, "narrow.txt")
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"wrote {out}")
    for d in differ:
        print("  differ:", d)


if __name__ == "__main__":
    sys.exit(main())
