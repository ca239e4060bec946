//! What Python onnxruntime 1.31.1 outputs for the two skl2onnx fixtures
//! (`tests/reference/sklearn_{iris,text}.txt`, written by
//! `tests/reference/sklearn_models.py`), parsed for the tests that compare with it.
#![allow(dead_code)]

use std::path::Path;

/// One input row and what Python onnxruntime gave for it.
#[derive(Debug, Clone)]
pub(crate) struct Row<I> {
    /// The input: 4 iris measurements, or a sentence.
    pub(crate) input: I,
    /// The label ONNX Runtime output.
    pub(crate) label: String,
    /// `(class, probability)` in the model's class order.
    pub(crate) probabilities: Vec<(String, f32)>,
}

fn text(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/reference")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn probabilities(line: &str) -> Vec<(String, f32)> {
    let rest = line
        .strip_prefix("probability ")
        .expect("a probability line");
    rest.split(' ')
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("class=probability");
            (k.to_owned(), v.parse().expect("a float"))
        })
        .collect()
}

fn rows<I>(body: &str, prefix: &str, input: impl Fn(&str) -> I) -> Vec<Row<I>> {
    let lines: Vec<&str> = body
        .lines()
        .filter(|l| !l.starts_with("classes "))
        .collect();
    lines
        .chunks(3)
        .map(|c| Row {
            input: input(c[0].strip_prefix(prefix).expect("an input line")),
            label: c[1]
                .strip_prefix("label ")
                .expect("a label line")
                .to_owned(),
            probabilities: probabilities(c[2]),
        })
        .collect()
}

/// The iris rows: 4 float32 features each.
pub(crate) fn iris() -> Vec<Row<[f32; 4]>> {
    rows(&text("sklearn_iris.txt"), "input ", |s| {
        let v: Vec<f32> = s.split(' ').map(|x| x.parse().expect("a float")).collect();
        [v[0], v[1], v[2], v[3]]
    })
}

/// The sentences of the text model (one may be empty), and the class order of its
/// `probabilities` columns.
pub(crate) fn text_model() -> (Vec<Row<String>>, Vec<String>) {
    let body = text("sklearn_text.txt");
    let classes = body
        .lines()
        .find_map(|l| l.strip_prefix("classes "))
        .expect("a classes line")
        .split(' ')
        .map(str::to_owned)
        .collect();
    (rows(&body, "text ", str::to_owned), classes)
}
