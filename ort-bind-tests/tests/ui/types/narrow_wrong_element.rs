// Narrow element types are checked like the others: an int4 input is not `i8` (its
// buffer packs two elements per byte), and one float8 format is not another, also behind
// an alias (caught by the trait bound).
use ort_bind::{
    Fix, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0, Int2x4,
    OnnxBinding, Tensor, UInt2x4, UInt4x2,
};

type Fnuz = Tensor<Float8E4M3FNUZ, (Fix<5>,)>;

#[derive(OnnxBinding)]
#[onnx(model = "models/narrow.onnx")]
struct NarrowIo {
    x: Tensor<f32, (Fix<5>,)>,
    in_float8e4m3fn: Fnuz,
    in_float8e4m3fnuz: Tensor<Float8E4M3FNUZ, (Fix<5>,)>,
    in_float8e5m2: Tensor<Float8E5M2, (Fix<5>,)>,
    in_float8e5m2fnuz: Tensor<Float8E5M2FNUZ, (Fix<5>,)>,
    in_float8e8m0: Tensor<Float8E8M0, (Fix<5>,)>,
    in_int4: Tensor<i8, (Fix<5>,)>,
    in_uint4: Tensor<UInt4x2, (Fix<5>,)>,
    in_int2: Tensor<Int2x4, (Fix<5>,)>,
    in_uint2: Tensor<UInt2x4, (Fix<5>,)>,
    q_float8e4m3fn: Tensor<Float8E4M3FN, (Fix<5>,)>,
}

fn main() {}
