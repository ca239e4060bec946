//! The model embedded in the binary, as the ort-bind app's `embedded` binary does.
use ort::session::Session;
use ort::value::Tensor;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let lib = std::env::var("ORT_DYLIB_PATH")?;
    let env = ort::init_from(lib)?.build()?;
    let mut dynamic = Session::builder(&env)?
        .commit_from_memory(include_bytes!("../../models/dynamic.onnx"))?;
    let x = Tensor::from_array(([1usize, 4], vec![0.5f32; 4]))?;
    let out = dynamic.run(ort::inputs!["x" => x])?;
    println!("embedded: y = {:?}", out["y"].try_extract_tensor::<f32>()?.1);
    Ok(())
}
