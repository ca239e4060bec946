//! The same program on `ort` alone: the four runs of the ort-bind app's `main` (`add` three
//! times, `dynamic` once).
use ort::session::Session;
use ort::value::Tensor;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let lib = std::env::var("ORT_DYLIB_PATH")?;
    let env = ort::init_from(lib)?.build()?;
    let mut add = Session::builder(&env)?.commit_from_file("models/add.onnx")?;
    let x = Tensor::from_array(([3usize], vec![1.0f32, 2.0, 3.0]))?;
    let y = Tensor::from_array(([3usize], vec![10.0f32; 3]))?;
    let out = add.run(ort::inputs!["x" => x, "y" => y])?;
    println!("sum = {:?}", out["sum"].try_extract_tensor::<f32>()?.1);
    drop(out);
    let mut dynamic = Session::builder(&env)?.commit_from_file("models/dynamic.onnx")?;
    let x = Tensor::from_array(([1usize, 4], vec![0.5f32; 4]))?;
    let out = dynamic.run(ort::inputs!["x" => x])?;
    println!("y = {:?}", out["y"].try_extract_tensor::<f32>()?.1);
    drop(out);
    let x = Tensor::from_array(([2usize], vec![1.0f32, 2.0]))?;
    let y = Tensor::from_array(([2usize], vec![0.5f32; 2]))?;
    let out = add.run(ort::inputs!["x" => x, "y" => y])?;
    println!("sum = {:?}", out["sum"].try_extract_tensor::<f32>()?.1);
    drop(out);
    let x = Tensor::from_array(([4usize], vec![1.0f32, 2.0, 3.0, 4.0]))?;
    let y = Tensor::from_array(([4usize], vec![0.25f32; 4]))?;
    let out = add.run(ort::inputs!["x" => x, "y" => y])?;
    let sum = out["sum"].try_extract_tensor::<f32>()?.1;
    assert_eq!(sum, [1.25, 2.25, 3.25, 4.25]);
    println!("sum = {sum:?}");
    Ok(())
}
