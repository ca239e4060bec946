// `decoder` on a model that is not one, and a struct without fields that does not ask
// for a decoder.
use ort_bind::OnnxBinding;

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx", decoder)]
struct NotADecoder;

#[derive(OnnxBinding)]
#[onnx(model = "models/add.onnx")]
struct Empty {}

fn main() {}
