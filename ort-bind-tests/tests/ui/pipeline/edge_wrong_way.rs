// An edge goes from an output of one model to an input of another: into the decoder's
// `logits` output is the wrong way round.
mod speech {
    ort_bind::pipeline!(
        encoder = "models/speech_encoder.onnx",
        decoder = "models/speech_decoder.onnx",
        encoder.present_key_cross_0 -> decoder.logits,
    );
}

fn main() {}
