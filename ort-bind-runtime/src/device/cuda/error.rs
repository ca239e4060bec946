//! CUDA errors: the driver's codes, allocation failures and ONNX Runtime's messages of CUDA
//! sessions turned into [`Error::Cuda`] (with a [`CudaErrorKind`]) or
//! [`Error::OutOfMemory`], and `cudarc`'s panics turned into errors. No driver calls of its
//! own beyond asking `driver.rs` to describe a code.

use std::panic::{AssertUnwindSafe, catch_unwind};

use cudarc::driver::DriverError;
use cudarc::driver::sys::CUresult;

use super::driver;
use crate::error::{CudaErrorKind, Error, Result};

/// An error of the driver while doing `what`, with the kind its code says.
pub(crate) fn driver_error(e: DriverError, what: &str) -> Error {
    use CUresult as R;
    let kind = match e.0 {
        R::CUDA_ERROR_NO_DEVICE | R::CUDA_ERROR_INVALID_DEVICE => CudaErrorKind::NoDevice,
        R::CUDA_ERROR_NOT_INITIALIZED
        | R::CUDA_ERROR_DEINITIALIZED
        | R::CUDA_ERROR_STUB_LIBRARY
        | R::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
        | R::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE => CudaErrorKind::NoDriver,
        R::CUDA_ERROR_OUT_OF_MEMORY => CudaErrorKind::OutOfMemory,
        R::CUDA_ERROR_INVALID_CONTEXT | R::CUDA_ERROR_CONTEXT_IS_DESTROYED => {
            CudaErrorKind::WrongDevice
        }
        _ => CudaErrorKind::Driver,
    };
    Error::Cuda {
        kind,
        message: format!("{what}: {}", driver::describe(&e)),
    }
}

/// An allocation failure: [`Error::OutOfMemory`] when the device is out of memory.
pub(crate) fn alloc_error(e: DriverError, bytes: usize, device: &str) -> Error {
    if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        Error::OutOfMemory {
            tensor: String::new(),
            bytes,
            device: device.to_owned(),
        }
    } else {
        driver_error(e, &format!("allocating {bytes} bytes on {device}"))
    }
}

/// The CUDA problem an ONNX Runtime message reports, if it reports one.
fn classify_ort_message(message: &str) -> Option<CudaErrorKind> {
    let m = message.to_ascii_lowercase();
    if m.contains("out of memory") || m.contains("failed to allocate memory") {
        Some(CudaErrorKind::OutOfMemory)
    } else if m.contains("no cuda-capable device") || m.contains("invalid device ordinal") {
        Some(CudaErrorKind::NoDevice)
    } else if m.contains("driver version is insufficient")
        || m.contains("cuda driver version")
        || m.contains("forward compatibility")
    {
        Some(CudaErrorKind::NoDriver)
    } else if m.contains("onnxruntime_providers_cuda")
        || m.contains("libcudnn")
        || m.contains("libcublas")
        || m.contains("libcudart")
        || m.contains("libcufft")
    {
        Some(CudaErrorKind::NoExecutionProvider)
    } else {
        None
    }
}

/// Turns an ONNX Runtime error of a CUDA session into [`Error::Cuda`] when its message
/// names a CUDA problem (out of memory, no device, old driver, missing CUDA libraries).
pub(crate) fn classify_ort_error(e: Error) -> Error {
    match e {
        Error::Ort { context, message } => match classify_ort_message(&message) {
            Some(kind) => Error::Cuda {
                kind,
                message: format!("ONNX Runtime failed while {context}: {message}"),
            },
            None => Error::Ort { context, message },
        },
        other => other,
    }
}

/// Runs `f`, turning a panic inside `cudarc` into an error (it panics on a missing driver
/// symbol, which [`driver::check`] rules out beforehand, and when it cannot create an
/// event).
pub(crate) fn no_panic<R>(what: &str, f: impl FnOnce() -> R) -> Result<R> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| Error::Cuda {
        kind: CudaErrorKind::Driver,
        message: format!("{what}: the CUDA driver call failed (cudarc panicked)"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn onnx_runtime_messages_name_the_cuda_problem() {
        let cases = [
            (
                "CUDA failure 2: out of memory ; GPU=0 ; hostname=h ; file=cuda_allocator.cc ; line=47 ; expr=cudaMalloc((void**)&p, size);",
                Some(CudaErrorKind::OutOfMemory),
            ),
            (
                "BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size 4294967296",
                Some(CudaErrorKind::OutOfMemory),
            ),
            (
                "CUDA failure 100: no CUDA-capable device is detected ; GPU=-1",
                Some(CudaErrorKind::NoDevice),
            ),
            (
                "CUDA failure 101: invalid device ordinal",
                Some(CudaErrorKind::NoDevice),
            ),
            (
                "CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version",
                Some(CudaErrorKind::NoDriver),
            ),
            (
                "Failed to load library libonnxruntime_providers_cuda.so with error: libcudnn.so.9: cannot open shared object file",
                Some(CudaErrorKind::NoExecutionProvider),
            ),
            ("Non-zero status code returned while running Add node", None),
        ];
        for (message, kind) in cases {
            assert_eq!(classify_ort_message(message), kind, "{message}");
        }
    }

    #[test]
    fn classified_errors_keep_the_message_and_others_pass_through() {
        let e = classify_ort_error(Error::Ort {
            context: "running the model".into(),
            message: "CUDA failure 2: out of memory".into(),
        });
        match e {
            Error::Cuda { kind, message } => {
                assert_eq!(kind, CudaErrorKind::OutOfMemory);
                assert!(message.contains("running the model"), "{message}");
                assert!(message.contains("CUDA failure 2"), "{message}");
            }
            other => panic!("not classified: {other:?}"),
        }
        let e = classify_ort_error(Error::Ort {
            context: "running the model".into(),
            message: "Invalid input shape".into(),
        });
        assert!(matches!(e, Error::Ort { .. }), "{e:?}");
    }

    #[test]
    fn out_of_memory_from_the_driver_is_an_out_of_memory_error() {
        let e = alloc_error(
            DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY),
            1 << 40,
            "cuda:0",
        );
        assert!(
            matches!(&e, Error::OutOfMemory { bytes, device, .. } if *bytes == 1 << 40 && device == "cuda:0"),
            "{e:?}"
        );
        let e = e.for_tensor("x");
        assert!(e.to_string().contains("tensor `x`"), "{e}");
        assert!(e.to_string().contains("cuda:0"), "{e}");
    }

    #[test]
    fn driver_codes_map_to_kinds() {
        use CUresult as R;
        let kind = |r| match driver_error(DriverError(r), "testing") {
            Error::Cuda { kind, .. } => kind,
            other => panic!("{other:?}"),
        };
        assert_eq!(kind(R::CUDA_ERROR_NO_DEVICE), CudaErrorKind::NoDevice);
        assert_eq!(kind(R::CUDA_ERROR_INVALID_DEVICE), CudaErrorKind::NoDevice);
        assert_eq!(kind(R::CUDA_ERROR_NOT_INITIALIZED), CudaErrorKind::NoDriver);
        assert_eq!(
            kind(R::CUDA_ERROR_OUT_OF_MEMORY),
            CudaErrorKind::OutOfMemory
        );
        assert_eq!(
            kind(R::CUDA_ERROR_INVALID_CONTEXT),
            CudaErrorKind::WrongDevice
        );
        assert_eq!(kind(R::CUDA_ERROR_LAUNCH_FAILED), CudaErrorKind::Driver);
    }
}
