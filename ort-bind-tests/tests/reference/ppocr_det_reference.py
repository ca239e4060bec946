#!/usr/bin/env python3
"""Reference data for the real-model test of ORT-allocated outputs in tests/dynamic.rs:
PP-OCRv4's text detector (`ch_PP-OCRv4_det_infer.onnx`, exported from PaddlePaddle by
paddle2onnx, Apache-2.0), as the `rapidocr-onnxruntime==1.4.4` wheel ships it. Its input
`x` is `[N, 3, H, W]` and its output `sigmoid_0.tmp_0` is `[N, 1, H, W]`, but the exporter
named every dynamic dim differently (`p2o.DynamicDimension.0` .. `.5`), so the output's
shape is known only when ONNX Runtime runs the model.

    python3 tests/reference/ppocr_det_reference.py

writes (relative to the repository root):

- tests/fixtures/signatures/ppocr_det.onnx: the model's signature only (see
  signature.py); the model (4.7 MB) is fetched on first use by the tests;
- tests/reference/ppocr_det.txt: for each input size below, the output shape, the sum of
  every output row, and 32 sampled outputs, from onnxruntime 1.31.1 on CPU.

The input is a synthetic page (`page` below; tests/dynamic.rs builds the same one): white
background, rows of 2-pixel black strokes, normalised like RapidOCR's preprocessing
(pixel / 255 - 0.5) / 0.5, so every value is exactly -1 or 1.

Needs: onnxruntime==1.31.1, numpy, onnx, pip.
"""

import os
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WHEEL = "rapidocr-onnxruntime==1.4.4"
ENTRY = "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx"
SIZES = [(64, 96), (96, 160)]
SAMPLES = 32


def page(h_size, w_size):
    h, w = np.meshgrid(np.arange(h_size), np.arange(w_size), indexing="ij")
    ink = ((h % 32 >= 10) & (h % 32 < 24) & (w % 6 < 2) & (w % 23 < 18)
           & (w >= 8) & (w < w_size - 8))
    x = np.where(ink, np.float32(-1), np.float32(1)).astype(np.float32)
    return np.ascontiguousarray(np.broadcast_to(x, (1, 3, h_size, w_size)))


def samples(h_size, w_size):
    """Positions (row, col) of the sampled outputs."""
    return [(12 + i % 10 + 32 * ((i // 10) % (h_size // 32)), (i * 53 + 11) % w_size)
            for i in range(SAMPLES)]


def main():
    import onnxruntime as ort
    sys.path.insert(0, HERE)
    from signature import write_signature
    assert ort.__version__ == "1.31.1", ort.__version__
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                        "--only-binary=:all:", "--disable-pip-version-check", "-q", WHEEL,
                        "-d", tmp], check=True)
        wheel = next(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".whl"))
        with zipfile.ZipFile(wheel) as z:
            z.extract(ENTRY, tmp)
        model = os.path.join(tmp, ENTRY)
        write_signature(model, os.path.join(ROOT, "tests", "fixtures", "signatures",
                                            "ppocr_det.onnx"), f"{WHEEL} {ENTRY}")
        session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        lines = []
        for h_size, w_size in SIZES:
            out = session.run(None, {"x": page(h_size, w_size)})[0]
            lines.append("shape " + " ".join(str(d) for d in out.shape))
            rows = out[0, 0].astype(np.float64).sum(axis=1)
            lines.append("rows " + " ".join(repr(float(r)) for r in rows))
            lines.append("samples " + " ".join(
                repr(float(out[0, 0, r, c])) for r, c in samples(h_size, w_size)))
        path = os.path.join(HERE, "ppocr_det.txt")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
