//! LoRA adapters on the binding path.
//!
//! ONNX Runtime's own adapter API (active adapters in `RunOptions`) appends the adapter's
//! parameters as extra feeds inside `Run`, and has no effect under `RunWithBinding`, which
//! every ort-bind run is. So ort-bind binds adapters itself: an [`Adapter`] reads an
//! `.onnx_adapter` file once into host tensors, and a generated binding's `set_adapter`
//! binds each parameter as the model's overridable input of that name (an input whose
//! initializer is its default), with no copy. While an adapter is set, the binding borrows
//! it ([`WithAdapter`]); dropping that guard unbinds the parameters, and the model runs with
//! its defaults again.
//!
//! ```no_run
//! # fn demo() -> ort_bind_runtime::Result<()> {
//! let math = ort_bind_runtime::Adapter::from_file("adapters/math.onnx_adapter")?;
//! for (name, dims) in math.parameters() {
//!     println!("{name} {dims:?}");
//! }
//! // let active = binding.set_adapter(&math)?;  // a generated binding, checked against its
//! // active.run()?;                             // model's overridable inputs
//! # Ok(()) }
//! ```

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ort_bind_adapter::{ExpectedAxis, ExpectedParameter};

use crate::element::NumericType;
use crate::error::{Error, Result};
use crate::session::ValueSpec;
use crate::sys::{ReadOnlyValue, Value};

/// A LoRA adapter (ONNX Runtime's `.onnx_adapter` format): named parameters held in host
/// memory, set on a binding of a model whose overridable inputs they fit. Cloning shares the
/// parameters (a counted reference); one adapter serves any number of bindings.
#[derive(Clone)]
pub struct Adapter {
    inner: Arc<Parameters>,
}

struct Parameters {
    /// The file, or `<bytes>`, for messages.
    source: String,
    /// Distinguishes this adapter's values from any other's (see `BoundAdapter::id`).
    id: usize,
    list: Vec<Parameter>,
}

struct Parameter {
    name: String,
    element: i32,
    dims: Vec<i64>,
    value: ReadOnlyValue,
}

impl fmt::Debug for Adapter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Adapter")
            .field("source", &self.inner.source)
            .field(
                "parameters",
                &self
                    .inner
                    .list
                    .iter()
                    .map(|p| (&p.name, &p.dims))
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Adapter {
    /// Reads an `.onnx_adapter` file (as ONNX Runtime's Python `AdapterFormat` writes it)
    /// into host memory. A malformed file is an [`Error::Adapter`] saying what is wrong.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Adapter> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.display().to_string(),
            source,
        })?;
        Adapter::read(&bytes, format!("`{}`", path.display()))
    }

    /// [`Adapter::from_file`] on the file's bytes in memory (e.g. `include_bytes!`).
    pub fn from_bytes(bytes: &[u8]) -> Result<Adapter> {
        Adapter::read(bytes, "<bytes>".to_owned())
    }

    fn read(bytes: &[u8], source: String) -> Result<Adapter> {
        let fail = |problem: String| Error::Adapter {
            adapter: source.clone(),
            problem,
        };
        let view = ort_bind_adapter::read(bytes).map_err(|e| fail(e.to_string()))?;
        let mut list = Vec::with_capacity(view.parameters.len());
        for p in &view.parameters {
            let element = numeric(p.element).ok_or_else(|| {
                fail(format!(
                    "parameter `{}` has element type code {}, which ort-bind does not bind",
                    p.name, p.element
                ))
            })?;
            // ONNX Runtime reads a bool as one byte that is 0 or 1.
            if element == NumericType::Bool && p.data.iter().any(|b| *b > 1) {
                return Err(fail(format!(
                    "parameter `{}` holds a bool byte that is neither 0 nor 1",
                    p.name
                )));
            }
            let value = Value::owned_tensor_from_bytes(&p.dims, element.onnx(), p.data)
                .map_err(|e| fail(format!("parameter `{}`: {e}", p.name)))?;
            list.push(Parameter {
                name: p.name.to_owned(),
                element: p.element,
                dims: p.dims.clone(),
                value: ReadOnlyValue::new(value),
            });
        }
        static NEXT_ID: AtomicUsize = AtomicUsize::new(1);
        Ok(Adapter {
            inner: Arc::new(Parameters {
                source,
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                list,
            }),
        })
    }

    /// A number no other adapter shares (clones share it): what a batcher groups by.
    pub(crate) fn id(&self) -> usize {
        self.inner.id
    }

    /// Where the adapter was read from: its file (quoted), or `<bytes>`.
    pub fn source(&self) -> &str {
        &self.inner.source
    }

    /// Each parameter's name and dims, in file order.
    pub fn parameters(&self) -> impl Iterator<Item = (&str, &[i64])> {
        self.inner
            .list
            .iter()
            .map(|p| (p.name.as_str(), p.dims.as_slice()))
    }
}

/// The element type of ONNX file-format code `code` (an adapter file's), when ort-bind
/// binds it. (ONNX Runtime's C enum numbers `float8e8m0`, `uint2` and `int2` differently.)
fn numeric(code: i32) -> Option<NumericType> {
    let ort = ort_bind_elements::ElementType::from_onnx(code)?.ort_code();
    NumericType::ALL
        .iter()
        .copied()
        .find(|t| t.onnx() as i32 == ort)
}

/// How messages name element type `code`: `float32`, or the code when ort-bind has no name.
fn element_name(code: i32) -> String {
    numeric(code).map_or_else(|| format!("element type {code}"), |t| t.name().to_owned())
}

/// One axis of an overridable input as the model declares it, for checking an adapter's
/// parameters against it (generated code lists them).
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum DeclaredAxis {
    /// A fixed size.
    Fixed(u64),
    /// A named dim: every parameter has one size for it (a LoRA rank).
    Named(&'static str),
    /// An unnamed dynamic axis: any size.
    Any,
}

/// An [`Adapter`] checked against a model's overridable inputs: which parameter each input
/// takes. What a binding holds while the adapter is set (generated code makes it).
#[doc(hidden)]
#[derive(Debug)]
pub struct BoundAdapter {
    adapter: Adapter,
    // Per overridable input (in `specs` order), the index of its parameter, if any.
    slots: Vec<Option<usize>>,
}

impl BoundAdapter {
    /// Checks `adapter` against the overridable inputs `specs` (with their declared axes,
    /// `axes[k]` for `specs[k]`, `None` for an unknown rank): every parameter must be one of
    /// them, of its element type, rank and fixed sizes, and each named dim must have one size
    /// across the parameters. The error names the first parameter that does not fit.
    pub fn new(
        adapter: &Adapter,
        specs: &[ValueSpec],
        axes: &[Option<&[DeclaredAxis]>],
    ) -> Result<BoundAdapter> {
        let axes: Vec<Option<Vec<ExpectedAxis<'_>>>> = axes
            .iter()
            .map(|a| {
                a.map(|a| {
                    a.iter()
                        .map(|d| match *d {
                            DeclaredAxis::Fixed(n) => ExpectedAxis::Fixed(n),
                            DeclaredAxis::Named(name) => ExpectedAxis::Named(name),
                            DeclaredAxis::Any => ExpectedAxis::Any,
                        })
                        .collect()
                })
            })
            .collect();
        let expected: Vec<ExpectedParameter<'_>> = specs
            .iter()
            .enumerate()
            .map(|(k, spec)| ExpectedParameter {
                name: spec.name,
                element: spec.elem as i32,
                dims: axes.get(k).and_then(Option::as_deref),
            })
            .collect();
        let params: Vec<(&str, i32, &[i64])> = adapter
            .inner
            .list
            .iter()
            .map(|p| (p.name.as_str(), p.element, p.dims.as_slice()))
            .collect();
        let matched =
            ort_bind_adapter::match_parameters(&params, &expected).map_err(|e| Error::Adapter {
                adapter: adapter.inner.source.clone(),
                problem: e.describe(element_name),
            })?;
        let mut slots = vec![None; specs.len()];
        for (param, input) in matched.into_iter().enumerate() {
            slots[input] = Some(param);
        }
        Ok(BoundAdapter {
            adapter: adapter.clone(),
            slots,
        })
    }

    /// The value overridable input `k` takes from the adapter, if it has one for it.
    pub(crate) fn value(&self, k: usize) -> Option<&Value> {
        let param = (*self.slots.get(k)?)?;
        Some(self.adapter.inner.list[param].value.get())
    }

    /// A number no other adapter shares (storage keys of kept bindings).
    pub(crate) fn id(&self) -> usize {
        self.adapter.inner.id
    }

    /// Where the adapter was read from.
    pub fn source(&self) -> &str {
        &self.adapter.inner.source
    }
}

/// What a binding that can take an adapter does when its [`WithAdapter`] guard goes:
/// unbind the adapter, so the model runs with its defaults again. Generated bindings
/// implement it.
pub trait AdapterHost {
    /// Unbinds the adapter set last (if any); the next run uses the model's defaults.
    fn remove_adapter(&mut self) -> Result<()>;
}

/// A binding with an adapter set (what a generated binding's `set_adapter` returns). It
/// dereferences to the binding, so `inputs()`, `run()` and `outputs()` work as ever, with
/// the adapter's parameters bound. It borrows the adapter: the adapter cannot be dropped
/// while it is set (a compile error). Dropping the guard, or [`WithAdapter::remove`],
/// unbinds the adapter.
pub struct WithAdapter<'b, 'a, B: AdapterHost> {
    binding: &'b mut B,
    // Set by `remove`, which has unbound the adapter already.
    removed: bool,
    _adapter: std::marker::PhantomData<&'a Adapter>,
}

impl<B: AdapterHost> fmt::Debug for WithAdapter<'_, '_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WithAdapter").finish_non_exhaustive()
    }
}

impl<'b, 'a, B: AdapterHost> WithAdapter<'b, 'a, B> {
    /// The guard of `binding`, on which `adapter` was just set (generated code calls it).
    #[doc(hidden)]
    pub fn new(binding: &'b mut B, adapter: &'a Adapter) -> Self {
        let _ = adapter;
        WithAdapter {
            binding,
            removed: false,
            _adapter: std::marker::PhantomData,
        }
    }

    /// Unbinds the adapter now, reporting a failure to bind the defaults (which dropping
    /// the guard cannot: the next run then binds again and reports it).
    pub fn remove(mut self) -> Result<()> {
        self.removed = true;
        self.binding.remove_adapter()
    }
}

impl<B: AdapterHost> Deref for WithAdapter<'_, '_, B> {
    type Target = B;
    fn deref(&self) -> &B {
        self.binding
    }
}

impl<B: AdapterHost> DerefMut for WithAdapter<'_, '_, B> {
    fn deref_mut(&mut self) -> &mut B {
        self.binding
    }
}

impl<B: AdapterHost> Drop for WithAdapter<'_, '_, B> {
    fn drop(&mut self) {
        // A failure leaves the binding unbound; its next run binds again and reports it.
        if !self.removed {
            let _ = self.binding.remove_adapter();
        }
    }
}
