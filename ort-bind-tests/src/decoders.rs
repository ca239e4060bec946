//! The decoder fixtures (`tests/fixtures/decoders/<fixture>/`, made by `make_decoders.py`)
//! and their expected greedy decodes, written by `reference.py` with Python onnxruntime:
//! `greedy.json` (batch 1) and `greedy_batch2.json`.

use std::path::PathBuf;

/// A file of a decoder fixture: `tests/fixtures/decoders/<fixture>/<file>`.
pub fn file(fixture: &str, file: &str) -> PathBuf {
    crate::paths::fixture("decoders").join(fixture).join(file)
}

/// A fixture's expected greedy decode.
#[derive(Debug, Clone, PartialEq)]
pub struct Expected {
    /// The prompt of each row (rows of equal length).
    pub prompts: Vec<Vec<i64>>,
    /// The greedy tokens of each row, in order.
    pub tokens: Vec<Vec<i64>>,
    /// The first step's logits (of row 0), where the file has them; empty otherwise.
    pub logits_first: Vec<f64>,
}

/// Reads `file` (`greedy.json`, `greedy_batch2.json`) of a decoder fixture. A batch-1 file
/// holds `prompt` and `tokens` as flat lists, a batch file `prompts` and `tokens` as lists
/// of rows; both read as rows. Panics (naming the file) when it is missing or malformed.
pub fn expected(fixture: &str, file: &str) -> Expected {
    read(&self::file(fixture, file)).0
}

/// Reads an expected greedy decode from `path` (the format of [`expected`]), with the
/// whole JSON document for the keys a fixture adds (`source`, `source_mask`). A
/// `logits_first` of rows reads as its first row. Panics (naming the file) when it is
/// missing or malformed.
pub fn read(path: &std::path::Path) -> (Expected, serde_json::Value) {
    let json = read_json(path);
    let rows = |key: &str| -> Vec<Vec<i64>> {
        match &json[key] {
            serde_json::Value::Array(a) if a.first().is_some_and(|r| r.is_array()) => {
                a.iter().map(ids).collect()
            }
            v => vec![ids(v)],
        }
    };
    let (prompts, tokens) = if json.get("prompts").is_some() {
        (rows("prompts"), rows("tokens"))
    } else {
        (rows("prompt"), rows("tokens"))
    };
    let first = match &json["logits_first"] {
        serde_json::Value::Array(a) if a.first().is_some_and(|r| r.is_array()) => &a[0],
        v => v,
    };
    let logits_first = first
        .as_array()
        .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
        .unwrap_or_default();
    (
        Expected {
            prompts,
            tokens,
            logits_first,
        },
        json,
    )
}

/// The JSON document at `path`. Panics (naming the file) when it is missing or malformed.
pub fn read_json(path: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A JSON list of token ids. Panics when it is not one.
pub fn ids(v: &serde_json::Value) -> Vec<i64> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|t| t.as_i64().expect("an id"))
        .collect()
}

/// A deterministic pseudo-random sequence for tests of random arrivals (no dependency).
#[derive(Debug, Clone)]
pub struct Lcg(pub u64);

impl Lcg {
    /// The next number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Request `i` of a random mix: a prompt of 1 to 20 ids and a budget of 1 to 40 tokens.
pub fn random_request(i: u64, rng: &mut Lcg) -> (Vec<i64>, usize) {
    let len = 1 + rng.below(20) as usize;
    let prompt = (0..len as i64)
        .map(|j| 1 + (i as i64 * 37 + j * 53) % 500)
        .collect();
    (prompt, 1 + rng.below(40) as usize)
}

/// What the requests of a random-arrival test of continuous batching got: which request
/// each row serves, each request's tokens, and the requests whose client left early.
#[derive(Debug, Clone, Default)]
pub struct Served {
    in_row: std::collections::HashMap<usize, usize>,
    /// Each request's tokens so far.
    pub got: Vec<Vec<i64>>,
    left_early: Vec<usize>,
}

impl Served {
    /// No request served yet, of `requests`.
    pub fn new(requests: usize) -> Self {
        Served {
            got: vec![Vec::new(); requests],
            ..Default::default()
        }
    }

    /// Request `request` joined row `row`.
    pub fn joined(&mut self, row: usize, request: usize) {
        self.in_row.insert(row, request);
    }

    /// One time in `odds` (a draw of `rng` every call), a client leaves: its row frees and
    /// the other rows go on.
    pub fn maybe_leave<T, D, M>(
        &mut self,
        rows: &mut ort_bind::decode::Rows<T, D, M>,
        rng: &mut Lcg,
        odds: u64,
    ) where
        T: ort_bind::decode::DecoderModel,
        D: ort_bind::Device,
        M: ort_bind::decode::RowsCache,
    {
        if rng.below(odds) == 0
            && let Some((&row, &request)) = self.in_row.iter().next()
        {
            rows.leave(row);
            self.in_row.remove(&row);
            self.left_early.push(request);
        }
    }

    /// Takes a step's events: each token to its row's request; a last token frees the row.
    pub fn record(&mut self, events: &[ort_bind::decode::RowEvent]) {
        use ort_bind::decode::RowEvent;
        for (row, event) in events.iter().enumerate() {
            match *event {
                RowEvent::Idle => {}
                RowEvent::Token(t) => self.got[self.in_row[&row]].push(t),
                RowEvent::Last(t) => {
                    self.got[self.in_row[&row]].push(t);
                    self.in_row.remove(&row);
                }
            }
        }
    }

    /// Asserts that each request got `alone`'s tokens for it (the first of them, for a
    /// request whose client left early); `what` ends the messages.
    pub fn check(
        &self,
        requests: &[(Vec<i64>, usize)],
        mut alone: impl FnMut(&[i64], usize) -> ort_bind::Result<Vec<i64>>,
        what: &str,
    ) -> ort_bind::Result<()> {
        for (i, (prompt, max_new)) in requests.iter().enumerate() {
            let (got, want) = (&self.got[i], alone(prompt, *max_new)?);
            if self.left_early.contains(&i) {
                assert_eq!(*got, want[..got.len()], "request {i} (left early{what})");
            } else {
                assert_eq!(*got, want, "request {i}{what}");
            }
        }
        Ok(())
    }
}
