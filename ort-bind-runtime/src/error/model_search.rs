//! What a failed model search reports ([`Error::ModelNotFound`](crate::Error::ModelNotFound)):
//! defined here, below the search in [`model_file`](crate::model_file), which re-exports it.

use std::path::PathBuf;

/// The variable naming a folder of models, looked at after the per-model variables.
pub const MODEL_DIR_VAR: &str = "ORT_BIND_MODEL_DIR";

/// One place [`ModelFile::find`](crate::ModelFile::find) looked, and why it was looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookedAt {
    /// What made ort-bind look there (`ORT_BIND_MODEL_DIR`, `beside the executable`, ...).
    pub reason: String,
    /// The path tried.
    pub path: PathBuf,
}

/// The lines of [`Error::ModelNotFound`](crate::Error::ModelNotFound)'s message after its first.
pub(crate) fn describe_search(looked: &[LookedAt]) -> String {
    let mut out = String::new();
    for place in looked {
        out.push_str(&format!("\n  - {}: {}", place.reason, place.path.display()));
    }
    out.push_str(&format!(
        "\n  set ORT_BIND_MODEL_<NAME> to the file or {MODEL_DIR_VAR} to its folder, put it \
         beside the executable, or embed it in the binary (`bindings!(..., embed)`)"
    ));
    out
}
