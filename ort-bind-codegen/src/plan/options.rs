//! [`ModelOptions`]: what the signature alone cannot tell (dims that are the same,
//! recurrent pairs, the batch dim, decoder roles), and the signature with its dim options
//! applied.

use super::*;

/// Settings of one model that the signature alone cannot give: dims that are really
/// the same, and recurrent (output -> input) pairs.
///
/// # Dims that are really the same
///
/// Exporters often name (or leave unnamed) dims that are equal in fact: an output
/// `[N, 3]` whose `N` is the input's `batch`, a state output `[?, ?, ?]` that has
/// exactly the shape of the state input `[2, ?, 128]`. Guessing such equalities from
/// positions would be wrong for many models, so the plan only unifies what it can
/// justify, and lets the user state the rest:
///
/// - [`ModelOptions::rename_dim`]: every occurrence of one named dim is another one
///   (`N` is `batch`);
/// - [`ModelOptions::dim`]: axis `k` of a value is a given named dim (names an
///   unnamed `?`/`-1`/unset axis, or renames one occurrence);
/// - recurrent pairs: an output that feeds the next run's input must
///   have that input's shape, so pairing them unifies the output's dims with the
///   input's. Pairs are found by name (one name is a prefix of the other, e.g.
///   `state` / `stateN`), equal element type and rank, and dims that do not
///   contradict each other axis by axis (equal, or left open on the output: `?`, or a
///   named dim no input carries); a pair whose dims differ is only made when it is the
///   only candidate on both sides. [`ModelOptions::feed_back`] declares a pair
///   explicitly and [`ModelOptions::no_auto_feed_back`] turns the search off.
///
/// If a unification is wrong for a model, nothing unsafe follows: ONNX Runtime checks
/// the shape of every pre-allocated output at each run and fails the run with an
/// error that names the output.
///
/// # Example
///
/// ```
/// use ort_bind_codegen::ModelOptions;
/// // Silero VAD (silero_vad.onnx) leaves every dynamic dim unnamed.
/// let options = ModelOptions::new()
///     .dim("input", 0, "batch")
///     .dim("input", 1, "samples")
///     .dim("state", 1, "batch")
///     .dim("output", 0, "batch");
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelOptions {
    pub(super) module_name: Option<String>,
    pub(super) renames: Vec<(String, String)>,
    pub(super) dims: Vec<(String, usize, String)>,
    pub(super) feed_back: Vec<(String, String)>,
    pub(super) no_auto_feed_back: bool,
    pub(super) embed: bool,
    pub(super) batch_dim: Option<String>,
    pub(super) decoder: Option<DecoderNames>,
    pub(super) adapters: Vec<(String, String)>,
    pub(super) no_overrides: bool,
}

impl ModelOptions {
    /// No settings: the plan follows the signature alone.
    pub fn new() -> Self {
        Self::default()
    }

    /// Names the generated module (default: the model file's stem, sanitised).
    pub fn module_name(mut self, name: &str) -> Self {
        self.module_name = Some(name.to_owned());
        self
    }

    /// The module name set with [`ModelOptions::module_name`].
    pub fn name(&self) -> Option<&str> {
        self.module_name.as_deref()
    }

    /// Every dim named `from` is the dim named `to` (e.g. an output's `N` is the
    /// input's `batch`), so outputs sized by it can be pre-allocated.
    pub fn rename_dim(mut self, from: &str, to: &str) -> Self {
        self.renames.push((from.to_owned(), to.to_owned()));
        self
    }

    /// Axis `axis` of the input or output `value` (ONNX name) is the named dim `dim`.
    /// The axis must be dynamic in the model (`?`, `-1`, unset or named); naming a fixed
    /// axis is an error. Applied after [`ModelOptions::rename_dim`].
    pub fn dim(mut self, value: &str, axis: usize, dim: &str) -> Self {
        self.dims.push((value.to_owned(), axis, dim.to_owned()));
        self
    }

    /// Declares that output `output` feeds input `input` in the next run (recurrent
    /// state): the output gets the input's shape and a generated
    /// `feed_<output>_into_<input>` method swaps their buffers.
    pub fn feed_back(mut self, output: &str, input: &str) -> Self {
        self.feed_back.push((output.to_owned(), input.to_owned()));
        self
    }

    /// Embeds the model's bytes in the binary (`include_bytes!`), so `Model::load()` needs
    /// no file at run time: one file deploys. The binary grows by the model's size, and
    /// rustc reads the whole file at every build of the crate (a 1 GiB model costs tens of
    /// seconds); a model with external data files cannot load from memory.
    pub fn embed(mut self) -> Self {
        self.embed = true;
        self
    }

    /// Names a LoRA adapter file (ONNX Runtime's `.onnx_adapter`, at `path` relative to the
    /// crate's `Cargo.toml`) that these bindings are for: it is checked against the model's
    /// overridable inputs when the bindings are generated (every parameter names one, with
    /// its element type and fixed sizes, and one size per named dim such as the rank), so a
    /// file that does not fit fails the build. The module gets `adapters::<name>()`, which
    /// loads it at run time (found like the model: `adapters::<NAME>_FILE`).
    pub fn adapter(mut self, name: &str, path: &str) -> Self {
        self.adapters.push((name.to_owned(), path.to_owned()));
        self
    }

    /// The adapters named with [`ModelOptions::adapter`]: `(name, path)`.
    pub fn adapters(&self) -> &[(String, String)] {
        &self.adapters
    }

    /// Whether [`ModelOptions::embed`] was set.
    pub fn embeds(&self) -> bool {
        self.embed
    }

    /// The dim along which single-item requests are batched (a named dim, after
    /// [`ModelOptions::rename_dim`] and [`ModelOptions::dim`]): axis 0 of every input and
    /// output. The generated module then gets `Item`, `Reply`, `BatchSpec` and
    /// `Model::batcher` (dynamic batching). Without it, a dim named `batch` or
    /// `batch_size` that meets the same rule is the batch dim; naming one that does not is
    /// an error.
    pub fn batch_dim(mut self, dim: &str) -> Self {
        self.batch_dim = Some(dim.to_owned());
        self
    }

    /// Requires the model to be a decoder (a generated `Decoder`; see
    /// [`decoder`]): a model that does not fit is an error saying why. Models that follow
    /// the exporters' conventions are recognised without it.
    pub fn decoder(mut self) -> Self {
        self.decoder.get_or_insert_with(DecoderNames::default);
        self
    }

    /// Names the input or output that plays decoder role `role` where the model uses
    /// another name than the conventional one (implies [`ModelOptions::decoder`]).
    pub fn decoder_role(mut self, role: DecoderRole, name: &str) -> Self {
        self.decoder
            .get_or_insert_with(DecoderNames::default)
            .set_role(role, name.to_owned());
        self
    }

    /// Declares a cache pair the names do not reveal: input `past` takes what output
    /// `present` returned (implies [`ModelOptions::decoder`]).
    pub fn decoder_cache(mut self, past: &str, present: &str) -> Self {
        self.decoder
            .get_or_insert_with(DecoderNames::default)
            .caches
            .push((past.to_owned(), present.to_owned()));
        self
    }

    /// Declares an input the decoder holds for a whole sequence (set from an encoder's
    /// output or by the user, never fed back), where the names do not reveal it: a
    /// cross-attention cache under another name, say (implies [`ModelOptions::decoder`]).
    pub fn decoder_context(mut self, input: &str) -> Self {
        self.decoder
            .get_or_insert_with(DecoderNames::default)
            .context
            .push(input.to_owned());
        self
    }

    /// Turns off the search for recurrent pairs by name; only pairs declared with
    /// [`ModelOptions::feed_back`] are made.
    pub fn no_auto_feed_back(mut self) -> Self {
        self.no_auto_feed_back = true;
        self
    }

    /// Types no overridable input: every input the model gives a default keeps it (no
    /// `Overrides`, no `set_adapter`). For exports that list every weight as an input with
    /// a default (thousands of typed overrides nobody sets).
    pub fn no_overrides(mut self) -> Self {
        self.no_overrides = true;
        self
    }
}

pub(super) fn value_names(sig: &ModelSignature) -> String {
    let names: Vec<String> = sig
        .inputs
        .iter()
        .chain(&sig.outputs)
        .map(|v| format!("`{}`", v.name))
        .collect();
    names.join(", ")
}

pub(super) fn dims_of_mut(v: &mut ValueInfo) -> Option<&mut Vec<Dim>> {
    match &mut v.kind {
        ValueType::Tensor { dims, .. } => dims.as_mut(),
        // Dims inside sequences, maps and optionals do not become `Dims` fields.
        _ => None,
    }
}

/// The signature with the dim renames and namings of `options` applied.
pub fn apply_dim_options(
    sig: &ModelSignature,
    options: &ModelOptions,
) -> Result<ModelSignature, PlanError> {
    let mut sig = sig.clone();
    for (from, to) in &options.renames {
        let mut found = false;
        for v in sig.inputs.iter_mut().chain(sig.outputs.iter_mut()) {
            for d in dims_of_mut(v).into_iter().flatten() {
                if matches!(d, Dim::Named(n) if n == from) {
                    *d = Dim::Named(to.clone());
                    found = true;
                }
            }
        }
        if !found {
            let mut known: Vec<String> = Vec::new();
            for v in sig.inputs.iter().chain(&sig.outputs) {
                if let Some((_, Some(ds))) = v.tensor() {
                    for d in ds {
                        if let Dim::Named(n) = d
                            && !known.iter().any(|k| k == &format!("`{n}`"))
                        {
                            known.push(format!("`{n}`"));
                        }
                    }
                }
            }
            return Err(PlanError::UnknownDim {
                name: from.clone(),
                known: if known.is_empty() {
                    "none".into()
                } else {
                    known.join(", ")
                },
            });
        }
    }
    for (value, axis, dim) in &options.dims {
        let known = value_names(&sig);
        let contradiction = |reason: String| PlanError::DimContradicts {
            value: value.clone(),
            axis: *axis,
            dim: dim.clone(),
            reason,
        };
        let mut found = false;
        // An input passed straight through is also an output of the same name: same value.
        for v in sig.inputs.iter_mut().chain(sig.outputs.iter_mut()) {
            if &v.name != value {
                continue;
            }
            found = true;
            let Some(ds) = dims_of_mut(v) else {
                return Err(contradiction(
                    "the model declares no shape (unknown rank) for it".into(),
                ));
            };
            let rank = ds.len();
            let Some(d) = ds.get_mut(*axis) else {
                return Err(contradiction(format!("it has rank {rank}")));
            };
            if let Dim::Fixed(n) = d {
                return Err(contradiction(format!("the model fixes that axis to {n}")));
            }
            *d = Dim::Named(dim.clone());
        }
        if !found {
            return Err(PlanError::UnknownValue {
                what: format!("dim(`{value}`, {axis}, `{dim}`)"),
                name: value.clone(),
                known,
            });
        }
    }
    Ok(sig)
}
