//! Quickstart: typed, zero-copy bindings for a model this repository carries.
//!
//! `examples/models/dynamic.onnx` computes `y = x @ W` (W is a 4x3 weight inside the
//! model) and `z = relu(y)`, for any batch size. `bindings!` generates the module below
//! from the model file when this example compiles; every name, element type and shape
//! here is checked by the compiler.
//!
//! Run with `cargo run --release --example quickstart`.

mod dynamic {
    ort_bind::bindings!("examples/models/dynamic.onnx");
}

fn main() -> ort_bind::Result<()> {
    let model = dynamic::Model::load()?;

    // `batch` is the model's symbolic dimension: the binding allocates every buffer
    // for it once and binds them to ONNX Runtime.
    let mut binding = model.bind(dynamic::Dims { batch: 2 })?;

    // Fill the input in place (a `[batch, 4]` f32 tensor), run, read outputs in place.
    binding.inputs().x.copy_from_slice(&[
        1.0, 0.0, 0.0, 0.0, //
        0.0, 0.0, 0.0, -1.0,
    ])?;
    binding.run()?;
    let out = binding.outputs();
    println!(
        "x @ W        (dims {:?}) = {:?}",
        out.y.dims(),
        out.y.as_slice()
    );
    // `z` is declared `[N, 3]` with an `N` no input has, but the graph computes it from
    // `x` (shape inference at build time): it is pre-allocated `[batch, 3]` like `y`.
    let z = out.z;
    println!("relu(x @ W)  (dims {:?}) = {:?}", z.dims(), z.as_slice());

    // A smaller batch reuses the same buffers: only the shapes are rebound.
    binding.set_dims(dynamic::Dims { batch: 1 })?;
    binding.inputs().x.copy_from_slice(&[0.5, 0.5, 0.5, 0.5])?;
    binding.run()?;
    let y = binding.outputs().y;
    println!("batch of 1   (dims {:?}) = {:?}", y.dims(), y.as_slice());

    // Each output row i is sum_k x[k] * W[k][i], with W = arange(12).reshape(4, 3) / 10.
    let expected = [0.9f32, 1.1, 1.3];
    let ok = y
        .as_slice()
        .iter()
        .zip(expected)
        .all(|(a, b)| (a - b).abs() < 1e-5);
    println!("matches the hand-computed result: {ok}");
    Ok(())
}
