//! ONNX Runtime's CUDA execution provider: what a session built with
//! [`SessionOptions::cuda`](crate::SessionOptions::cuda) or
//! [`SessionOptions::cuda_provider`](crate::SessionOptions::cuda_provider) registers
//! ([`CudaProvider`]) and keeps ([`CudaSession`]), and [`cuda_provider_available`].
//!
//! Used by `session.rs` only: no device file imports it (devices learn what a session
//! runs on from [`SessionDevice`](crate::device::private::SessionDevice)). It makes no driver calls;
//! it reaches ONNX Runtime through `sys.rs`.

use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;

use cudarc::driver::CudaStream;

use super::error::classify_ort_error;
use crate::error::{CudaErrorKind, Error, Result};
use crate::library;
use crate::sys::{self, RunOptions};

/// Whether the ONNX Runtime library ort-bind loads (loading it now if needed) was built
/// with the CUDA execution provider. The default `onnxruntime` Python wheel is CPU-only;
/// `onnxruntime-gpu` has it.
pub fn cuda_provider_available() -> Result<bool> {
    library::init()?;
    Ok(sys::available_providers()?
        .iter()
        .any(|p| p == CUDA_PROVIDER))
}

const CUDA_PROVIDER: &str = "CUDAExecutionProvider";

/// The CUDA execution provider a [`crate::SessionOptions`] asks for.
#[derive(Debug, Clone)]
pub(crate) struct CudaProvider {
    pub(crate) ordinal: usize,
    /// The caller's stream; `None`: ONNX Runtime creates its own.
    pub(crate) stream: Option<Arc<CudaStream>>,
}

impl CudaProvider {
    /// Adds the CUDA execution provider to `options`, after checking that the loaded ONNX
    /// Runtime has one. `tf32`: whether float32 matrix products may use TensorFloat-32
    /// (`None`: ONNX Runtime's default).
    pub(crate) fn register(
        &self,
        options: &mut sys::SessionOptions,
        tf32: Option<bool>,
    ) -> Result<()> {
        let providers = sys::available_providers()?;
        if !providers.iter().any(|p| p == CUDA_PROVIDER) {
            let lib = library::get();
            return Err(Error::Cuda {
                kind: CudaErrorKind::NoExecutionProvider,
                message: format!(
                    "the loaded ONNX Runtime library ({}, version {}) was built without the \
                     CUDA execution provider (it has {providers:?}); the `onnxruntime` Python \
                     wheel is CPU-only: `python3 -m pip download --no-deps \
                     onnxruntime-gpu==1.31.1`, unzip it, and set ORT_DYLIB_PATH to its \
                     `onnxruntime/capi/libonnxruntime.so.1.31.1` (it needs CUDA 13 and cuDNN 9 \
                     libraries on the loader's path)",
                    lib.map_or_else(|| "?".into(), |l| l.path().display().to_string()),
                    lib.map_or("?", |l| l.version()),
                ),
            });
        }
        let device_id = i32::try_from(self.ordinal).map_err(|_| Error::Cuda {
            kind: CudaErrorKind::NoDevice,
            message: format!(
                "device ordinal {} does not fit ONNX Runtime's device id",
                self.ordinal
            ),
        })?;
        let stream = match &self.stream {
            None => None,
            Some(stream) => Some(
                NonNull::new(stream.cu_stream().cast::<c_void>()).ok_or_else(|| Error::Cuda {
                    kind: CudaErrorKind::WrongDevice,
                    message: "the legacy default stream cannot be ONNX Runtime's compute stream"
                        .into(),
                })?,
            ),
        };
        // SAFETY: the options are alive (borrowed mutably here). The stream is kept
        // alive by the session: `Session` holds this provider's `Arc<CudaStream>` (through
        // `CudaSession`) and drops it only after the ONNX Runtime session.
        unsafe { sys::append_cuda_provider(options.as_mut_ptr(), device_id, stream, tf32) }
            .map_err(classify_ort_error)
    }

    /// What a session built with this provider keeps.
    pub(crate) fn session_state(&self) -> Result<CudaSession> {
        let async_run = match self.stream {
            // Runs on the caller's stream may return before the device is done: ordering is
            // the stream's job (ONNX Runtime otherwise synchronizes the stream after each run).
            Some(_) => Some(RunOptions::with_config(&[(
                c"disable_synchronize_execution_providers",
                c"1",
            )])?),
            None => None,
        };
        Ok(CudaSession {
            provider: self.clone(),
            async_run,
        })
    }
}

/// The CUDA set-up a [`Session`](crate::Session) keeps: the provider (and with it the
/// stream, alive for as long as the session) and the run options of asynchronous runs.
#[derive(Debug)]
pub(crate) struct CudaSession {
    provider: CudaProvider,
    async_run: Option<RunOptions>,
}

impl CudaSession {
    pub(crate) fn ordinal(&self) -> usize {
        self.provider.ordinal
    }

    /// The caller's stream the session runs on; `None`: one ONNX Runtime created.
    pub(crate) fn stream(&self) -> Option<&Arc<CudaStream>> {
        self.provider.stream.as_ref()
    }

    pub(crate) fn async_run_options(&self) -> Option<&RunOptions> {
        self.async_run.as_ref()
    }
}
