//! The `ort` crate's side of interop (the `ort` feature): whether it has loaded ONNX
//! Runtime, its C API table, pointing it at the library this crate loaded, its sessions,
//! and the memory of its values.
//!
//! Both crates call the same C API, declared by the same `ort-sys`: an `OrtSession` or
//! `OrtValue` the `ort` crate made is one this crate can call on, as long as both call the
//! same library (`library::init` makes sure of that before anything else here is reached).

use std::ffi::c_void;
use std::path::Path;
use std::ptr;

use ort::AsPointer as _;
use ort_sys::{
    ONNXTensorElementDataType, OrtApi, OrtMemType, OrtMemoryInfo, OrtMemoryInfoDeviceType,
};

use super::{MemoryInfo, Session, Value, api, check, non_null};
use crate::error::{Error, Result};

/// Whether the `ort` crate has loaded an ONNX Runtime library (with `ort::init_from`, or
/// on its first use, from `ORT_DYLIB_PATH` or the system loader). Loads nothing.
pub(crate) fn ort_has_library() -> bool {
    // `ort::init_from` keeps the first library it loads for the process: once it has one, it
    // returns `Ok` without opening the path it is given. Given a path that cannot be opened,
    // it therefore answers the question and changes nothing (a failed open leaves no trace).
    let nowhere = std::env::temp_dir()
        .join("ort-bind-no-such-folder")
        .join("no-such-onnxruntime-library");
    ort::init_from(&nowhere).is_ok()
}

/// The C API table the `ort` crate calls through. Call only once [`ort_has_library`] says it
/// has a library: otherwise `ort` would load one of its own choosing, or panic.
pub(crate) fn ort_api() -> &'static OrtApi {
    ort::api()
}

/// Makes the `ort` crate use the library at `path` (the file this crate loaded; opening it
/// again gives the same loaded library), unless it has one already.
pub(crate) fn share_library_with_ort(path: &Path) -> Result<(), String> {
    ort::init_from(path).map(drop).map_err(|e| e.to_string())
}

impl Session {
    /// The session of an `ort` session, kept alive by holding `owner` (the `ort` session itself,
    /// or a handle sharing it), which releases it once this is dropped.
    ///
    /// No `unsafe`: `ptr` comes from `ort`'s own safe `AsPointer` and names the live
    /// `OrtSession` that `owner` keeps (ort's `SharedSessionInner` releases it only when
    /// dropped); this crate never releases a session that has an owner (`Drop`).
    pub(crate) fn from_ort_parts(
        ptr: *const ort_sys::OrtSession,
        owner: Box<dyn std::any::Any + Send + Sync>,
    ) -> Result<Session> {
        Ok(Session {
            ptr: non_null(ptr.cast_mut(), "ort::session::Session::ptr")?,
            owner: Some(owner),
        })
    }
}

/// Where a tensor's memory lives, as its memory info says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Placement {
    pub(crate) device: OrtMemoryInfoDeviceType,
    pub(crate) id: i32,
    pub(crate) mem_type: OrtMemType,
}

impl Placement {
    /// The placement `info` describes.
    fn of(info: *const OrtMemoryInfo) -> Result<Placement> {
        let api = api();
        let mut placement = Placement {
            device: OrtMemoryInfoDeviceType::OrtMemoryInfoDeviceType_CPU,
            id: 0,
            mem_type: OrtMemType::OrtMemTypeDefault,
        };
        // SAFETY: `info` is a live memory info (the caller's value's, or ours); every
        // out-pointer is a valid local of the type the call writes.
        unsafe {
            (api.MemoryInfoGetDeviceType)(info, &mut placement.device);
            check((api.MemoryInfoGetId)(info, &mut placement.id), || {
                "reading a memory info's device id".into()
            })?;
            check(
                (api.MemoryInfoGetMemType)(info, &mut placement.mem_type),
                || "reading a memory info's memory type".into(),
            )?;
        }
        Ok(placement)
    }

    /// The placement of memory described by `info` (one of ort-bind's devices).
    pub(crate) fn of_info(info: &MemoryInfo) -> Result<Placement> {
        Placement::of(info.as_ptr())
    }
}

/// A tensor value's memory: element type, first element's address, size in bytes, where.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TensorMemory {
    pub(crate) elem: ONNXTensorElementDataType,
    pub(crate) data: *mut c_void,
    pub(crate) bytes: usize,
    pub(crate) placement: Placement,
}

/// The memory of the `ort` value `value`, which must be a tensor, and its dims (into `dims`).
/// Reads only; the address stays valid while `value` is borrowed unchanged.
pub(crate) fn ort_tensor_memory<Ty: ort::value::ValueTypeMarker + ?Sized>(
    value: &ort::value::Value<Ty>,
    dims: &mut Vec<i64>,
) -> Result<TensorMemory> {
    if !value.is_tensor() {
        return Err(Error::Value {
            value: "an `ort` value".into(),
            problem: format!("it is {}, not a tensor", value.dtype()),
        });
    }
    // SAFETY: `value.ptr()` is the live `OrtValue` the borrowed `ort` value owns; the handle
    // is only read while that borrow lasts (this call) and never released (`borrowed`).
    let borrowed = unsafe { Value::borrowed(value.ptr())? };
    let elem = borrowed.tensor_info(dims)?;
    let data = if dims.contains(&0) {
        // An empty tensor may have no data at all.
        ptr::null_mut()
    } else {
        borrowed.data_ptr()?
    };
    Ok(TensorMemory {
        elem,
        data,
        bytes: borrowed.size_in_bytes()?,
        placement: Placement::of(borrowed.memory_info_ptr()?)?,
    })
}
