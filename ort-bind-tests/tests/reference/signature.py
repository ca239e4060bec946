"""Writes the signature of an ONNX model (graph inputs and outputs, opsets, IR version,
producer; no nodes, no weights) to a small ONNX file, for codegen of models that are
fetched on first use instead of kept in git. Used by the *_reference.py scripts here."""

import hashlib
import os


def write_signature(model_path, out_path, origin):
    import onnx
    full = onnx.load(model_path, load_external_data=False)
    sig = onnx.ModelProto()
    sig.ir_version = full.ir_version
    sig.producer_name = full.producer_name
    sig.producer_version = full.producer_version
    sig.domain = full.domain
    sig.model_version = full.model_version
    sig.doc_string = full.doc_string
    sig.opset_import.extend(full.opset_import)
    sig.graph.name = full.graph.name
    inits = {i.name for i in full.graph.initializer}
    sig.graph.input.extend(v for v in full.graph.input if v.name not in inits)
    sig.graph.output.extend(full.graph.output)
    with open(model_path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    for k, v in [("ort-bind.signature-of", origin), ("ort-bind.sha256", digest)]:
        e = sig.metadata_props.add()
        e.key, e.value = k, v
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    onnx.save_model(sig, out_path)
    print(f"wrote {out_path} ({os.path.getsize(out_path)} bytes); model sha256 {digest}")
