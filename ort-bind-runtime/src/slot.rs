//! Slots: what a field of a `#[derive(OnnxBinding)]` struct can be, and how the derived
//! [`BindingIo`](crate::BindingIo) impl binds, resizes and views it.
//!
//! A slot is a [`Tensor`] (a buffer the binding owns: an input to fill, or an output ONNX
//! Runtime writes in place) or an [`AllocatedOutput`] (an output ONNX Runtime allocates
//! during the run, for data-dependent shapes). The derive reaches every field through this
//! trait, so a field whose type hides behind an alias or comes from another module binds
//! exactly like one spelled `Tensor<f32, (Dyn,)>`.
//!
//! The trait is sealed: a slot hands ONNX Runtime raw pointers, so only ort-bind's own
//! tensor types qualify.

use std::fmt::Debug;

use crate::binding::{Binder, OutputValue};
use crate::device::Device;
use crate::element::Element;
use crate::error::Result;
use crate::session::ValueSpec;
use crate::shape::{InputShape, Shape};
use crate::tensor::{AllocatedOutput, Tensor, TensorMut, TensorRef};
use crate::values::OutputRef;

mod sealed {
    pub trait Sealed {}
}

/// A type that can hold one model input or output in a derived binding.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be bound to an ONNX value",
    label = "not a tensor type ort-bind can bind",
    note = "bind model values with `ort_bind::Tensor<T, Shape, Device>` (inputs, and outputs \
            written in place) or `ort_bind::AllocatedOutput<T, Shape, Device>` (outputs ONNX \
            Runtime allocates)"
)]
pub trait Slot: sealed::Sealed + Sized {
    /// Element type.
    type Elem: Element;
    /// Shape type.
    type Shape: Shape;
    /// Device the memory lives on.
    type Device: Device;
    /// View handed out by the binding's `inputs()`: [`TensorMut`] for a tensor; for an
    /// [`AllocatedOutput`] (never an input) the same read-only view as [`Slot::Ref`].
    type Mut<'a>: Debug
    where
        Self: 'a;
    /// View handed out by the binding's `outputs()`: [`TensorRef`], or for an
    /// [`AllocatedOutput`] an [`OutputRef`], read with `get()` like every output ONNX
    /// Runtime allocates ([`Error::NotRun`](crate::Error::NotRun) before the first run).
    type Ref<'a>: Debug
    where
        Self: 'a;
    /// Whether ONNX Runtime allocates this value during the run.
    const ALLOCATED: bool;

    /// Allocates the slot for the value named `name` on `device` with `dims` (ignored by an
    /// [`AllocatedOutput`], whose dims ONNX Runtime decides).
    fn allocate(name: &str, device: &Self::Device, dims: &[usize]) -> Result<Self>;
    /// Resizes to `dims`, reusing capacity (a no-op for an [`AllocatedOutput`]). The binding
    /// must be rebound afterwards, which [`Binding::set_dims`](crate::Binding::set_dims) does.
    fn resize(&mut self, dims: &[usize]) -> Result<()>;
    /// The input view.
    fn slot_mut(&mut self) -> Self::Mut<'_>;
    /// The output view.
    fn slot_ref(&self) -> Self::Ref<'_>;
    /// Binds the slot as output number `index`.
    fn bind_output<'io>(&'io self, binder: &mut Binder<'_, 'io>, index: usize) -> Result<()>;
    /// Receives the value ONNX Runtime returns for this output after a run: an
    /// [`AllocatedOutput`] keeps it; a [`Tensor`] drops it (it is a second reference to the
    /// tensor's own memory, which the run already wrote).
    fn store(&mut self, value: OutputValue) -> Result<()>;
    /// Forgets the last run's value (an [`AllocatedOutput`]: [`AllocatedOutput::clear`]); a
    /// no-op for a [`Tensor`], whose memory the binding owns.
    fn clear(&mut self);
    /// An input's current dims ([`InputShape::input_dims`]; empty for an
    /// [`AllocatedOutput`], never an input).
    fn slot_dims(&self) -> &[usize];
    /// Whether an input's view gave it new dims since the last call
    /// ([`InputShape::take_resized`]; `false` for an [`AllocatedOutput`]).
    fn take_slot_resized(&mut self) -> bool;
}

/// A [`Slot`] that can be a model input: a [`Tensor`] the caller fills before each run.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be bound as a model input",
    label = "inputs must be `Tensor`s you fill before a run",
    note = "`AllocatedOutput` is for outputs whose memory ONNX Runtime allocates; bind inputs \
            as `ort_bind::Tensor<T, Shape, Device>`"
)]
pub trait InputSlot: Slot {
    /// Binds the slot as input number `index`.
    fn bind_input<'io>(&'io self, binder: &mut Binder<'_, 'io>, index: usize) -> Result<()>;
}

impl<T: Element, S: Shape, D: Device> sealed::Sealed for Tensor<T, S, D> {}

impl<T: Element, S: Shape, D: Device> Slot for Tensor<T, S, D> {
    type Elem = T;
    type Shape = S;
    type Device = D;
    type Mut<'a> = TensorMut<'a, T, S, D>;
    type Ref<'a> = TensorRef<'a, T, S, D>;
    const ALLOCATED: bool = false;

    fn allocate(name: &str, device: &D, dims: &[usize]) -> Result<Self> {
        Tensor::new_in(name, device.clone(), dims)
    }

    fn resize(&mut self, dims: &[usize]) -> Result<()> {
        self.set_dims(dims).map(|_| ())
    }

    fn slot_mut(&mut self) -> TensorMut<'_, T, S, D> {
        self.view_mut()
    }

    fn slot_ref(&self) -> TensorRef<'_, T, S, D> {
        self.view()
    }

    fn bind_output<'io>(&'io self, binder: &mut Binder<'_, 'io>, index: usize) -> Result<()> {
        binder.output(index, self)
    }

    fn store(&mut self, value: OutputValue) -> Result<()> {
        drop(value);
        Ok(())
    }

    fn clear(&mut self) {}
    fn slot_dims(&self) -> &[usize] {
        self.input_dims()
    }
    fn take_slot_resized(&mut self) -> bool {
        self.take_resized()
    }
}

impl<T: Element, S: Shape, D: Device> InputSlot for Tensor<T, S, D> {
    fn bind_input<'io>(&'io self, binder: &mut Binder<'_, 'io>, index: usize) -> Result<()> {
        binder.input(index, self)
    }
}

impl<T: Element, S: Shape, D: Device> sealed::Sealed for AllocatedOutput<T, S, D> {}

impl<T: Element, S: Shape, D: Device> Slot for AllocatedOutput<T, S, D> {
    type Elem = T;
    type Shape = S;
    type Device = D;
    type Mut<'a> = OutputRef<'a, Self>;
    type Ref<'a> = OutputRef<'a, Self>;
    const ALLOCATED: bool = true;

    fn allocate(name: &str, device: &D, _dims: &[usize]) -> Result<Self> {
        Ok(AllocatedOutput::new_in(name, device.clone()))
    }

    fn resize(&mut self, _dims: &[usize]) -> Result<()> {
        Ok(())
    }

    fn slot_mut(&mut self) -> OutputRef<'_, Self> {
        OutputRef::new(self)
    }

    fn slot_ref(&self) -> OutputRef<'_, Self> {
        OutputRef::new(self)
    }

    fn bind_output<'io>(&'io self, binder: &mut Binder<'_, 'io>, index: usize) -> Result<()> {
        binder.allocated_output(index, self)
    }

    fn store(&mut self, value: OutputValue) -> Result<()> {
        value.store_in(self)
    }

    fn clear(&mut self) {
        AllocatedOutput::clear(self);
    }
    fn slot_dims(&self) -> &[usize] {
        &[]
    }
    fn take_slot_resized(&mut self) -> bool {
        false
    }
}

/// The spec of a model value of `T` elements with rank `rank` (derived `BindingIo` impls
/// list every model value with this and [`spec_any_rank`]).
pub const fn spec<T: Element>(name: &'static str, rank: usize) -> ValueSpec {
    ValueSpec::of::<T>(name, Some(rank))
}

/// The spec of a model value of `T` elements whose rank the model leaves open.
pub const fn spec_any_rank<T: Element>(name: &'static str) -> ValueSpec {
    ValueSpec::of::<T>(name, None)
}
