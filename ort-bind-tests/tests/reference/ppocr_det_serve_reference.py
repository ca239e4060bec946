#!/usr/bin/env python3
"""Reference data for the HTTP load test of examples/serve.rs (tests/serve.rs): PP-OCRv4's
text detector (see ppocr_det_reference.py for the model and its wheel) on PAGES distinct
synthetic pages of one size, as Python onnxruntime 1.31.1 computes them on CPU.

    python3 tests/reference/ppocr_det_serve_reference.py

writes tests/reference/ppocr_det_serve.txt: the size, then per page its shift, the sum
of every output row and SAMPLES sampled outputs. Page `k` is the page of
ppocr_det_reference.py with its strokes shifted down by 3k and right by 5k pixels
(`page` below; tests/serve.rs builds the same pages), so every page has a different
output and a response scattered to the wrong request cannot match.

Needs: onnxruntime==1.31.1, numpy, pip.
"""

import os
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
WHEEL = "rapidocr-onnxruntime==1.4.4"
ENTRY = "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx"
H, W = 64, 96
PAGES = 8
SAMPLES = 32


def page(k):
    dy, dx = 3 * k, 5 * k
    h, w = np.meshgrid(np.arange(H), np.arange(W), indexing="ij")
    hs, ws = h + dy, w + dx
    ink = ((hs % 32 >= 10) & (hs % 32 < 24) & (ws % 6 < 2) & (ws % 23 < 18)
           & (w >= 8) & (w < W - 8))
    x = np.where(ink, np.float32(-1), np.float32(1)).astype(np.float32)
    return np.ascontiguousarray(np.broadcast_to(x, (1, 3, H, W)))


def samples():
    """Positions (row, col) of the sampled outputs."""
    return [((i * 37 + 5) % H, (i * 53 + 11) % W) for i in range(SAMPLES)]


def main():
    import onnxruntime as ort
    assert ort.__version__ == "1.31.1", ort.__version__
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                        "--only-binary=:all:", "--disable-pip-version-check", "-q", WHEEL,
                        "-d", tmp], check=True)
        wheel = next(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".whl"))
        with zipfile.ZipFile(wheel) as z:
            z.extract(ENTRY, tmp)
        session = ort.InferenceSession(os.path.join(tmp, ENTRY),
                                       providers=["CPUExecutionProvider"])
        lines = [f"size {H} {W}"]
        for k in range(PAGES):
            out = session.run(None, {"x": page(k)})[0]
            assert out.shape == (1, 1, H, W), out.shape
            lines.append(f"page {k}")
            rows = out[0, 0].astype(np.float64).sum(axis=1)
            lines.append("rows " + " ".join(repr(float(r)) for r in rows))
            lines.append("samples " + " ".join(
                repr(float(out[0, 0, r, c])) for r, c in samples()))
        path = os.path.join(HERE, "ppocr_det_serve.txt")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
