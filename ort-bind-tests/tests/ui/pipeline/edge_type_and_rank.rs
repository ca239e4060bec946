// Both ends of an edge must agree: element type, rank, and every size both fix; and an
// edge joins two models.
mod element_type {
    ort_bind::pipeline!(
        encoder = "models/marian_encoder.onnx",
        decoder = "models/marian_decoder.onnx",
        encoder.attention_mask -> decoder.rnn_states_prev,
    );
}
mod rank {
    ort_bind::pipeline!(
        encoder = "models/speech_encoder.onnx",
        decoder = "models/speech_decoder.onnx",
        encoder.encoder_hidden_states -> decoder.past_key_cross_0,
    );
}
mod fixed_size {
    ort_bind::pipeline!(
        encoder = "models/marian_encoder.onnx",
        decoder = "models/marian_decoder.onnx",
        encoder.encoder_outputs -> decoder.rnn_states_prev,
    );
}
mod same_model {
    ort_bind::pipeline!(
        encoder = "models/marian_encoder.onnx",
        decoder = "models/marian_decoder.onnx",
        decoder.rnn_states -> decoder.rnn_states_prev,
    );
}

fn main() {}
