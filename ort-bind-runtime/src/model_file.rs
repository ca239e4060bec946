//! Finding a model file after deployment.
//!
//! Generated bindings know where their model was when the crate was built, but a program
//! runs elsewhere: copied to another folder, installed on another machine, started from a
//! service manager. [`ModelFile`] is what the generated `Model::load()` (and a derive's
//! `MODEL` constant) uses to find the file at run time, looking, in order:
//!
//! 1. `ORT_BIND_MODEL_<NAME>` (e.g. `ORT_BIND_MODEL_DYNAMIC` for `dynamic.onnx`): the file
//!    itself. When set it wins: if it names no file, nothing else is tried.
//! 2. `ORT_BIND_MODEL_DIR`: a folder holding the model at its path in the crate
//!    (`models/x.onnx`) or by file name (`x.onnx`).
//! 3. The executable's folder, the same two ways: a binary copied next to its `models/`.
//! 4. The current directory, the same two ways.
//! 5. The path the model had at build time (`cargo run` on the build machine).
//!
//! When none exists, [`Error::ModelNotFound`] lists every place looked at. A model
//! embedded in the binary (`ModelOptions::embed()`, `bindings!(..., embed)`) needs none of
//! this: it loads from the binary's bytes unless `ORT_BIND_MODEL_<NAME>` is set.
//!
//! ```no_run
//! use ort_bind_runtime::ModelFile;
//! const MODEL: ModelFile = ModelFile::new("models/x.onnx", "/build/crate/models/x.onnx");
//! let path = MODEL.find()?; // where this run found it
//! # Ok::<(), ort_bind_runtime::Error>(())
//! ```

use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub use crate::error::model_search::{LookedAt, MODEL_DIR_VAR};
use crate::error::{Error, Result};

/// A model file as the build saw it: its path relative to the crate and its absolute
/// path on the build machine. `const`-constructible, so generated code holds one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelFile {
    relative: &'static str,
    build_path: &'static str,
}

/// The run-time facts a search depends on; a value so tests can fake them.
#[derive(Debug, Clone, Default)]
struct SearchEnv {
    model_var: Option<OsString>,
    model_dir: Option<OsString>,
    exe_dir: Option<PathBuf>,
    current_dir: Option<PathBuf>,
}

impl SearchEnv {
    fn current(var: &str) -> SearchEnv {
        let get = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        SearchEnv {
            model_var: get(var),
            model_dir: get(MODEL_DIR_VAR),
            exe_dir: std::env::current_exe()
                .ok()
                .and_then(|exe| exe.parent().map(Path::to_path_buf)),
            current_dir: std::env::current_dir().ok(),
        }
    }
}

impl ModelFile {
    /// A model at `relative` inside its crate (as written in `build.rs` or the macro),
    /// which was at `build_path` when the crate was built.
    pub const fn new(relative: &'static str, build_path: &'static str) -> ModelFile {
        ModelFile {
            relative,
            build_path,
        }
    }

    /// The path relative to the crate, as written in `build.rs` or the macro.
    pub fn relative(&self) -> &'static str {
        self.relative
    }

    /// The absolute path the model had when the crate was built.
    pub fn build_path(&self) -> &'static str {
        self.build_path
    }

    /// The model's file name (`x.onnx`).
    pub fn file_name(&self) -> &str {
        Path::new(self.relative)
            .file_name()
            .or_else(|| Path::new(self.build_path).file_name())
            .and_then(|n| n.to_str())
            .unwrap_or(self.relative)
    }

    /// `ORT_BIND_MODEL_<STEM>`: the file stem upper-cased, every other character than
    /// `A-Z0-9` written `_` (`yolo-v8.onnx` -> `ORT_BIND_MODEL_YOLO_V8`).
    pub fn env_var(&self) -> String {
        let name = self.file_name();
        let stem = Path::new(name)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(name);
        let stem: String = stem
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect();
        format!("ORT_BIND_MODEL_{stem}")
    }

    /// The file named by [`ModelFile::env_var`], when that variable is set: an embedded
    /// model loads from there instead of its bytes.
    pub fn override_path(&self) -> Option<PathBuf> {
        std::env::var_os(self.env_var())
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    }

    /// The places looked at, in order (see the [module docs](self)).
    pub fn candidates(&self) -> Vec<LookedAt> {
        self.candidates_in(&SearchEnv::current(&self.env_var()))
    }

    fn candidates_in(&self, env: &SearchEnv) -> Vec<LookedAt> {
        let at = |reason: String, path: PathBuf| LookedAt { reason, path };
        if let Some(file) = &env.model_var {
            return vec![at(self.env_var(), PathBuf::from(file))];
        }
        let mut out = Vec::new();
        let mut in_folder = |reason: &str, dir: &Path| {
            out.push(at(reason.to_owned(), dir.join(self.relative)));
            if Path::new(self.relative) != Path::new(self.file_name()) {
                out.push(at(reason.to_owned(), dir.join(self.file_name())));
            }
        };
        if let Some(dir) = &env.model_dir {
            in_folder(MODEL_DIR_VAR, Path::new(dir));
        }
        if let Some(dir) = &env.exe_dir {
            in_folder("beside the executable", dir);
        }
        if let Some(dir) = &env.current_dir {
            in_folder("in the current directory", dir);
        }
        if !self.build_path.is_empty() {
            out.push(at(
                "where it was at build time".into(),
                self.build_path.into(),
            ));
        }
        out
    }

    /// The first of [`ModelFile::candidates`] that is a file.
    pub fn find(&self) -> Result<PathBuf> {
        Self::first_file(self.candidates(), self.file_name())
    }

    fn first_file(candidates: Vec<LookedAt>, model: &str) -> Result<PathBuf> {
        match candidates.iter().find(|c| c.path.is_file()) {
            Some(found) => Ok(found.path.clone()),
            None => Err(Error::ModelNotFound {
                model: model.to_owned(),
                looked: candidates,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODEL: ModelFile = ModelFile::new("models/yolo-v8.onnx", "/build/models/yolo-v8.onnx");

    #[test]
    fn names() {
        assert_eq!(MODEL.file_name(), "yolo-v8.onnx");
        assert_eq!(MODEL.env_var(), "ORT_BIND_MODEL_YOLO_V8");
        assert_eq!(MODEL.relative(), "models/yolo-v8.onnx");
        assert_eq!(MODEL.build_path(), "/build/models/yolo-v8.onnx");
    }

    #[test]
    fn order_of_places() {
        let env = SearchEnv {
            model_var: None,
            model_dir: Some("/models".into()),
            exe_dir: Some("/opt/app".into()),
            current_dir: Some("/srv".into()),
        };
        let paths: Vec<String> = MODEL
            .candidates_in(&env)
            .iter()
            .map(|c| format!("{}={}", c.reason, c.path.display()))
            .collect();
        assert_eq!(
            paths,
            [
                "ORT_BIND_MODEL_DIR=/models/models/yolo-v8.onnx",
                "ORT_BIND_MODEL_DIR=/models/yolo-v8.onnx",
                "beside the executable=/opt/app/models/yolo-v8.onnx",
                "beside the executable=/opt/app/yolo-v8.onnx",
                "in the current directory=/srv/models/yolo-v8.onnx",
                "in the current directory=/srv/yolo-v8.onnx",
                "where it was at build time=/build/models/yolo-v8.onnx",
            ]
        );
        // The per-model variable wins alone.
        let set = SearchEnv {
            model_var: Some("/x.onnx".into()),
            ..env
        };
        let only = MODEL.candidates_in(&set);
        assert_eq!(only.len(), 1);
        assert_eq!(only[0].path, Path::new("/x.onnx"));
        assert_eq!(only[0].reason, "ORT_BIND_MODEL_YOLO_V8");
    }

    #[test]
    fn a_file_name_only_model_is_looked_for_once_per_folder() {
        let bare = ModelFile::new("x.onnx", "");
        let env = SearchEnv {
            exe_dir: Some("/opt".into()),
            ..SearchEnv::default()
        };
        let found = bare.candidates_in(&env);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, Path::new("/opt/x.onnx"));
    }

    #[test]
    fn first_existing_file_wins_and_a_miss_lists_every_place() {
        let dir = std::env::temp_dir().join(format!("ort-bind-model-file-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("models")).unwrap();
        std::fs::write(dir.join("models/yolo-v8.onnx"), b"m").unwrap();
        let env = SearchEnv {
            exe_dir: Some("/nonexistent".into()),
            current_dir: Some(dir.clone()),
            ..SearchEnv::default()
        };
        let found = ModelFile::first_file(MODEL.candidates_in(&env), MODEL.file_name()).unwrap();
        assert_eq!(found, dir.join("models/yolo-v8.onnx"));

        let none = SearchEnv {
            exe_dir: Some("/nonexistent".into()),
            ..SearchEnv::default()
        };
        let err = ModelFile::first_file(MODEL.candidates_in(&none), MODEL.file_name()).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("model `yolo-v8.onnx` not found; looked at:"),
            "{text}"
        );
        assert!(
            text.contains("beside the executable: /nonexistent/models/yolo-v8.onnx"),
            "{text}"
        );
        assert!(
            text.contains("where it was at build time: /build/models/yolo-v8.onnx"),
            "{text}"
        );
        assert!(text.contains("ORT_BIND_MODEL_DIR"), "{text}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
