//! [`DynamicIo`]: the dynamic route's tensors as a [`BindingIo`], so that `Binding<DynamicIo>`
//! (what [`DynamicBinding`](super::DynamicBinding) wraps) runs on the one binding core the
//! typed route uses: async runs, stops, timeouts and shape buckets come from
//! [`Binding`](crate::Binding).
//!
//! Its specs are known only at run time, so it overrides [`BindingIo::names`] (checking the
//! session against the value infos it read from a session) and leaves the `INPUTS` /
//! `OUTPUTS` consts empty. Its dims are the shapes of its inputs ([`DynDims`]).

use std::fmt;

use super::{AnyOutput, AnyTensor, Built, ValueInfo, read_value};
use crate::binding::{Binder, BindingIo, IoNames, OutputValue};
use crate::element::NumericType;
use crate::error::{Error, Result};
use crate::session::{Session, ValueSpec};
use crate::sys::Value;
use crate::values::host::HostArrayRef;
use crate::values::{DynValue, ValueOutputSlot, ValueType, sealed};

/// The dims of a [`DynamicIo`]: the shape of each input, in model order (empty for an input
/// that is not a numeric tensor). [`Binding::set_dims`](crate::Binding::set_dims) keeps the
/// bindings of recent ones.
pub type DynDims = Vec<Vec<usize>>;

pub(super) struct DynInput {
    pub(super) info: ValueInfo,
    pub(super) tensor: Option<AnyTensor>,
    pub(super) built: Option<Built>,
}

/// A slot for an output that is not a numeric tensor: ONNX Runtime allocates it in host
/// memory and it is read out into a [`DynValue`] after the run.
pub(super) struct ValueSlot {
    name: String,
    ty: ValueType,
    value: Option<DynValue>,
}

impl sealed::Sealed for ValueSlot {}

impl ValueOutputSlot for ValueSlot {
    type View<'a> = &'a DynValue;

    fn name(&self) -> &str {
        &self.name
    }

    fn view(&self) -> Result<&DynValue> {
        self.value.as_ref().ok_or_else(|| Error::NotRun {
            output: self.name.clone(),
        })
    }

    fn clear(&mut self) {
        self.value = None;
    }

    fn accept(&mut self, value: Value) -> Result<()> {
        self.value = Some(read_value(&self.name, value, &self.ty)?);
        Ok(())
    }
}

pub(super) enum DynSlot {
    // A numeric tensor, read in place.
    Tensor(AnyOutput),
    // Anything else, read out of ONNX Runtime's value after the run.
    Value(ValueSlot),
}

impl DynSlot {
    fn new(info: &ValueInfo) -> DynSlot {
        match info.dtype() {
            Some(d) => DynSlot::Tensor(AnyOutput::new(d, &info.name)),
            None => DynSlot::Value(ValueSlot {
                name: info.name.clone(),
                ty: info.ty.clone(),
                value: None,
            }),
        }
    }
}

pub(super) struct DynOutput {
    pub(super) info: ValueInfo,
    pub(super) slot: DynSlot,
}

/// The tensors of a binding whose element types and shapes are read from the session at
/// run time: an input tensor per numeric model input (owned, sized by the data set into
/// it), a value per other input, and a slot per output, which ONNX Runtime allocates during
/// the run. [`DynamicBinding`](super::DynamicBinding) makes one and binds it with
/// [`Binding`](crate::Binding).
pub struct DynamicIo {
    inputs: Vec<DynInput>,
    outputs: Vec<DynOutput>,
}

impl fmt::Debug for DynamicIo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicIo")
            .field("inputs", &self.input_info().collect::<Vec<_>>())
            .field("outputs", &self.output_info().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

fn input_at(inputs: &[DynInput], index: usize) -> Result<&DynInput> {
    inputs.get(index).ok_or_else(|| Error::SignatureMismatch {
        problem: format!(
            "input index {index} is out of range (the model has {})",
            inputs.len()
        ),
    })
}

fn infos(session: &Session) -> Result<(Vec<ValueInfo>, Vec<ValueInfo>)> {
    let inputs = session
        .declared(false)
        .iter()
        .map(|d| ValueInfo::from_declared("input", d))
        .collect::<Result<Vec<_>>>()?;
    let outputs = session
        .declared(true)
        .iter()
        .map(|d| ValueInfo::from_declared("output", d))
        .collect::<Result<Vec<_>>>()?;
    Ok((inputs, outputs))
}

impl DynamicIo {
    /// Tensors for `session`'s inputs and outputs (no input set yet); fails with
    /// [`Error::Unsupported`] when an input or output has an element type ort-bind does not
    /// bind. [`DynamicBinding::new`](super::DynamicBinding::new) makes one.
    pub(super) fn new(session: &Session) -> Result<Self> {
        let (inputs, outputs) = infos(session)?;
        Ok(DynamicIo {
            inputs: inputs
                .into_iter()
                .map(|info| DynInput {
                    info,
                    tensor: None,
                    built: None,
                })
                .collect(),
            outputs: outputs
                .into_iter()
                .map(|info| DynOutput {
                    slot: DynSlot::new(&info),
                    info,
                })
                .collect(),
        })
    }

    /// The model's inputs, in model order.
    pub fn input_info(&self) -> impl ExactSizeIterator<Item = &ValueInfo> {
        self.inputs.iter().map(|i| &i.info)
    }

    /// The model's outputs, in model order.
    pub fn output_info(&self) -> impl ExactSizeIterator<Item = &ValueInfo> {
        self.outputs.iter().map(|o| &o.info)
    }

    /// The position of the input named `name`.
    pub fn input_index(&self, name: &str) -> Option<usize> {
        self.inputs.iter().position(|i| i.info.name == name)
    }

    /// The position of the output named `name`.
    pub fn output_index(&self, name: &str) -> Option<usize> {
        self.outputs.iter().position(|o| o.info.name == name)
    }

    /// The shapes of the inputs as they are now ([`DynDims`]).
    pub fn dims(&self) -> DynDims {
        self.inputs
            .iter()
            .map(|i| {
                i.tensor
                    .as_ref()
                    .map_or_else(Vec::new, |t| t.dims().to_vec())
            })
            .collect()
    }

    pub(super) fn input(&self, index: usize) -> Result<&DynInput> {
        input_at(&self.inputs, index)
    }

    /// Whether every input has a value (so the binding can be bound).
    pub(super) fn complete(&self) -> bool {
        self.inputs
            .iter()
            .all(|i| i.tensor.is_some() || i.built.is_some())
    }

    /// Makes input `index` a tensor of `dtype` (reusing its tensor when it has one of that
    /// type) holding `array`, checked by the caller. Only inside
    /// [`Binding::modify`](crate::Binding::modify) or `modify_later`: it may replace a bound
    /// tensor.
    pub(super) fn put_tensor(
        &mut self,
        index: usize,
        dtype: NumericType,
        array: HostArrayRef<'_>,
    ) -> Result<()> {
        let input = &mut self.inputs[index];
        match &mut input.tensor {
            Some(t) if t.dtype() == dtype => t.set_dims(array.dims())?,
            _ => {
                input.tensor = Some(AnyTensor::new(dtype, &input.info.name, array.dims())?);
            }
        }
        input.built = None;
        input
            .tensor
            .as_mut()
            .expect("set just above")
            .copy_from(array.data())
    }

    /// Makes input `index` the value `built`. Only inside
    /// [`Binding::modify`](crate::Binding::modify) or `modify_later`: it may replace a bound
    /// tensor.
    pub(super) fn put_built(&mut self, index: usize, built: Built) {
        let input = &mut self.inputs[index];
        input.tensor = None;
        input.built = Some(built);
    }

    fn output_at(&self, index: usize) -> Result<&DynOutput> {
        self.outputs
            .get(index)
            .ok_or_else(|| Error::SignatureMismatch {
                problem: format!(
                    "output index {index} is out of range (the model has {})",
                    self.outputs.len()
                ),
            })
    }

    /// Output `index` of the last run, a numeric tensor read in place (for outputs of other
    /// types, see [`DynamicIo::output_value`]).
    pub fn output(&self, index: usize) -> Result<HostArrayRef<'_>> {
        let output = self.output_at(index)?;
        match &output.slot {
            DynSlot::Tensor(slot) => slot.get(),
            DynSlot::Value(_) => Err(Error::OutputType {
                output: output.info.name.clone(),
                expected: "a numeric tensor (use `output_value`)".into(),
                found: output.info.ty.to_string(),
            }),
        }
    }

    /// Output `index` of the last run, of any type, copied out (a numeric tensor is copied
    /// from ONNX Runtime's memory; other values were read out of it after the run).
    pub fn output_value(&self, index: usize) -> Result<DynValue> {
        let output = self.output_at(index)?;
        match &output.slot {
            DynSlot::Tensor(slot) => Ok(DynValue::Tensor(slot.get()?.to_owned_array())),
            DynSlot::Value(slot) => slot.view().cloned(),
        }
    }
}

/// Mutable access to a [`DynamicIo`]'s inputs in place (what
/// [`Binding::inputs`](crate::Binding::inputs) gives).
#[derive(Debug)]
pub struct DynInputsMut<'a> {
    io: &'a mut DynamicIo,
}

impl DynInputsMut<'_> {
    /// Copies `array` into input `index` in place; its element type and dims must be the
    /// tensor's as they are (change dims with [`Binding::set_dims`](crate::Binding::set_dims)
    /// first).
    pub fn copy_in(&mut self, index: usize, array: HostArrayRef<'_>) -> Result<()> {
        let count = self.io.inputs.len();
        let input = self
            .io
            .inputs
            .get_mut(index)
            .ok_or_else(|| Error::SignatureMismatch {
                problem: format!("input index {index} is out of range (the model has {count})"),
            })?;
        match &mut input.tensor {
            Some(t) if t.dims() == array.dims() => t.copy_from(array.data()),
            Some(t) => Err(Error::Value {
                value: input.info.name.clone(),
                problem: format!(
                    "the data has dims {:?} where the bound tensor has {:?} (set the dims first)",
                    array.dims(),
                    t.dims()
                ),
            }),
            None => Err(Error::MissingInput {
                input: input.info.name.clone(),
            }),
        }
    }
}

// SAFETY: only `set_dims` (which resizes the input tensors) and the crate-private
// `put_tensor` / `put_built` (called only inside `Binding::modify` / `modify_later`, which
// rebind before the next run) move, replace or free a bound tensor or value. The views
// (`DynInputsMut::copy_in`, and `&DynamicIo`'s readers) only write elements in place (after
// checking the dims are the tensor's) or read. Output slots hold what ONNX Runtime
// allocated, bound with `Binder::allocated_output` / `Binder::value_output`.
unsafe impl BindingIo for DynamicIo {
    // Known only at run time: see `names`.
    const INPUTS: &'static [ValueSpec] = &[];
    const OUTPUTS: &'static [ValueSpec] = &[];
    const HAS_ALLOCATED_OUTPUTS: bool = true;
    type Dims = DynDims;
    type InputsMut<'a> = DynInputsMut<'a>;
    type OutputsRef<'a> = &'a DynamicIo;

    fn names(&self, session: &Session) -> Result<IoNames> {
        let (inputs, outputs) = infos(session)?;
        let same = |mine: &mut dyn Iterator<Item = &ValueInfo>, theirs: &[ValueInfo]| {
            mine.map(|i| (&i.name, &i.ty))
                .eq(theirs.iter().map(|i| (&i.name, &i.ty)))
        };
        if !same(&mut self.input_info(), &inputs) || !same(&mut self.output_info(), &outputs) {
            return Err(Error::SignatureMismatch {
                problem: "the session's inputs or outputs are not those this `DynamicIo` was \
                          made for"
                    .into(),
            });
        }
        IoNames::new(
            self.input_info().map(|i| i.name.as_str()),
            self.output_info().map(|o| o.name.as_str()),
        )
    }

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> Result<()> {
        for (index, input) in self.inputs.iter().enumerate() {
            if let Some(tensor) = &input.tensor {
                tensor.bind(binder, index)?;
            } else if let Some(built) = &input.built {
                // An absent optional stays unbound: ONNX Runtime takes it as `None`.
                binder.value_input(index, built)?;
            } else {
                return Err(Error::MissingInput {
                    input: input.info.name.clone(),
                });
            }
        }
        self.rebind_allocated(binder)
    }

    fn rebind_allocated<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> Result<()> {
        for (index, output) in self.outputs.iter().enumerate() {
            match &output.slot {
                DynSlot::Tensor(slot) => slot.bind(binder, index)?,
                DynSlot::Value(slot) => binder.value_output(index, slot)?,
            }
        }
        Ok(())
    }

    fn set_dims(&mut self, dims: &DynDims) -> Result<()> {
        if dims.len() != self.inputs.len() {
            return Err(Error::SignatureMismatch {
                problem: format!(
                    "dims for {} inputs where the model has {}",
                    dims.len(),
                    self.inputs.len()
                ),
            });
        }
        for (input, dims) in self.inputs.iter_mut().zip(dims) {
            if let Some(tensor) = &mut input.tensor {
                input.info.check_dims(dims)?;
                tensor.set_dims(dims)?;
            }
        }
        Ok(())
    }

    fn store_output(&mut self, index: usize, value: OutputValue) -> Result<()> {
        match self.outputs.get_mut(index).map(|o| &mut o.slot) {
            Some(DynSlot::Tensor(slot)) => slot.accept(value.0),
            Some(DynSlot::Value(slot)) => slot.accept(value.0),
            None => Ok(()),
        }
    }

    fn clear_allocated(&mut self) {
        for output in &mut self.outputs {
            match &mut output.slot {
                DynSlot::Tensor(slot) => slot.clear(),
                DynSlot::Value(slot) => slot.clear(),
            }
        }
    }

    /// Its inputs view copies in place only (`copy_in`): dims change through `set_dims`.
    fn take_resized(&mut self) -> bool {
        false
    }

    fn inputs_mut(&mut self) -> DynInputsMut<'_> {
        DynInputsMut { io: self }
    }

    fn outputs(&self) -> &DynamicIo {
        self
    }
}
