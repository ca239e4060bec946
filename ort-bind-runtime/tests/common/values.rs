//! Hand-written bindings of the string, sequence, map and optional models in `tests/data/`
//! (what generated code emits for these types), shared by `tests/values.rs` and
//! `tests/values_alloc.rs`.

use ort_bind_runtime::{
    AllocatedOutput, AnyRank, Binder, BindingIo, Dyn, Map, MapSequence, Optional, OutputValue,
    Result, Sequence, StringOutput, StringTensor, Tensor, ValueOutputSlot, ValueSpec,
};

/// `strings.onnx`: `echo = Identity(a)`, `joined = StringConcat(a, b)`, `lengths = Shape(a)`.
#[derive(Debug)]
pub struct StringsIo {
    pub a: StringTensor<(Dyn,)>,
    pub b: StringTensor<(Dyn,)>,
    pub echo: StringOutput<(Dyn,)>,
    pub joined: StringOutput<(Dyn,)>,
    pub lengths: AllocatedOutput<i64, (Dyn,)>,
}

// SAFETY: inputs change only inside `Binding::modify` (no views hand out mutable access);
// outputs are slots ONNX Runtime allocates into.
unsafe impl BindingIo for StringsIo {
    const INPUTS: &'static [ValueSpec] = &[
        ValueSpec::string("a", Some(1)),
        ValueSpec::string("b", Some(1)),
    ];
    const OUTPUTS: &'static [ValueSpec] = &[
        ValueSpec::string("echo", Some(1)),
        ValueSpec::string("joined", Some(1)),
        ValueSpec::of::<i64>("lengths", Some(1)),
    ];
    const HAS_ALLOCATED_OUTPUTS: bool = true;
    type Dims = ();
    type InputsMut<'a> = ();
    type OutputsRef<'a> = &'a StringsIo;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> Result<()> {
        binder.value_input(0, &self.a)?;
        binder.value_input(1, &self.b)?;
        binder.value_output(0, &self.echo)?;
        binder.value_output(1, &self.joined)?;
        binder.allocated_output(2, &self.lengths)
    }
    fn set_dims(&mut self, _: &()) -> Result<()> {
        Ok(())
    }
    fn store_output(&mut self, index: usize, value: OutputValue) -> Result<()> {
        match index {
            0 => value.store_in_slot(&mut self.echo),
            1 => value.store_in_slot(&mut self.joined),
            _ => value.store_in(&mut self.lengths),
        }
    }
    fn clear_allocated(&mut self) {
        self.echo.clear();
        self.joined.clear();
        self.lengths.clear();
    }
    fn take_resized(&mut self) -> bool {
        false // the inputs view is `()`
    }
    fn inputs_mut(&mut self) {}
    fn outputs(&self) -> &StringsIo {
        self
    }
}

/// `sequences.onnx`.
#[derive(Debug)]
pub struct SeqIo {
    pub x: Tensor<f32, (Dyn,)>,
    pub y: Tensor<f32, (Dyn,)>,
    pub s: Sequence<f32, (Dyn,)>,
    pub text: StringTensor<(Dyn,)>,
    pub pair: Sequence<f32, (Dyn,)>,
    pub pieces: Sequence<f32, (Dyn,)>,
    pub second: AllocatedOutput<f32, (Dyn,)>,
    pub count: AllocatedOutput<i64, ()>,
    pub first: AllocatedOutput<f32, (Dyn,)>,
    pub echo: Sequence<f32>,
    pub words: Sequence<String, (Dyn,)>,
}

// SAFETY: as for `StringsIo`.
unsafe impl BindingIo for SeqIo {
    const INPUTS: &'static [ValueSpec] = &[
        ValueSpec::of::<f32>("x", Some(1)),
        ValueSpec::of::<f32>("y", Some(1)),
        ValueSpec::sequence::<f32>("s", Some(1)),
        ValueSpec::string("text", Some(1)),
    ];
    const OUTPUTS: &'static [ValueSpec] = &[
        ValueSpec::sequence::<f32>("pair", Some(1)),
        ValueSpec::sequence::<f32>("pieces", Some(1)),
        ValueSpec::of::<f32>("second", Some(1)),
        ValueSpec::of::<i64>("count", Some(0)),
        ValueSpec::of::<f32>("first", Some(1)),
        ValueSpec::sequence::<f32>("echo", None),
        ValueSpec::sequence::<String>("words", Some(1)),
    ];
    const HAS_ALLOCATED_OUTPUTS: bool = true;
    type Dims = ();
    type InputsMut<'a> = ();
    type OutputsRef<'a> = &'a SeqIo;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> Result<()> {
        binder.input(0, &self.x)?;
        binder.input(1, &self.y)?;
        binder.value_input(2, &self.s)?;
        binder.value_input(3, &self.text)?;
        binder.value_output(0, &self.pair)?;
        binder.value_output(1, &self.pieces)?;
        binder.allocated_output(2, &self.second)?;
        binder.allocated_output(3, &self.count)?;
        binder.allocated_output(4, &self.first)?;
        binder.value_output(5, &self.echo)?;
        binder.value_output(6, &self.words)
    }
    fn set_dims(&mut self, _: &()) -> Result<()> {
        Ok(())
    }
    fn store_output(&mut self, index: usize, value: OutputValue) -> Result<()> {
        match index {
            0 => value.store_in_slot(&mut self.pair),
            1 => value.store_in_slot(&mut self.pieces),
            2 => value.store_in(&mut self.second),
            3 => value.store_in(&mut self.count),
            4 => value.store_in(&mut self.first),
            5 => value.store_in_slot(&mut self.echo),
            _ => value.store_in_slot(&mut self.words),
        }
    }
    fn clear_allocated(&mut self) {
        self.pair.clear();
        self.pieces.clear();
        self.second.clear();
        self.count.clear();
        self.first.clear();
        self.echo.clear();
        self.words.clear();
    }
    fn take_resized(&mut self) -> bool {
        false // the inputs view is `()`
    }
    fn inputs_mut(&mut self) {}
    fn outputs(&self) -> &SeqIo {
        self
    }
}

/// `empties.onnx`: sequence inputs that may be empty (`s` of float32, `t` of strings) and
/// what the model makes of them; `made` is an empty sequence ONNX Runtime makes itself.
#[derive(Debug)]
pub struct EmptiesIo {
    pub s: Sequence<f32, (Dyn,)>,
    pub t: Sequence<String, (Dyn,)>,
    pub x: Tensor<f32, (Dyn,)>,
    pub s_count: AllocatedOutput<i64, ()>,
    pub s_echo: Sequence<f32, (Dyn,)>,
    pub grown: Sequence<f32, (Dyn,)>,
    pub t_count: AllocatedOutput<i64, ()>,
    pub t_echo: Sequence<String, (Dyn,)>,
    pub made: Sequence<i64>,
}

// SAFETY: as for `StringsIo`.
unsafe impl BindingIo for EmptiesIo {
    const INPUTS: &'static [ValueSpec] = &[
        ValueSpec::sequence::<f32>("s", Some(1)),
        ValueSpec::sequence::<String>("t", Some(1)),
        ValueSpec::of::<f32>("x", Some(1)),
    ];
    const OUTPUTS: &'static [ValueSpec] = &[
        ValueSpec::of::<i64>("s_count", Some(0)),
        ValueSpec::sequence::<f32>("s_echo", Some(1)),
        ValueSpec::sequence::<f32>("grown", Some(1)),
        ValueSpec::of::<i64>("t_count", Some(0)),
        ValueSpec::sequence::<String>("t_echo", Some(1)),
        ValueSpec::sequence::<i64>("made", None),
    ];
    const HAS_ALLOCATED_OUTPUTS: bool = true;
    type Dims = ();
    type InputsMut<'a> = ();
    type OutputsRef<'a> = &'a EmptiesIo;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> Result<()> {
        binder.value_input(0, &self.s)?;
        binder.value_input(1, &self.t)?;
        binder.input(2, &self.x)?;
        binder.allocated_output(0, &self.s_count)?;
        binder.value_output(1, &self.s_echo)?;
        binder.value_output(2, &self.grown)?;
        binder.allocated_output(3, &self.t_count)?;
        binder.value_output(4, &self.t_echo)?;
        binder.value_output(5, &self.made)
    }
    fn set_dims(&mut self, _: &()) -> Result<()> {
        Ok(())
    }
    fn store_output(&mut self, index: usize, value: OutputValue) -> Result<()> {
        match index {
            0 => value.store_in(&mut self.s_count),
            1 => value.store_in_slot(&mut self.s_echo),
            2 => value.store_in_slot(&mut self.grown),
            3 => value.store_in(&mut self.t_count),
            4 => value.store_in_slot(&mut self.t_echo),
            _ => value.store_in_slot(&mut self.made),
        }
    }
    fn clear_allocated(&mut self) {
        self.s_count.clear();
        self.s_echo.clear();
        self.grown.clear();
        self.t_count.clear();
        self.t_echo.clear();
        self.made.clear();
    }
    fn take_resized(&mut self) -> bool {
        false // the inputs view is `()`
    }
    fn inputs_mut(&mut self) {}
    fn outputs(&self) -> &EmptiesIo {
        self
    }
}

/// `maps.onnx`.
#[derive(Debug)]
pub struct MapsIo {
    pub probs: Tensor<f32, (Dyn, ort_bind_runtime::Fix<3>)>,
    pub m: Map<String, f32>,
    pub by_id: MapSequence<i64, f32>,
    pub by_name: MapSequence<String, f32>,
    pub dense: AllocatedOutput<f32, AnyRank>,
    pub m_out: Map<String, f32>,
}

// SAFETY: as for `StringsIo`.
unsafe impl BindingIo for MapsIo {
    const INPUTS: &'static [ValueSpec] = &[
        ValueSpec::of::<f32>("probs", Some(2)),
        ValueSpec::map::<String, f32>("m"),
    ];
    const OUTPUTS: &'static [ValueSpec] = &[
        ValueSpec::map_sequence::<i64, f32>("by_id"),
        ValueSpec::map_sequence::<String, f32>("by_name"),
        ValueSpec::of::<f32>("dense", None),
        ValueSpec::map::<String, f32>("m"),
    ];
    const HAS_ALLOCATED_OUTPUTS: bool = true;
    type Dims = ();
    type InputsMut<'a> = ();
    type OutputsRef<'a> = &'a MapsIo;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> Result<()> {
        binder.input(0, &self.probs)?;
        binder.value_input(1, &self.m)?;
        binder.value_output(0, &self.by_id)?;
        binder.value_output(1, &self.by_name)?;
        binder.allocated_output(2, &self.dense)?;
        binder.value_output(3, &self.m_out)
    }
    fn set_dims(&mut self, _: &()) -> Result<()> {
        Ok(())
    }
    fn store_output(&mut self, index: usize, value: OutputValue) -> Result<()> {
        match index {
            0 => value.store_in_slot(&mut self.by_id),
            1 => value.store_in_slot(&mut self.by_name),
            2 => value.store_in(&mut self.dense),
            _ => value.store_in_slot(&mut self.m_out),
        }
    }
    fn clear_allocated(&mut self) {
        self.by_id.clear();
        self.by_name.clear();
        self.dense.clear();
        self.m_out.clear();
    }
    fn take_resized(&mut self) -> bool {
        false // the inputs view is `()`
    }
    fn inputs_mut(&mut self) {}
    fn outputs(&self) -> &MapsIo {
        self
    }
}

/// `optionals.onnx`.
#[derive(Debug)]
pub struct OptIo {
    pub x: Tensor<f32, (Dyn,)>,
    pub o: Optional<Tensor<f32, (Dyn,)>>,
    pub some: Optional<AllocatedOutput<f32, (Dyn,)>>,
    pub none: Optional<AllocatedOutput<f32, AnyRank>>,
    pub some_seq: Optional<Sequence<f32, (Dyn,)>>,
    pub has: AllocatedOutput<bool, ()>,
}

// SAFETY: as for `StringsIo`.
unsafe impl BindingIo for OptIo {
    const INPUTS: &'static [ValueSpec] = &[
        ValueSpec::of::<f32>("x", Some(1)),
        ValueSpec::of::<f32>("o", None).optional(),
    ];
    const OUTPUTS: &'static [ValueSpec] = &[
        ValueSpec::of::<f32>("some", Some(1)).optional(),
        ValueSpec::of::<f32>("none", None).optional(),
        ValueSpec::sequence::<f32>("some_seq", None).optional(),
        ValueSpec::of::<bool>("has", Some(0)),
    ];
    const HAS_ALLOCATED_OUTPUTS: bool = true;
    type Dims = ();
    type InputsMut<'a> = ();
    type OutputsRef<'a> = &'a OptIo;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> Result<()> {
        binder.input(0, &self.x)?;
        binder.value_input(1, &self.o)?;
        binder.value_output(0, &self.some)?;
        binder.value_output(1, &self.none)?;
        binder.value_output(2, &self.some_seq)?;
        binder.allocated_output(3, &self.has)
    }
    fn set_dims(&mut self, _: &()) -> Result<()> {
        Ok(())
    }
    fn store_output(&mut self, index: usize, value: OutputValue) -> Result<()> {
        match index {
            0 => value.store_in_slot(&mut self.some),
            1 => value.store_in_slot(&mut self.none),
            2 => value.store_in_slot(&mut self.some_seq),
            _ => value.store_in(&mut self.has),
        }
    }
    fn clear_allocated(&mut self) {
        self.some.clear();
        self.none.clear();
        self.some_seq.clear();
        self.has.clear();
    }
    fn take_resized(&mut self) -> bool {
        false // the inputs view is `()`
    }
    fn inputs_mut(&mut self) {}
    fn outputs(&self) -> &OptIo {
        self
    }
}
