//! Interop with the [`ort`] crate (the `ort` feature; `ort` `=2.0.0-rc.15`, ONNX Runtime
//! 1.31), for programs that move from `ort` to typed bindings one model at a time.
//!
//! - **One ONNX Runtime.** Whichever crate starts first, both call the same library, the
//!   same C API table and ONNX Runtime's one environment: when `ort` has loaded a library
//!   (`ort::init_from(path)`, or its first use), [`library::init`] takes
//!   that one; when ort-bind loads first, it points `ort` at the same file. [`environment`]
//!   gives `ort`'s handle to the shared environment, for building `ort` sessions.
//! - **Sessions.** [`Session::from_ort`](crate::Session::from_ort) (or
//!   [`from_ort_shared`](crate::Session::from_ort_shared)) turns an `ort` session into the
//!   [`Session`](crate::Session) a generated `Model::from_session` takes, signature checked.
//! - **Tensors, no copies, both ways.** A host [`TensorRef`], [`TensorMut`] or [`Tensor`] is
//!   an `ort` [`TensorRef`](ort::value::TensorRef) / [`TensorRefMut`](ort::value::TensorRefMut)
//!   over the same memory ([`TensorRef::to_ort`], [`TensorMut::into_ort_mut`], ...), borrowed
//!   for as long as the view. The other way, [`OrtTensorView`] reads an `ort` tensor's memory
//!   in place as a [`TensorRef`], and [`Feed::from_ort`] binds it as a typed binding's input
//!   ([`Binding::run_fed`](crate::Binding::run_fed)).
//!
//! Element types: those both crates have (`f32`, `f64`, the integers, `bool`, `f16`,
//! `bf16`); ONNX's packed and 8-bit float types have no `ort` element type. Devices: host
//! memory ([`Cpu`], and `CudaPinned` with the `cuda` feature) both ways; an `ort` tensor on a
//! CUDA device is read as a `Cuda<N>` view with [`OrtTensorView::on`]. ort-bind's `Cuda<N>`
//! tensors have no conversion to `ort` here: take their address
//! (`TensorRef::device_ptr`) into `ort`'s own `unsafe` `TensorRefMut::from_raw`.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use ort_bind_runtime::ort_interop::{self, OrtTensorView};
//! use ort_bind_runtime::{Dyn, Tensor};
//!
//! let env = ort_interop::environment()?; // ort's handle to the environment ort-bind uses
//! let mut ort_session = ort::session::Session::builder(&env)?.commit_from_file("add.onnx")?;
//!
//! // ort-bind's tensors as `ort`'s inputs, no copy.
//! let mut x = Tensor::<f32, (Dyn,)>::new("x", &[3])?;
//! x.as_mut_slice().copy_from_slice(&[1.0, 2.0, 3.0]);
//! let outputs = ort_session.run(ort::inputs!["x" => x.to_ort()?, "y" => x.to_ort()?])?;
//!
//! // `ort`'s output as ort-bind's view, no copy.
//! let sum = OrtTensorView::<f32, (Dyn,)>::new(&outputs["sum"])?;
//! assert_eq!(sum.view().as_slice(), &[2.0, 4.0, 6.0]);
//! # Ok(()) }
//! ```

use std::fmt;
use std::marker::PhantomData;
use std::sync::{Mutex, OnceLock, PoisonError};

use ort::AsPointer as _;
use ort::value::{PrimitiveTensorElementType, ValueTypeMarker};

use crate::device::{Cpu, Device, HostDevice};
use crate::element::{Element, onnx_type_name, storage_len};
use crate::error::{Error, Result};
use crate::feed::{Feed, FeedSource};
use crate::library;
use crate::shape::{Shape, element_count};
use crate::sys::{Placement, ort_tensor_memory};
use crate::tensor::{Tensor, TensorMut, TensorRef};

/// The name [`OrtTensorView`]s give their views (an `ort` value has none).
const ORT_VALUE: &str = "ort value";

fn ort_error(context: &str, e: impl fmt::Display) -> Error {
    Error::Ort {
        context: context.to_owned(),
        message: e.to_string(),
    }
}

/// `ort`'s handle to ONNX Runtime's environment, the one ort-bind's sessions are created in,
/// for building `ort` sessions (`ort::session::Session::builder(&env)`).
///
/// ONNX Runtime keeps one environment per process, and `ort` one handle to it: the first
/// call builds that handle (with ort-bind's telemetry setting) and later calls return
/// clones. Where the program built `ort`'s handle itself (`ort::init()...build()`), use that
/// one: it is the same environment ([`shares_environment`] says so), and `ort` refuses to
/// build a second, so this is then an [`Error::Ort`] saying to.
///
/// # Errors
/// [`Error::Library`] when ONNX Runtime cannot be loaded; [`Error::Ort`] as above.
pub fn environment() -> Result<ort::environment::Environment> {
    static ENVIRONMENT: OnceLock<ort::environment::Environment> = OnceLock::new();
    static BUILDING: Mutex<()> = Mutex::new(());
    let lib = library::init()?;
    if let Some(env) = ENVIRONMENT.get() {
        return Ok(env.clone());
    }
    let _guard = BUILDING.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(env) = ENVIRONMENT.get() {
        return Ok(env.clone());
    }
    let env = ort::init()
        .with_name("ort-bind")
        .with_telemetry(lib.telemetry())
        .build()
        .map_err(|e| {
            ort_error(
                "building the `ort` crate's handle to ONNX Runtime's environment",
                format!("{e} (the program built `ort`'s environment itself: use that one, it is the one ort-bind uses)"),
            )
        })?;
    if !same_environment(&env, lib) {
        return Err(ort_error(
            "building the `ort` crate's handle to ONNX Runtime's environment",
            "ONNX Runtime gave `ort` an environment other than ort-bind's",
        ));
    }
    Ok(ENVIRONMENT.get_or_init(|| env).clone())
}

/// Whether `env` is the ONNX Runtime environment ort-bind creates its sessions in (it is
/// whenever both crates use one library: ONNX Runtime keeps one environment per process).
///
/// # Errors
/// [`Error::Library`] when ONNX Runtime cannot be loaded.
pub fn shares_environment(env: &ort::environment::Environment) -> Result<bool> {
    Ok(same_environment(env, library::init()?))
}

fn same_environment(env: &ort::environment::Environment, lib: &library::LoadedLibrary) -> bool {
    std::ptr::eq(env.ptr(), lib.environment().as_ptr())
}

impl<'a, T, S, D> TensorRef<'a, T, S, D>
where
    T: Element + PrimitiveTensorElementType + fmt::Debug,
    S: Shape,
    D: HostDevice,
{
    /// This view's memory as an `ort` tensor of the same dims, borrowed for `'a`: nothing
    /// is copied (ONNX Runtime reads the same address).
    ///
    /// # Errors
    /// [`Error::Ort`] when `ort` refuses the value.
    pub fn to_ort(&self) -> Result<ort::value::TensorRef<'a, T>> {
        self.to_ort_with_dims(self.dims())
    }

    /// [`TensorRef::to_ort`] with other `dims` holding the same number of elements (a
    /// `[2, 3]` output read as a `[6]` input, ...).
    ///
    /// # Errors
    /// [`Error::Shape`] when `dims` hold another number of elements; [`Error::Ort`] when
    /// `ort` refuses the value.
    pub fn to_ort_with_dims(&self, dims: &[usize]) -> Result<ort::value::TensorRef<'a, T>> {
        let data = self.as_slice();
        check_count(self.name(), dims, data.len())?;
        library::init()?;
        ort::value::TensorRef::from_array_view((dims.to_vec(), data))
            .map_err(|e| ort_error("viewing a tensor as an `ort` value", e))
    }
}

impl<'a, T, S, D> TensorMut<'a, T, S, D>
where
    T: Element + PrimitiveTensorElementType + fmt::Debug,
    S: Shape,
    D: HostDevice,
{
    /// This view's memory as a mutable `ort` tensor of the same dims (an `ort` session may
    /// write it), borrowing the view: nothing is copied.
    ///
    /// # Errors
    /// [`Error::Ort`] when `ort` refuses the value.
    pub fn to_ort_mut(&mut self) -> Result<ort::value::TensorRefMut<'_, T>> {
        library::init()?;
        let dims = self.dims().to_vec();
        ort::value::TensorRefMut::from_array_view_mut((dims, self.as_mut_slice()))
            .map_err(|e| ort_error("viewing a tensor as an `ort` value", e))
    }

    /// [`TensorMut::to_ort_mut`] for the view's whole lifetime `'a` (the view is used up).
    ///
    /// # Errors
    /// [`Error::Ort`] when `ort` refuses the value.
    pub fn into_ort_mut(self) -> Result<ort::value::TensorRefMut<'a, T>> {
        library::init()?;
        let dims = self.dims().to_vec();
        let data = self.into_mut_slice();
        ort::value::TensorRefMut::from_array_view_mut((dims, data))
            .map_err(|e| ort_error("viewing a tensor as an `ort` value", e))
    }
}

impl<T, S, D> Tensor<T, S, D>
where
    T: Element + PrimitiveTensorElementType + fmt::Debug,
    S: Shape,
    D: HostDevice,
{
    /// The tensor's memory as an `ort` tensor ([`TensorRef::to_ort`] of its [`view`](Tensor::view)).
    ///
    /// # Errors
    /// [`Error::Ort`] when `ort` refuses the value.
    pub fn to_ort(&self) -> Result<ort::value::TensorRef<'_, T>> {
        self.view().to_ort()
    }

    /// The tensor's memory as a mutable `ort` tensor ([`TensorMut::into_ort_mut`] of its
    /// [`view_mut`](Tensor::view_mut)).
    ///
    /// # Errors
    /// [`Error::Ort`] when `ort` refuses the value.
    pub fn to_ort_mut(&mut self) -> Result<ort::value::TensorRefMut<'_, T>> {
        self.view_mut().into_ort_mut()
    }
}

/// `dims` must hold `values` elements (for the element types both crates have, one value is
/// one element).
fn check_count(name: &str, dims: &[usize], values: usize) -> Result<()> {
    if element_count(dims) != Some(values) {
        return Err(Error::Shape {
            tensor: name.to_owned(),
            found: dims.to_vec(),
            reason: format!("the tensor holds {values} elements, not as many as these dims"),
        });
    }
    Ok(())
}

/// An `ort` tensor's memory read in place as ort-bind's [`TensorRef`] of `T`, shape type `S`,
/// on device `D`: borrowed from the `ort` value for `'v` (which can then be neither
/// changed nor dropped), nothing copied. [`view`](OrtTensorView::view) hands out the view.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use ort_bind_runtime::{Dyn, ort_interop::OrtTensorView};
/// ort_bind_runtime::library::init()?; // one ONNX Runtime for both crates
/// let value = ort::value::Tensor::from_array(([2usize, 2], vec![1i64, 2, 3, 4]))?;
/// let ids = OrtTensorView::<i64, (Dyn, Dyn)>::new(&value)?;
/// assert_eq!(ids.view().row(1)?, &[3, 4]);
/// # Ok(()) }
/// ```
pub struct OrtTensorView<'v, T: Element, S: Shape, D: Device = Cpu> {
    dims: Vec<usize>,
    data: *const T,
    len: usize,
    device: &'v D,
    _value: PhantomData<&'v T>,
    _shape: PhantomData<fn() -> S>,
}

impl<T: Element, S: Shape, D: Device> fmt::Debug for OrtTensorView<'_, T, S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OrtTensorView")
            .field("dtype", &T::NAME)
            .field("dims", &self.dims)
            .field("device", &D::NAME)
            .finish()
    }
}

impl<'v, T: Element, S: Shape> OrtTensorView<'v, T, S, Cpu> {
    /// Reads the `ort` tensor `value` (a `Tensor<T>`, `DynTensor`, `DynValue`, a session's
    /// output, ...) in host memory.
    ///
    /// # Errors
    /// As [`OrtTensorView::on`].
    pub fn new<Ty: ValueTypeMarker + ?Sized>(value: &'v ort::value::Value<Ty>) -> Result<Self> {
        Self::on(value, &Cpu)
    }
}

impl<'v, T: Element, S: Shape, D: Device> OrtTensorView<'v, T, S, D> {
    /// Reads the `ort` tensor `value` whose memory is on `device` (`&Cpu` for host memory;
    /// a `Cuda<N>` for CUDA device `N`, whose stream then orders what ort-bind does with the
    /// view, as for any `Cuda<N>` tensor).
    ///
    /// # Errors
    /// [`Error::Value`] when `value` is not a tensor, holds another element type than `T`, or
    /// is not in `device`'s memory; [`Error::Shape`] when its dims break `S`;
    /// [`Error::Library`] when ONNX Runtime cannot be loaded.
    pub fn on<Ty: ValueTypeMarker + ?Sized>(
        value: &'v ort::value::Value<Ty>,
        device: &'v D,
    ) -> Result<Self> {
        library::init()?;
        let mut dims_i64 = Vec::new();
        let memory = ort_tensor_memory(value, &mut dims_i64)?;
        let problem = |problem: String| Error::Value {
            value: ORT_VALUE.into(),
            problem,
        };
        if memory.elem != T::ONNX_TYPE {
            return Err(problem(format!(
                "it holds {}, the view reads {}",
                onnx_type_name(memory.elem),
                T::NAME
            )));
        }
        let dims: Vec<usize> = dims_i64
            .iter()
            .map(|&d| usize::try_from(d).unwrap_or(0))
            .collect();
        S::check(&dims).map_err(|reason| Error::Shape {
            tensor: ORT_VALUE.into(),
            found: dims.clone(),
            reason,
        })?;
        let len = element_count(&dims)
            .map(storage_len::<T>)
            .filter(|&n| {
                n.checked_mul(size_of::<T>())
                    .is_some_and(|b| b <= memory.bytes)
            })
            .ok_or_else(|| {
                problem(format!(
                    "its {} bytes do not hold dims {dims:?}",
                    memory.bytes
                ))
            })?;
        if !on_device(memory.placement, device)? {
            return Err(problem(format!(
                "its memory is on {:?} {}, not on {}",
                memory.placement.device,
                memory.placement.id,
                D::NAME
            )));
        }
        Ok(OrtTensorView {
            dims,
            data: memory.data.cast_const().cast(),
            len,
            device,
            _value: PhantomData,
            _shape: PhantomData,
        })
    }

    /// The view: ort-bind's [`TensorRef`] over the `ort` tensor's memory.
    pub fn view(&self) -> TensorRef<'_, T, S, D> {
        // The `ort` value is borrowed for `'v` (outliving `&self`): alive, and not written
        // (writing it would need it borrowed mutably); `len` values of `T` fit its bytes
        // (checked in `on`), on `device` (checked too).
        TensorRef::over_borrowed_value(ORT_VALUE, &self.dims, self.data, self.len, self.device)
    }

    /// The `ort` tensor's dims.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }
}

/// Whether memory at `placement` is `device`'s: host memory for a host device (pinned
/// host memory for `CudaPinned`), the same device and ordinal otherwise.
fn on_device<D: Device>(placement: Placement, device: &D) -> Result<bool> {
    let own = Placement::of_info(device.memory_info()?)?;
    let host = ort_sys::OrtMemoryInfoDeviceType::OrtMemoryInfoDeviceType_CPU;
    Ok(
        if <D as crate::device::private::DeviceImpl>::HOST_ACCESSIBLE {
            placement.device == host
                && (own.mem_type == ort_sys::OrtMemType::OrtMemTypeDefault
                    || own.mem_type == placement.mem_type)
        } else {
            placement.device == own.device && placement.id == own.id
        },
    )
}

impl<'a> Feed<'a> {
    /// An edge from an `ort` tensor: input `input` of the binding that runs
    /// ([`Binding::run_fed`](crate::Binding::run_fed)) reads `value`'s memory in place, in
    /// the input's own shape (the same element type and number of elements), nothing copied.
    /// `value` is borrowed for the run, so it stays alive and unchanged while ONNX Runtime
    /// reads it.
    pub fn from_ort<Ty: ValueTypeMarker + ?Sized + 'static>(
        value: &'a ort::value::Value<Ty>,
        input: &'a str,
    ) -> Feed<'a> {
        Feed {
            from: value,
            output: ORT_VALUE,
            input,
        }
    }
}

impl<Ty: ValueTypeMarker + ?Sized> FeedSource for ort::value::Value<Ty> {
    fn fed_value(&self, _name: &str) -> Result<*const ort_sys::OrtValue> {
        if !self.is_tensor() {
            return Err(Error::Value {
                value: ORT_VALUE.into(),
                problem: format!(
                    "it is {}, not a tensor, so it cannot feed an input",
                    self.dtype()
                ),
            });
        }
        Ok(self.ptr())
    }
}
