#!/usr/bin/env python3
"""The Python reference for the `node` group of tests/conformance.rs: runs every case that
build/node_cases.py serialised through Python onnxruntime on the CPU, compares its outputs
the way the Rust harness does, and writes the cases Python fails, each with its reason, to
tests/reference/node_python_failures.txt (tab-separated: case, stage, reason).

    python3 tests/reference/node_reference.py CASES_DIR

CASES_DIR is the folder the build script generated (printed by the conformance test as
`node cases: <dir>`; by default the newest `onnx-1.23.2-node-cases-*` folder of the cache,
`$ORT_BIND_CACHE_DIR`, else `$XDG_CACHE_HOME/ort-bind`, else `~/.cache/ort-bind`). The stage is
`load` (the session cannot be created), `feed` (an input cannot be given to onnxruntime),
`run` (the run fails) or `compare` (an output differs).

The comparison is ort-bind-cli's `data::compare`: same element type, same dims, and every
value within `|actual - expected| <= atol + rtol * |expected|` (rtol 1e-3, atol 1e-7; NaN
matches NaN, an infinity only the same infinity; bfloat16 with rtol at least 2^-6);
strings, sequences (element by element), maps (same keys) and optionals (both empty, or
both holding matching values) compare by structure.

Needs: onnxruntime==1.31.1, onnx==1.23.2, numpy.
"""

import os
import sys

RTOL = 1e-3
ATOL = 1e-7
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "node_python_failures.txt")


def read_value(onnx, path, type_proto):
    """The value in `path`, read as the message `type_proto` declares."""
    from onnx import numpy_helper

    with open(path, "rb") as f:
        data = f.read()
    kind = type_proto.WhichOneof("value") if type_proto is not None else "tensor_type"
    if kind == "sequence_type":
        proto = onnx.SequenceProto()
        proto.ParseFromString(data)
        return numpy_helper.to_list(proto)
    if kind == "map_type":
        proto = onnx.MapProto()
        proto.ParseFromString(data)
        return numpy_helper.to_dict(proto)
    if kind == "optional_type":
        proto = onnx.OptionalProto()
        proto.ParseFromString(data)
        return numpy_helper.to_optional(proto)
    proto = onnx.TensorProto()
    proto.ParseFromString(data)
    return numpy_helper.to_array(proto)


def compare(np, actual, expected, where):
    """None when `actual` matches `expected`, else what differs."""
    if expected is None or actual is None:
        if expected is None and actual is None:
            return None
        return f"{where}: {'empty' if actual is None else 'a value'} where " \
               f"{'empty' if expected is None else 'a value'} was expected"
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return f"{where}: {type(actual).__name__} where a sequence was expected"
        if len(actual) != len(expected):
            return f"{where}: {len(actual)} elements, expected {len(expected)}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            problem = compare(np, a, e, f"{where}[{i}]")
            if problem:
                return problem
        return None
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(actual) != set(expected):
            return f"{where}: keys differ"
        for key in expected:
            problem = compare(np, actual[key], expected[key], f"{where}[{key!r}]")
            if problem:
                return problem
        return None
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.dtype != expected.dtype:
        return f"{where}: element type is {actual.dtype}, expected {expected.dtype}"
    if actual.shape != expected.shape:
        return f"{where}: dims are {list(actual.shape)}, expected {list(expected.shape)}"
    if expected.dtype.kind in "OUS":
        differ = int(np.sum(actual != expected))
        return f"{where}: {differ} of {expected.size} strings differ" if differ else None
    rtol = RTOL
    if expected.dtype.name == "bfloat16":
        rtol = max(rtol, 2.0 ** -6)
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    with np.errstate(invalid="ignore"):
        both_nan = np.isnan(a) & np.isnan(e)
        inf = np.isinf(a) | np.isinf(e)
        close = np.abs(a - e) <= ATOL + rtol * np.abs(e)
    ok = both_nan | np.where(inf, a == e, close)
    ok &= ~(np.isnan(a) ^ np.isnan(e))
    bad = int(expected.size - np.sum(ok))
    return f"{where}: {bad} of {expected.size} values differ beyond rtol {rtol} / atol {ATOL}" \
        if bad else None


def first_line(error):
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__).replace("\t", " ")


def run_case(onnx, ort, np, folder):
    """None when onnxruntime passes the case, else `(stage, reason)`."""
    with open(os.path.join(folder, "model.onnx"), "rb") as f:
        model_bytes = f.read()
    model = onnx.load_from_string(model_bytes)
    graph = model.graph
    initializers = {i.name for i in graph.initializer}
    inputs = [v for v in graph.input if v.name not in initializers]
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    try:
        # From bytes, so that no error message names this machine's paths.
        session = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises several exception types
        return "load", first_line(e)
    sets = sorted(d for d in os.listdir(folder) if d.startswith("test_data_set_"))
    for set_name in sets:
        set_dir = os.path.join(folder, set_name)
        feed = {}
        try:
            for k, info in enumerate(inputs):
                path = os.path.join(set_dir, f"input_{k}.pb")
                if os.path.exists(path):
                    feed[info.name] = read_value(onnx, path, info.type)
        except Exception as e:
            return "feed", first_line(e)
        names = [o.name for o in session.get_outputs()]
        try:
            actual = session.run(names, feed)
        except Exception as e:
            return "run", first_line(e)
        for k, info in enumerate(graph.output):
            path = os.path.join(set_dir, f"output_{k}.pb")
            if not os.path.exists(path):
                continue
            expected = read_value(onnx, path, info.type)
            problem = compare(np, actual[k], expected, f"output `{info.name}`")
            if problem:
                return "compare", problem
    return None


def main(argv):
    if len(argv) > 1:
        root = argv[1]
    else:
        cache = os.environ.get("ORT_BIND_CACHE_DIR") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "ort-bind")
        found = [os.path.join(cache, d) for d in os.listdir(cache)
                 if d.startswith("onnx-1.23.2-node-cases-")] if os.path.isdir(cache) else []
        if not found:
            sys.exit(f"no onnx-1.23.2-node-cases-* folder in {cache}: build ort-bind-tests "
                     "first, or name the folder")
        root = max(found, key=os.path.getmtime)
    import numpy as np
    import onnx
    import onnxruntime as ort

    if ort.__version__ != "1.31.1" or onnx.__version__ != "1.23.2":
        sys.exit(f"needs onnxruntime 1.31.1 and onnx 1.23.2, found {ort.__version__} and "
                 f"{onnx.__version__}")
    cases = sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "model.onnx")))
    failures = []
    for name in cases:
        verdict = run_case(onnx, ort, np, os.path.join(root, name))
        if verdict:
            failures.append((name, *verdict))
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(f"# Node cases Python onnxruntime {ort.__version__} fails (written by "
                f"node_reference.py): case, stage, reason.\n")
        f.write(f"# {len(cases) - len(failures)} of {len(cases)} pass.\n")
        for name, stage, reason in failures:
            f.write(f"{name}\t{stage}\t{reason}\n")
    print(f"{len(cases) - len(failures)} passed, {len(failures)} failed; wrote {OUT}")


if __name__ == "__main__":
    main(sys.argv)
