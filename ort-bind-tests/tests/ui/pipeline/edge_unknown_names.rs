// A misspelt model and a misspelt output: each named, with the name meant.
mod a {
    ort_bind::pipeline!(
        encoder = "models/speech_encoder.onnx",
        decoder = "models/speech_decoder.onnx",
        encodr.present_key_cross_0 -> decoder.past_key_cross_0,
    );
}
mod b {
    ort_bind::pipeline!(
        encoder = "models/speech_encoder.onnx",
        decoder = "models/speech_decoder.onnx",
        encoder.present_key_cros_0 -> decoder.past_key_cross_0,
    );
}

fn main() {}
