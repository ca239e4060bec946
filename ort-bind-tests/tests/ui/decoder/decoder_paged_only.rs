// A model whose cache is a pool of blocks (paged attention) has only the paged decoder:
// `decoder` and `shared_decoder` are compile errors that say why and what to call.
mod paged {
    ort_bind::bindings!("models/decoder_paged.onnx");
}

fn main() -> ort_bind::Result<()> {
    let model = paged::Model::load()?;
    let _paged: paged::PagedDecoder = model.paged_decoder(4, 256, 32)?;
    let _growing = model.decoder(1, 64)?;
    let _shared = model.shared_decoder(1, 64)?;
    Ok(())
}
