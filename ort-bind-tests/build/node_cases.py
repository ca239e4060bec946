#!/usr/bin/env python3
"""Serialises ONNX's per-operator backend tests (the `node` cases of
`onnx.backend.test.case.node.collect_testcases`) in the layout of the test groups the onnx
wheel ships:

    OUT/<case>/model.onnx
    OUT/<case>/test_data_set_<N>/input_<K>.pb
    OUT/<case>/test_data_set_<N>/output_<K>.pb

Each value is written as the protobuf message its graph input or output declares, with
onnx's own helpers: a `TensorProto` for a tensor, a `SequenceProto` for a sequence, a
`MapProto` for a map and an `OptionalProto` for an optional. Values the cases already hold
as `TensorProto` (the narrow element types) are written as they are.

    python3 node_cases.py OUT

The build script of ort-bind-tests (build/conformance.rs) runs it with onnx==1.23.2 and
numpy installed into ort-bind's cache, into a staging folder it renames into place, so a
folder that exists is complete. numpy's global random state is seeded first: several cases
draw their data from it, and the committed Python reference
(tests/reference/node_reference.py, which reads these files) must see the same data as the
Rust tests. OUT must not exist yet or be empty. The last line of stdout is the number of
cases written.
"""

import os
import sys
import warnings


def value_type_of(value_info):
    """The `TypeProto` a graph input or output declares, or None when it has none."""
    if value_info is None or not value_info.HasField("type"):
        return None
    return value_info.type


def sequence_code(onnx, elem_type):
    """The `SequenceProto.DataType` of a sequence whose elements have `elem_type`."""
    kind = elem_type.WhichOneof("value") if elem_type is not None else None
    return {
        "tensor_type": onnx.SequenceProto.TENSOR,
        "sparse_tensor_type": onnx.SequenceProto.SPARSE_TENSOR,
        "sequence_type": onnx.SequenceProto.SEQUENCE,
        "map_type": onnx.SequenceProto.MAP,
        "optional_type": onnx.SequenceProto.OPTIONAL,
    }.get(kind, onnx.SequenceProto.TENSOR)


def optional_code(onnx, elem_type):
    """The `OptionalProto.DataType` of an optional whose value has `elem_type`."""
    kind = elem_type.WhichOneof("value") if elem_type is not None else None
    return {
        "tensor_type": onnx.OptionalProto.TENSOR,
        "sparse_tensor_type": onnx.OptionalProto.SPARSE_TENSOR,
        "sequence_type": onnx.OptionalProto.SEQUENCE,
        "map_type": onnx.OptionalProto.MAP,
        "optional_type": onnx.OptionalProto.OPTIONAL,
    }.get(kind, onnx.OptionalProto.TENSOR)


def to_proto(onnx, np, value, type_proto, name):
    """`value` as the message `type_proto` declares (inferred from the value without one)."""
    from onnx import numpy_helper

    kind = type_proto.WhichOneof("value") if type_proto is not None else None
    if kind is None:
        if value is None:
            return numpy_helper.from_optional(None, name, onnx.OptionalProto.TENSOR)
        if isinstance(value, list):
            kind = "sequence_type"
        elif isinstance(value, dict):
            kind = "map_type"
        else:
            kind = "tensor_type"
    if kind == "optional_type":
        inner = type_proto.optional_type.elem_type
        code = optional_code(onnx, inner)
        if value is None:
            return numpy_helper.from_optional(None, name, code)
        # Built through the helper from the inner value's own message, so that nested
        # sequences and tensors are written as the inner type declares.
        proto = onnx.OptionalProto(name=name, elem_type=code)
        element = to_proto(onnx, np, value, inner, "")
        if code == onnx.OptionalProto.TENSOR:
            proto.tensor_value.CopyFrom(element)
        elif code == onnx.OptionalProto.SEQUENCE:
            proto.sequence_value.CopyFrom(element)
        elif code == onnx.OptionalProto.MAP:
            proto.map_value.CopyFrom(element)
        elif code == onnx.OptionalProto.OPTIONAL:
            proto.optional_value.CopyFrom(element)
        else:
            raise ValueError(f"{name}: optional of {code} is not written by this script")
        return proto
    if kind == "sequence_type":
        inner = type_proto.sequence_type.elem_type if type_proto is not None else None
        code = sequence_code(onnx, inner)
        if code == onnx.SequenceProto.TENSOR:
            items = [as_array(np, v) if not isinstance(v, onnx.TensorProto) else v for v in value]
            if all(not isinstance(v, onnx.TensorProto) for v in items):
                return numpy_helper.from_list(items, name, code)
        proto = onnx.SequenceProto(name=name, elem_type=code)
        for item in value:
            element = to_proto(onnx, np, item, inner, "")
            if code == onnx.SequenceProto.TENSOR:
                proto.tensor_values.append(element)
            elif code == onnx.SequenceProto.SEQUENCE:
                proto.sequence_values.append(element)
            elif code == onnx.SequenceProto.MAP:
                proto.map_values.append(element)
            elif code == onnx.SequenceProto.OPTIONAL:
                proto.optional_values.append(element)
            else:
                raise ValueError(f"{name}: sequence of {code} is not written by this script")
        return proto
    if kind == "map_type":
        return numpy_helper.from_dict(value, name)
    if kind == "tensor_type":
        if isinstance(value, onnx.TensorProto):
            proto = onnx.TensorProto()
            proto.CopyFrom(value)
            proto.name = name
            return proto
        return numpy_helper.from_array(as_array(np, value), name)
    raise ValueError(f"{name}: values of type `{kind}` are not written by this script")


def as_array(np, value):
    """A numpy array of `value` (numpy scalars become rank-0 arrays)."""
    return value if isinstance(value, np.ndarray) else np.asarray(value)


def write(path, proto):
    with open(path, "wb") as f:
        f.write(proto.SerializeToString())


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: node_cases.py OUT")
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    if os.listdir(out):
        sys.exit(f"{out} is not empty")

    import numpy as np

    np.random.seed(0)
    import onnx
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        # Several cases overflow on purpose (casts to narrow types, log of zero).
        warnings.simplefilter("ignore")
        cases = collect_testcases(None)
    names = set()
    for case in cases:
        if case.name in names:
            sys.exit(f"two cases are named {case.name}")
        names.add(case.name)
        # The harness compares at ONNX's default tolerance; no node case overrides it
        # in onnx 1.23.2, and one that did would be compared wrongly.
        if (case.rtol, case.atol) != (1e-3, 1e-7):
            sys.exit(f"{case.name} has tolerance rtol {case.rtol} atol {case.atol}")
        folder = os.path.join(out, case.name)
        os.makedirs(folder)
        write(os.path.join(folder, "model.onnx"), case.model)
        graph = case.model.graph
        initializers = {i.name for i in graph.initializer}
        inputs = [v for v in graph.input if v.name not in initializers]
        for n, (ins, outs) in enumerate(case.data_sets or []):
            set_dir = os.path.join(folder, f"test_data_set_{n}")
            os.makedirs(set_dir)
            for prefix, values, infos in (("input", ins, inputs), ("output", outs, graph.output)):
                for k, value in enumerate(values):
                    info = infos[k] if k < len(infos) else None
                    name = info.name if info is not None else ""
                    proto = to_proto(onnx, np, value, value_type_of(info), name)
                    write(os.path.join(set_dir, f"{prefix}_{k}.pb"), proto)
    print(len(cases))


if __name__ == "__main__":
    main(sys.argv)
