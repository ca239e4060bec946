// A speculative pair is checked at compile time: the draft's vocabulary (size and token id
// type, `DecoderModel::Vocab`) must be the target's. A draft of 256 tokens for a target of
// 512 does not compile; untyped decoders (`Decoder<f32>`) are checked at run time instead.
use ort_bind::decode::Speculative;

mod target {
    ort_bind::bindings!("models/decoder_mha.onnx");
}
mod draft {
    ort_bind::bindings!("models/decoder_other_vocab.onnx");
}

fn main() -> ort_bind::Result<()> {
    let target = target::Model::load()?.decoder(1, 64)?;
    let draft = draft::Model::load()?.decoder(1, 64)?;
    let _pair = Speculative::new(target, draft, 4)?;
    Ok(())
}
