// Data flows one way: the decoder's logits cannot feed its own encoder. And every input a
// decoder holds for a sequence needs an edge: the speech encoder has no mask for Marian.
mod cycle {
    ort_bind::pipeline!(
        encoder = "models/speech_encoder.onnx",
        decoder = "models/speech_decoder.onnx",
        decoder.logits -> encoder.audio_features,
    );
}
mod unfed {
    ort_bind::pipeline!(
        encoder = "models/speech_encoder.onnx",
        decoder = "models/marian_decoder.onnx",
    );
}

fn main() {}
