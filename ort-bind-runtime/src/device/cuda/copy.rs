//! The views of a [`Cuda<N>`] tensor ([`TensorMut`], [`TensorRef`]): the elements in place
//! for the caller's kernels, and the copies between host and device (from host slices,
//! pinned tensors and slices, other device tensors; to host slices and pinned slices), all
//! enqueued on the device's stream.

use std::sync::Arc;

use cudarc::driver::{CudaStream, CudaView, CudaViewMut, PinnedHostSlice};

use super::device::Cuda;
use super::driver::{self, DeviceSrc};
use super::error::driver_error;
use super::pinned::CudaPinned;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::tensor::{TensorMut, TensorRef};

/// Makes `stream`'s context current on this thread.
fn make_current(stream: &CudaStream) -> Result<()> {
    stream
        .context()
        .bind_to_thread()
        .map_err(|e| driver_error(e, "making the device's context current"))
}

impl<T: Element, S: Shape, const N: usize> TensorMut<'_, T, S, Cuda<N>> {
    /// The address of the first element on the device (valid while the view lives).
    pub fn device_ptr(&self) -> u64 {
        self.tensor().buffer().ptr
    }

    /// The elements on the device, for the caller's kernels (enqueue them on the
    /// device's stream) and `cudarc` copies.
    pub fn cuda_view_mut(&mut self) -> CudaViewMut<'_, T> {
        self.tensor_mut().cuda_view_mut()
    }

    fn check_len(&self, found: usize) -> Result<()> {
        let t = self.tensor();
        if t.len() != found {
            return Err(Error::Length {
                tensor: t.name().to_owned(),
                expected: t.len(),
                found,
                dims: t.dims().to_vec(),
            });
        }
        Ok(())
    }

    /// The device's stream, with its context made current on this thread (raw driver
    /// calls need it; `cudarc`'s own calls do it themselves).
    fn stream(&self) -> Result<Arc<CudaStream>> {
        let stream = self.tensor().device().stream();
        make_current(stream)?;
        Ok(stream.clone())
    }

    /// Copies `data` from host memory in; its length must equal the element count. The
    /// copy is enqueued on the device's stream; `data` may be reused when this returns.
    pub fn copy_from_host(&mut self, data: &[T]) -> Result<()> {
        self.check_len(data.len())?;
        let stream = self.stream()?;
        let mut view = self.cuda_view_mut();
        stream
            .memcpy_htod(data, &mut view)
            .map_err(|e| driver_error(e, "copying host memory to the device"))
    }

    /// Copies a pinned host tensor in, asynchronously (enqueued on the device's stream;
    /// host writes to `src` through ort-bind wait for the copy). Lengths must match.
    pub fn copy_from_pinned<S2: Shape>(
        &mut self,
        src: TensorRef<'_, T, S2, CudaPinned>,
    ) -> Result<()> {
        self.check_len(src.len())?;
        let stream = self.stream()?;
        match src.buffer() {
            Some(pinned) => {
                let mut view = self.cuda_view_mut();
                driver::copy_pinned_to_device(&stream, &pinned.slice, &mut view)
                    .map_err(|e| driver_error(e, "copying pinned memory to the device"))
            }
            None => {
                // ONNX Runtime's own pinned output: no event guards it, so wait here.
                let host = src.as_slice();
                let mut view = self.cuda_view_mut();
                stream
                    .memcpy_htod(host, &mut view)
                    .and_then(|()| stream.synchronize())
                    .map_err(|e| driver_error(e, "copying pinned memory to the device"))
            }
        }
    }

    /// Copies a `cudarc` pinned slice in, asynchronously; lengths must match.
    pub fn copy_from_pinned_slice(&mut self, src: &PinnedHostSlice<T>) -> Result<()> {
        self.check_len(src.len())?;
        let stream = self.stream()?;
        let mut view = self.cuda_view_mut();
        stream
            .memcpy_htod(src, &mut view)
            .map_err(|e| driver_error(e, "copying pinned memory to the device"))
    }

    /// Copies another tensor of the same device in (device to device, enqueued on the
    /// device's stream); lengths must match.
    pub fn copy_from_device<S2: Shape>(
        &mut self,
        src: TensorRef<'_, T, S2, Cuda<N>>,
    ) -> Result<()> {
        self.check_len(src.len())?;
        let stream = self.stream()?;
        let mut view = self.cuda_view_mut();
        driver::copy_device_to_device(&stream, src.source(), &mut view)
            .map_err(|e| driver_error(e, "copying device memory"))
    }

    /// Sets every byte to zero (enqueued on the device's stream).
    pub fn fill_zeros(&mut self) -> Result<()> {
        let stream = self.stream()?;
        let mut view = self.cuda_view_mut();
        stream
            .memset_zeros(&mut view)
            .map_err(|e| driver_error(e, "zeroing device memory"))
    }
}

impl<'a, T: Element, S: Shape, const N: usize> TensorRef<'a, T, S, Cuda<N>> {
    /// The address of the first element on the device: for kernel arguments. Valid while
    /// the view lives (a run needs `&mut` on the binding, so it cannot overwrite or free
    /// the value meanwhile); use it on the device's stream.
    pub fn device_ptr(&self) -> u64 {
        self.data_ptr() as u64
    }

    /// The elements as the source of a driver copy.
    fn source(&self) -> DeviceSrc<'a, T> {
        // SAFETY: the view addresses `len` elements of `T` on the device, owned by a tensor
        // or an output value that `'a` keeps borrowed (so alive, and not overwritten by a
        // run, which needs `&mut` on the binding); ort-bind and ONNX Runtime use the memory
        // only in work enqueued on the device's stream, which the copies are enqueued on.
        unsafe { DeviceSrc::new(self.device_ptr(), self.len()) }
    }

    /// The elements as a `cudarc` view, for tensors ort-bind allocated or was handed; `None`
    /// for outputs ONNX Runtime allocated (use [`TensorRef::device_ptr`] for those).
    pub fn cuda_view(&self) -> Option<CudaView<'a, T>> {
        self.buffer().map(|buf| buf.slice.slice(..self.len()))
    }

    /// Copies the elements into host memory `dst` (whose length must equal the element
    /// count) and waits for the copy: enqueued on the device's stream after the work
    /// already there (the last run included).
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        self.check_len(dst.len())?;
        let stream = self.device().stream();
        make_current(stream)?;
        driver::copy_device_to_host(stream, self.source(), dst)
            .map_err(|e| driver_error(e, "copying device memory to the host"))
    }

    /// The elements copied into a new `Vec` (see [`TensorRef::copy_to_host`]).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = vec![T::default(); self.len()];
        self.copy_to_host(&mut out)?;
        Ok(out)
    }

    /// Copies the elements into the start of the pinned slice `dst` asynchronously
    /// (enqueued on the device's stream); `dst.as_slice()` waits for the copy. `dst` must
    /// hold at least the element count.
    pub fn copy_to_pinned(&self, dst: &mut PinnedHostSlice<T>) -> Result<()> {
        if dst.len() < self.len() {
            return Err(Error::Length {
                tensor: self.name().to_owned(),
                expected: self.len(),
                found: dst.len(),
                dims: self.dims().to_vec(),
            });
        }
        let stream = self.device().stream();
        make_current(stream)?;
        driver::copy_device_to_pinned(stream, self.source(), dst)
            .map_err(|e| driver_error(e, "copying device memory to pinned memory"))
    }

    fn check_len(&self, found: usize) -> Result<()> {
        if self.len() != found {
            return Err(Error::Length {
                tensor: self.name().to_owned(),
                expected: self.len(),
                found,
                dims: self.dims().to_vec(),
            });
        }
        Ok(())
    }
}
