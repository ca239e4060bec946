//! The C API floor of a greedy decode step (issue 33): the fewest ONNX Runtime calls a step
//! can make, written straight against the C API on the same session ort-bind's decoder
//! uses, so that `ort-bind-bench decode`'s `floor` rows say how much a step of ort-bind
//! costs over the calls it cannot avoid.
//!
//! After the prompt, everything whose shape stays the same is bound once: the token id and
//! position (`[1, 1]`), the logits (`[1, 1, vocab]`), and in the shared-buffer mode every
//! cache buffer (bound as both past and present). A step then writes the token and its
//! position in place and makes only the calls a step of a changing shape needs:
//!
//! - the attention mask, one longer each step: a new value over the same memory, bound;
//! - in the growing mode, each key/value cache's past (`len`) and present (`len + 1`): two
//!   new values over the two buffers that trade places, bound;
//! - recurrent state: its two values made once, bound crosswise each step;
//! - in the paged mode (a model with a block table, `gqa_paged`), each pool is bound once
//!   as both past and present, the sequence holds blocks `1, 2, ...` in order, the step's
//!   slot is written in place, and the block table is a new value, bound, only when the
//!   sequence enters a new block;
//!
//! then `RunWithBinding` and the same vectorised [`argmax`] ort-bind uses. A value is
//! released as soon as it is bound (the binding holds its own reference). Fixtures with
//! inputs the floor does not write (scalars, context, other outputs, another position
//! layout) have no floor row.

use std::ffi::{CString, c_void};
use std::ptr::{self, NonNull};

use ort::sys::{
    ONNXTensorElementDataType, OrtAllocatorType, OrtApi, OrtIoBinding, OrtMemType, OrtMemoryInfo,
    OrtRunOptions, OrtStatus, OrtStatusPtr, OrtValue,
};
use ort_bind_runtime::Session;
use ort_bind_runtime::decode::{CacheAxis, CacheSpec, DecoderSpec, Logit, PositionAxis, argmax};

use crate::Result;

/// One ONNX Runtime call's status: `Err` with its message.
fn check(api: &OrtApi, status: OrtStatusPtr, what: &str) -> Result<()> {
    let status: *mut OrtStatus = status.0;
    if status.is_null() {
        return Ok(());
    }
    // SAFETY: `status` is a non-null status ONNX Runtime returned; its message is a
    // NUL-terminated string owned by it, read before the status is released once.
    let message = unsafe {
        let text = std::ffi::CStr::from_ptr((api.GetErrorMessage)(status))
            .to_string_lossy()
            .into_owned();
        (api.ReleaseStatus)(status);
        text
    };
    Err(format!("{what}: {message}").into())
}

/// A key/value cache or recurrent state: its names and two buffers of full capacity.
struct Pair<T> {
    spec: &'static CacheSpec,
    past: CString,
    present: CString,
    a: Vec<T>,
    b: Vec<T>,
    // Recurrent state: a value over each buffer, made once (released on drop).
    fixed: Option<[NonNull<OrtValue>; 2]>,
}

/// A greedy decode loop at the C API floor (batch 1): see the module docs.
pub(crate) struct Floor<T> {
    api: &'static OrtApi,
    session: Session,
    binding: NonNull<OrtIoBinding>,
    memory: NonNull<OrtMemoryInfo>,
    // Run options of its own for every run (`--floor-run-options`); null otherwise.
    run_options: Option<NonNull<OrtRunOptions>>,
    shared: bool,
    ids: Vec<i64>,
    positions: Vec<i64>,
    mask: Vec<i64>,
    logits: Vec<T>,
    pairs: Vec<Pair<T>>,
    names: Names,
    vocab: usize,
    capacity: usize,
    len: usize,
    // The paged mode's block inputs.
    paged: Option<PagedInputs>,
}

/// A paged model's block table (blocks `1..` in order) and slots, and their names.
struct PagedInputs {
    tables: Vec<i64>,
    slots: Vec<i64>,
    tables_name: CString,
    slots_name: CString,
    block_size: usize,
    // Blocks in each pool (the sink, block 0, included).
    blocks: usize,
    // The table's width bound last.
    width: usize,
}

struct Names {
    ids: CString,
    positions: Option<CString>,
    mask: Option<CString>,
    logits: CString,
}

impl<T: Logit> Floor<T> {
    /// The floor loop of `spec` on `session` (the one ort-bind's decoder runs on), for
    /// `capacity` positions; `shared`: the shared-buffer mode; `run_options`: pass run
    /// options of its own to every run, as ort-bind does, rather than null. `Ok(None)` for
    /// a model the floor does not cover.
    pub(crate) fn new(
        session: &Session,
        spec: &'static DecoderSpec,
        capacity: usize,
        shared: bool,
        run_options: bool,
    ) -> Result<Option<Self>> {
        let int64 = |e| e == ONNXTensorElementDataType::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
        let covered = spec.scalars.is_empty()
            && spec
                .paged
                .is_none_or(|p| int64(p.block_tables.elem) && int64(p.slot_mapping.elem))
            && spec.context.is_empty()
            && spec.other_outputs.is_empty()
            && spec.fixed_new.is_none()
            && spec.sequence_axis
            && spec.caches.iter().all(|c| c.elem == T::ONNX_TYPE)
            && (spec.position_axes.is_empty()
                || spec.position_axes == [PositionAxis::Batch, PositionAxis::Sequence]);
        let Some(vocab) = spec.vocab.filter(|_| covered) else {
            return Ok(None);
        };
        let api = ort_bind_runtime::library::init()?.api();
        let mut binding = ptr::null_mut();
        // SAFETY: the session is alive (held by `self.session`); out-pointer valid.
        check(
            api,
            unsafe { (api.CreateIoBinding)(session.as_raw().as_ptr(), &mut binding) },
            "CreateIoBinding",
        )?;
        let binding = NonNull::new(binding).ok_or("CreateIoBinding gave null")?;
        let mut memory = ptr::null_mut();
        // SAFETY: out-pointer valid; the memory info is released on drop.
        let status = unsafe {
            (api.CreateCpuMemoryInfo)(
                OrtAllocatorType::OrtArenaAllocator,
                OrtMemType::OrtMemTypeDefault,
                &mut memory,
            )
        };
        if let Err(e) = check(api, status, "CreateCpuMemoryInfo") {
            // SAFETY: made above, released once.
            unsafe { (api.ReleaseIoBinding)(binding.as_ptr()) };
            return Err(e);
        }
        let memory = NonNull::new(memory).ok_or("CreateCpuMemoryInfo gave null")?;
        let run_options = if run_options {
            let mut options = ptr::null_mut();
            // SAFETY: out-pointer valid; the options are released on drop.
            let status = unsafe { (api.CreateRunOptions)(&mut options) };
            if let Err(e) = check(api, status, "CreateRunOptions") {
                // SAFETY: made above, released once.
                unsafe {
                    (api.ReleaseIoBinding)(binding.as_ptr());
                    (api.ReleaseMemoryInfo)(memory.as_ptr());
                }
                return Err(e);
            }
            NonNull::new(options)
        } else {
            None
        };
        let cstring = |s: &str| CString::new(s).map_err(|e| e.to_string());
        let paged = match spec.paged {
            Some(p) => {
                let per_row = capacity.div_ceil(p.block_size);
                Some(PagedInputs {
                    tables: (1..=per_row as i64).collect(),
                    slots: vec![0; capacity],
                    tables_name: cstring(p.block_tables.name)?,
                    slots_name: cstring(p.slot_mapping.name)?,
                    block_size: p.block_size,
                    blocks: per_row + 1,
                    width: 0,
                })
            }
            None => None,
        };
        // A pool is bound as both past and present, as a shared buffer is.
        let shared = shared || paged.is_some();
        let mut floor = Floor {
            api,
            session: session.clone(),
            binding,
            memory,
            run_options,
            shared,
            ids: vec![0; capacity],
            positions: vec![0; capacity],
            mask: vec![1; capacity],
            logits: vec![T::default(); capacity * vocab],
            pairs: Vec::new(),
            names: Names {
                ids: cstring(spec.input_ids.name)?,
                positions: spec.position_ids.map(|p| cstring(p.name)).transpose()?,
                mask: spec.attention_mask.map(|m| cstring(m.name)).transpose()?,
                logits: cstring(spec.logits)?,
            },
            vocab,
            capacity,
            len: 0,
            paged,
        };
        for c in spec.caches {
            let size = c.axes.iter().fold(1, |n, a| {
                n * match a {
                    CacheAxis::Batch => 1,
                    CacheAxis::Sequence => capacity,
                    CacheAxis::Blocks => floor.paged.as_ref().map_or(0, |p| p.blocks),
                    CacheAxis::Fixed(k) => *k,
                }
            });
            floor.pairs.push(Pair {
                spec: c,
                past: cstring(c.past)?,
                present: cstring(c.present)?,
                a: vec![T::default(); size],
                b: vec![T::default(); size],
                fixed: None,
            });
        }
        for i in 0..floor.pairs.len() {
            if !floor.pairs[i].spec.grows() {
                let dims = floor.dims(floor.pairs[i].spec, 0);
                let pair = &mut floor.pairs[i];
                let (a, b) = (pair.a.as_mut_ptr().cast(), pair.b.as_mut_ptr().cast());
                let bytes = pair.a.len() * size_of::<T>();
                let va = floor.value(a, bytes, &dims, T::ONNX_TYPE)?;
                let vb = floor.value(b, bytes, &dims, T::ONNX_TYPE);
                let vb = vb.inspect_err(|_| floor.release(va))?;
                floor.pairs[i].fixed = Some([va, vb]);
            }
        }
        Ok(Some(floor))
    }

    /// The dims of cache `spec` holding `len` positions (batch 1).
    fn dims(&self, spec: &CacheSpec, len: usize) -> Vec<i64> {
        spec.axes
            .iter()
            .map(|a| match a {
                CacheAxis::Batch => 1,
                CacheAxis::Sequence | CacheAxis::Blocks => len as i64,
                CacheAxis::Fixed(k) => *k as i64,
            })
            .collect()
    }

    /// A tensor value over `bytes` bytes at `data`, of `dims`.
    fn value(
        &self,
        data: *mut c_void,
        bytes: usize,
        dims: &[i64],
        elem: ONNXTensorElementDataType,
    ) -> Result<NonNull<OrtValue>> {
        let mut value = ptr::null_mut();
        // SAFETY: `data` points at `bytes` bytes of a buffer `self` owns and never moves or
        // frees while a value over it is bound (the buffers are made once, at full size);
        // `dims` describe at most that many elements; out-pointer valid.
        let status = unsafe {
            (self.api.CreateTensorWithDataAsOrtValue)(
                self.memory.as_ptr(),
                data,
                bytes,
                dims.as_ptr(),
                dims.len(),
                elem,
                &mut value,
            )
        };
        check(self.api, status, "CreateTensorWithDataAsOrtValue")?;
        NonNull::new(value).ok_or_else(|| "CreateTensorWithDataAsOrtValue gave null".into())
    }

    fn release(&self, value: NonNull<OrtValue>) {
        // SAFETY: a value we made and own one reference of, released once.
        unsafe { (self.api.ReleaseValue)(value.as_ptr()) };
    }

    /// Binds `value` as input (or output) `name`.
    fn bind(&self, name: &CString, value: NonNull<OrtValue>, output: bool) -> Result<()> {
        let (b, n, v) = (self.binding.as_ptr(), name.as_ptr(), value.as_ptr());
        // SAFETY: binding, name and value are alive; ONNX Runtime keeps its own reference
        // to the value (and so to the memory under it, which `self` keeps in place).
        let status = unsafe {
            if output {
                (self.api.BindOutput)(b, n, v)
            } else {
                (self.api.BindInput)(b, n, v)
            }
        };
        check(
            self.api,
            status,
            if output { "BindOutput" } else { "BindInput" },
        )
    }

    /// Makes a value of `dims` over `data` and binds it (then lets it go: bound, it lives on).
    fn bind_new<E>(
        &self,
        name: &CString,
        data: *mut E,
        len: usize,
        dims: &[i64],
        elem: ONNXTensorElementDataType,
        output: bool,
    ) -> Result<()> {
        let value = self.value(data.cast(), len * size_of::<E>(), dims, elem)?;
        let bound = self.bind(name, value, output);
        self.release(value);
        bound
    }

    /// Binds what a run of `new` positions after `self.len` needs that the last run did not
    /// have: everything when `all`, else the mask and the growing caches (and the
    /// crosswise state).
    fn bind_run(&mut self, new: usize, all: bool) -> Result<()> {
        let total = self.len + new;
        let i64_type = ONNXTensorElementDataType::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
        let index_dims = [1, new as i64];
        if all {
            let ids = self.ids.as_mut_ptr();
            self.bind_new(&self.names.ids, ids, new, &index_dims, i64_type, false)?;
            if let Some(name) = &self.names.positions {
                let p = self.positions.as_mut_ptr();
                self.bind_new(name, p, new, &index_dims, i64_type, false)?;
            }
            let dims = [1, new as i64, self.vocab as i64];
            let logits = self.logits.as_mut_ptr();
            self.bind_new(
                &self.names.logits,
                logits,
                new * self.vocab,
                &dims,
                T::ONNX_TYPE,
                true,
            )?;
        }
        if let Some(name) = &self.names.mask {
            let mask = self.mask.as_mut_ptr();
            self.bind_new(name, mask, total, &[1, total as i64], i64_type, false)?;
        }
        for i in 0..self.pairs.len() {
            // Pointers for ONNX Runtime to write through, taken from unique borrows.
            let (a, b) = (self.pairs[i].a.as_mut_ptr(), self.pairs[i].b.as_mut_ptr());
            let pair = &self.pairs[i];
            if let Some([a, b]) = pair.fixed {
                self.bind(&pair.past, a, false)?;
                self.bind(&pair.present, b, true)?;
            } else if self.shared {
                if all {
                    // The capacity along the sequence, or a pool's blocks.
                    let room = self.paged.as_ref().map_or(self.capacity, |p| p.blocks);
                    let dims = self.dims(pair.spec, room);
                    self.bind_new(&pair.past, a, pair.a.len(), &dims, T::ONNX_TYPE, false)?;
                    self.bind_new(&pair.present, a, pair.a.len(), &dims, T::ONNX_TYPE, true)?;
                }
            } else {
                let (past, present) = (self.dims(pair.spec, self.len), self.dims(pair.spec, total));
                self.bind_new(&pair.past, a, pair.a.len(), &past, T::ONNX_TYPE, false)?;
                self.bind_new(&pair.present, b, pair.b.len(), &present, T::ONNX_TYPE, true)?;
            }
        }
        if let Some(p) = &self.paged {
            let width = total.div_ceil(p.block_size);
            let (tables, slots) = (p.tables.as_ptr().cast_mut(), p.slots.as_ptr().cast_mut());
            if all {
                self.bind_new(&p.slots_name, slots, new, &index_dims, i64_type, false)?;
            }
            if all || width != p.width {
                let dims = [1, width as i64];
                self.bind_new(&p.tables_name, tables, width, &dims, i64_type, false)?;
            }
            if let Some(p) = &mut self.paged {
                p.width = width;
            }
        }
        Ok(())
    }

    /// The slots of positions `from..from + new` (blocks `1..` in order).
    fn write_slots(&mut self, from: usize, new: usize) {
        if let Some(p) = &mut self.paged {
            let bs = p.block_size;
            for (i, slot) in p.slots[..new].iter_mut().enumerate() {
                let at = from + i;
                *slot = ((at / bs + 1) * bs + at % bs) as i64;
            }
        }
    }

    /// Runs the bound model and takes its positions: the buffers of growing caches and
    /// recurrent state trade places.
    fn run(&mut self, new: usize) -> Result<i64> {
        let options = self
            .run_options
            .map_or(ptr::null(), |o| o.as_ptr().cast_const());
        // SAFETY: session, binding and every bound value (over buffers `self` owns, in
        // place) are alive for the call; the run options are ours or null (the defaults).
        let status = unsafe {
            (self.api.RunWithBinding)(
                self.session.as_raw().as_ptr(),
                options,
                self.binding.as_ptr(),
            )
        };
        check(self.api, status, "RunWithBinding")?;
        self.len += new;
        for pair in &mut self.pairs {
            if let Some([a, b]) = &mut pair.fixed {
                std::mem::swap(a, b);
            } else if !self.shared {
                std::mem::swap(&mut pair.a, &mut pair.b);
            }
        }
        let last = &self.logits[(new - 1) * self.vocab..new * self.vocab];
        Ok(argmax(last) as i64)
    }

    /// Runs the prompt (its own shapes, bound for it) and returns the first pick.
    pub(crate) fn prefill(&mut self, prompt: &[i64]) -> Result<i64> {
        let new = prompt.len();
        if new > self.capacity {
            return Err("prompt over capacity".into());
        }
        self.len = 0;
        self.ids[..new].copy_from_slice(prompt);
        for (i, p) in self.positions[..new].iter_mut().enumerate() {
            *p = i as i64;
        }
        for pair in &mut self.pairs {
            if pair.fixed.is_some() {
                pair.a.fill(T::default());
                pair.b.fill(T::default());
            }
        }
        self.write_slots(0, new);
        self.bind_run(new, true)?;
        let first = self.run(new)?;
        // The step's shapes from now on: bind what stays.
        self.positions[0] = self.len as i64;
        self.write_slots(self.len, 1);
        self.bind_run(1, true)?;
        Ok(first)
    }

    /// One step: `token` at the next position; returns the next pick.
    pub(crate) fn step(&mut self, token: i64) -> Result<i64> {
        if self.len >= self.capacity {
            return Err("over capacity".into());
        }
        self.ids[0] = token;
        self.positions[0] = self.len as i64;
        self.write_slots(self.len, 1);
        self.bind_run(1, false)?;
        self.run(1)
    }
}

impl<T> Drop for Floor<T> {
    fn drop(&mut self) {
        for pair in &self.pairs {
            if let Some(values) = pair.fixed {
                for v in values {
                    // SAFETY: made in `new`, owned, released once.
                    unsafe { (self.api.ReleaseValue)(v.as_ptr()) };
                }
            }
        }
        // SAFETY: made in `new`, released once; the binding before the buffers it points
        // at (fields drop after this).
        unsafe {
            (self.api.ReleaseIoBinding)(self.binding.as_ptr());
            (self.api.ReleaseMemoryInfo)(self.memory.as_ptr());
            if let Some(options) = self.run_options {
                (self.api.ReleaseRunOptions)(options.as_ptr());
            }
        }
    }
}
