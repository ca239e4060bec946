// Each model's decoder is its own type: two decoders with the same logits type (f32) and
// cache mode (growing) cannot stand in for each other, so a draft and a target passed the
// wrong way round do not compile.
mod draft_model {
    ort_bind::bindings!("models/decoder_mha.onnx");
}
mod target_model {
    ort_bind::bindings!("models/decoder_gpt2.onnx");
}

fn speculate(_draft: &mut draft_model::Decoder, _target: &mut target_model::Decoder) {}

fn main() -> ort_bind::Result<()> {
    let mut draft = draft_model::Model::load()?.decoder(1, 64)?;
    let mut target = target_model::Model::load()?.decoder(1, 64)?;
    speculate(&mut target, &mut draft);
    Ok(())
}
