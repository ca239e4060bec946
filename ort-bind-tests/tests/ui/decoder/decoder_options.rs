// The derive takes the decoder options `bindings!` takes: a role that does not exist is
// named with the roles that do, and one input named for two roles is refused.
#[derive(ort_bind::OnnxBinding)]
#[onnx(model = "models/decoder_mha.onnx", decoder_role("vocab", "logits"))]
struct UnknownRole;

#[derive(ort_bind::OnnxBinding)]
#[onnx(model = "models/decoder_mha.onnx", decoder_role("position_ids", "attention_mask"))]
struct TwoRoles;

fn main() {}
