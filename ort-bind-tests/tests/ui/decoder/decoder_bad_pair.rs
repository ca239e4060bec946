// A decoder whose cache pair changes element type: an error in the model's terms, on
// `decoder`.
use ort_bind::OnnxBinding;

#[derive(OnnxBinding)]
#[onnx(model = "models/decoder_bad_pair.onnx", decoder)]
struct Gpt;

fn main() {}
