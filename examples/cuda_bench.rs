//! A small device benchmark (the `cuda` feature): the same model run with its inputs and
//! output bound to host memory, to pinned host memory, and to device memory, on ONNX
//! Runtime's CUDA execution provider.
//!
//! ```sh
//! cargo run --release --features cuda --example cuda_bench [-- SAMPLES]
//! ```
//!
//! The model is `examples/models/add.onnx` (`sum = x + y`, float32 `[n]`), at three sizes.
//! For each binding it prints the median time per run and the bytes copied between host
//! and device per run. Those bytes follow from where the tensors are bound (ONNX Runtime
//! copies host-bound inputs in and outputs out on every run; device-bound tensors are
//! used in place, which the benchmark checks: the output's device address never changes
//! and the results are right). They are not read from a profiler.
//!
//! Without a GPU, or with an ONNX Runtime that has no CUDA execution provider, it says so
//! and exits successfully.

#[cfg(feature = "cuda")]
mod add {
    ort_bind::bindings!("examples/models/add.onnx");
}

#[cfg(not(feature = "cuda"))]
fn main() {
    eprintln!(
        "cuda_bench needs the `cuda` feature: cargo run --release --features cuda --example cuda_bench"
    );
    std::process::exit(2);
}

#[cfg(feature = "cuda")]
fn main() -> std::process::ExitCode {
    match bench::run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cuda_bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(feature = "cuda")]
mod bench {
    use std::time::{Duration, Instant};

    use ort_bind::{Cpu, Cuda, CudaErrorKind, CudaPinned, Device, Error, Session, SessionOptions};

    use crate::add;

    /// Sizes of `x`, `y` and `sum` (elements).
    const SIZES: [usize; 3] = [16, 1 << 16, 1 << 22];

    pub(crate) fn run() -> ort_bind::Result<()> {
        let samples: usize = std::env::args()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(200);
        let gpu = match Cuda::<0>::new() {
            Ok(gpu) => gpu,
            Err(e) => {
                println!("cuda_bench: nothing to measure: {e}");
                return Ok(());
            }
        };
        let session = match Session::from_file(add::MODEL_PATH, &SessionOptions::new().cuda(&gpu)) {
            Ok(session) => session,
            Err(Error::Cuda {
                kind: CudaErrorKind::NoExecutionProvider,
                message,
            }) => {
                println!("cuda_bench: nothing to measure: {message}");
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let model = add::Model::from_session(session)?;
        let lib = ort_bind::library::get();
        println!(
            "device: {} (cuda:0); ONNX Runtime {} from {}",
            gpu.context().name().unwrap_or_else(|_| "?".into()),
            lib.map_or("?", |l| l.version()),
            lib.map_or_else(|| "?".into(), |l| l.path().display().to_string()),
        );
        println!(
            "model: add.onnx (sum = x + y, float32[n]); median of {samples} runs after 20 warm-up runs"
        );
        println!();
        println!(
            "{:>9}  {:<34} {:>12} {:>14} {:>12}",
            "n", "binding", "us/run", "bytes copied", "vs device"
        );
        for n in SIZES {
            let host = host_bound(&model, Cpu, n, samples)?;
            let pinned = host_bound(&model, gpu.pinned(), n, samples)?;
            let (device, pipelined) = device_bound(&model, &gpu, n, samples)?;
            let copied = 3 * n * size_of::<f32>();
            let rows = [
                ("host (Cpu), ORT copies", host, copied),
                ("pinned (CudaPinned), ORT copies", pinned, copied),
                ("device (Cuda<0>), run + sync", device, 0),
                ("device, runs queued, 1 sync", pipelined, 0),
            ];
            for (name, time, bytes) in rows {
                println!(
                    "{n:>9}  {name:<34} {:>12.1} {bytes:>14} {:>11.2}x",
                    micros(time),
                    micros(time) / micros(device)
                );
            }
        }
        Ok(())
    }

    fn micros(d: Duration) -> f64 {
        d.as_secs_f64() * 1e6
    }

    fn median(mut times: Vec<Duration>) -> Duration {
        times.sort();
        times[times.len() / 2]
    }

    fn inputs(n: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
        let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32 * 0.5).collect();
        let sum = x.iter().zip(&y).map(|(a, b)| a + b).collect();
        (x, y, sum)
    }

    /// Inputs and output in host memory (`Cpu` or `CudaPinned`): each run copies both
    /// inputs to the device and the output back, and returns when the copy is done.
    fn host_bound<D>(
        model: &add::Model,
        device: D,
        n: usize,
        samples: usize,
    ) -> ort_bind::Result<Duration>
    where
        D: ort_bind::HostDevice,
    {
        let (x, y, want) = inputs(n);
        let mut binding = model.bind_on(device, add::Dims { n })?;
        binding.inputs().x.copy_from_slice(&x)?;
        binding.inputs().y.copy_from_slice(&y)?;
        for _ in 0..20 {
            binding.run()?;
        }
        check(D::NAME, binding.outputs().sum.as_slice(), &want)?;
        let mut times = Vec::with_capacity(samples);
        for _ in 0..samples {
            let start = Instant::now();
            binding.run()?;
            times.push(start.elapsed());
        }
        check(D::NAME, binding.outputs().sum.as_slice(), &want)?;
        Ok(median(times))
    }

    /// Inputs and output in device memory: no copies. Timed per run with a synchronize
    /// (the time until the result is there), and as runs queued on the stream with one
    /// synchronize at the end (throughput).
    fn device_bound(
        model: &add::Model,
        gpu: &Cuda<0>,
        n: usize,
        samples: usize,
    ) -> ort_bind::Result<(Duration, Duration)> {
        let (x, y, want) = inputs(n);
        let mut binding = model.bind_on(gpu.clone(), add::Dims { n })?;
        binding.inputs().x.copy_from_host(&x)?;
        binding.inputs().y.copy_from_host(&y)?;
        let out = binding.outputs().sum.device_ptr();
        for _ in 0..20 {
            binding.run()?;
        }
        gpu.synchronize()?;
        let mut times = Vec::with_capacity(samples);
        for _ in 0..samples {
            let start = Instant::now();
            binding.run()?;
            gpu.synchronize()?;
            times.push(start.elapsed());
        }
        let start = Instant::now();
        for _ in 0..samples {
            binding.run()?;
        }
        gpu.synchronize()?;
        let queued = start.elapsed() / samples as u32;
        let sum = binding.outputs().sum;
        if sum.device_ptr() != out {
            return Err(Error::Cuda {
                kind: CudaErrorKind::Driver,
                message: "the output moved: ONNX Runtime did not write into the bound buffer"
                    .into(),
            });
        }
        check(Cuda::<0>::NAME, &sum.to_vec()?, &want)?;
        Ok((median(times), queued))
    }

    fn check(device: &str, got: &[f32], want: &[f32]) -> ort_bind::Result<()> {
        if got != want {
            let bad = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0);
            return Err(Error::Cuda {
                kind: CudaErrorKind::Driver,
                message: format!(
                    "wrong result on {device}: sum[{bad}] = {:?}, expected {:?}",
                    got.get(bad),
                    want.get(bad)
                ),
            });
        }
        Ok(())
    }

    // Both host devices are measured through the same generic function.
    const _: fn() = || {
        fn host<D: ort_bind::HostDevice>() {}
        host::<Cpu>();
        host::<CudaPinned>();
    };
}
