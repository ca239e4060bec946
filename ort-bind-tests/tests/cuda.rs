//! CUDA tests: `cargo test --features cuda --test cuda -- --nocapture`.
//!
//! Three groups:
//! - checks that need no GPU and always run: no driver, or an ONNX Runtime without the
//!   CUDA execution provider, is an `Err` that says which, never a panic;
//! - tests that need an NVIDIA driver and device 0 (device memory, copies, adoption,
//!   out of memory): they skip with a message when there is none;
//! - tests that also need an ONNX Runtime with the CUDA execution provider (runs on the
//!   device through the generated bindings): they skip with a message when the loaded
//!   library has none (the default `onnxruntime` wheel is CPU-only; see
//!   `scripts/gpu-check.sh` for `onnxruntime-gpu`).
#![cfg(feature = "cuda")]

mod add {
    ort_bind::include_bindings!("add");
}
mod nonzero {
    ort_bind::include_bindings!("nonzero");
}
mod dynamic {
    ort_bind::include_bindings!("dynamic");
}
mod state {
    ort_bind::include_bindings!("state");
}

use ort_bind::__private::InputShape as _;
use std::sync::Arc;

use ort_bind_tests::decoders::expected;

use ort_bind::cudarc::driver::{CudaSlice, DevicePtr};
use ort_bind::{
    Binder, Binding, BindingIo, Cpu, Cuda, CudaErrorKind, Dyn, Error, OutputValue, Session,
    SessionOptions, Tensor, TensorMut, TensorRef, ValueSpec,
};

const ADD: &str = "tests/fixtures/add.onnx";

/// Device 0, or `None` (and a message saying why the test skips).
fn gpu(test: &str) -> Option<Cuda<0>> {
    match Cuda::<0>::new() {
        Ok(device) => Some(device),
        Err(e) => {
            eprintln!("{test}: skipped: no CUDA device 0: {e}");
            None
        }
    }
}

/// A session for `path` on `device`'s stream, or `None` when the loaded ONNX Runtime has no
/// CUDA execution provider (with a message). Any other error fails the test.
fn gpu_session(test: &str, path: &str, device: &Cuda<0>) -> Option<Session> {
    // TF32 off: float32 results are compared with the CPU's to float32 rounding.
    let options = SessionOptions::new().cuda(device).cuda_tf32(false);
    match Session::from_file(path, &options) {
        Ok(session) => Some(session),
        Err(Error::Cuda {
            kind: CudaErrorKind::NoExecutionProvider,
            message,
        }) => {
            eprintln!("{test}: skipped: {message}");
            None
        }
        Err(e) => panic!("{test}: creating a CUDA session failed: {e}"),
    }
}

#[test]
fn without_a_driver_devices_are_errors_not_panics() {
    // SAFETY: only tries to open the driver library.
    let driver_present = unsafe { ort_bind::cudarc::driver::sys::is_culib_present() };
    match Cuda::<0>::new() {
        Ok(_) => assert!(driver_present, "a device without a driver library?"),
        Err(Error::Cuda { kind, message }) => {
            if driver_present {
                assert!(
                    matches!(kind, CudaErrorKind::NoDevice | CudaErrorKind::NoDriver),
                    "{kind}: {message}"
                );
            } else {
                assert_eq!(kind, CudaErrorKind::NoDriver, "{message}");
                assert!(message.contains("libcuda"), "{message}");
            }
            eprintln!("Cuda::<0>::new(): {kind}: {message}");
        }
        Err(other) => panic!("expected a CUDA error, got {other:?}"),
    }
    // An ordinal no machine has: never a device, whatever the driver.
    match Cuda::<4096>::new() {
        Err(Error::Cuda { kind, .. }) => assert!(
            matches!(kind, CudaErrorKind::NoDevice | CudaErrorKind::NoDriver),
            "{kind}"
        ),
        other => panic!("expected no device 4096, got {other:?}"),
    }
}

#[test]
fn an_onnx_runtime_without_the_cuda_provider_says_so() {
    let available = ort_bind::cuda_provider_available().expect("ONNX Runtime loads");
    let result = Session::from_file(ADD, &SessionOptions::new().cuda_provider(0));
    if available {
        eprintln!("the loaded ONNX Runtime has the CUDA execution provider: {result:?}");
        return;
    }
    match result {
        Err(Error::Cuda {
            kind: CudaErrorKind::NoExecutionProvider,
            message,
        }) => {
            assert!(message.contains("onnxruntime-gpu"), "{message}");
            assert!(message.contains("CPUExecutionProvider"), "{message}");
        }
        other => panic!("expected NoExecutionProvider, got {other:?}"),
    }
    // The CPU path is unaffected by the failed attempt.
    let model = add::Model::load().expect("CPU session");
    let mut binding = model.bind(add::Dims { n: 2 }).expect("bind");
    binding
        .inputs()
        .x
        .copy_from_slice(&[1.0, 2.0])
        .expect("fill");
    binding.inputs().y.fill(1.0);
    binding.run().expect("run");
    assert_eq!(binding.outputs().sum.as_slice(), &[2.0, 3.0]);
}

#[test]
fn device_memory_copies_round_trip() -> ort_bind::Result<()> {
    let Some(gpu) = gpu("device_memory_copies_round_trip") else {
        return Ok(());
    };
    let mut t = Tensor::<f32, (Dyn,), Cuda<0>>::new_in("t", gpu.clone(), &[5])?;
    assert_eq!(t.view().to_vec()?, vec![0.0; 5], "allocations are zeroed");
    t.view_mut().copy_from_host(&[1.0, 2.0, 3.0, 4.0, 5.0])?;
    assert_eq!(t.view().to_vec()?, vec![1.0, 2.0, 3.0, 4.0, 5.0]);
    let err = t.view_mut().copy_from_host(&[1.0]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Length {
                expected: 5,
                found: 1,
                ..
            }
        ),
        "{err}"
    );
    // Growing reallocates once; shrinking keeps the capacity.
    t.set_dims(&[2])?;
    assert_eq!(t.capacity(), 5);
    t.set_dims(&[8])?;
    assert!(t.capacity() >= 8);
    // Pinned staging, asynchronous both ways.
    let mut pinned = gpu.alloc_pinned::<f32>(8)?;
    t.view_mut().copy_from_host(&[9.0; 8])?;
    t.view().copy_to_pinned(&mut pinned)?;
    assert_eq!(pinned.as_slice().expect("pinned read"), &[9.0; 8]);
    pinned.as_mut_slice().expect("pinned write")[0] = -1.0;
    t.view_mut().copy_from_pinned_slice(&pinned)?;
    assert_eq!(t.view().to_vec()?[..2], [-1.0, 9.0]);
    Ok(())
}

#[test]
fn user_slices_and_adopted_pointers_become_tensors() -> ort_bind::Result<()> {
    let Some(gpu) = gpu("user_slices_and_adopted_pointers_become_tensors") else {
        return Ok(());
    };
    let stream = gpu.stream().clone();
    let slice = stream.clone_htod(&[1.0f32, 2.0, 3.0]).expect("upload");
    let t = Tensor::<f32, (Dyn,), Cuda<0>>::from_cuda_slice("x", gpu.clone(), slice, &[3])?;
    assert_eq!(t.view().to_vec()?, vec![1.0, 2.0, 3.0]);
    let back = t.into_cuda_slice().expect("own slice comes back");
    assert_eq!(
        stream.clone_dtoh(&back).expect("download"),
        vec![1.0, 2.0, 3.0]
    );

    // A slice on another stream of the same device: ordered by joins, no copy.
    let other = gpu.context().new_stream().expect("stream");
    let slice = other.clone_htod(&[4.0f32, 5.0]).expect("upload");
    let t = Tensor::<f32, (Dyn,), Cuda<0>>::from_cuda_slice("x", gpu.clone(), slice, &[2])?;
    assert_eq!(t.view().to_vec()?, vec![4.0, 5.0]);

    // Too short for the dims.
    let slice = stream.alloc_zeros::<f32>(2).expect("alloc");
    let err =
        Tensor::<f32, (Dyn,), Cuda<0>>::from_cuda_slice("x", gpu.clone(), slice, &[3]).unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");

    // Foreign memory (here cudarc's own, standing in for PyTorch or DLPack): adopted in place.
    let owner: CudaSlice<f32> = stream.clone_htod(&[7.0f32, 8.0]).expect("upload");
    let (ptr, record) = owner.device_ptr(&stream);
    drop(record);
    // SAFETY: `ptr` addresses 2 f32 of device 0 in its primary context, owned by `owner`,
    // which the tensor keeps until it is dropped; nothing else touches it meanwhile, and
    // the upload was enqueued on the device's own stream.
    let adopted = unsafe {
        Tensor::<f32, (Dyn,), Cuda<0>>::from_raw_device_ptr("a", gpu.clone(), ptr, 2, &[2], owner)?
    };
    assert!(adopted.is_adopted());
    assert_eq!(adopted.view().device_ptr(), ptr, "no copy");
    assert_eq!(adopted.view().to_vec()?, vec![7.0, 8.0]);
    assert!(
        adopted.into_cuda_slice().is_none(),
        "adopted memory goes back to its owner"
    );

    // Host memory is not device memory: the driver says so, and so does the error.
    let host = [0.0f32; 4];
    // SAFETY: the call is expected to fail its pointer check before anything uses `host`.
    let err = unsafe {
        Tensor::<f32, (Dyn,), Cuda<0>>::from_raw_device_ptr(
            "h",
            gpu.clone(),
            host.as_ptr() as u64,
            4,
            &[4],
            (),
        )
    }
    .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Cuda {
                kind: CudaErrorKind::WrongDevice,
                ..
            }
        ),
        "{err}"
    );
    Ok(())
}

#[test]
fn device_out_of_memory_is_an_error() -> ort_bind::Result<()> {
    let Some(gpu) = gpu("device_out_of_memory_is_an_error") else {
        return Ok(());
    };
    // 4 TiB: more than any device has.
    let err = Tensor::<f32, (Dyn,), Cuda<0>>::new_in("huge", gpu, &[1 << 40]).unwrap_err();
    match err {
        Error::OutOfMemory { tensor, device, .. } => {
            assert_eq!(tensor, "huge");
            assert_eq!(device, "cuda:0");
        }
        other => panic!("expected OutOfMemory, got {other}"),
    }
    Ok(())
}

#[test]
fn device_memory_needs_a_session_on_the_same_device_and_stream() -> ort_bind::Result<()> {
    let Some(gpu) = gpu("device_memory_needs_a_session_on_the_same_device_and_stream") else {
        return Ok(());
    };
    let wrong = |r: ort_bind::Result<add::Binding<Cuda<0>>>| match r {
        Err(Error::Cuda {
            kind: CudaErrorKind::WrongDevice,
            message,
        }) => message,
        other => panic!("expected WrongDevice, got {other:?}"),
    };
    // A CPU session cannot take device memory.
    let cpu = add::Model::load()?;
    let message = wrong(cpu.bind_on(gpu.clone(), add::Dims { n: 4 }));
    assert!(message.contains("no CUDA execution provider"), "{message}");
    let Some(session) = gpu_session("device_memory_needs_...", ADD, &gpu) else {
        return Ok(());
    };
    let model = add::Model::from_session(session)?;
    // Same device, another stream: unordered with the session's runs.
    let other = Cuda::<0>::new()?;
    let message = wrong(model.bind_on(other, add::Dims { n: 4 }));
    assert!(message.contains("another stream"), "{message}");
    // A session on ONNX Runtime's own stream.
    let own = add::Model::from_file(ADD, &SessionOptions::new().cuda_provider(0))?;
    let message = wrong(own.bind_on(gpu.clone(), add::Dims { n: 4 }));
    assert!(message.contains("cuda_provider"), "{message}");
    Ok(())
}

#[test]
fn device_inputs_and_outputs_run_in_place() -> ort_bind::Result<()> {
    let test = "device_inputs_and_outputs_run_in_place";
    let Some(gpu) = gpu(test) else { return Ok(()) };
    let Some(session) = gpu_session(test, ADD, &gpu) else {
        return Ok(());
    };
    let model = add::Model::from_session(session)?;
    let mut binding = model.bind_on(gpu.clone(), add::Dims { n: 4 })?;
    let out_ptr = binding.outputs().sum.device_ptr();
    binding.inputs().x.copy_from_host(&[1.0, 2.0, 3.0, 4.0])?;
    binding.inputs().y.copy_from_host(&[10.0; 4])?;
    binding.run()?;
    let sum = binding.outputs().sum;
    assert_eq!(
        sum.device_ptr(),
        out_ptr,
        "ONNX Runtime wrote into our device buffer"
    );
    assert_eq!(sum.to_vec()?, vec![11.0, 12.0, 13.0, 14.0]);
    // Many runs, one synchronize at the end: all ordered on the stream.
    for i in 0..100 {
        binding.inputs().y.copy_from_host(&[i as f32; 4])?;
        binding.run()?;
    }
    gpu.synchronize()?;
    assert_eq!(
        binding.outputs().sum.to_vec()?,
        vec![100.0, 101.0, 102.0, 103.0]
    );
    // Dims change: capacity reused, results right.
    binding.set_dims(add::Dims { n: 2 })?;
    binding.inputs().x.copy_from_host(&[1.0, 2.0])?;
    binding.inputs().y.copy_from_host(&[0.5, 0.5])?;
    binding.run()?;
    assert_eq!(binding.outputs().sum.to_vec()?, vec![1.5, 2.5]);
    Ok(())
}

#[test]
fn the_callers_stream_work_is_ordered_with_runs() -> ort_bind::Result<()> {
    let test = "the_callers_stream_work_is_ordered_with_runs";
    let Some(gpu) = gpu(test) else { return Ok(()) };
    let Some(session) = gpu_session(test, ADD, &gpu) else {
        return Ok(());
    };
    let model = add::Model::from_session(session)?;
    let n = 1 << 20;
    let mut binding = model.bind_on(gpu.clone(), add::Dims { n })?;
    let stream = gpu.stream().clone();
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let staged = stream.clone_htod(&x).expect("upload");
    let mut result: CudaSlice<f32> = stream.alloc_zeros(n).expect("alloc");
    // The caller's work before the run (a device-to-device copy into the input), the run,
    // and the caller's work after it (a copy out of the output), with no synchronize
    // in between: the stream orders them.
    for _ in 0..3 {
        {
            let mut inputs = binding.inputs();
            let mut view = inputs.x.cuda_view_mut();
            stream.memcpy_dtod(&staged, &mut view).expect("copy in");
            inputs.y.fill_zeros()?;
        }
        binding.run()?;
        let out = binding.outputs().sum;
        let view = out.cuda_view().expect("bound output");
        stream.memcpy_dtod(&view, &mut result).expect("copy out");
    }
    let got = stream.clone_dtoh(&result).expect("download");
    assert_eq!(got, x);
    Ok(())
}

#[test]
fn data_dependent_outputs_live_on_the_device() -> ort_bind::Result<()> {
    let test = "data_dependent_outputs_live_on_the_device";
    let Some(gpu) = gpu(test) else { return Ok(()) };
    let Some(session) = gpu_session(test, "tests/fixtures/nonzero.onnx", &gpu) else {
        return Ok(());
    };
    let model = nonzero::Model::from_session(session)?;
    let mut binding = model.bind_on(gpu.clone(), nonzero::Dims {})?;
    binding
        .inputs()
        .x
        .copy_from_host(&[0.0, 1.5, 0.0, -2.0, 0.0, 3.0])?;
    binding.run()?;
    let indices = binding
        .outputs()
        .indices
        .get()
        .expect("produced by the run");
    assert_eq!(indices.dims(), &[1, 3]);
    assert!(indices.cuda_view().is_none(), "ONNX Runtime allocated it");
    assert_eq!(indices.to_vec()?, vec![1, 3, 5]);
    binding.inputs().x.copy_from_host(&[1.0; 6])?;
    binding.run()?;
    assert_eq!(
        binding.outputs().indices.get().expect("run").to_vec()?,
        vec![0, 1, 2, 3, 4, 5]
    );
    Ok(())
}

#[test]
fn dims_changes_and_state_feedback_stay_on_the_device() -> ort_bind::Result<()> {
    let test = "dims_changes_and_state_feedback_stay_on_the_device";
    let Some(gpu) = gpu(test) else { return Ok(()) };
    let Some(session) = gpu_session(test, "tests/fixtures/dynamic.onnx", &gpu) else {
        return Ok(());
    };
    let model = dynamic::Model::from_session(session)?;
    let mut binding = model.bind_on(gpu.clone(), dynamic::Dims { batch: 2 })?;
    binding
        .inputs()
        .x
        .copy_from_host(&[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0])?;
    binding.run()?;
    let y = binding.outputs().y.to_vec()?;
    let want = [0.0, 0.1, 0.2, -0.9, -1.0, -1.1];
    assert!(
        y.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6),
        "{y:?}"
    );

    let Some(session) = gpu_session(test, "tests/fixtures/state.onnx", &gpu) else {
        return Ok(());
    };
    let model = state::Model::from_session(session)?;
    let mut binding = model.bind_on(gpu.clone(), state::Dims {})?;
    binding.inputs().x.copy_from_host(&[1.0, 2.0, 3.0, 4.0])?;
    let state0: Vec<f32> = (0..16).map(|i| i as f32).collect();
    binding.inputs().state.copy_from_host(&state0)?;
    binding.run()?;
    binding.feed_state_n_into_state()?;
    binding.run()?;
    // Two steps: state0 + 10 + 10.
    let want: Vec<f32> = state0.iter().map(|v| v + 20.0).collect();
    assert_eq!(binding.outputs().state_n.to_vec()?, want);
    Ok(())
}

#[test]
fn pinned_host_tensors_run_on_a_cuda_session() -> ort_bind::Result<()> {
    let test = "pinned_host_tensors_run_on_a_cuda_session";
    let Some(gpu) = gpu(test) else { return Ok(()) };
    let Some(session) = gpu_session(test, ADD, &gpu) else {
        return Ok(());
    };
    let model = add::Model::from_session(session)?;
    // Host-bound: ONNX Runtime copies in and out; the run waits for the copies. Inputs
    // written after the bind and between runs are what each run reads (ONNX Runtime
    // copies a host input when it is bound, so every run binds them again).
    let mut pinned = model.bind_on(gpu.pinned(), add::Dims { n: 3 })?;
    pinned.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0])?;
    pinned.inputs().y.fill(1.0);
    pinned.run()?;
    assert_eq!(pinned.outputs().sum.as_slice(), &[2.0, 3.0, 4.0]);
    pinned.inputs().y.fill(-1.0);
    pinned.run()?;
    assert_eq!(pinned.outputs().sum.as_slice(), &[0.0, 1.0, 2.0]);
    let mut host = model.bind_on(Cpu, add::Dims { n: 3 })?;
    host.inputs().x.copy_from_slice(&[1.0, 2.0, 3.0])?;
    host.inputs().y.fill(2.0);
    host.run()?;
    assert_eq!(host.outputs().sum.as_slice(), &[3.0, 4.0, 5.0]);
    host.inputs().x.copy_from_slice(&[0.0, 0.5, 1.0])?;
    host.run()?;
    assert_eq!(host.outputs().sum.as_slice(), &[2.0, 2.5, 3.0]);

    // The same on a session that runs on a stream ONNX Runtime makes.
    let session = Session::from_file(ADD, &SessionOptions::new().cuda_provider(0))?;
    let model = add::Model::from_session(session)?;
    let mut host = model.bind_on(Cpu, add::Dims { n: 2 })?;
    for step in 0..3 {
        host.inputs().x.copy_from_slice(&[step as f32, 1.0])?;
        host.inputs().y.fill(10.0);
        host.run()?;
        assert_eq!(host.outputs().sum.as_slice(), &[10.0 + step as f32, 11.0]);
    }
    Ok(())
}

/// A hand-written binding over tensors the caller owns, so that an output lives in the
/// caller's own device memory (generated bindings allocate their tensors themselves).
struct UserIo {
    x: Tensor<f32, (Dyn,), Cuda<0>>,
    y: Tensor<f32, (Dyn,), Cuda<0>>,
    sum: Tensor<f32, (Dyn,), Cuda<0>>,
}

struct UserInputs<'a> {
    x: TensorMut<'a, f32, (Dyn,), Cuda<0>>,
}

// SAFETY: only `set_dims` changes the tensors' storage, and the views only give element
// access in place.
unsafe impl BindingIo for UserIo {
    const INPUTS: &'static [ValueSpec] = &[
        ValueSpec::of::<f32>("x", Some(1)),
        ValueSpec::of::<f32>("y", Some(1)),
    ];
    const OUTPUTS: &'static [ValueSpec] = &[ValueSpec::of::<f32>("sum", Some(1))];
    const HAS_ALLOCATED_OUTPUTS: bool = false;
    type Dims = usize;
    type InputsMut<'a> = UserInputs<'a>;
    type OutputsRef<'a> = TensorRef<'a, f32, (Dyn,), Cuda<0>>;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> ort_bind::Result<()> {
        binder.input(0, &self.x)?;
        binder.input(1, &self.y)?;
        binder.output(0, &self.sum)
    }
    fn set_dims(&mut self, n: &usize) -> ort_bind::Result<()> {
        for t in [&mut self.x, &mut self.y, &mut self.sum] {
            t.set_dims(&[*n])?;
        }
        Ok(())
    }
    fn store_output(&mut self, _: usize, _: OutputValue) -> ort_bind::Result<()> {
        Ok(())
    }
    fn take_resized(&mut self) -> bool {
        self.x.take_resized()
    }
    fn inputs_mut(&mut self) -> UserInputs<'_> {
        UserInputs {
            x: self.x.view_mut(),
        }
    }
    fn outputs(&self) -> TensorRef<'_, f32, (Dyn,), Cuda<0>> {
        self.sum.view()
    }
}

#[test]
fn outputs_can_live_in_user_owned_device_memory() -> ort_bind::Result<()> {
    let test = "outputs_can_live_in_user_owned_device_memory";
    let Some(gpu) = gpu(test) else { return Ok(()) };
    let Some(session) = gpu_session(test, ADD, &gpu) else {
        return Ok(());
    };
    let stream: Arc<_> = gpu.stream().clone();
    let user_out: CudaSlice<f32> = stream.alloc_zeros(3).expect("alloc");
    let (out_ptr, record) = user_out.device_ptr(&stream);
    drop(record);
    let io = UserIo {
        x: Tensor::from_cuda_slice(
            "x",
            gpu.clone(),
            stream.clone_htod(&[1.0f32, 2.0, 3.0]).expect("up"),
            &[3],
        )?,
        y: Tensor::from_cuda_slice(
            "y",
            gpu.clone(),
            stream.clone_htod(&[0.5f32; 3]).expect("up"),
            &[3],
        )?,
        sum: Tensor::from_cuda_slice("sum", gpu.clone(), user_out, &[3])?,
    };
    let mut bound = Binding::new(&session, io)?;
    bound.run()?;
    assert_eq!(
        bound.outputs().device_ptr(),
        out_ptr,
        "written into the caller's slice"
    );
    assert_eq!(bound.outputs().to_vec()?, vec![1.5, 2.5, 3.5]);
    bound.inputs().x.copy_from_host(&[0.0; 3])?;
    bound.run()?;
    assert_eq!(bound.outputs().to_vec()?, vec![0.5; 3]);
    Ok(())
}

mod decoder_gqa {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_f32/model.onnx");
}
mod decoder_gqa_f16 {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_f16/model.onnx");
}
mod decoder_mha {
    ort_bind::bindings!("tests/fixtures/decoders/mha_concat/model.onnx");
}

/// The decode loop with its cache on the device, growing mode (two device buffers per
/// pair trade places): the same greedy tokens as the CPU reference. A cache on the device
/// cannot be bound to a CPU session.
#[test]
fn a_decoder_keeps_its_cache_on_the_device() -> ort_bind::Result<()> {
    let test = "a_decoder_keeps_its_cache_on_the_device";
    let Some(device) = gpu(test) else {
        return Ok(());
    };
    let cpu = decoder_gqa::Model::load()?;
    let err = cpu
        .shared_decoder_on(device.clone(), 1, 64)
        .expect_err("device memory on a CPU session");
    assert!(matches!(err, Error::Cuda { .. }), "{err}");

    let path = "tests/fixtures/decoders/mha_concat/model.onnx";
    let Some(session) = gpu_session(test, path, &device) else {
        return Ok(());
    };
    let reference = expected("mha_concat", "greedy.json");
    let (prompt, tokens) = (&reference.prompts[0], &reference.tokens[0]);
    let model = decoder_mha::Model::from_session(session)?;
    let mut decoder = model.decoder_on(device, 1, 256)?;
    decoder.prefill(prompt)?;
    let mut got = Vec::new();
    for _ in 0..128 {
        got.push(decoder.step_greedy()?[0]);
    }
    assert_eq!(got, tokens[..128], "growing mode on the device");
    // Rewinding a growing cache moves data, which device memory does not allow from the host.
    assert!(matches!(decoder.rewind(1), Err(Error::Unsupported { .. })));
    Ok(())
}

/// The shared-buffer mode on the device: ONNX Runtime's CUDA GroupQueryAttention writes
/// the device buffers in place (float16); a float32 model, whose attention would fall
/// back to the CPU over copies of the cache, is refused with the reason.
#[test]
fn a_shared_cache_on_the_device_needs_a_device_attention_kernel() -> ort_bind::Result<()> {
    let test = "a_shared_cache_on_the_device_needs_a_device_attention_kernel";
    let Some(device) = gpu(test) else {
        return Ok(());
    };
    let path = "tests/fixtures/decoders/gqa_f32/model.onnx";
    let Some(session) = gpu_session(test, path, &device) else {
        return Ok(());
    };
    let model = decoder_gqa::Model::from_session(session)?;
    let err = model
        .shared_decoder_on(device.clone(), 1, 256)
        .expect_err("float32 GroupQueryAttention has no CUDA kernel");
    assert!(
        matches!(
            err,
            Error::Decode(ort_bind::decode::DecodeError::NotSharedOnDevice { .. })
        ),
        "{err}"
    );

    let path = "tests/fixtures/decoders/gqa_f16/model.onnx";
    let Some(session) = gpu_session(test, path, &device) else {
        return Ok(());
    };
    let reference = expected("gqa_f16", "greedy.json");
    let (prompt, tokens) = (&reference.prompts[0], &reference.tokens[0]);
    let model = decoder_gqa_f16::Model::from_session(session)?;
    let mut decoder = model.shared_decoder_on(device, 1, 256)?;
    decoder.prefill(prompt)?;
    let mut got = Vec::new();
    for _ in 0..64 {
        got.push(decoder.step_greedy()?[0]);
    }
    // The CPU computes float16 attention in float32; the device's kernels round
    // differently, so a greedy tie may resolve otherwise: report how far they agree.
    let agree = got.iter().zip(tokens).take_while(|(a, b)| a == b).count();
    eprintln!("{test}: float16 tokens agree with the CPU reference for {agree} of 64 steps");
    assert!(
        agree >= 16,
        "shared-buffer mode on the device: {got:?} vs {tokens:?}"
    );
    decoder.rewind(10)?; // free in the shared mode, on any device
    decoder.step(&[got[54]])?;
    assert_eq!(decoder.logits()?.argmax(0) as i64, got[55]);
    Ok(())
}

mod decoder_paged {
    ort_bind::bindings!("tests/fixtures/decoders/gqa_paged/model.onnx");
}

/// The paged mode with its pool on the device: ONNX Runtime's CUDA `ScatterND` writes the
/// new positions into the pool in place (float32), the gathers read each row's blocks,
/// and the block table and slots (host memory) are bound again before every run: the
/// CPU reference's tokens; a rewind gives blocks back without moving data; beam search,
/// whose shared blocks are copied from the host, is refused on device memory.
#[test]
fn a_paged_pool_on_the_device_gives_the_reference_tokens() -> ort_bind::Result<()> {
    let test = "a_paged_pool_on_the_device_gives_the_reference_tokens";
    let Some(device) = gpu(test) else {
        return Ok(());
    };
    let path = "tests/fixtures/decoders/gqa_paged/model.onnx";
    let Some(session) = gpu_session(test, path, &device) else {
        return Ok(());
    };
    let reference = expected("gqa_f32", "greedy.json");
    let (prompt, tokens) = (&reference.prompts[0], &reference.tokens[0]);
    let model = decoder_paged::Model::from_session(session)?;
    let mut decoder = model.paged_decoder_on(device.clone(), 1, 256, 16)?;
    decoder.prefill(prompt)?;
    let mut got = Vec::new();
    for _ in 0..128 {
        got.push(decoder.step_greedy()?[0]);
    }
    // float32 on both; the device's reductions may round otherwise: report how far they agree.
    let agree = got.iter().zip(tokens).take_while(|(a, b)| a == b).count();
    eprintln!("{test}: tokens agree with the CPU reference for {agree} of 128 steps");
    assert!(
        agree >= 32,
        "paged mode on the device: {got:?} vs {tokens:?}"
    );
    decoder.rewind(40)?;
    assert_eq!(
        decoder.free_blocks(),
        16 - (prompt.len() + 128 - 40).div_ceil(16)
    );
    // 100 positions left: the prompt and the first 88 tokens.
    decoder.step(&[got[88]])?;
    assert_eq!(decoder.logits()?.argmax(0) as i64, got[89]);
    let beams = ort_bind::decode::BeamSearch::new(model.paged_decoder_on(device, 4, 64, 32)?);
    assert!(matches!(
        beams.err(),
        Some(Error::Decode(
            ort_bind::decode::DecodeError::ReorderUnsupported { .. }
        ))
    ));
    Ok(())
}

mod ocr_chain {
    ort_bind::pipeline!(
        detector = "tests/fixtures/pipelines/ocr/detector.onnx",
        recognizer = "tests/fixtures/pipelines/ocr/recognizer.onnx",
        detector.heatmap -> recognizer.crops as view,
    );
}

/// A chain on the device: the recognizer reads the detector's heatmap in device memory
/// (its address is the heatmap's), with the probabilities of the same chain on the CPU.
#[test]
fn a_chain_feeds_device_memory_in_place() -> ort_bind::Result<()> {
    let test = "a_chain_feeds_device_memory_in_place";
    let Some(gpu) = gpu(test) else { return Ok(()) };
    let dir = "tests/fixtures/pipelines/ocr";
    let (Some(det), Some(rec)) = (
        gpu_session(test, &format!("{dir}/detector.onnx"), &gpu),
        gpu_session(test, &format!("{dir}/recognizer.onnx"), &gpu),
    ) else {
        return Ok(());
    };
    let on_gpu = ocr_chain::Pipeline {
        detector: ocr_chain::detector::Model::from_session(det)?,
        recognizer: ocr_chain::recognizer::Model::from_session(rec)?,
    };
    let dims = ocr_chain::Dims {
        height: 64,
        width: 64,
        num_crops: 4,
        crop_width: 64,
    };
    let image: Vec<f32> = (0..64 * 64)
        .map(|i| (0.01 * i as f32).sin() * 0.5 + 0.5)
        .collect();
    let mut chain = on_gpu.bind_on(gpu.clone(), dims.clone())?;
    chain.detector.inputs().image.copy_from_host(&image)?;
    chain.run()?;
    assert_eq!(
        chain.recognizer.fed_address("crops"),
        Some(chain.detector.outputs().heatmap.device_ptr() as usize)
    );
    let got = chain.recognizer.outputs().probs.to_vec()?;
    let mut on_cpu = ocr_chain::Pipeline::load()?.bind(dims)?;
    on_cpu.detector.inputs().image.copy_from_slice(&image)?;
    on_cpu.run()?;
    let want = on_cpu.recognizer.outputs().probs.as_slice().to_vec();
    assert!(
        got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-5),
        "device {got:?} vs host {want:?}"
    );
    Ok(())
}
