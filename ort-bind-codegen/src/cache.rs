//! The offline signature cache: one small JSON file per model, so a crate that uses the
//! derive or the `bindings!` macro still builds, fully checked, where the model file is
//! absent (kept in Git LFS, downloaded at deploy time). Like `cargo sqlx prepare`:
//!
//! ```text
//! $ ort-bind prepare models/detector.onnx      # from the crate root
//! wrote .ort-bind/models__detector.onnx.json
//! ```
//!
//! Commit the `.ort-bind/` folder. The macros then resolve a model path like this
//! ([`resolve`]):
//!
//! - model present, no cache: the model's signature;
//! - model present and a cache: both, and the cache must match the model, otherwise the
//!   build fails with a "stale cache" error that lists what changed and says how to
//!   refresh it;
//! - model absent: the cache's signature (an error naming both paths when there is none);
//! - `ORT_BIND_OFFLINE=1` in the build's environment: the cache only, even when the model
//!   is present (to check in CI that the committed cache is enough).
//!
//! # What "stale" means
//!
//! The cache holds the decoded signature (names, element types, dims, doc strings,
//! producer, opsets), the model's length in bytes, and a hash of the signature. A cache
//! is stale when the signature decoded from the model differs from the cached one:
//! exactly what the compile-time checks and the generated code depend on. Retraining
//! that changes only weights leaves the cache valid, and verifying it never hashes the
//! model file (a 1 GiB model is decoded in milliseconds because weight payloads are
//! skipped, while hashing it would read every byte). The stored hash protects the cache
//! file itself: a hand-edited or merge-mangled cache is refused. The model length is
//! kept for information only. `metadata_props` are not cached (codegen does not use
//! them, and some models keep large blobs there).

use std::fmt;
use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};

use crate::json::{self, Value};
use crate::onnx::{ModelError, read_signature};
use crate::sig::{ModelSignature, ValueInfo, ValueType, format_dims};

/// Folder, next to the crate's `Cargo.toml`, that holds cache files.
pub const CACHE_DIR: &str = ".ort-bind";

/// Environment variable that makes the macros use the cache even when the model exists.
pub const OFFLINE_ENV: &str = "ORT_BIND_OFFLINE";

/// Version of the cache file format.
const FORMAT: u64 = 1;

/// Why a cache could not be written, read or used.
#[derive(Debug)]
#[non_exhaustive]
pub enum CacheError {
    /// The model could not be read (and no cache could stand in for it, or it is needed).
    Model(ModelError),
    /// Neither the model nor a cache for it exists.
    Missing {
        /// The model path, resolved.
        model: PathBuf,
        /// Where the cache would be.
        cache: PathBuf,
        /// The model path as written.
        rel: PathBuf,
    },
    /// Offline mode was asked for and there is no cache.
    OfflineMissing {
        /// Where the cache would be.
        cache: PathBuf,
        /// The model path as written.
        rel: PathBuf,
    },
    /// The cache file could not be read or written.
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The cache file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The cache file is not a cache this version understands, or was edited by hand.
    Corrupt {
        /// The cache file.
        path: PathBuf,
        /// The model path as written.
        rel: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// The cache does not match the model.
    Stale {
        /// The cache file.
        cache: PathBuf,
        /// The model file.
        model: PathBuf,
        /// The model path as written.
        rel: PathBuf,
        /// What changed, one entry per difference.
        changes: Vec<String>,
    },
}

impl fmt::Display for CacheError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CacheError::Model(inner) => fmt::Display::fmt(inner, f),
            CacheError::Missing { model, cache, rel } => write!(
                f,
                "ONNX model `{}` not found, and there is no offline signature cache for it at `{}`; \
         add the model file, or write the cache where the model is present with \
         `ort-bind prepare {}` (run from the crate root) and commit it",
                model.display(),
                cache.display(),
                rel.display()
            ),
            CacheError::OfflineMissing { cache, rel } => write!(
                f,
                "{OFFLINE_ENV} is set, but there is no offline signature cache for `{}` at `{}`; \
         write it with `ort-bind prepare {}` (run from the crate root)",
                rel.display(),
                cache.display(),
                rel.display()
            ),
            CacheError::Io {
                action,
                path,
                source,
            } => write!(
                f,
                "cannot {action} the offline signature cache `{}`: {source}",
                path.display()
            ),
            CacheError::Corrupt { path, rel, detail } => write!(
                f,
                "the offline signature cache `{}` is unreadable ({detail}); delete it and run \
         `ort-bind prepare {}` again",
                path.display(),
                rel.display()
            ),
            CacheError::Stale {
                cache,
                model,
                rel,
                changes,
            } => write!(
                f,
                "stale offline signature cache: `{}` no longer matches `{}` ({}); refresh it with \
         `ort-bind prepare {}` (run from the crate root) and commit it",
                cache.display(),
                model.display(),
                changes.join("; "),
                rel.display()
            ),
        }
    }
}

impl std::error::Error for CacheError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CacheError::Model(inner) => std::error::Error::source(inner),
            CacheError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<ModelError> for CacheError {
    fn from(e: ModelError) -> Self {
        CacheError::Model(e)
    }
}

/// Where a signature came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The model file (a cache, if present, matched it).
    Model,
    /// The cache file, the model being absent (or [`OFFLINE_ENV`] set).
    Cache,
}

/// A model path resolved for the macros.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The signature (from the model, or from the cache).
    pub signature: ModelSignature,
    /// The model path, absolute (canonical when the file exists).
    pub model: PathBuf,
    /// Whether the model file exists.
    pub model_present: bool,
    /// The cache file, when it exists.
    pub cache: Option<PathBuf>,
    /// Which one the signature came from.
    pub source: Source,
}

/// The lexically normalised form of a relative model path (`./a/../b.onnx` -> `b.onnx`;
/// leading `..` kept).
fn normalise(rel: &Path) -> PathBuf {
    let mut out: Vec<Component<'_>> = Vec::new();
    for c in rel.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                _ => out.push(c),
            },
            other => out.push(other),
        }
    }
    out.iter().collect()
}

/// The cache file for a model path as written in the macro (relative to `root`, the
/// crate's manifest dir): `<root>/.ort-bind/<path with '/' as '__'>.json`, e.g.
/// `models/add.onnx` -> `.ort-bind/models__add.onnx.json`.
pub fn cache_path(root: &Path, model_rel: &Path) -> PathBuf {
    let rel = match model_rel.strip_prefix(root) {
        Ok(inside) => inside.to_path_buf(),
        Err(_) => model_rel.to_path_buf(),
    };
    let parts: Vec<String> = normalise(&rel)
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".to_owned()),
            Component::RootDir | Component::Prefix(_) | Component::CurDir => None,
        })
        .collect();
    root.join(CACHE_DIR)
        .join(format!("{}.json", parts.join("__")))
}

/// The signature without what the cache leaves out (`metadata_props`).
pub fn cacheable(sig: &ModelSignature) -> ModelSignature {
    ModelSignature {
        metadata: Vec::new(),
        ..sig.clone()
    }
}

/// 64-bit FNV-1a: small, dependency-free, and plenty to notice an edited file.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn signature_hash(signature: &Value) -> String {
    // Compact, keys sorted: the text the hash was defined on (serde_json's default map).
    let mut text = String::new();
    signature.write(&mut text, ",", ":", true);
    format!("{:016x}", fnv1a(text.as_bytes()))
}

fn json_text(s: &str) -> String {
    let mut text = String::new();
    json::write_string(s, &mut text);
    text
}

fn spaced(v: &Value) -> String {
    let mut text = String::new();
    v.write(&mut text, ", ", ": ", true);
    text
}

/// One value per line: `{"name": "x", "dtype": "float32", "shape": ["n"], "doc": ""}`.
fn value_line(v: &Value) -> String {
    let mut parts = Vec::new();
    for key in ["name", "dtype", "unsupported", "type", "shape", "doc"] {
        if let Some(field) = v.get(key) {
            parts.push(format!("{}: {}", json_text(key), spaced(field)));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

/// The cache file's text for `sig`, read from a model of `model_bytes` bytes whose path
/// is written `model_rel`: one line per graph value, so diffs of a changed model read
/// well.
pub fn to_cache_json(sig: &ModelSignature, model_rel: &Path, model_bytes: u64) -> String {
    let signature = json::encode(&cacheable(sig));
    let mut out = String::from("{\n");
    let mut field = |key: &str, value: String| {
        out.push_str(&format!("  {}: {value},\n", json_text(key)));
    };
    field("ort_bind_signature_cache", FORMAT.to_string());
    field(
        "model",
        json_text(&model_rel.to_string_lossy().replace('\\', "/")),
    );
    field("model_bytes", model_bytes.to_string());
    field("signature_hash", json_text(&signature_hash(&signature)));
    out.push_str("  \"signature\": {\n");
    for key in [
        "ir_version",
        "producer_name",
        "producer_version",
        "graph_name",
        "doc_string",
        "opsets",
        "in_place",
        "inferred",
    ] {
        if signature.get(key).is_none() {
            continue;
        }
        out.push_str(&format!(
            "    {}: {},\n",
            json_text(key),
            signature.get(key).map(spaced).unwrap_or_default()
        ));
    }
    let lists: Vec<&str> = ["initialized_inputs", "inputs", "outputs"]
        .into_iter()
        .filter(|key| *key != "initialized_inputs" || signature.get(key).is_some())
        .collect();
    for (i, key) in lists.iter().enumerate() {
        let values = signature
            .get(key)
            .and_then(Value::as_array)
            .unwrap_or_default();
        let lines: Vec<String> = values
            .iter()
            .map(|v| format!("      {}", value_line(v)))
            .collect();
        let end = if i + 1 < lists.len() { "," } else { "" };
        if lines.is_empty() {
            out.push_str(&format!("    {}: []{end}\n", json_text(key)));
        } else {
            out.push_str(&format!(
                "    {}: [\n{}\n    ]{end}\n",
                json_text(key),
                lines.join(",\n")
            ));
        }
    }
    out.push_str("  }\n}\n");
    out
}

/// Parses a cache file's text, checking its format version and its signature hash.
/// `Err` says what is wrong.
pub fn from_cache_json(text: &str) -> Result<ModelSignature, String> {
    let file = Value::parse(text).map_err(|e| format!("not JSON: {e}"))?;
    match file.get("ort_bind_signature_cache").and_then(Value::as_u64) {
        Some(FORMAT) => {}
        Some(v) => return Err(format!("format version {v}, this ort-bind reads {FORMAT}")),
        None => return Err("not an ort-bind signature cache".into()),
    }
    let signature = file.get("signature").ok_or("`signature` is missing")?;
    let stored = json::str_field(&file, "signature_hash")?;
    if stored != signature_hash(signature) {
        return Err(
            "its signature does not match its `signature_hash` (was it edited by hand?)".into(),
        );
    }
    json::decode(signature)
}

fn describe(v: &ValueInfo) -> String {
    match &v.kind {
        ValueType::Tensor { elem, dims } => format!("{elem} {}", format_dims(dims.as_deref())),
        kind => kind.to_string(),
    }
}

/// What differs between a cached signature and the model's, one line each (empty when
/// they are equal).
pub fn differences(cached: &ModelSignature, model: &ModelSignature) -> Vec<String> {
    let model = cacheable(model);
    let mut out = Vec::new();
    for (role, c, m) in [
        ("input", &cached.inputs, &model.inputs),
        (
            "input with a default",
            &cached.initialized_inputs,
            &model.initialized_inputs,
        ),
        ("output", &cached.outputs, &model.outputs),
    ] {
        for cv in c {
            match m.iter().find(|mv| mv.name == cv.name) {
                None => out.push(format!("{role} `{}` is gone", cv.name)),
                Some(mv) if mv.kind != cv.kind => out.push(format!(
                    "{role} `{}` was {}, is {}",
                    cv.name,
                    describe(cv),
                    describe(mv)
                )),
                Some(mv) if mv.doc_string != cv.doc_string => {
                    out.push(format!("the doc string of {role} `{}` changed", cv.name));
                }
                Some(_) => {}
            }
        }
        for mv in m {
            if !c.iter().any(|cv| cv.name == mv.name) {
                out.push(format!("{role} `{}` ({}) is new", mv.name, describe(mv)));
            }
        }
        let order = |vs: &[ValueInfo]| vs.iter().map(|v| v.name.clone()).collect::<Vec<_>>();
        if out.is_empty() && order(c) != order(m) {
            out.push(format!("the order of the {role}s changed"));
        }
    }
    if out.is_empty() && *cached != model {
        let mut what = String::new();
        for (field, differs) in [
            (
                "producer",
                cached.producer_name != model.producer_name
                    || cached.producer_version != model.producer_version,
            ),
            ("opsets", cached.opsets != model.opsets),
            ("IR version", cached.ir_version != model.ir_version),
            ("model doc string", cached.doc_string != model.doc_string),
            ("graph name", cached.graph_name != model.graph_name),
            ("in-place operators", cached.in_place != model.in_place),
        ] {
            if differs {
                let _ = write!(what, "{}{field}", if what.is_empty() { "" } else { ", " });
            }
        }
        out.push(format!("the {what} changed"));
    }
    out
}

/// Reads the model at `root/model_rel` and writes its cache file (only when the content
/// changed). Returns the cache path.
pub fn write(root: &Path, model_rel: &Path) -> Result<PathBuf, CacheError> {
    let model = root.join(model_rel);
    let sig = read_signature(&model)?;
    let bytes = std::fs::metadata(&model)
        .map(|m| m.len())
        .map_err(|source| ModelError::Io {
            path: model.clone(),
            source,
        })?;
    let path = cache_path(root, model_rel);
    let text = to_cache_json(&sig, &normalise(model_rel), bytes);
    if std::fs::read_to_string(&path).is_ok_and(|old| old == text) {
        return Ok(path);
    }
    let io = |source| CacheError::Io {
        action: "write",
        path: path.clone(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    std::fs::write(&path, text).map_err(io)?;
    Ok(path)
}

fn read_cache(path: &Path, rel: &Path) -> Result<ModelSignature, CacheError> {
    let text = std::fs::read_to_string(path).map_err(|source| CacheError::Io {
        action: "read",
        path: path.to_owned(),
        source,
    })?;
    from_cache_json(&text).map_err(|detail| CacheError::Corrupt {
        path: path.to_owned(),
        rel: rel.to_owned(),
        detail,
    })
}

/// Resolves `model_rel` (as written in a macro) against `root` (the crate's manifest
/// dir) for the macros: see the module docs. `offline` is [`OFFLINE_ENV`].
pub fn resolve(root: &Path, model_rel: &Path, offline: bool) -> Result<Resolved, CacheError> {
    let joined = root.join(model_rel);
    let cache = cache_path(root, model_rel);
    let cache_exists = cache.is_file();
    let model_present = joined.is_file();
    let model = if model_present {
        std::fs::canonicalize(&joined).unwrap_or(joined)
    } else {
        joined
    };
    let cache_opt = cache_exists.then(|| cache.clone());
    if offline {
        if !cache_exists {
            return Err(CacheError::OfflineMissing {
                cache,
                rel: model_rel.to_owned(),
            });
        }
        return Ok(Resolved {
            signature: read_cache(&cache, model_rel)?,
            model,
            model_present,
            cache: cache_opt,
            source: Source::Cache,
        });
    }
    if model.exists() && !model_present {
        // A directory (or other non-file) where the model should be: the model reader's
        // error says so.
        return Err(read_signature(&model).err().map_or_else(
            || CacheError::Missing {
                model: model.clone(),
                cache: cache.clone(),
                rel: model_rel.to_owned(),
            },
            CacheError::Model,
        ));
    }
    if !model_present {
        if !cache_exists {
            return Err(CacheError::Missing {
                model,
                cache,
                rel: model_rel.to_owned(),
            });
        }
        return Ok(Resolved {
            signature: read_cache(&cache, model_rel)?,
            model,
            model_present,
            cache: cache_opt,
            source: Source::Cache,
        });
    }
    let signature = read_signature(&model)?;
    if cache_exists {
        let cached = read_cache(&cache, model_rel)?;
        let changes = differences(&cached, &signature);
        if !changes.is_empty() {
            return Err(CacheError::Stale {
                cache,
                model,
                rel: model_rel.to_owned(),
                changes,
            });
        }
    }
    Ok(Resolved {
        signature,
        model,
        model_present,
        cache: cache_opt,
        source: Source::Model,
    })
}

/// Checks that the cache for `root/model_rel` exists and matches the model (for
/// `ort-bind prepare --check`).
pub fn verify(root: &Path, model_rel: &Path) -> Result<PathBuf, CacheError> {
    let cache = cache_path(root, model_rel);
    if !cache.is_file() {
        return Err(CacheError::OfflineMissing {
            cache,
            rel: model_rel.to_owned(),
        });
    }
    let resolved = resolve(root, model_rel, false)?;
    match resolved.source {
        Source::Model => Ok(cache),
        // The model is absent: nothing to verify against.
        Source::Cache => Err(CacheError::Missing {
            model: resolved.model,
            cache,
            rel: model_rel.to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::ElementType;
    use crate::sig::Dim;

    fn fixtures() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ort-bind-tests/tests/fixtures")
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("ort-bind-cache-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("models")).unwrap();
        dir
    }

    #[test]
    fn cache_paths_are_flat_and_normalised() {
        let root = Path::new("/crate");
        assert_eq!(
            cache_path(root, Path::new("models/add.onnx")),
            Path::new("/crate/.ort-bind/models__add.onnx.json")
        );
        assert_eq!(
            cache_path(root, Path::new("./models/x/../add.onnx")),
            Path::new("/crate/.ort-bind/models__add.onnx.json")
        );
        assert_eq!(
            cache_path(root, Path::new("/crate/models/add.onnx")),
            Path::new("/crate/.ort-bind/models__add.onnx.json")
        );
        assert_eq!(
            cache_path(root, Path::new("../shared/add.onnx")),
            Path::new("/crate/.ort-bind/..__shared__add.onnx.json")
        );
    }

    #[test]
    fn every_fixture_round_trips() {
        for name in [
            "add",
            "messy",
            "dynamic",
            "nonzero",
            "scalar",
            "alltypes",
            "state",
            "external",
            "ir3_init_as_input",
            "lora/lora",
        ] {
            let sig = read_signature(fixtures().join(format!("{name}.onnx"))).unwrap();
            let text = to_cache_json(&sig, Path::new("m.onnx"), 1);
            let back = from_cache_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(back, cacheable(&sig), "{name}");
            assert!(differences(&back, &sig).is_empty(), "{name}");
        }
    }

    #[test]
    fn nested_kinds_round_trip() {
        let f32_any = || ValueType::Tensor {
            elem: ElementType::F32,
            dims: None,
        };
        let kinds = [
            ValueType::Sequence(Box::new(ValueType::Map {
                key: ElementType::String,
                value: Box::new(f32_any()),
            })),
            ValueType::Optional(Box::new(ValueType::Sequence(Box::new(ValueType::Tensor {
                elem: ElementType::I64,
                dims: Some(vec![Dim::Named("n".into()), Dim::Fixed(3), Dim::Dynamic]),
            })))),
            ValueType::Map {
                key: ElementType::I64,
                value: Box::new(ValueType::Unsupported("<no type>".into())),
            },
            ValueType::Unsupported("map(float32, float32)".into()),
            ValueType::Tensor {
                elem: ElementType::String,
                dims: Some(vec![]),
            },
        ];
        let mut sig = read_signature(fixtures().join("add.onnx")).unwrap();
        for (i, kind) in kinds.into_iter().enumerate() {
            sig.outputs.push(ValueInfo {
                name: format!("v{i}"),
                kind,
                doc_string: String::new(),
            });
        }
        let text = to_cache_json(&sig, Path::new("m.onnx"), 1);
        assert!(text.contains(r#""sequence":"#), "{text}");
        let back = from_cache_json(&text).unwrap();
        assert_eq!(back, cacheable(&sig));
    }

    #[test]
    fn edited_caches_are_refused() {
        let sig = read_signature(fixtures().join("add.onnx")).unwrap();
        let text = to_cache_json(&sig, Path::new("add.onnx"), 1);
        let edited = text.replace("\"float32\"", "\"float64\"");
        assert!(
            from_cache_json(&edited)
                .unwrap_err()
                .contains("edited by hand")
        );
        assert!(
            from_cache_json("{}")
                .unwrap_err()
                .contains("not an ort-bind")
        );
        assert!(from_cache_json("nope").unwrap_err().contains("not JSON"));
    }

    #[test]
    fn resolve_prefers_the_model_and_detects_stale_caches() {
        let root = scratch("resolve");
        let rel = Path::new("models/m.onnx");
        // Neither model nor cache.
        let err = resolve(&root, rel, false).unwrap_err();
        assert!(matches!(err, CacheError::Missing { .. }), "{err}");
        assert!(
            err.to_string().contains("ort-bind prepare models/m.onnx"),
            "{err}"
        );

        // Model only.
        std::fs::copy(fixtures().join("add.onnx"), root.join(rel)).unwrap();
        let r = resolve(&root, rel, false).unwrap();
        assert_eq!(r.source, Source::Model);
        assert!(r.cache.is_none());

        // Model and a matching cache.
        let cache = write(&root, rel).unwrap();
        assert_eq!(cache, root.join(".ort-bind/models__m.onnx.json"));
        let r = resolve(&root, rel, false).unwrap();
        assert_eq!(
            (r.source, r.cache.as_deref()),
            (Source::Model, Some(cache.as_path()))
        );
        assert!(verify(&root, rel).is_ok());

        // Offline: the cache even though the model is there.
        assert_eq!(resolve(&root, rel, true).unwrap().source, Source::Cache);

        // The model changes its signature: stale.
        std::fs::copy(fixtures().join("add16.onnx"), root.join(rel)).unwrap();
        let err = resolve(&root, rel, false).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, CacheError::Stale { .. }), "{msg}");
        assert!(msg.contains("input `x` is gone"), "{msg}");
        assert!(msg.contains("input `a` (float32 [16]) is new"), "{msg}");
        assert!(msg.contains("ort-bind prepare models/m.onnx"), "{msg}");
        assert!(verify(&root, rel).is_err());

        // Refresh, then remove the model: the cache stands in.
        write(&root, rel).unwrap();
        std::fs::remove_file(root.join(rel)).unwrap();
        let r = resolve(&root, rel, false).unwrap();
        assert_eq!(r.source, Source::Cache);
        assert_eq!(r.signature.inputs[0].name, "a");
        assert!(!r.model_present);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_directory_is_not_a_model() {
        let root = scratch("dir");
        let err = resolve(&root, Path::new("models"), false).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
        std::fs::remove_dir_all(&root).unwrap();
    }

    /// Hashes written by earlier releases (which wrote JSON with `serde_json`) stay valid:
    /// these are the `signature_hash` of caches that release wrote for two fixtures. (Those
    /// releases had no shape inference: such a cache still reads, and `resolve` reports it
    /// stale against the model, whose signature now holds inferred shapes.)
    #[test]
    fn hashes_of_earlier_caches_still_match() {
        for (name, hash) in [("add", "5bad4a49e75c314f"), ("messy", "3035d93c73ad1ba6")] {
            let mut sig = read_signature(fixtures().join(format!("{name}.onnx"))).unwrap();
            sig.inferred.clear();
            let text = to_cache_json(&sig, Path::new("m.onnx"), 1);
            assert!(
                text.contains(&format!(r#""signature_hash": "{hash}""#)),
                "{name}: {text}"
            );
        }
    }

    /// Every one-byte change of a cache file reads as a signature or fails with a message
    /// (never a panic): the cache is text a merge can mangle.
    #[test]
    fn mangled_caches_fail_cleanly() {
        let sig = read_signature(fixtures().join("messy.onnx")).unwrap();
        let text = to_cache_json(&sig, Path::new("messy.onnx"), 1);
        let bytes = text.as_bytes();
        for i in 0..bytes.len() {
            for b in [b'"', b'\\', b'{', b']', b',', b'0', b'-', b'n', b'x'] {
                let mut mangled = bytes.to_vec();
                mangled[i] = b;
                if let Ok(mangled) = std::str::from_utf8(&mangled)
                    && let Err(e) = from_cache_json(mangled)
                {
                    assert!(!e.is_empty());
                }
            }
        }
    }

    #[test]
    fn the_hash_ignores_key_order() {
        let sig = read_signature(fixtures().join("add.onnx")).unwrap();
        let text = to_cache_json(&sig, Path::new("add.onnx"), 1);
        // Same content, keys of one value in another order: still valid.
        let reordered = text.replacen(
            r#"{"name": "x", "dtype": "float32", "shape": ["n"], "doc": "first addend"}"#,
            r#"{"doc": "first addend", "shape": ["n"], "dtype": "float32", "name": "x"}"#,
            1,
        );
        assert_ne!(reordered, text);
        assert_eq!(from_cache_json(&reordered).unwrap(), cacheable(&sig));
    }

    #[test]
    fn differences_name_what_changed() {
        let a = read_signature(fixtures().join("add.onnx")).unwrap();
        let mut b = a.clone();
        if let ValueType::Tensor { elem, .. } = &mut b.outputs[0].kind {
            *elem = ElementType::F64;
        }
        assert_eq!(
            differences(&cacheable(&a), &b),
            vec!["output `sum` was float32 [n], is float64 [n]".to_owned()]
        );
        let mut c = a.clone();
        c.producer_version = "2".into();
        assert_eq!(
            differences(&cacheable(&a), &c),
            vec!["the producer changed".to_owned()]
        );
        // metadata is not part of the cache.
        let mut d = a.clone();
        d.metadata.push(("k".into(), "v".into()));
        assert!(differences(&cacheable(&a), &d).is_empty());
    }
}
