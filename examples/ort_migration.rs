//! Moving an `ort` program to typed bindings one model at a time (the `ort` feature).
//!
//! The program chains two models this repository carries: `dynamic.onnx` (`y = x @ W`,
//! `[batch, 4] -> [batch, 3]`) and `add.onnx` (`sum = x + y` over `[n]`), the first's `y`
//! read as the second's `x` (`n = batch * 3`). It starts as an `ort` program and moves
//! one model at a time; at each step the other model stays on `ort`, and tensors cross
//! between the crates with no copy (the addresses printed are equal).
//!
//! Run with `cargo run --release --example ort_migration --features ort`.

use ort_bind::ort::value::Tensor as OrtTensor;
use ort_bind::{Feed, OrtTensorView, Session, ort, ort_interop};

mod add {
    ort_bind::bindings!("examples/models/add.onnx");
}
mod dynamic {
    ort_bind::bindings!("examples/models/dynamic.onnx");
}

const X: [f32; 8] = [
    1.0, 0.0, 0.0, 0.0, //
    0.0, 0.0, 0.0, -1.0,
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `ort`'s handle to the environment ort-bind uses: one ONNX Runtime library and one
    // environment for both crates, whichever starts first (an `ort` program that calls
    // `ort::init_from(path)...build()` first keeps its own: ort-bind then uses that one).
    let env = ort_interop::environment()?;

    // The `ort` program: both models on `ort`.
    let mut ort_dynamic =
        ort::session::Session::builder(&env)?.commit_from_file(dynamic::MODEL_FILE.find()?)?;
    let mut ort_add =
        ort::session::Session::builder(&env)?.commit_from_file(add::MODEL_FILE.find()?)?;
    let x = OrtTensor::from_array(([2usize, 4], X.to_vec()))?;
    let outputs = ort_dynamic.run(ort::inputs!["x" => x])?;
    let (_, y) = outputs["y"].try_extract_tensor::<f32>()?;
    let ones = OrtTensor::from_array(([6usize], vec![1.0f32; 6]))?;
    let flat_y = OrtTensor::from_array(([6usize], y.to_vec()))?; // `ort`: a copy to reshape
    let sums = ort_add.run(ort::inputs!["x" => flat_y, "y" => ones])?;
    let before = sums["sum"].try_extract_tensor::<f32>()?.1.to_vec();
    drop(sums);
    drop(outputs);
    println!("ort only:            {before:?}");

    // Step 1: `add` moves to ort-bind. `dynamic` stays on `ort`; its output `y` ([2, 3]) is
    // bound as the typed binding's input `x` ([6]) in place (`Feed::from_ort`).
    let add_model = add::Model::load()?;
    let mut add_binding = add_model.bind(add::Dims { n: 6 })?;
    add_binding.inputs().y.fill(1.0);
    let x = OrtTensor::from_array(([2usize, 4], X.to_vec()))?;
    let outputs = ort_dynamic.run(ort::inputs!["x" => x])?;
    let ort_y = &outputs["y"];
    let mut inner: ort_bind::Binding<add::Io<ort_bind::Cpu>> = add_binding.into();
    inner.run_fed(&[Feed::from_ort(ort_y, "x")])?;
    let step1 = inner.outputs().sum.to_vec();
    println!("ort -> ort-bind:     {step1:?}");
    println!(
        "  `y` read in place: ort's address {:#x}, the binding's {:#x}",
        ort_y.try_extract_tensor::<f32>()?.1.as_ptr().addr(),
        inner.fed_address("x").unwrap_or_default()
    );
    drop(outputs);

    // Step 2: `dynamic` moves to ort-bind too, taking over the session `ort` built
    // (signature checked, as for any session). `add` is back on `ort` here to show the other
    // direction: the binding's output `y` is `ort`'s input `x`, in place.
    let dynamic_model = dynamic::Model::from_session(Session::from_ort(ort_dynamic)?)?;
    let mut dynamic_binding = dynamic_model.bind(dynamic::Dims { batch: 2 })?;
    dynamic_binding.inputs().x.copy_from_slice(&X)?;
    dynamic_binding.run()?;
    let y = dynamic_binding.outputs().y;
    let y_for_ort = y.to_ort_with_dims(&[6])?; // the same memory, seen as [6]
    println!(
        "  `y` passed in place: ort-bind's address {:#x}, ort's {:#x}",
        y.as_slice().as_ptr().addr(),
        y_for_ort.data_ptr().addr()
    );
    let ones = OrtTensor::from_array(([6usize], vec![1.0f32; 6]))?;
    let after = ort_add.run(ort::inputs!["x" => y_for_ort, "y" => ones])?;
    // And `ort`'s output read by ort-bind in place.
    let sum = OrtTensorView::<f32, (ort_bind::Dyn,)>::new(&after["sum"])?;
    let step2 = sum.view().to_vec();
    println!("ort-bind -> ort:     {step2:?}");

    assert_eq!(before, step1);
    assert_eq!(before, step2);
    println!("same results at every step: true");
    Ok(())
}
