//! Sessions: their options, creating them from a file or bytes, and reading the inputs
//! and outputs the model declares.

use std::ffi::{CStr, c_char, c_void};
use std::fmt;
use std::path::Path;
use std::ptr::{self, NonNull};

use ort_sys::{
    GraphOptimizationLevel, ONNXTensorElementDataType, ONNXType, OrtSession, OrtSessionOptions,
    OrtStatusPtr, OrtTypeInfo,
};

use super::env::Env;
use super::{api, check, default_allocator, non_null};
use crate::element::onnx_type_name;
use crate::error::{Error, Result};

/// Owned `OrtSessionOptions`, configured before a session is created from them.
#[derive(Debug)]
pub(crate) struct SessionOptions(NonNull<OrtSessionOptions>);

impl SessionOptions {
    /// ONNX Runtime's default options.
    pub(crate) fn new() -> Result<SessionOptions> {
        let mut out = ptr::null_mut();
        // SAFETY: `out` is a valid out-pointer.
        let status = unsafe { (api().CreateSessionOptions)(&mut out) };
        check(status, || "creating session options".into())?;
        Ok(SessionOptions(non_null(out, "CreateSessionOptions")?))
    }

    /// Threads inside one operator (0: ONNX Runtime decides).
    pub(crate) fn set_intra_threads(&mut self, n: usize) -> Result<()> {
        let n = thread_count(n)?;
        // SAFETY: the options are alive and exclusively ours (`&mut self`).
        let status = unsafe { (api().SetIntraOpNumThreads)(self.0.as_ptr(), n) };
        check(status, || format!("setting {n} intra-op threads"))
    }

    /// Threads running independent operators (0: ONNX Runtime decides).
    pub(crate) fn set_inter_threads(&mut self, n: usize) -> Result<()> {
        let n = thread_count(n)?;
        // SAFETY: as above.
        let status = unsafe { (api().SetInterOpNumThreads)(self.0.as_ptr(), n) };
        check(status, || format!("setting {n} inter-op threads"))
    }

    /// A session configuration entry (`session.*` keys of ONNX Runtime's
    /// `onnxruntime_session_options_config_keys.h`).
    pub(crate) fn set_config(&mut self, key: &CStr, value: &CStr) -> Result<()> {
        // SAFETY: as above; both strings are NUL-terminated and ONNX Runtime copies them.
        let status =
            unsafe { (api().AddSessionConfigEntry)(self.0.as_ptr(), key.as_ptr(), value.as_ptr()) };
        check(status, || format!("setting {key:?} to {value:?}"))
    }

    /// Graph optimisation level: 0 none, 1 basic, 2 extended, 3 (or more) all.
    pub(crate) fn set_optimization_level(&mut self, level: u8) -> Result<()> {
        let level = match level {
            0 => GraphOptimizationLevel::ORT_DISABLE_ALL,
            1 => GraphOptimizationLevel::ORT_ENABLE_BASIC,
            2 => GraphOptimizationLevel::ORT_ENABLE_EXTENDED,
            _ => GraphOptimizationLevel::ORT_ENABLE_ALL,
        };
        // SAFETY: as above; `level` is a value of the C enum.
        let status = unsafe { (api().SetSessionGraphOptimizationLevel)(self.0.as_ptr(), level) };
        check(status, || {
            format!("setting the optimization level {level:?}")
        })
    }

    /// The options, for the execution provider calls of `sys` (CUDA).
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    pub(crate) fn as_mut_ptr(&mut self) -> *mut OrtSessionOptions {
        self.0.as_ptr()
    }
}

impl Drop for SessionOptions {
    fn drop(&mut self) {
        // SAFETY: owned, released once; sessions copy what they need of their options.
        unsafe { (api().ReleaseSessionOptions)(self.0.as_ptr()) }
    }
}

fn thread_count(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| Error::Ort {
        context: "configuring the session".into(),
        message: format!("{n} threads is more than ONNX Runtime accepts"),
    })
}

/// An `OrtSession`: ours (released on drop), or one another owner keeps alive (the `ort`
/// crate's, see `sys::ort`), released by that owner once nothing holds it.
pub(crate) struct Session {
    pub(super) ptr: NonNull<OrtSession>,
    /// `None`: ours. `Some`: what keeps another owner's session alive while it is held here.
    pub(super) owner: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("ptr", &self.ptr)
            .field("borrowed", &self.owner.is_some())
            .finish()
    }
}

// SAFETY: ONNX Runtime sessions may be used from any thread, and `Run`/`RunWithBinding` may
// be called concurrently on one session (each call with its own binding and values); the
// metadata calls only read it. Nothing in ort-bind mutates a session after creation.
unsafe impl Send for Session {}
// SAFETY: see `Send`.
unsafe impl Sync for Session {}

impl Session {
    /// Loads the model file at `path`.
    pub(crate) fn from_file(env: &Env, path: &Path, options: &SessionOptions) -> Result<Session> {
        let context = || format!("loading the model `{}`", path.display());
        let os_path = os_path(path)?;
        let mut out = ptr::null_mut();
        // SAFETY: environment and options are alive for the call; `path` is a NUL-terminated
        // string in the platform's encoding (`ORTCHAR_T`); `out` is a valid out-pointer.
        let status = unsafe {
            (api().CreateSession)(env.as_ptr(), os_path.as_ptr(), options.0.as_ptr(), &mut out)
        };
        check(status, context)?;
        Ok(Session::ours(non_null(out, "CreateSession")?))
    }

    /// Loads a model from its bytes (ONNX Runtime copies what it keeps).
    pub(crate) fn from_memory(
        env: &Env,
        bytes: &[u8],
        options: &SessionOptions,
    ) -> Result<Session> {
        let mut out = ptr::null_mut();
        // SAFETY: as above; `bytes` is a live slice passed with its length, only read.
        let status = unsafe {
            (api().CreateSessionFromArray)(
                env.as_ptr(),
                bytes.as_ptr().cast::<c_void>(),
                bytes.len(),
                options.0.as_ptr(),
                &mut out,
            )
        };
        check(status, || "loading a model from memory".into())?;
        Ok(Session::ours(non_null(out, "CreateSessionFromArray")?))
    }

    fn ours(ptr: NonNull<OrtSession>) -> Session {
        Session { ptr, owner: None }
    }

    pub(crate) fn as_ptr(&self) -> NonNull<OrtSession> {
        self.ptr
    }

    /// Whether ONNX Runtime takes each of the session's `count` inputs in host memory
    /// (`SessionGetMemoryInfoForInputs`): `false` when an execution provider reads one on a
    /// device, where binding a host buffer copies it at bind time.
    #[cfg(feature = "ort")]
    pub(crate) fn inputs_on_host(&self, count: usize) -> Result<bool> {
        let api = api();
        let mut infos: Vec<*const ort_sys::OrtMemoryInfo> = vec![ptr::null(); count];
        // SAFETY: live session; `infos` has room for exactly `count` pointers, the model's
        // input count (read from the same session), which ONNX Runtime fills with memory
        // infos it owns and keeps while the session lives.
        let status = unsafe {
            (api.SessionGetMemoryInfoForInputs)(self.ptr.as_ptr(), infos.as_mut_ptr(), count)
        };
        check(status, || "reading where the model's inputs live".into())?;
        Ok(infos.into_iter().all(|info| {
            if info.is_null() {
                return true;
            }
            let mut device = ort_sys::OrtMemoryInfoDeviceType::OrtMemoryInfoDeviceType_CPU;
            // SAFETY: a non-null memory info the session owns (alive: `&self`); `device` is a
            // valid out-pointer.
            unsafe { (api.MemoryInfoGetDeviceType)(info, &mut device) };
            device == ort_sys::OrtMemoryInfoDeviceType::OrtMemoryInfoDeviceType_CPU
        }))
    }

    /// The model's inputs, outputs or overridable initializers (inputs with a default), in
    /// the model's order.
    pub(crate) fn declared(&self, which: Side) -> Result<Vec<Declared>> {
        let api = api();
        let (side, count_fn, name_fn, type_fn) = match which {
            Side::Output => (
                "output",
                api.SessionGetOutputCount,
                api.SessionGetOutputName,
                api.SessionGetOutputTypeInfo,
            ),
            Side::Input => (
                "input",
                api.SessionGetInputCount,
                api.SessionGetInputName,
                api.SessionGetInputTypeInfo,
            ),
            Side::Overridable => (
                "overridable initializer",
                api.SessionGetOverridableInitializerCount,
                api.SessionGetOverridableInitializerName,
                api.SessionGetOverridableInitializerTypeInfo,
            ),
        };
        let session = self.ptr.as_ptr();
        let mut count = 0usize;
        // SAFETY: live session, valid out-pointer.
        check(unsafe { count_fn(session, &mut count) }, || {
            format!("counting the model's {side}s")
        })?;
        let allocator = default_allocator()?;
        (0..count)
            .map(|i| {
                let mut name: *mut c_char = ptr::null_mut();
                // SAFETY: live session, index below the count, the default allocator,
                // valid out-pointer; the name is allocated with `allocator`.
                check(unsafe { name_fn(session, i, allocator, &mut name) }, || {
                    format!("reading the name of {side} {i}")
                })?;
                let name = non_null(name, "SessionGet*Name")?;
                // SAFETY: a NUL-terminated string ONNX Runtime allocated with `allocator`;
                // copied out, then freed once with the same allocator.
                let (text, status) = unsafe {
                    let text = CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned();
                    let status = (api.AllocatorFree)(allocator, name.as_ptr().cast::<c_void>());
                    (text, status)
                };
                check(status, || format!("freeing the name of {side} {i}"))?;
                let mut info = ptr::null_mut();
                // SAFETY: live session, index below the count, valid out-pointer; the type
                // info is ours to release (`TypeInfo`).
                check(unsafe { type_fn(session, i, &mut info) }, || {
                    format!("reading the type of {side} `{text}`")
                })?;
                let info = TypeInfo(non_null(info, "SessionGet*TypeInfo")?);
                Ok(Declared {
                    name: text,
                    ty: info.declared_type()?,
                })
            })
            .collect()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.owner.is_some() {
            // Another owner's: dropping `owner` (after this) lets it release the session.
            return;
        }
        // SAFETY: owned, released once, after every binding made from it (bindings hold an
        // `Arc` of the session).
        unsafe { (api().ReleaseSession)(self.ptr.as_ptr()) }
    }
}

/// A model path as `ORTCHAR_T*` wants it: bytes on Unix, UTF-16 on Windows, NUL-terminated.
#[cfg(not(windows))]
fn os_path(path: &Path) -> Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt as _;
    std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| Error::Ort {
        context: format!("loading the model `{}`", path.display()),
        message: "the path contains a NUL byte".into(),
    })
}

/// A model path as `ORTCHAR_T*` wants it: bytes on Unix, UTF-16 on Windows, NUL-terminated.
#[cfg(windows)]
fn os_path(path: &Path) -> Result<Vec<u16>> {
    use std::os::windows::ffi::OsStrExt as _;
    let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
    if wide[..wide.len() - 1].contains(&0) {
        return Err(Error::Ort {
            context: format!("loading the model `{}`", path.display()),
            message: "the path contains a NUL character".into(),
        });
    }
    Ok(wide)
}

/// A model input or output as the loaded session declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Declared {
    pub(crate) name: String,
    pub(crate) ty: DeclaredType,
}

/// The type ONNX Runtime reports for a model input or output, with raw element codes
/// (`values::ValueType` is the public form, for the element types ort-bind binds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DeclaredType {
    /// A tensor (or sparse tensor): element type and dims, `-1` for a dynamic one.
    Tensor {
        elem: ONNXTensorElementDataType,
        dims: Vec<i64>,
    },
    Sequence(Box<DeclaredType>),
    /// ONNX Runtime supports maps whose values are scalars of an element type.
    Map {
        key: ONNXTensorElementDataType,
        value: ONNXTensorElementDataType,
    },
    Optional(Box<DeclaredType>),
    /// A kind ort-bind does not read (opaque, or a map of non-scalars).
    Other(ONNXType),
}

impl fmt::Display for DeclaredType {
    /// ONNX's spelling: `float32[?, 3]`, `seq(map(string, float32))`, `optional(int64[])`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeclaredType::Tensor { elem, dims } => {
                write!(f, "{}[", onnx_type_name(*elem))?;
                for (i, d) in dims.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    if *d < 0 {
                        f.write_str("?")?;
                    } else {
                        write!(f, "{d}")?;
                    }
                }
                f.write_str("]")
            }
            DeclaredType::Sequence(inner) => write!(f, "seq({inner})"),
            DeclaredType::Map { key, value } => write!(
                f,
                "map({}, {})",
                onnx_type_name(*key),
                onnx_type_name(*value)
            ),
            DeclaredType::Optional(inner) => write!(f, "optional({inner})"),
            DeclaredType::Other(kind) => write!(f, "{kind:?}"),
        }
    }
}

/// An owned `OrtTypeInfo`.
struct TypeInfo(NonNull<OrtTypeInfo>);

impl Drop for TypeInfo {
    fn drop(&mut self) {
        // SAFETY: owned (returned by a `Get*TypeInfo`/`Get*Type` call), released once.
        unsafe { (api().ReleaseTypeInfo)(self.0.as_ptr()) }
    }
}

impl TypeInfo {
    fn declared_type(&self) -> Result<DeclaredType> {
        let api = api();
        let info = self.0.as_ptr();
        let context = || "reading a model value's type".to_string();
        let mut kind = ONNXType::ONNX_TYPE_UNKNOWN;
        // SAFETY: live type info (`&self`), valid out-pointer.
        check(
            unsafe { (api.GetOnnxTypeFromTypeInfo)(info, &mut kind) },
            context,
        )?;
        Ok(match kind {
            ONNXType::ONNX_TYPE_TENSOR | ONNXType::ONNX_TYPE_SPARSETENSOR => {
                let (elem, dims) = self.tensor()?;
                DeclaredType::Tensor { elem, dims }
            }
            ONNXType::ONNX_TYPE_SEQUENCE => {
                let element = self.contained(
                    api.CastTypeInfoToSequenceTypeInfo,
                    api.GetSequenceElementType,
                    "GetSequenceElementType",
                )?;
                DeclaredType::Sequence(Box::new(element.declared_type()?))
            }
            ONNXType::ONNX_TYPE_MAP => {
                let mut map = ptr::null();
                let mut key = ONNXTensorElementDataType::ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
                let mut value = ptr::null_mut();
                // SAFETY: live type info of a map; the map info is borrowed from it and used
                // while `self` lives; the value type info is ours to release.
                check(
                    unsafe { (api.CastTypeInfoToMapTypeInfo)(info, &mut map) },
                    context,
                )?;
                check(unsafe { (api.GetMapKeyType)(map, &mut key) }, context)?;
                check(unsafe { (api.GetMapValueType)(map, &mut value) }, context)?;
                let value = TypeInfo(non_null(value, "GetMapValueType")?);
                match value.declared_type()? {
                    DeclaredType::Tensor { elem, .. } => DeclaredType::Map { key, value: elem },
                    _ => DeclaredType::Other(kind),
                }
            }
            ONNXType::ONNX_TYPE_OPTIONAL => {
                let contained = self.contained(
                    api.CastTypeInfoToOptionalTypeInfo,
                    api.GetOptionalContainedTypeInfo,
                    "GetOptionalContainedTypeInfo",
                )?;
                DeclaredType::Optional(Box::new(contained.declared_type()?))
            }
            other => DeclaredType::Other(other),
        })
    }

    /// The type inside a sequence or an optional: `self` cast to the container's info with
    /// `cast`, then its contained type taken with `get` (named `what` in errors).
    fn contained<T>(
        &self,
        cast: unsafe extern "system" fn(*const OrtTypeInfo, *mut *const T) -> OrtStatusPtr,
        get: unsafe extern "system" fn(*const T, *mut *mut OrtTypeInfo) -> OrtStatusPtr,
        what: &str,
    ) -> Result<TypeInfo> {
        let context = || "reading a model value's type".to_string();
        let mut container = ptr::null();
        let mut inner = ptr::null_mut();
        // SAFETY: `self` is a live type info of the container kind `cast` expects (the
        // caller matched its `ONNXType`); the cast result is borrowed from it and used while
        // `self` lives; the contained type info is ours to release (`TypeInfo`).
        unsafe {
            check(cast(self.0.as_ptr(), &mut container), context)?;
            check(get(container, &mut inner), context)?;
        }
        Ok(TypeInfo(non_null(inner, what)?))
    }

    /// Element type and dims of a tensor's type info.
    fn tensor(&self) -> Result<(ONNXTensorElementDataType, Vec<i64>)> {
        let api = api();
        let context = || "reading a model tensor's type".to_string();
        let mut tensor = ptr::null();
        let mut elem = ONNXTensorElementDataType::ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
        let mut rank = 0usize;
        // SAFETY: live type info of a tensor; the tensor info is borrowed from it and used
        // while `self` lives; valid out-pointers.
        unsafe {
            check(
                (api.CastTypeInfoToTensorInfo)(self.0.as_ptr(), &mut tensor),
                context,
            )?;
            check((api.GetTensorElementType)(tensor, &mut elem), context)?;
            check((api.GetDimensionsCount)(tensor, &mut rank), context)?;
        }
        let mut dims = vec![0i64; rank];
        // SAFETY: `dims` has room for exactly `rank` values, the length passed.
        check(
            unsafe { (api.GetDimensions)(tensor, dims.as_mut_ptr(), rank) },
            context,
        )?;
        Ok((elem, dims))
    }
}

/// Which of a session's lists of values [`Session::declared`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// The inputs a run must be given.
    Input,
    /// The outputs.
    Output,
    /// The overridable initializers: inputs with a default (IR version 4 and later).
    Overridable,
}
