//! ort-bind's CUDA code against a fake driver, on machines without a GPU:
//! `cargo test -p ort-bind-runtime --features cuda --test cuda_fake_driver`.
//!
//! `tests/fake_cuda/fake_libcuda.c` is compiled (with `cc`) and loaded before anything
//! touches CUDA; `cudarc` then finds it as `libcuda.so`. It keeps "device" memory in host
//! memory, finishes every asynchronous call at once and tracks which allocations are
//! device memory of which device. So these tests check ort-bind's own code paths
//! (allocation, copies, hand-over, adoption, error mapping, device and stream checks)
//! against the driver API's contracts, not CUDA itself: that is `tests/cuda.rs` on a
//! machine with a GPU (see `scripts/gpu-check.sh`).
#![cfg(feature = "cuda")]

use ort_bind_runtime::__private::InputShape as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use ort_bind_runtime::cudarc::driver::{CudaSlice, DevicePtr};
use ort_bind_runtime::{
    AnyRank, Binder, Binding, BindingIo, Cuda, CudaErrorKind, CudaPinned, Device, DimsChange, Dyn,
    Error, OutputValue, Session, SessionOptions, Tensor, TensorMut, TensorRef, ValueSpec,
};

const ADD: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../ort-bind-tests/tests/fixtures/add.onnx"
);

/// Builds and loads the fake driver once per process (before any CUDA call).
fn fake() -> &'static libloading::Library {
    static FAKE: OnceLock<libloading::Library> = OnceLock::new();
    FAKE.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("fake_cuda");
        std::fs::create_dir_all(&dir).expect("create the fake driver's folder");
        // One file per process: test runners may run several processes at once.
        let so = dir.join(format!("libcuda-{}.so", std::process::id()));
        let src = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fake_cuda/fake_libcuda.c"
        );
        ort_bind_testkit::cc::shared_library(
            Path::new(src),
            &so,
            &["-Wl,-soname,libcuda.so"],
            &["-lpthread"],
        );
        // SAFETY: our own library; loading it runs no initialisers. Its soname is
        // `libcuda.so`, so cudarc's later `dlopen("libcuda.so")` gets this copy.
        let lib = unsafe { libloading::Library::new(&so) }.expect("load the fake driver");
        let _ = std::fs::remove_file(&so);
        lib
    })
}

/// Bytes the fake driver copied so far: 0 host to device, 1 device to host, 2 device to device.
fn copied(kind: i32) -> u64 {
    // SAFETY: the fake driver exports this function with exactly this signature.
    unsafe {
        let f = fake()
            .get::<unsafe extern "C" fn(i32) -> u64>(b"fake_cuda_copies")
            .expect("fake_cuda_copies");
        f(kind)
    }
}

/// Device 0 of the fake driver, plus a guard that keeps the tests of this file from
/// running at once: the driver's copy counters are process-wide, so a test that checks
/// "no copy" would otherwise see another test's copies.
fn gpu0() -> (Cuda<0>, MutexGuard<'static, ()>) {
    static SERIAL: Mutex<()> = Mutex::new(());
    let guard = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    fake();
    (Cuda::<0>::new().expect("fake device 0"), guard)
}

fn cuda_kind(e: &Error) -> CudaErrorKind {
    match e {
        Error::Cuda { kind, .. } => *kind,
        other => panic!("expected a CUDA error, got {other:?}"),
    }
}

type Vector<D> = Tensor<f32, (Dyn,), D>;

#[test]
fn device_tensors_allocate_copy_and_resize() -> ort_bind_runtime::Result<()> {
    let (gpu, _serial) = gpu0();
    let mut t = Vector::new_in("t", gpu.clone(), &[5])?;
    assert_eq!(t.view().to_vec()?, vec![0.0; 5], "allocations are zeroed");
    t.view_mut().copy_from_host(&[1.0, 2.0, 3.0, 4.0, 5.0])?;
    assert_eq!(t.view().to_vec()?, vec![1.0, 2.0, 3.0, 4.0, 5.0]);
    let mut host = [0.0; 5];
    t.view().copy_to_host(&mut host)?;
    assert_eq!(host, [1.0, 2.0, 3.0, 4.0, 5.0]);

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
    let err = t.view().copy_to_host(&mut [0.0; 2]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Length {
                expected: 5,
                found: 2,
                ..
            }
        ),
        "{err}"
    );

    // Shrinking keeps the buffer (and its contents); growing reallocates once.
    let ptr = t.view().device_ptr();
    assert_eq!(t.set_dims(&[2])?, DimsChange::Resized);
    assert_eq!((t.capacity(), t.view().device_ptr()), (5, ptr));
    assert_eq!(t.view().to_vec()?, vec![1.0, 2.0]);
    assert_eq!(t.set_dims(&[8])?, DimsChange::Reallocated);
    assert_eq!(t.capacity(), 8);
    assert_ne!(t.view().device_ptr(), ptr);

    // Device to device, zeroing, and an empty tensor.
    let mut u = Vector::new_in("u", gpu.clone(), &[8])?;
    u.view_mut().copy_from_host(&[3.0; 8])?;
    let before = copied(2);
    t.view_mut().copy_from_device(u.view())?;
    assert_eq!(copied(2) - before, 32);
    assert_eq!(t.view().to_vec()?, vec![3.0; 8]);
    t.view_mut().fill_zeros()?;
    assert_eq!(t.view().to_vec()?, vec![0.0; 8]);
    let empty = Vector::new_in("e", gpu.clone(), &[0])?;
    assert!(empty.view().to_vec()?.is_empty());

    // Every element type lives on the device.
    let mut b = Tensor::<bool, (Dyn,), Cuda<0>>::new_in("b", gpu.clone(), &[3])?;
    b.view_mut().copy_from_host(&[true, false, true])?;
    assert_eq!(b.view().to_vec()?, vec![true, false, true]);
    let mut h = Tensor::<ort_bind_runtime::f16, (Dyn,), Cuda<0>>::new_in("h", gpu, &[1])?;
    h.view_mut()
        .copy_from_host(&[ort_bind_runtime::f16::from_f32(1.5)])?;
    assert_eq!(h.view().to_vec()?[0].to_f32(), 1.5);
    Ok(())
}

#[test]
fn tensors_work_from_threads_without_a_current_context() -> ort_bind_runtime::Result<()> {
    let (gpu, _serial) = gpu0();
    let mut t = Vector::new_in("t", gpu.clone(), &[3])?;
    t.view_mut().copy_from_host(&[1.0, 2.0, 3.0])?;
    let mut u = Vector::new_in("u", gpu, &[3])?;
    // A fresh thread has no current CUDA context (the fake driver refuses memory calls
    // then, as the real one does): every entry point must make the device's current.
    let (t, got) = std::thread::spawn(move || -> ort_bind_runtime::Result<_> {
        // First a raw driver call (no `cudarc` call before it could make a context current).
        let first = t.view().to_vec()?;
        u.view_mut().copy_from_device(t.view())?;
        u.view_mut().copy_from_host(&[4.0, 5.0, 6.0])?;
        let got = (first, u.view().to_vec()?);
        drop(u); // freed here, on a thread that had no context
        Ok((t, got))
    })
    .join()
    .expect("no panic")?;
    assert_eq!(got, (vec![1.0, 2.0, 3.0], vec![4.0, 5.0, 6.0]));
    assert_eq!(t.view().to_vec()?, vec![1.0, 2.0, 3.0]);
    Ok(())
}

#[test]
fn pinned_memory_copies_asynchronously() -> ort_bind_runtime::Result<()> {
    let (gpu, _serial) = gpu0();
    let mut p = Vector::<CudaPinned>::new_in("p", gpu.pinned(), &[4])?;
    assert_eq!(p.as_slice(), &[0.0; 4], "pinned allocations are zeroed");
    p.as_mut_slice().copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
    let mut d = Vector::new_in("d", gpu.clone(), &[4])?;
    let before = copied(0);
    d.view_mut().copy_from_pinned(p.view())?;
    assert_eq!(copied(0) - before, 16);
    assert_eq!(d.view().to_vec()?, vec![1.0, 2.0, 3.0, 4.0]);

    let mut staging = gpu.alloc_pinned::<f32>(6)?;
    d.view().copy_to_pinned(&mut staging)?;
    assert_eq!(
        &staging.as_slice().expect("read")[..4],
        &[1.0, 2.0, 3.0, 4.0]
    );
    let mut short = gpu.alloc_pinned::<f32>(2)?;
    assert!(matches!(
        d.view().copy_to_pinned(&mut short),
        Err(Error::Length { .. })
    ));
    let mut four = gpu.alloc_pinned::<f32>(4)?;
    four.as_mut_slice().expect("write").fill(9.0);
    d.view_mut().copy_from_pinned_slice(&four)?;
    assert_eq!(d.view().to_vec()?, vec![9.0; 4]);
    assert!(matches!(
        d.view_mut().copy_from_pinned_slice(&staging),
        Err(Error::Length { .. })
    ));
    // Pinned tensors grow like any other.
    p.set_dims(&[16])?;
    assert_eq!(p.as_slice(), &[0.0; 16]);
    Ok(())
}

#[test]
fn handed_over_slices_are_used_in_place() -> ort_bind_runtime::Result<()> {
    let (gpu, _serial) = gpu0();
    let stream = gpu.stream().clone();
    let slice: CudaSlice<f32> = stream
        .clone_htod(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])
        .expect("upload");
    let (ptr, record) = slice.device_ptr(&stream);
    drop(record);
    let copies = (copied(0), copied(1), copied(2));
    let t = Tensor::<f32, AnyRank, Cuda<0>>::from_cuda_slice("x", gpu.clone(), slice, &[2, 3])?;
    assert_eq!((copied(0), copied(1), copied(2)), copies, "no copy");
    assert_eq!(t.view().device_ptr(), ptr);
    assert_eq!(t.dims(), &[2, 3]);
    assert!(!t.is_adopted());
    let back = t.into_cuda_slice().expect("own slice");
    let (back_ptr, record) = back.device_ptr(&stream);
    drop(record);
    assert_eq!(back_ptr, ptr);

    // Spare capacity, another stream of the same device.
    let other = gpu.context().new_stream().expect("stream");
    let slice = other.alloc_zeros::<f32>(10).expect("alloc");
    let t = Vector::from_cuda_slice("x", gpu.clone(), slice, &[4])?;
    assert_eq!((t.len(), t.capacity()), (4, 10));
    drop(t);

    // Too short for the dims; memory of another device.
    let slice = stream.alloc_zeros::<f32>(2).expect("alloc");
    let err = Vector::from_cuda_slice("x", gpu.clone(), slice, &[3]).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Length {
                expected: 3,
                found: 2,
                ..
            }
        ),
        "{err}"
    );
    let gpu1 = Cuda::<1>::new()?;
    let slice = gpu1.stream().alloc_zeros::<f32>(3).expect("alloc");
    let err = Vector::from_cuda_slice("x", gpu.clone(), slice, &[3]).unwrap_err();
    assert_eq!(cuda_kind(&err), CudaErrorKind::WrongDevice, "{err}");
    assert!(err.to_string().contains("cuda:1"), "{err}");
    Ok(())
}

#[test]
fn adopted_memory_is_used_in_place_and_never_freed() -> ort_bind_runtime::Result<()> {
    let (gpu, _serial) = gpu0();
    let stream = gpu.stream().clone();
    // Stands in for a framework's tensor: ort-bind must keep it, not free its memory.
    let framework: Arc<CudaSlice<f32>> =
        Arc::new(stream.clone_htod(&[7.0f32, 8.0, 9.0]).expect("upload"));
    let (ptr, record) = framework.device_ptr(&stream);
    drop(record);
    // SAFETY: `ptr` addresses 3 f32 of (fake) device 0 owned by `framework`, which the
    // tensor keeps alive; nothing else writes it meanwhile; its upload used this stream.
    let t = unsafe {
        Vector::from_raw_device_ptr("a", gpu.clone(), ptr, 3, &[3], Arc::clone(&framework))?
    };
    assert!(t.is_adopted());
    assert_eq!(Arc::strong_count(&framework), 2);
    assert_eq!(t.view().device_ptr(), ptr, "no copy");
    assert_eq!(t.view().to_vec()?, vec![7.0, 8.0, 9.0]);
    assert!(
        t.into_cuda_slice().is_none(),
        "adopted memory has no CudaSlice"
    );
    assert_eq!(
        Arc::strong_count(&framework),
        1,
        "the owner is released with the tensor"
    );
    // Still allocated: the fake driver refuses copies from freed memory.
    assert_eq!(
        stream.clone_dtoh(&*framework).expect("still allocated"),
        vec![7.0, 8.0, 9.0]
    );

    // What the driver does not know as device memory of device 0 is refused.
    let host = [0.0f32; 4];
    let pinned = gpu.alloc_pinned::<f32>(4)?;
    let pinned_ptr = pinned.as_ptr().expect("pinned") as u64;
    let gpu1 = Cuda::<1>::new()?;
    let other: CudaSlice<f32> = gpu1.stream().alloc_zeros(4).expect("alloc");
    let (other_ptr, record) = other.device_ptr(gpu1.stream());
    drop(record);
    for (ptr, why) in [
        (host.as_ptr() as u64, "is not memory the CUDA driver knows"),
        (pinned_ptr, "is host memory"),
        (other_ptr, "is memory of cuda:1"),
    ] {
        // SAFETY: each call fails its pointer check before the memory is used.
        let err =
            unsafe { Vector::from_raw_device_ptr("h", gpu.clone(), ptr, 4, &[4], ()) }.unwrap_err();
        assert_eq!(cuda_kind(&err), CudaErrorKind::WrongDevice, "{err}");
        assert!(err.to_string().contains(why), "{err}");
    }
    // Too short for the dims.
    // SAFETY: as above: `framework` owns 3 elements; the call fails on the length.
    let err = unsafe { Vector::from_raw_device_ptr("a", gpu, ptr, 3, &[4], ()) }.unwrap_err();
    assert!(matches!(err, Error::Length { .. }), "{err}");
    Ok(())
}

#[test]
fn missing_devices_wrong_streams_and_out_of_memory_are_errors() {
    let (gpu, _serial) = gpu0();
    let err = Cuda::<2>::new().unwrap_err();
    assert_eq!(cuda_kind(&err), CudaErrorKind::NoDevice, "{err}");
    assert!(err.to_string().contains("2 device(s)"), "{err}");

    let err = Cuda::<1>::with_stream(gpu.stream().clone()).unwrap_err();
    assert_eq!(cuda_kind(&err), CudaErrorKind::WrongDevice, "{err}");
    let err = Cuda::<0>::with_stream(gpu.context().default_stream()).unwrap_err();
    assert_eq!(cuda_kind(&err), CudaErrorKind::WrongDevice, "{err}");
    let mine = Cuda::<0>::with_stream(gpu.stream().clone()).expect("the same stream");
    assert_eq!(mine, gpu);
    assert_ne!(Cuda::<0>::new().expect("device 0"), gpu, "a new stream");

    // 2 GiB: over the fake device's 1 GiB allocation limit.
    let err = Vector::new_in("huge", gpu.clone(), &[1 << 29]).unwrap_err();
    match &err {
        Error::OutOfMemory {
            tensor,
            bytes,
            device,
        } => {
            assert_eq!(
                (tensor.as_str(), *bytes, device.as_str()),
                ("huge", 1 << 31, "cuda:0")
            );
        }
        other => panic!("expected OutOfMemory, got {other}"),
    }
    // A failed growth leaves the tensor as it was.
    let mut t = Vector::new_in("t", gpu.clone(), &[2]).expect("small");
    t.view_mut().copy_from_host(&[1.0, 2.0]).expect("fill");
    assert!(matches!(
        t.set_dims(&[1 << 29]),
        Err(Error::OutOfMemory { .. })
    ));
    assert_eq!(t.dims(), &[2]);
    assert_eq!(t.view().to_vec().expect("read"), vec![1.0, 2.0]);
    let err = Vector::<CudaPinned>::new_in("pinned", gpu.pinned(), &[1 << 29]).unwrap_err();
    assert!(
        matches!(&err, Error::OutOfMemory { device, .. } if device == CudaPinned::NAME),
        "{err}"
    );
}

/// `sum = x + y` over tensors of any device the caller chooses.
struct AddIo<D: Device> {
    x: Vector<D>,
    y: Vector<D>,
    sum: Vector<D>,
}

impl<D: Device> AddIo<D> {
    fn new(device: D, n: usize) -> ort_bind_runtime::Result<Self> {
        Ok(AddIo {
            x: Tensor::new_in("x", device.clone(), &[n])?,
            y: Tensor::new_in("y", device.clone(), &[n])?,
            sum: Tensor::new_in("sum", device, &[n])?,
        })
    }
}

// SAFETY: only `set_dims` changes the tensors' storage; views give element access only.
unsafe impl<D: Device> BindingIo for AddIo<D> {
    const INPUTS: &'static [ValueSpec] = &[
        ValueSpec::of::<f32>("x", Some(1)),
        ValueSpec::of::<f32>("y", Some(1)),
    ];
    const OUTPUTS: &'static [ValueSpec] = &[ValueSpec::of::<f32>("sum", Some(1))];
    const HAS_ALLOCATED_OUTPUTS: bool = false;
    type Dims = usize;
    type InputsMut<'a> = (TensorMut<'a, f32, (Dyn,), D>, TensorMut<'a, f32, (Dyn,), D>);
    type OutputsRef<'a> = TensorRef<'a, f32, (Dyn,), D>;

    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> ort_bind_runtime::Result<()> {
        binder.input(0, &self.x)?;
        binder.input(1, &self.y)?;
        binder.output(0, &self.sum)
    }
    fn set_dims(&mut self, n: &usize) -> ort_bind_runtime::Result<()> {
        for t in [&mut self.x, &mut self.y, &mut self.sum] {
            t.set_dims(&[*n])?;
        }
        Ok(())
    }
    fn store_output(&mut self, _: usize, _: OutputValue) -> ort_bind_runtime::Result<()> {
        Ok(())
    }
    fn take_resized(&mut self) -> bool {
        self.x.take_resized() | self.y.take_resized()
    }
    fn inputs_mut(&mut self) -> Self::InputsMut<'_> {
        (self.x.view_mut(), self.y.view_mut())
    }
    fn outputs(&self) -> TensorRef<'_, f32, (Dyn,), D> {
        self.sum.view()
    }
}

#[test]
fn sessions_take_device_memory_only_on_their_device_and_stream() -> ort_bind_runtime::Result<()> {
    let (gpu, _serial) = gpu0();
    let cpu_session = Session::from_file(ADD, &SessionOptions::new())?;
    let err = Binding::new(&cpu_session, AddIo::new(gpu.clone(), 3)?).unwrap_err();
    assert_eq!(cuda_kind(&err), CudaErrorKind::WrongDevice, "{err}");
    assert!(
        err.to_string().contains("no CUDA execution provider"),
        "{err}"
    );

    if !ort_bind_runtime::cuda_provider_available()? {
        // With a device at hand, asking for the CUDA provider still fails cleanly.
        let err = Session::from_file(ADD, &SessionOptions::new().cuda(&gpu)).unwrap_err();
        assert_eq!(cuda_kind(&err), CudaErrorKind::NoExecutionProvider, "{err}");
    }

    // Pinned memory is host memory: a CPU session runs on it in place.
    let mut bound = Binding::new(&cpu_session, AddIo::new(gpu.pinned(), 3)?)?;
    {
        let (mut x, mut y) = bound.inputs();
        x.copy_from_slice(&[1.0, 2.0, 3.0])?;
        y.fill(0.5);
    }
    let out_ptr = bound.outputs().as_slice().as_ptr();
    bound.run()?;
    assert_eq!(bound.outputs().as_slice(), &[1.5, 2.5, 3.5]);
    assert_eq!(
        bound.outputs().as_slice().as_ptr(),
        out_ptr,
        "written in place"
    );
    bound.set_dims(&5)?;
    bound.inputs().0.fill(1.0);
    bound.inputs().1.fill(2.0);
    bound.run()?;
    assert_eq!(bound.outputs().as_slice(), &[3.0; 5]);
    Ok(())
}
