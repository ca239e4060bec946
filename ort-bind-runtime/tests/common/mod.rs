//! Hand-written bindings of the models in `tests/data/` (see `tests/data/make_models.py`),
//! shared by the runtime's serving tests: what codegen or the derive would emit, spelled out.
#![allow(dead_code, unreachable_pub)]

pub mod values;

use ort_bind_runtime::__private::InputShape as _;
use std::path::PathBuf;

use ort_bind_runtime::{
    AllocatedOutput, Binder, BindingIo, Dyn, Fix, OutputValue, Result, Tensor, TensorMut,
    TensorRef, ValueSpec,
};

/// A model file in `tests/data/`.
pub fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// `add.onnx`: `sum = x + y`, float32 `[n]`.
#[derive(Debug)]
pub struct AddIo {
    pub x: Tensor<f32, (Dyn,)>,
    pub y: Tensor<f32, (Dyn,)>,
    pub sum: Tensor<f32, (Dyn,)>,
}

impl AddIo {
    pub fn new(n: usize) -> Result<Self> {
        Ok(AddIo {
            x: Tensor::new("x", &[n])?,
            y: Tensor::new("y", &[n])?,
            sum: Tensor::new("sum", &[n])?,
        })
    }
}

// SAFETY: storage changes only in `set_dims` (through `Tensor::set_dims`); views are
// `view()`/`view_mut()`, which read and write elements in place, or resize an input and
// say so to `take_resized`.
unsafe impl BindingIo for AddIo {
    const INPUTS: &'static [ValueSpec] = &[
        ValueSpec::of::<f32>("x", Some(1)),
        ValueSpec::of::<f32>("y", Some(1)),
    ];
    const OUTPUTS: &'static [ValueSpec] = &[ValueSpec::of::<f32>("sum", Some(1))];
    const HAS_ALLOCATED_OUTPUTS: bool = false;
    type Dims = usize;
    type InputsMut<'a> = (TensorMut<'a, f32, (Dyn,)>, TensorMut<'a, f32, (Dyn,)>);
    type OutputsRef<'a> = TensorRef<'a, f32, (Dyn,)>;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> Result<()> {
        binder.input(0, &self.x)?;
        binder.input(1, &self.y)?;
        binder.output(0, &self.sum)
    }
    fn set_dims(&mut self, n: &usize) -> Result<()> {
        for t in [&mut self.x, &mut self.y, &mut self.sum] {
            t.set_dims(&[*n])?;
        }
        Ok(())
    }
    fn store_output(&mut self, _: usize, _: OutputValue) -> Result<()> {
        Ok(())
    }
    fn take_resized(&mut self) -> bool {
        self.x.take_resized() | self.y.take_resized()
    }
    fn inputs_mut(&mut self) -> Self::InputsMut<'_> {
        (self.x.view_mut(), self.y.view_mut())
    }
    fn outputs(&self) -> TensorRef<'_, f32, (Dyn,)> {
        self.sum.view()
    }
}

/// `affine.onnx`: `y = 2x + 1` (float32 `[batch, 4]`, written in place) and
/// `shape = Shape(x)` (int64, allocated by ONNX Runtime).
#[derive(Debug)]
pub struct AffineIo {
    pub x: Tensor<f32, (Dyn, Fix<4>)>,
    pub y: Tensor<f32, (Dyn, Fix<4>)>,
    pub shape: AllocatedOutput<i64, (Dyn,)>,
}

impl AffineIo {
    pub fn new(batch: usize) -> Result<Self> {
        Ok(AffineIo {
            x: Tensor::new("x", &[batch, 4])?,
            y: Tensor::new("y", &[batch, 4])?,
            shape: AllocatedOutput::new_in("shape", ort_bind_runtime::Cpu),
        })
    }
}

/// The outputs of [`AffineIo`].
#[derive(Debug)]
pub struct AffineOut<'a> {
    pub y: TensorRef<'a, f32, (Dyn, Fix<4>)>,
    pub shape: Option<TensorRef<'a, i64, (Dyn,)>>,
}

// SAFETY: as for `AddIo`; the allocated output is only bound to its device and stores the
// value ONNX Runtime hands back.
unsafe impl BindingIo for AffineIo {
    const INPUTS: &'static [ValueSpec] = &[ValueSpec::of::<f32>("x", Some(2))];
    const OUTPUTS: &'static [ValueSpec] = &[
        ValueSpec::of::<f32>("y", Some(2)),
        ValueSpec::of::<i64>("shape", Some(1)),
    ];
    const HAS_ALLOCATED_OUTPUTS: bool = true;
    type Dims = usize;
    type InputsMut<'a> = TensorMut<'a, f32, (Dyn, Fix<4>)>;
    type OutputsRef<'a> = AffineOut<'a>;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> Result<()> {
        binder.input(0, &self.x)?;
        binder.output(0, &self.y)?;
        binder.allocated_output(1, &self.shape)
    }
    fn set_dims(&mut self, batch: &usize) -> Result<()> {
        self.x.set_dims(&[*batch, 4])?;
        self.y.set_dims(&[*batch, 4])?;
        Ok(())
    }
    fn store_output(&mut self, index: usize, value: OutputValue) -> Result<()> {
        match index {
            1 => value.store_in(&mut self.shape),
            _ => Ok(()),
        }
    }
    fn take_resized(&mut self) -> bool {
        self.x.take_resized()
    }
    fn inputs_mut(&mut self) -> Self::InputsMut<'_> {
        self.x.view_mut()
    }
    fn outputs(&self) -> AffineOut<'_> {
        AffineOut {
            y: self.y.view(),
            shape: self.shape.get().ok(),
        }
    }
}

/// Width of `slow.onnx`'s rows.
pub const SLOW_WIDTH: usize = 256;
/// Layers of `slow.onnx` (MatMul + Tanh each).
pub const SLOW_LAYERS: usize = 64;

/// `slow.onnx`: 64 x (MatMul by W, Tanh) over float32 `[m, 256]`.
#[derive(Debug)]
pub struct SlowIo {
    pub x: Tensor<f32, (Dyn, Fix<256>)>,
    pub y: Tensor<f32, (Dyn, Fix<256>)>,
}

impl SlowIo {
    pub fn new(m: usize) -> Result<Self> {
        Ok(SlowIo {
            x: Tensor::new("x", &[m, SLOW_WIDTH])?,
            y: Tensor::new("y", &[m, SLOW_WIDTH])?,
        })
    }
}

// SAFETY: as for `AddIo`.
unsafe impl BindingIo for SlowIo {
    const INPUTS: &'static [ValueSpec] = &[ValueSpec::of::<f32>("x", Some(2))];
    const OUTPUTS: &'static [ValueSpec] = &[ValueSpec::of::<f32>("y", Some(2))];
    const HAS_ALLOCATED_OUTPUTS: bool = false;
    type Dims = usize;
    type InputsMut<'a> = TensorMut<'a, f32, (Dyn, Fix<256>)>;
    type OutputsRef<'a> = TensorRef<'a, f32, (Dyn, Fix<256>)>;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> Result<()> {
        binder.input(0, &self.x)?;
        binder.output(0, &self.y)
    }
    fn set_dims(&mut self, m: &usize) -> Result<()> {
        self.x.set_dims(&[*m, SLOW_WIDTH])?;
        self.y.set_dims(&[*m, SLOW_WIDTH])?;
        Ok(())
    }
    fn store_output(&mut self, _: usize, _: OutputValue) -> Result<()> {
        Ok(())
    }
    fn take_resized(&mut self) -> bool {
        self.x.take_resized()
    }
    fn inputs_mut(&mut self) -> Self::InputsMut<'_> {
        self.x.view_mut()
    }
    fn outputs(&self) -> Self::OutputsRef<'_> {
        self.y.view()
    }
}

/// Fills row `r` of `slow.onnx`'s input with `(r % 7 + 1) / 8`.
pub fn fill_slow(x: &mut [f32]) {
    for (r, row) in x.chunks_mut(SLOW_WIDTH).enumerate() {
        row.fill(slow_row_input(r));
    }
}

fn slow_row_input(r: usize) -> f32 {
    ((r % 7) as f32 + 1.0) / 8.0
}

/// Checks `slow.onnx`'s output for the input of [`fill_slow`]: a constant row `v` maps to
/// `tanh(v * (0.5 + 256e-3))` per layer.
pub fn check_slow(y: &[f32]) -> std::result::Result<(), String> {
    let factor = 0.5 + SLOW_WIDTH as f64 * 1e-3;
    for (r, row) in y.chunks(SLOW_WIDTH).enumerate() {
        let mut v = f64::from(slow_row_input(r));
        for _ in 0..SLOW_LAYERS {
            v = (v * factor).tanh();
        }
        for (c, &got) in row.iter().enumerate() {
            let err = (f64::from(got) - v).abs();
            if err > 5e-4 * v.abs().max(1e-30) + 1e-30 {
                return Err(format!("row {r} col {c}: {got} != {v}"));
            }
        }
    }
    Ok(())
}
