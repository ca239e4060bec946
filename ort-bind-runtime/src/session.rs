//! Loading a model into ONNX Runtime, and checking it against generated bindings.

use std::path::Path;
use std::ptr::NonNull;
use std::sync::Arc;

use ort::AsPointer;
use ort::session::builder::GraphOptimizationLevel;
use ort::sys::{ONNXTensorElementDataType, OrtSession};
use ort::value::ValueType;

use crate::element::onnx_type_name;
use crate::error::{Error, Result};
use crate::library;

/// How to build a session. The defaults are ONNX Runtime's, except that the number
/// of intra-op threads can be pinned for reproducible benchmarks.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    intra_threads: Option<usize>,
    inter_threads: Option<usize>,
    optimization: Option<u8>,
}

impl SessionOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Threads used inside one operator (0 lets ONNX Runtime decide).
    pub fn intra_threads(mut self, n: usize) -> Self {
        self.intra_threads = Some(n);
        self
    }

    /// Threads used to run independent operators in parallel.
    pub fn inter_threads(mut self, n: usize) -> Self {
        self.inter_threads = Some(n);
        self
    }

    /// Graph optimisation level: 0 (none), 1 (basic), 2 (extended), 3 (all; default).
    pub fn optimization_level(mut self, level: u8) -> Self {
        self.optimization = Some(level.min(3));
        self
    }

    fn builder(&self) -> Result<ort::session::builder::SessionBuilder> {
        let env = library::init()?.environment();
        let wrap = |e: ort::Error| Error::Ort {
            context: "configuring the session".into(),
            message: e.to_string(),
        };
        let mut b = ort::session::Session::builder(env).map_err(wrap)?;
        if let Some(n) = self.intra_threads {
            b = b.with_intra_threads(n).map_err(|e| wrap(e.into()))?;
        }
        if let Some(n) = self.inter_threads {
            b = b.with_inter_threads(n).map_err(|e| wrap(e.into()))?;
        }
        if let Some(level) = self.optimization {
            let level = match level {
                0 => GraphOptimizationLevel::Disable,
                1 => GraphOptimizationLevel::Level1,
                2 => GraphOptimizationLevel::Level2,
                _ => GraphOptimizationLevel::All,
            };
            b = b
                .with_optimization_level(level)
                .map_err(|e| wrap(e.into()))?;
        }
        Ok(b)
    }
}

/// A loaded model: an ONNX Runtime session shared (reference-counted) by every
/// binding made from it. ONNX Runtime allows concurrent runs on one session, each
/// through its own binding.
#[derive(Debug, Clone)]
pub struct Session {
    inner: Arc<ort::session::Session>,
}

/// What generated code expects of one model value (for [`Session::check_signature`]).
#[derive(Debug, Clone, Copy)]
pub struct ValueSpec {
    /// ONNX name.
    pub name: &'static str,
    /// Element type.
    pub elem: ONNXTensorElementDataType,
    /// Rank, when the model declares one.
    pub rank: Option<usize>,
}

impl ValueSpec {
    /// The spec of a tensor of `T` named `name` with the given rank.
    pub const fn of<T: crate::element::Element>(
        name: &'static str,
        rank: Option<usize>,
    ) -> ValueSpec {
        ValueSpec {
            name,
            elem: T::ONNX_TYPE,
            rank,
        }
    }
}

impl Session {
    /// Loads the model at `path`.
    pub fn from_file(path: impl AsRef<Path>, options: &SessionOptions) -> Result<Session> {
        let path = path.as_ref();
        if !path.exists() {
            return Err(Error::Io {
                path: path.display().to_string(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            });
        }
        let session = options
            .builder()?
            .commit_from_file(path)
            .map_err(|e| Error::Ort {
                context: format!("loading the model `{}`", path.display()),
                message: e.to_string(),
            })?;
        Ok(Session {
            inner: Arc::new(session),
        })
    }

    /// Loads a model from bytes in memory.
    pub fn from_memory(bytes: &[u8], options: &SessionOptions) -> Result<Session> {
        let session = options
            .builder()?
            .commit_from_memory(bytes)
            .map_err(|e| Error::Ort {
                context: "loading a model from memory".into(),
                message: e.to_string(),
            })?;
        Ok(Session {
            inner: Arc::new(session),
        })
    }

    /// The underlying `ort` session, for anything ort-bind does not wrap.
    pub fn ort(&self) -> &ort::session::Session {
        &self.inner
    }

    pub(crate) fn raw(&self) -> NonNull<OrtSession> {
        // `ort` guarantees the pointer is non-null for a live session.
        NonNull::new(self.inner.ptr().cast_mut()).expect("ort sessions have non-null pointers")
    }

    /// Checks that the loaded model has exactly these inputs and outputs (names, element
    /// types and ranks), so bindings generated from one model file cannot silently run
    /// another.
    pub fn check_signature(&self, inputs: &[ValueSpec], outputs: &[ValueSpec]) -> Result<()> {
        check_side("input", self.inner.inputs(), inputs)?;
        check_side("output", self.inner.outputs(), outputs)
    }
}

fn check_side(kind: &str, actual: &[ort::value::Outlet], expected: &[ValueSpec]) -> Result<()> {
    for spec in expected {
        let Some(outlet) = actual.iter().find(|o| o.name() == spec.name) else {
            let names: Vec<&str> = actual.iter().map(|o| o.name()).collect();
            return Err(Error::SignatureMismatch {
                problem: format!("the model has no {kind} `{}` (it has {names:?})", spec.name),
            });
        };
        match outlet.dtype() {
            ValueType::Tensor { ty, shape, .. } => {
                let found: ONNXTensorElementDataType = (*ty).into();
                if found != spec.elem {
                    return Err(Error::SignatureMismatch {
                        problem: format!(
                            "{kind} `{}` is {} in the model, the bindings expect {}",
                            spec.name,
                            onnx_type_name(found),
                            onnx_type_name(spec.elem)
                        ),
                    });
                }
                if let Some(rank) = spec.rank
                    && shape.len() != rank
                {
                    return Err(Error::SignatureMismatch {
                        problem: format!(
                            "{kind} `{}` has rank {} in the model, the bindings expect {rank}",
                            spec.name,
                            shape.len()
                        ),
                    });
                }
            }
            other => {
                return Err(Error::SignatureMismatch {
                    problem: format!(
                        "{kind} `{}` is not a tensor in the model ({other:?})",
                        spec.name
                    ),
                });
            }
        }
    }
    if actual.len() != expected.len() {
        let extra: Vec<&str> = actual
            .iter()
            .map(|o| o.name())
            .filter(|n| !expected.iter().any(|s| s.name == *n))
            .collect();
        return Err(Error::SignatureMismatch {
            problem: format!("the model has {kind}s the bindings do not know: {extra:?}"),
        });
    }
    Ok(())
}
