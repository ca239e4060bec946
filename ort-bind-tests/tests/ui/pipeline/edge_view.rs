// A view edge is written `as view`; and a view holds its source's elements, so two
// shapes every size of which is fixed must hold as many (Marian's encoder states are not
// its decoder's recurrent state).
mod word {
    ort_bind::pipeline!(
        detector = "models/ocr_detector.onnx",
        recognizer = "models/ocr_recognizer.onnx",
        detector.heatmap -> recognizer.crops as reshaped,
    );
}
mod count {
    ort_bind::pipeline!(
        encoder = "models/marian_encoder.onnx",
        decoder = "models/marian_decoder.onnx",
        encoder.encoder_outputs -> decoder.rnn_states_prev as view,
    );
}

fn main() {}
