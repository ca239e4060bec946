#!/usr/bin/env python3
"""Reference data for the Silero VAD example and test (tests/vad.rs), made with Python
onnxruntime and the `silero-vad` package's own wrapper code.

    python3 tests/reference/vad_reference.py all        # rewrite every file below
    python3 tests/reference/vad_reference.py wav OUT    # the test audio only
    python3 tests/reference/vad_reference.py probs WAV  # print reference probabilities
    python3 tests/reference/vad_reference.py signature OUT

Files it writes (paths relative to the repository root):

- tests/reference/vad/speech.wav: 16 kHz mono 16-bit PCM, about 6.2 s (195 chunks): silence, speech
  from `espeak-ng` (1.51 made the committed file), a 440 Hz tone in white noise (seeded),
  more speech, silence, and a tail that is not a multiple of 512 samples (so the last
  chunk is zero-padded). espeak-ng speaks at 22050 Hz; the script resamples linearly.
- tests/reference/vad/speech.probs: one speech probability per 512-sample chunk of
  speech.wav, computed by `OnnxWrapper.audio_forward` from the pinned wheel's
  `silero_vad/utils_vad.py` (the package's reference ONNX wrapper: 64 samples of
  context carried from the previous chunk, the recurrent state carried, the last
  chunk zero-padded) running `silero_vad.onnx` on onnxruntime's CPU provider.
- tests/fixtures/signatures/silero_vad.onnx: the model's signature only (graph inputs
  and outputs, opsets, IR version, producer; no nodes, no weights), from which the
  root build.rs generates the typed bindings. The model itself (2.3 MB) is fetched on
  first use; tests/vad.rs checks that its signature equals this file's.

The wrapper imports torch, which only a multi-gigabyte wheel provides; `TorchShim` below
stands in for the handful of torch calls `OnnxWrapper` makes (zeros, cat, from_numpy,
pad, slicing), backed by numpy, so the package's code runs unmodified.

Needs: onnxruntime==1.31.1, numpy, onnx (for `signature`), espeak-ng (for `wav`), pip.
"""

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import types
import wave
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SILERO = "silero-vad==6.2.3"
MODEL_ENTRY = "silero_vad/data/silero_vad.onnx"
WRAPPER_ENTRY = "silero_vad/utils_vad.py"
RATE = 16000


def fetch_wheel(into):
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
         "--disable-pip-version-check", "-q", SILERO, "-d", into],
        check=True,
    )
    wheels = [f for f in os.listdir(into) if f.endswith(".whl")]
    if len(wheels) != 1:
        sys.exit(f"expected one wheel in {into}, found {wheels}")
    return os.path.join(into, wheels[0])


def extract(wheel, into):
    with zipfile.ZipFile(wheel) as z:
        z.extract(MODEL_ENTRY, into)
        z.extract(WRAPPER_ENTRY, into)
    return os.path.join(into, MODEL_ENTRY), os.path.join(into, WRAPPER_ENTRY)


# ---- torch stand-in for OnnxWrapper -------------------------------------------------------

class Tensor:
    """The slice of torch.Tensor that OnnxWrapper uses, over a numpy array."""

    def __init__(self, array):
        self.a = np.asarray(array)

    @property
    def shape(self):
        return self.a.shape

    def dim(self):
        return self.a.ndim

    def unsqueeze(self, axis):
        return Tensor(np.expand_dims(self.a, axis))

    def float(self):
        return Tensor(self.a.astype(np.float32))

    def numpy(self):
        return self.a

    def cpu(self):
        return self

    def __len__(self):
        return len(self.a)

    def __getitem__(self, index):
        return Tensor(self.a[index])


def torch_shim():
    torch = types.ModuleType("torch")
    torch.Tensor = Tensor
    torch.zeros = lambda *shape: Tensor(
        np.zeros(shape[0] if len(shape) == 1 and isinstance(shape[0], tuple) else shape,
                 np.float32))
    torch.cat = lambda ts, dim=0: Tensor(np.concatenate([t.a for t in ts], axis=dim))
    torch.from_numpy = Tensor
    torch.no_grad = lambda: (lambda f: f)
    torch.set_num_threads = lambda n: None
    torch.hub = types.SimpleNamespace()
    torch.device = lambda name: name  # a default argument of init_jit_model

    def pad(x, pads, mode="constant", value=0.0):
        assert mode == "constant" and len(pads) == 2
        width = [(0, 0)] * (x.a.ndim - 1) + [tuple(pads)]
        return Tensor(np.pad(x.a, width, mode="constant", constant_values=value))

    torch.nn = types.SimpleNamespace(functional=types.SimpleNamespace(pad=pad))
    return torch


def load_wrapper(path):
    sys.modules["torch"] = torch_shim()
    spec = importlib.util.spec_from_file_location("silero_utils_vad", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.OnnxWrapper


# ---- data ---------------------------------------------------------------------------------

def read_wav(path):
    with wave.open(path) as w:
        if (w.getframerate(), w.getnchannels(), w.getsampwidth()) != (RATE, 1, 2):
            sys.exit(f"{path}: need 16 kHz mono 16-bit PCM")
        pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2")
    # torchaudio's convention (what the package's read_audio returns): int16 / 32768.
    return pcm.astype(np.float32) / np.float32(32768.0)


def probabilities(wav_path, model_path, wrapper_path):
    import onnxruntime
    assert onnxruntime.__version__ == "1.31.1", onnxruntime.__version__
    OnnxWrapper = load_wrapper(wrapper_path)
    model = OnnxWrapper(model_path, force_onnx_cpu=True)
    audio = read_wav(wav_path)
    out = model.audio_forward(Tensor(audio), RATE)
    return [float(p) for p in out.numpy().reshape(-1)]


def speak(text, rate):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "speech.wav")
        subprocess.run(["espeak-ng", "-v", "en-us", "-s", str(rate), "-w", path, text],
                       check=True)
        with wave.open(path) as w:
            src_rate = w.getframerate()
            x = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float64) / 32768
    n = int(len(x) * RATE / src_rate)
    return np.interp(np.arange(n) * src_rate / RATE, np.arange(len(x)), x)


def make_wav(path):
    rng = np.random.default_rng(20261129)
    t = np.arange(int(0.5 * RATE)) / RATE
    tone = 0.2 * np.sin(2 * np.pi * 440 * t) + 0.05 * rng.standard_normal(len(t))
    parts = [
        np.zeros(int(0.4 * RATE)),
        speak("Voice activity detection, in Rust.", 160),
        tone,
        np.zeros(int(0.2 * RATE)),
        speak("One, two, three.", 140),
        np.zeros(int(0.3 * RATE) + 123),
    ]
    x = np.concatenate(parts)
    pcm = np.clip(np.round(x * 32767), -32768, 32767).astype("<i2")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(RATE)
        w.writeframes(pcm.tobytes())
    print(f"wrote {path}: {len(pcm)} samples, {len(pcm) / RATE:.2f} s")


def make_signature(model_path, out_path):
    from signature import write_signature
    write_signature(model_path, out_path, f"{SILERO} {MODEL_ENTRY}")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("all")
    p = sub.add_parser("wav")
    p.add_argument("out")
    p = sub.add_parser("probs")
    p.add_argument("wav")
    p = sub.add_parser("signature")
    p.add_argument("out")
    args = ap.parse_args()

    if args.cmd == "wav":
        make_wav(args.out)
        return
    with tempfile.TemporaryDirectory() as tmp:
        model, wrapper = extract(fetch_wheel(tmp), tmp)
        if args.cmd == "probs":
            for p in probabilities(args.wav, model, wrapper):
                print(repr(p))
        elif args.cmd == "signature":
            make_signature(model, args.out)
        else:
            wav = os.path.join(HERE, "vad", "speech.wav")
            make_wav(wav)
            probs = probabilities(wav, model, wrapper)
            out = os.path.join(HERE, "vad", "speech.probs")
            with open(out, "w") as f:
                f.writelines(f"{p!r}\n" for p in probs)
            print(f"wrote {out}: {len(probs)} probabilities, "
                  f"min {min(probs):.4f} max {max(probs):.4f}")
            make_signature(model, os.path.join(ROOT, "tests", "fixtures", "signatures",
                                               "silero_vad.onnx"))


if __name__ == "__main__":
    main()
