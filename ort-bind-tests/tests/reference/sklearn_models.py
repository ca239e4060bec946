#!/usr/bin/env python3
"""Two real scikit-learn models converted by skl2onnx, as small fixtures, and the outputs
Python onnxruntime gives for fixed inputs, as reference text for the tests.

    python3 -m venv /tmp/sk && /tmp/sk/bin/pip install numpy==2.3.5 scipy==1.17.1 \
        scikit-learn==1.9.1 skl2onnx==1.20.0 onnx==1.23.2 onnxruntime==1.31.1
    /tmp/sk/bin/python tests/reference/sklearn_models.py       # from ort-bind-tests/

writes (relative to ort-bind-tests/):

- tests/fixtures/sklearn_iris.onnx: LogisticRegression on the iris data set with string
  class labels ("setosa", "versicolor", "virginica"), converted with skl2onnx's default
  ZipMap. Signature: input `float_input: float32[N, 4]`, outputs `output_label:
  string[N]` and `output_probability: seq(map(string, float32))`.
- tests/fixtures/sklearn_text.onnx: TfidfVectorizer + LogisticRegression on a small
  fixed corpus of short sentences with string labels, taking a string tensor `text:
  string[N, 1]`; probabilities as a plain tensor (ZipMap off), so the two models cover
  both forms. Outputs `label: string[N]`, `probabilities: float32[N, 3]`.
- tests/reference/sklearn_iris.txt, tests/reference/sklearn_text.txt: for each fixed
  input row, what onnxruntime 1.31.1 (CPU) outputs. Line format, one record per row:

      input <values separated by spaces>        (iris: 4 float32 values as repr)
      text <the sentence, as is>                (text model)
      label <class label>
      probability <label>=<float32 as repr> ... (classes in the model's order)

Both models are deterministic: fixed seeds, the solver `lbfgs` (deterministic), inputs
fixed below, and PYTHONHASHSEED=0 (see `main`). Running the script twice writes the same
bytes.

Why `lowercase=False`: skl2onnx converts `TfidfVectorizer(lowercase=True)` (the default)
into a `StringNormalizer` node, and ONNX Runtime's StringNormalizer needs the
`en_US.UTF-8` locale to build its case mapping. Machines without that locale (these have
only C/POSIX) fail to load the model at all, in Python too ("Failed to construct locale
with name:en_US.UTF-8"). The corpus below is lower case already, so the model is the
same one a lowercasing vectorizer would give for these inputs.
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(ROOT, "tests", "fixtures")

VERSIONS = {"onnxruntime": "1.31.1", "skl2onnx": "1.20.0", "onnx": "1.23.2",
            "sklearn": "1.9.1", "numpy": "2.3.5"}
TARGET_OPSET = {"": 17, "ai.onnx.ml": 3}

# Rows of iris (one per class and some near the class borders) the reference covers.
IRIS_ROWS = [0, 25, 50, 70, 77, 83, 100, 106, 133, 149]

CORPUS = [
    ("the striker scored a late goal in the cup final", "sport"),
    ("the keeper saved a penalty and the match ended level", "sport"),
    ("our team won the league after a long season", "sport"),
    ("the coach praised the defence after the away match", "sport"),
    ("fans cheered as the runner broke the record", "sport"),
    ("the central bank raised interest rates again", "finance"),
    ("shares fell as investors sold bank stocks", "finance"),
    ("the company reported higher profits this quarter", "finance"),
    ("bond yields rose after the inflation report", "finance"),
    ("the market rallied on strong earnings news", "finance"),
    ("the new phone has a faster chip and a better camera", "tech"),
    ("the update fixes a security bug in the browser", "tech"),
    ("engineers released a new version of the compiler", "tech"),
    ("the laptop battery lasts longer with the new chip", "tech"),
    ("developers can now run the model on a phone", "tech"),
]

TEXT_INPUTS = [
    "the team scored a goal in the final",
    "the bank reported higher profits",
    "a new chip for the phone camera",
    "investors cheered the record season",
    "the compiler update fixes the security bug",
    "",
    "words the model never saw before",
]


def f32_repr(v):
    return repr(float(np.float32(v)))


def check_versions():
    import onnx
    import onnxruntime
    import skl2onnx
    import sklearn
    found = {"onnxruntime": onnxruntime.__version__, "skl2onnx": skl2onnx.__version__,
             "onnx": onnx.__version__, "sklearn": sklearn.__version__,
             "numpy": np.__version__}
    if found != VERSIONS:
        sys.exit(f"needs {VERSIONS}, found {found}")


def save(model, name):
    import onnx
    # No producer-dependent noise beyond what skl2onnx writes; the graph is deterministic.
    path = os.path.join(FIXTURES, name)
    onnx.save_model(model, path)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")
    return path


def iris():
    from skl2onnx import to_onnx
    from sklearn.datasets import load_iris
    from sklearn.linear_model import LogisticRegression
    import onnxruntime as ort

    data = load_iris()
    x = data.data.astype(np.float32)
    names = np.array(["setosa", "versicolor", "virginica"])
    y = names[data.target]
    clf = LogisticRegression(max_iter=1000, random_state=0).fit(x, y)
    from skl2onnx.common.data_types import FloatTensorType
    model = to_onnx(clf, initial_types=[("float_input", FloatTensorType([None, 4]))],
                    target_opset=TARGET_OPSET)
    path = save(model, "sklearn_iris.onnx")

    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    rows = x[IRIS_ROWS]
    labels, probabilities = session.run(None, {"float_input": rows})
    lines = []
    for row, label, probs in zip(rows, labels, probabilities):
        lines.append("input " + " ".join(f32_repr(v) for v in row))
        lines.append(f"label {label}")
        lines.append("probability " + " ".join(
            f"{k}={f32_repr(v)}" for k, v in probs.items()))
    write_text("sklearn_iris.txt", lines)


def text():
    from skl2onnx import to_onnx
    from skl2onnx.common.data_types import StringTensorType
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    import onnxruntime as ort

    sentences = [s for s, _ in CORPUS]
    labels = [c for _, c in CORPUS]
    # lowercase=False: see the module docs (no StringNormalizer node).
    pipe = Pipeline([
        ("tfidf", TfidfVectorizer(lowercase=False)),
        ("clf", LogisticRegression(max_iter=1000, random_state=0)),
    ]).fit(sentences, labels)
    model = to_onnx(
        pipe,
        initial_types=[("text", StringTensorType([None, 1]))],
        target_opset=TARGET_OPSET,
        options={LogisticRegression: {"zipmap": False}},
        final_types=None,
    )
    # Name the outputs as the module docs say.
    renames = {model.graph.output[0].name: "label", model.graph.output[1].name: "probabilities"}
    for node in model.graph.node:
        for i, o in enumerate(node.output):
            if o in renames:
                node.output[i] = renames[o]
    for o in model.graph.output:
        o.name = renames[o.name]
    path = save(model, "sklearn_text.onnx")

    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    batch = np.array(TEXT_INPUTS, dtype=object).reshape(-1, 1)
    out_labels, probabilities = session.run(None, {"text": batch})
    # Python's own pipeline agrees on the labels (the converter is exact up to float32).
    assert list(out_labels) == list(pipe.predict(TEXT_INPUTS)), (out_labels,)
    classes = [str(c) for c in pipe.classes_]
    lines = [f"classes {' '.join(classes)}"]
    for sentence, label, probs in zip(TEXT_INPUTS, out_labels, probabilities):
        lines.append(f"text {sentence}")
        lines.append(f"label {label}")
        lines.append("probability " + " ".join(
            f"{c}={f32_repr(v)}" for c, v in zip(classes, probs)))
    write_text("sklearn_text.txt", lines)


def write_text(name, lines):
    path = os.path.join(HERE, name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {path}")


def main():
    # skl2onnx walks sets of strings while converting the text pipeline, so the node order
    # of sklearn_text.onnx follows Python's string hashing: fix the seed (by re-running
    # this script with it) to write the same bytes every time.
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])
    check_versions()
    iris()
    text()


if __name__ == "__main__":
    main()
