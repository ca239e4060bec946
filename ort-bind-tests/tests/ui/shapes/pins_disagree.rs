// `x` and `y` share the symbolic dim `batch`; their types fix it to 1 and 2: no binding
// can have both, so this is an error naming the dim, both fields and both sizes.
use ort_bind::{Fix, OnnxBinding, Tensor};

#[derive(OnnxBinding)]
#[onnx(model = "models/dynamic.onnx")]
struct Projection {
    x: Tensor<f32, (Fix<1>, Fix<4>)>,
    y: Tensor<f32, (Fix<2>, Fix<3>)>,
}

fn main() {}
