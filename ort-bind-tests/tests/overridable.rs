//! Overridable inputs and LoRA adapters on the binding path (`lora/`, written by
//! `make_lora.py`): a model whose LoRA weights, `temperature` and `bias` are inputs with a
//! default. Results equal Python onnxruntime's `run` (with `RunOptions.add_active_adapter`
//! for the adapters; `lora/expected.json`).

use ort_bind::{Adapter, Error, Tensor};

mod lora {
    ort_bind::bindings!("tests/fixtures/lora/lora.onnx");
}

/// The same model with its adapters named: checked when this test compiled, loaded by
/// `adapters::math()` / `adapters::code()`.
mod lora_typed {
    ort_bind::bindings!(
        "tests/fixtures/lora/lora.onnx",
        adapter("math", "tests/fixtures/lora/math.onnx_adapter"),
        adapter("code", "tests/fixtures/lora/code.onnx_adapter"),
    );
}

/// The same model with no typed overrides (`no_overrides`): every default stays.
mod lora_plain {
    ort_bind::bindings!("tests/fixtures/lora/lora.onnx", no_overrides);
}

#[test]
fn no_overrides_keeps_every_default() {
    let model = lora_plain::Model::load().expect("load");
    let mut binding = model.bind(lora_plain::Dims { batch: 2 }).expect("bind");
    binding
        .inputs()
        .x
        .copy_from_slice(&rows(&expected()["x"]))
        .expect("x");
    binding.run().expect("run");
    assert_close(binding.outputs().y.as_slice(), &want("default"), "default");
}

fn fixture(name: &str) -> std::path::PathBuf {
    ort_bind_tests::paths::fixture("lora").join(name)
}

fn expected() -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(fixture("expected.json")).expect("expected.json"))
        .expect("json")
}

fn rows(v: &serde_json::Value) -> Vec<f32> {
    v.as_array()
        .expect("rows")
        .iter()
        .flat_map(|r| r.as_array().expect("row").iter())
        .map(|x| x.as_f64().expect("number") as f32)
        .collect()
}

/// A binding of batch 2 with the fixture's `x`.
fn bound(model: &lora::Model) -> lora::Binding {
    let mut binding = model.bind(lora::Dims { batch: 2 }).expect("bind");
    let x = rows(&expected()["x"]);
    binding.inputs().x.copy_from_slice(&x).expect("x");
    binding
}

fn assert_close(got: &[f32], want: &[f32], case: &str) {
    assert_eq!(got.len(), want.len(), "{case}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-5, "{case}: y[{i}] = {g}, Python: {w}");
    }
}

fn want(case: &str) -> Vec<f32> {
    rows(&expected()["cases"][case]["y"])
}

#[test]
fn defaults_overrides_and_adapters_give_pythons_outputs() {
    let model = lora::Model::load().expect("load");
    let mut binding = bound(&model);

    // Nothing set: the model's defaults (rank-0 LoRA weights, temperature 1).
    binding.run().expect("run");
    assert_close(binding.outputs().y.as_slice(), &want("default"), "default");
    assert!(binding.inputs().temperature.is_none());

    // An override, set and filled in place.
    let mut t = Tensor::new("temperature", &[]).expect("tensor");
    t.as_mut_slice()[0] = 1.0;
    let old = binding
        .override_inputs(|o| o.temperature.replace(t))
        .expect("set");
    assert!(old.is_none());
    binding.inputs().temperature.expect("set").as_mut_slice()[0] = 2.0;
    binding.run().expect("run");
    assert_close(
        binding.outputs().y.as_slice(),
        &want("temperature_2"),
        "temperature_2",
    );

    // Unset again: the default.
    let back = binding
        .override_inputs(|o| o.temperature.take())
        .expect("clear");
    assert_eq!(back.expect("was set").as_slice(), &[2.0]);
    binding.run().expect("run");
    assert_close(
        binding.outputs().y.as_slice(),
        &want("default"),
        "default again",
    );

    // Adapters: each swaps in its parameters, with no copy; removing restores defaults.
    let math = Adapter::from_file(fixture("math.onnx_adapter")).expect("math");
    let code = Adapter::from_file(fixture("code.onnx_adapter")).expect("code");
    {
        let mut active = binding.set_adapter(&math).expect("math fits");
        active.run().expect("run");
        assert_close(active.outputs().y.as_slice(), &want("math"), "math");
    }
    binding.run().expect("run");
    assert_close(
        binding.outputs().y.as_slice(),
        &want("default"),
        "after math",
    );
    let mut active = binding.set_adapter(&code).expect("code fits");
    active.run().expect("run");
    assert_close(active.outputs().y.as_slice(), &want("code"), "code");
    active.remove().expect("remove");

    // An adapter and an override together.
    let mut t = Tensor::new("temperature", &[]).expect("tensor");
    t.as_mut_slice()[0] = 2.0;
    binding
        .override_inputs(|o| o.temperature = Some(t))
        .expect("set");
    let mut active = binding.set_adapter(&math).expect("math fits");
    active.run().expect("run");
    assert_close(
        active.outputs().y.as_slice(),
        &want("math_temperature_2"),
        "math + temperature 2",
    );
}

#[test]
fn adapters_that_do_not_fit_are_refused_naming_the_parameter() {
    let model = lora::Model::load().expect("load");
    let mut binding = bound(&model);
    for (file, words) in [
        (
            "wide.onnx_adapter",
            "`lora_a.0` has size 16 on axis 0, which the model fixes to 8",
        ),
        (
            "unknown.onnx_adapter",
            "`lora_c.0` is not an overridable input",
        ),
        (
            "mixed_rank.onnx_adapter",
            "dim `rank` is 2 in parameter `lora_a.0` but 3 in `lora_b.0`",
        ),
        (
            "int_typed.onnx_adapter",
            "`lora_a.0` holds int32 elements, but the model's input `lora_a.0` is float32",
        ),
    ] {
        let adapter = Adapter::from_file(fixture(file)).expect(file);
        let err = binding.set_adapter(&adapter).expect_err(file);
        assert!(
            matches!(&err, Error::Adapter { .. }) && err.to_string().contains(words),
            "{file}: {err}"
        );
        // The binding is unchanged: it still runs with its defaults.
        binding.run().expect("run");
        assert_close(binding.outputs().y.as_slice(), &want("default"), file);
    }
    // Not an adapter file at all.
    let err = Adapter::from_bytes(b"not a flatbuffer").expect_err("garbage");
    assert!(matches!(err, Error::Adapter { .. }), "{err}");
}

#[test]
fn one_adapter_serves_bindings_on_several_threads() {
    let model = lora::Model::load().expect("load");
    let math = Adapter::from_file(fixture("math.onnx_adapter")).expect("math");
    let names: Vec<&str> = math.parameters().map(|(n, _)| n).collect();
    assert_eq!(names, ["lora_a.0", "lora_b.0", "lora_a.1", "lora_b.1"]);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                let mut binding = bound(&model);
                let mut active = binding.set_adapter(&math).expect("math");
                for _ in 0..20 {
                    active.run().expect("run");
                    assert_close(active.outputs().y.as_slice(), &want("math"), "math");
                }
            });
        }
    });
}

#[test]
fn adapters_named_at_compile_time_load_and_run() {
    let model = lora_typed::Model::load().expect("load");
    let mut binding = model.bind(lora_typed::Dims { batch: 2 }).expect("bind");
    let x = rows(&expected()["x"]);
    binding.inputs().x.copy_from_slice(&x).expect("x");
    assert!(
        lora_typed::adapters::MATH_FILE
            .relative()
            .ends_with("math.onnx_adapter")
    );
    for (adapter, case) in [
        (lora_typed::adapters::math().expect("math"), "math"),
        (lora_typed::adapters::code().expect("code"), "code"),
    ] {
        let mut active = binding.set_adapter(&adapter).expect(case);
        active.run().expect("run");
        assert_close(active.outputs().y.as_slice(), &want(case), case);
    }
}

/// A batcher groups requests by adapter: rows with different adapters (or none) never share
/// a run, and each reply is the row Python computes with its adapter.
#[test]
fn a_batcher_groups_requests_by_adapter() {
    let model = lora::Model::load().expect("load");
    let batcher = model
        .batcher(ort_bind::BatchOptions {
            max_batch: 4,
            max_delay: std::time::Duration::from_millis(20),
            workers: 1,
            sizing: ort_bind::BatchSizing::Fixed,
        })
        .expect("batcher");
    let math = Adapter::from_file(fixture("math.onnx_adapter")).expect("math");
    let code = Adapter::from_file(fixture("code.onnx_adapter")).expect("code");
    let x = rows(&expected()["x"]);
    let item = |row: usize| lora::Item {
        x: ort_bind::Row::new(vec![8], x[row * 8..row * 8 + 8].to_vec()).expect("row"),
    };
    std::thread::scope(|s| {
        let mut handles = Vec::new();
        for i in 0..12 {
            let (batcher, math, code, item) = (&batcher, &math, &code, &item);
            handles.push(s.spawn(move || {
                let row = i % 2;
                let (reply, case) = match i % 3 {
                    0 => (batcher.submit(item(row)), "default"),
                    1 => (batcher.submit_with_adapter(item(row), math), "math"),
                    _ => (batcher.submit_with_adapter(item(row), code), "code"),
                };
                let y = reply.expect("reply").y.into_data();
                assert_close(&y, &want(case)[row * 4..row * 4 + 4], case);
            }));
        }
        for h in handles {
            h.join().expect("request thread");
        }
    });
    let (runs, items) = batcher.stats();
    assert_eq!(items, 12);
    // Three adapters (none, math, code) never share a run.
    assert!(runs >= 3, "{runs} runs");
    // An adapter that does not fit fails its request alone.
    let wide = Adapter::from_file(fixture("wide.onnx_adapter")).expect("wide");
    let err = batcher
        .submit_with_adapter(item(0), &wide)
        .expect_err("wide");
    assert!(matches!(err, Error::Adapter { .. }), "{err}");
    assert!(batcher.submit(item(1)).is_ok());
}

/// The derive route: overridable inputs are `Option<Tensor<..>>` fields (by ONNX name or
/// by the field name codegen gives it); the others keep their defaults.
#[derive(ort_bind::OnnxBinding)]
#[onnx(model = "tests/fixtures/lora/lora.onnx")]
struct LoraIo {
    x: Tensor<f32, (ort_bind::Dyn, ort_bind::Fix<8>)>,
    y: Tensor<f32, (ort_bind::Dyn, ort_bind::Fix<4>)>,
    temperature: Option<Tensor<f32, ()>>,
    #[onnx(name = "lora_a.0")]
    a0: Option<Tensor<f32, (ort_bind::Fix<8>, ort_bind::Dyn)>>,
    #[onnx(name = "lora_b.0")]
    b0: Option<Tensor<f32, (ort_bind::Dyn, ort_bind::Fix<8>)>>,
    lora_a_1: Option<Tensor<f32, (ort_bind::Fix<8>, ort_bind::Dyn)>>,
    lora_b_1: Option<Tensor<f32, (ort_bind::Dyn, ort_bind::Fix<4>)>>,
}

/// Parameter `name` of adapter file `file`, as a tensor named for the model's input.
fn parameter(file: &str, name: &str) -> Tensor<f32, ort_bind::AnyRank> {
    let bytes = std::fs::read(fixture(file)).expect("adapter file");
    let view = ort_bind_adapter::read(&bytes).expect("adapter");
    let p = view.parameter(name).expect("parameter");
    let dims: Vec<usize> = p.dims.iter().map(|&d| d as usize).collect();
    let mut t = Tensor::new(name, &dims).expect("tensor");
    for (v, b) in t.as_mut_slice().iter_mut().zip(p.data.chunks_exact(4)) {
        *v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
    t
}

/// `parameter` with the field's shape.
fn shaped<S: ort_bind::Shape>(file: &str, name: &str) -> Tensor<f32, S> {
    let p = parameter(file, name);
    let mut t = Tensor::new(name, p.dims()).expect("tensor");
    t.as_mut_slice().copy_from_slice(p.as_slice());
    t
}

#[test]
fn a_derived_struct_overrides_inputs_through_option_fields() {
    let session = ort_bind::Session::from_file(
        LoraIo::MODEL_PATH,
        &ort_bind::SessionOptions::new().intra_threads(1),
    )
    .expect("session");
    let io = LoraIo::allocate(&ort_bind::Cpu, &LoraIoDims { batch: 2 }).expect("allocate");
    assert!(io.temperature.is_none() && io.a0.is_none());
    let mut binding = ort_bind::Binding::new(&session, io).expect("bind");
    binding
        .inputs()
        .x
        .copy_from_slice(&rows(&expected()["x"]))
        .expect("x");

    // Every field `None`: the model's defaults.
    binding.run().expect("run");
    assert_close(binding.outputs().y.as_slice(), &want("default"), "default");
    assert!(binding.inputs().temperature.is_none());

    // Set through `modify` (bound like any input), filled in place through `inputs()`.
    binding
        .modify(|io| {
            io.temperature = Some(Tensor::new("temperature", &[])?);
            Ok(())
        })
        .expect("set");
    binding.inputs().temperature.expect("set").as_mut_slice()[0] = 2.0;
    binding.run().expect("run");
    assert_close(
        binding.outputs().y.as_slice(),
        &want("temperature_2"),
        "temperature_2",
    );

    // The `math` adapter's parameters in the LoRA fields, temperature 1 again: what
    // Python gives with the adapter active.
    binding
        .modify(|io| {
            io.temperature = None;
            io.a0 = Some(shaped("math.onnx_adapter", "lora_a.0"));
            io.b0 = Some(shaped("math.onnx_adapter", "lora_b.0"));
            io.lora_a_1 = Some(shaped("math.onnx_adapter", "lora_a.1"));
            io.lora_b_1 = Some(shaped("math.onnx_adapter", "lora_b.1"));
            Ok(())
        })
        .expect("set");
    binding.run().expect("run");
    assert_close(binding.outputs().y.as_slice(), &want("math"), "math");

    // Unset: the defaults again.
    binding
        .modify(|io| {
            (io.a0, io.b0, io.lora_a_1, io.lora_b_1) = (None, None, None, None);
            Ok(())
        })
        .expect("clear");
    binding.run().expect("run");
    assert_close(
        binding.outputs().y.as_slice(),
        &want("default"),
        "default again",
    );

    // The struct holds no adapter: `set_adapter` says where adapters go.
    let math = Adapter::from_file(fixture("math.onnx_adapter")).expect("math");
    let err = binding.set_adapter(Some(&math)).unwrap_err();
    assert!(
        matches!(&err, Error::Adapter { problem, .. } if problem.contains("bindings!")),
        "{err}"
    );
    binding.run().expect("run after a refused adapter");
    assert_close(
        binding.outputs().y.as_slice(),
        &want("default"),
        "after refusal",
    );
}
