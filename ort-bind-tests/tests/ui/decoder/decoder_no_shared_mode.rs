// The shared-buffer mode exists only where the model writes its cache in place: a
// Concat-based decoder has `Decoder` but no `SharedDecoder`, at compile time.
mod mha {
    ort_bind::bindings!("models/decoder_mha.onnx");
}

fn main() -> ort_bind::Result<()> {
    let model = mha::Model::load()?;
    let _growing: mha::Decoder = model.decoder(1, 64)?;
    let _shared = model.shared_decoder(1, 64)?;
    Ok(())
}
