#!/usr/bin/env python3
"""Compare ort-bind's ONNX signature decoder with the `onnx` package, model by model.

Run by hand (it downloads nothing; it reads models already on disk):

    python3 compare_with_onnx.py [--node-cases DIR] PATH...

Each PATH is an .onnx file or a directory searched recursively for them. With
--node-cases DIR, the ONNX operator ("node") test models are first generated in memory
by the installed onnx package (onnx.backend.test.case.node) and written to DIR, then
compared as well (pip wheels of onnx do not ship backend/test/data/node).

The Rust side is `cargo run -p ort-bind-codegen --example dump_signature`, or the
binary named by --dump-bin. The reference is `onnx.load(path, load_external_data=False)`
with the rules the decoder documents:
  inputs  = graph.input minus initializer / sparse_initializer names
  dim     = dim_value >= 1 -> int; dim_value <= 0 -> dynamic;
            dim_param with a letter or digit -> name; other params -> dynamic;
            neither -> dynamic
  shape   = absent -> unknown rank (None)
  kinds   = tensor of a known element code -> (code, dims); anything else (sequences,
            maps, optionals, other element types) -> "unsupported" with the type as the
            decoder's Display writes it (`seq(map(string, float32))`).
Prints the count checked and every mismatch; exits 1 on any mismatch.
"""

import argparse
import json
import os
import subprocess
import sys

import onnx

KNOWN = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26}
CODE_NAMES = {
    0: "undefined", 1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16",
    6: "int32", 7: "int64", 8: "string", 9: "bool", 10: "float16", 11: "float64",
    12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128", 16: "bfloat16",
    17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2", 20: "float8e5m2fnuz",
    21: "uint4", 22: "int4", 23: "float4e2m1", 24: "uint2", 25: "int2", 26: "float8e8m0",
}


def code_name(c):
    return CODE_NAMES.get(c, f"element type code {c}")


MAP_KEYS = {2, 3, 4, 5, 6, 7, 8, 12, 13}


def shape_text(tt):
    """`[2, n, ?]` as the decoder's Display writes dims, or '' for unknown rank."""
    if not tt.HasField("shape"):
        return ""
    parts = []
    for d in tt.shape.dim:
        v = dim(d)
        parts.append("?" if v is None else str(v))
    return "[" + ", ".join(parts) + "]"


def describe(t):
    """The decoder's `Display` of a ValueType: `float32[2]`, `seq(map(string, float32))`."""
    which = t.WhichOneof("value")
    if which is None:
        return "<no type>"
    if which == "tensor_type":
        tt = t.tensor_type
        if tt.elem_type in KNOWN:
            return code_name(tt.elem_type) + shape_text(tt)
        return f"tensor({code_name(tt.elem_type)})"
    if which == "sparse_tensor_type":
        return f"sparse_tensor({code_name(t.sparse_tensor_type.elem_type)})"
    if which == "sequence_type":
        s = t.sequence_type
        inner = describe(s.elem_type) if s.HasField("elem_type") else "<no type>"
        return f"seq({inner})"
    if which == "optional_type":
        o = t.optional_type
        inner = describe(o.elem_type) if o.HasField("elem_type") else "<no type>"
        return f"optional({inner})"
    if which == "map_type":
        m = t.map_type
        inner = describe(m.value_type) if m.HasField("value_type") else "<no type>"
        return f"map({code_name(m.key_type)}, {inner})"
    if which == "opaque_type":
        o = t.opaque_type
        return f"opaque({o.domain + '.' if o.domain else ''}{o.name})"
    return f"<{which}>"


def dim(d):
    which = d.WhichOneof("value")
    if which == "dim_value":
        return d.dim_value if d.dim_value >= 1 else None
    if which == "dim_param":
        return d.dim_param if any(ch.isalnum() for ch in d.dim_param) else None
    return None


def value(v):
    which = v.type.WhichOneof("value") if v.HasField("type") else None
    if which is None:
        return "MISSING_TYPE"
    if which == "tensor_type" and v.type.tensor_type.elem_type in KNOWN:
        tt = v.type.tensor_type
        dims = [dim(d) for d in tt.shape.dim] if tt.HasField("shape") else None
        return {"name": v.name, "elem": tt.elem_type, "dims": dims}
    return {"name": v.name, "unsupported": describe(v.type)}


def expected(path):
    m = onnx.load(path, load_external_data=False)
    g = m.graph
    inits = {t.name for t in g.initializer} | {s.values.name for s in g.sparse_initializer}
    inputs = [value(v) for v in g.input if v.name not in inits]
    outputs = [value(v) for v in g.output]
    if "MISSING_TYPE" in inputs or "MISSING_TYPE" in outputs:
        return {"error": "missing type"}
    return {
        "inputs": inputs,
        "outputs": outputs,
        "opsets": [[o.domain, o.version] for o in m.opset_import],
        "ir_version": m.ir_version,
        "producer_name": m.producer_name,
        "graph_name": g.name,
        "metadata": [[p.key, p.value] for p in m.metadata_props],
        "n_init_in_inputs": sum(1 for v in g.input if v.name in inits),
    }


def write_node_cases(out_dir):
    from onnx.backend.test.case.node import collect_testcases

    os.makedirs(out_dir, exist_ok=True)
    paths = []
    for case in collect_testcases(None):
        if case.model is None:
            continue
        p = os.path.join(out_dir, case.name + ".onnx")
        with open(p, "wb") as f:
            f.write(case.model.SerializeToString())
        paths.append(p)
    return paths


def collect(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                out += [os.path.join(root, f) for f in files if f.endswith(".onnx")]
        else:
            out.append(p)
    return sorted(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--node-cases", metavar="DIR")
    ap.add_argument("--dump-bin", help="prebuilt dump_signature binary")
    args = ap.parse_args()

    paths = collect(args.paths)
    if args.node_cases:
        paths += write_node_cases(args.node_cases)
    if not paths:
        sys.exit("no models given")

    cmd = [args.dump_bin] if args.dump_bin else [
        "cargo", "run", "-q", "-p", "ort-bind-codegen", "--example", "dump_signature", "--"]
    run = subprocess.run(cmd, input="\n".join(paths) + "\n", capture_output=True, text=True,
                         check=True)
    got = {}
    for line in run.stdout.splitlines():
        rec = json.loads(line)
        got[rec["path"]] = rec

    mismatches = []
    stats = {"models": 0, "inputs": 0, "outputs": 0, "init_excluded": 0, "unsupported": 0,
             "named": 0, "dynamic": 0, "fixed": 0, "unknown_rank": 0, "scalar": 0,
             "errors_expected": 0}
    for p in paths:
        stats["models"] += 1
        exp = expected(p)
        rec = got.get(p)
        if rec is None:
            mismatches.append((p, "no output from decoder"))
            continue
        if "error" in exp:
            stats["errors_expected"] += 1
            if "error" not in rec:
                mismatches.append((p, f"expected an error ({exp['error']}), decoder said ok"))
            continue
        if "error" in rec:
            mismatches.append((p, f"decoder error: {rec['error']}"))
            continue
        stats["init_excluded"] += exp.pop("n_init_in_inputs")
        for key in exp:
            if exp[key] != rec.get(key):
                mismatches.append((p, f"{key}: onnx={exp[key]!r} ort-bind={rec.get(key)!r}"))
        for v in exp["inputs"] + exp["outputs"]:
            if "unsupported" in v:
                stats["unsupported"] += 1
                continue
            if v["dims"] is None:
                stats["unknown_rank"] += 1
                continue
            if not v["dims"]:
                stats["scalar"] += 1
            for d in v["dims"]:
                key = "dynamic" if d is None else "fixed" if isinstance(d, int) else "named"
                stats[key] += 1
        stats["inputs"] += len(exp["inputs"])
        stats["outputs"] += len(exp["outputs"])

    print(json.dumps(stats))
    for p, why in mismatches:
        print(f"MISMATCH {p}: {why}")
    print(f"{stats['models']} models checked, {len(mismatches)} mismatches")
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
