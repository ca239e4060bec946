// Structs the derive accepts: fixed and symbolic dims, a symbolic dim fixed to a
// constant, `AnyRank`, aliases and types from other modules, generics over the device,
// `AllocatedOutput`, outputs left out, every element type, scalars, exporter names, the
// device attribute, and a model known only through its offline signature cache.
use ort_bind::{
    AllocatedOutput, AnyRank, Cpu, Device, Dyn, Fix, OnnxBinding, Tensor, bf16, f16,
};

#[derive(OnnxBinding)]
#[onnx(model = "models/add16.onnx")]
struct Fixed {
    a: Tensor<f32, (Fix<16>,)>,
    b: Tensor<f32, (Dyn,)>,
    out: Tensor<f32, (Fix<{ 16 }>,)>,
}

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx")]
struct SymbolicFixed<D: Device = Cpu> {
    x: Tensor<f32, (Fix<4>,), D>,
    y: Tensor<f32, AnyRank, D>,
    sum: Tensor<f32, (Dyn,), D>,
}

mod io {
    pub type Floats<D> = ort_bind::Tensor<f32, (ort_bind::Dyn,), D>;
    pub type Row = (ort_bind::Dyn,);
}
type Float = f32;

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx", device = Cpu)]
struct Aliased {
    x: io::Floats<Cpu>,
    y: Tensor<Float, io::Row>,
    sum: ort_bind::Tensor<f32, (Dyn,), ort_bind::Cpu>,
}

// Only `y` of dynamic.onnx's outputs `y` and `z` is bound.
#[derive(OnnxBinding)]
#[onnx(model = "models/dynamic.onnx")]
struct PartialOutputs {
    x: Tensor<f32, (Dyn, Fix<4>)>,
    y: Tensor<f32, (Dyn, Fix<3>)>,
}

#[derive(OnnxBinding)]
#[onnx(model = "models/nonzero.onnx")]
struct DataDependent {
    x: Tensor<f32, (Fix<6>,)>,
    indices: AllocatedOutput<i64, (Fix<1>, Dyn)>,
}

#[derive(OnnxBinding)]
#[onnx(model = "models/scalar.onnx")]
struct Scalar {
    x: Tensor<f32, ()>,
    y: Tensor<f32, ()>,
}

#[derive(OnnxBinding)]
#[onnx(model = "models/alltypes.onnx")]
struct AllTypes {
    x_float32: Tensor<f32, (Fix<2>,)>,
    x_float64: Tensor<f64, (Fix<2>,)>,
    x_float16: Tensor<f16, (Fix<2>,)>,
    x_bfloat16: Tensor<bf16, (Fix<2>,)>,
    x_int8: Tensor<i8, (Fix<2>,)>,
    x_int16: Tensor<i16, (Fix<2>,)>,
    x_int32: Tensor<i32, (Fix<2>,)>,
    x_int64: Tensor<i64, (Fix<2>,)>,
    x_uint8: Tensor<u8, (Fix<2>,)>,
    x_uint16: Tensor<u16, (Fix<2>,)>,
    x_uint32: Tensor<u32, (Fix<2>,)>,
    x_uint64: Tensor<u64, (Fix<2>,)>,
    x_bool: Tensor<bool, (Fix<2>,)>,
    y_float32: Tensor<f32, (Fix<2>,)>,
    y_float64: Tensor<f64, (Fix<2>,)>,
    y_float16: Tensor<ort_bind::f16, (Fix<2>,)>,
    y_bfloat16: Tensor<ort_bind::bf16, (Fix<2>,)>,
    y_int8: Tensor<i8, (Fix<2>,)>,
    y_int16: Tensor<i16, (Fix<2>,)>,
    y_int32: Tensor<i32, (Fix<2>,)>,
    y_int64: Tensor<i64, (Fix<2>,)>,
    y_uint8: AllocatedOutput<u8, (Fix<2>,)>,
    y_uint16: Tensor<u16, (Fix<2>,)>,
    y_uint32: Tensor<u32, (Fix<2>,)>,
    y_uint64: Tensor<u64, (Fix<2>,)>,
    y_bool: Tensor<bool, (Fix<2>,)>,
}

// Exporter names: `gpu_0/data_0` binds as `gpu_0_data_0` (the identifier codegen gives
// it), `type` as `r#type`, the rest by `name = ...`.
#[derive(OnnxBinding)]
#[onnx(model = "models/messy.onnx")]
struct Messy {
    gpu_0_data_0: Tensor<f32, (Dyn, Fix<3>)>,
    r#type: Tensor<f32, (Dyn,)>,
    #[onnx(name = "1x")]
    one_x: Tensor<f32, (Dyn,)>,
    #[onnx(name = "save_infer_model/scale_0.tmp_1")]
    scale: Tensor<f32, (Fix<2>, Dyn)>,
    #[onnx(name = "a.b")]
    a_dot_b: Tensor<f32, (Fix<4>,)>,
    #[onnx(name = "a/b")]
    a_slash_b: Tensor<f32, (Fix<4>,)>,
    step: Tensor<i64, ()>,
    half: Tensor<f16, (Dyn, Fix<2>)>,
    #[onnx(output)]
    a_b: Tensor<f32, (Fix<4>,)>,
}

// The model file is absent; its committed cache stands in.
#[derive(OnnxBinding)]
#[onnx(model = "models/offline.onnx")]
struct Offline {
    x: Tensor<f32, (Dyn,)>,
    y: Tensor<f32, (Dyn,)>,
    sum: Tensor<f32, (Dyn,)>,
}

// Silero VAD's signature (the README's example): `dims` names its unnamed axes, the
// types fix every dim, `stateN` pairs with `state` by name.
#[derive(OnnxBinding)]
#[onnx(model = "models/silero_vad.onnx")]
struct Vad {
    #[onnx(dims = "batch, samples")]
    input: Tensor<f32, (Fix<1>, Fix<512>)>,
    #[onnx(dims = "2, batch, 128")]
    state: Tensor<f32, (Fix<2>, Dyn, Fix<128>)>,
    sr: Tensor<i64, ()>,
    output: AllocatedOutput<f32, (Dyn, Fix<1>)>,
    #[onnx(name = "stateN")]
    next: Tensor<f32, (Fix<2>, Dyn, Fix<128>)>,
}

// The same with the samples axis left open: the dims ask for exactly that dim.
#[derive(OnnxBinding)]
#[onnx(model = "models/silero_vad.onnx")]
struct VadOpen {
    #[onnx(dims = "batch, samples")]
    input: Tensor<f32, (Fix<1>, Dyn)>,
    #[onnx(dims = "2, batch, 128")]
    state: Tensor<f32, (Fix<2>, Dyn, Fix<128>)>,
    sr: Tensor<i64, ()>,
    output: AllocatedOutput<f32, (Dyn, Fix<1>)>,
    #[onnx(name = "stateN")]
    next: Tensor<f32, (Fix<2>, Dyn, Fix<128>)>,
}

fn assert_io<Io: ort_bind::BindingIo + ort_bind::SplitIo>() {}

fn main() {
    let VadDims {} = VadDims::default();
    let _ = Vad::allocate(&Cpu);
    let _: fn(&mut ort_bind::Binding<Vad>) -> ort_bind::Result<()> = Vad::feed_back;
    let _: fn(&mut ort_bind::Binding<Vad>) -> ort_bind::Result<()> = Vad::feed_next_into_state;
    let VadOpenDims { samples } = VadOpenDims { samples: 512 };
    let _ = VadOpen::allocate(&Cpu, &VadOpenDims { samples });
    let _ = VadOpenDims::from_input_shapes(&[1, 512], &[2, 1, 128], &[]);
    let _ = Fixed::allocate(&Cpu);
    let _ = SymbolicFixed::<Cpu>::allocate(&Cpu);
    let _ = PartialOutputs::allocate(&Cpu, &PartialOutputsDims { batch: 1 });
    assert_io::<Fixed>();
    assert_io::<SymbolicFixed>();
    assert_io::<Aliased>();
    assert_io::<PartialOutputs>();
    assert_io::<DataDependent>();
    assert_io::<Scalar>();
    assert_io::<AllTypes>();
    assert_io::<Messy>();
    assert_io::<Offline>();
    let _ = (
        FixedDims {},
        // `x: Fix<4>` fixes the symbolic `n` for the whole struct: no dims are left.
        SymbolicFixedDims {},
        PartialOutputsDims { batch: 1 },
        MessyDims { batch: 1, type_dim0: 1, v_1x_dim0: 1, save_infer_model_scale_0_tmp_1_dim1: 1 },
        OfflineDims { n: 1 },
    );
}
