//! The binding: every input and output buffer bound to ONNX Runtime once, reused
//! on every run.
//!
//! [`Binding`] owns both the `OrtIoBinding` and the tensors it points at (a
//! [`BindingIo`] value, normally generated), so nothing can free a bound buffer
//! while ONNX Runtime may use it: users reach tensors only through views, a run
//! needs `&mut`, and any change of dims or storage goes through [`Binding`], which
//! rebinds before the next run.

use std::any::TypeId;
use std::ffi::{CStr, CString};
use std::marker::PhantomData;
use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

use crate::adapter::{Adapter, BoundAdapter, DeclaredAxis};
use crate::cancel::{Reason, RunControl, Terminator};
use crate::deadline;
use crate::device::{Cpu, Device};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::feed::Feed;
use crate::run_async::Completion;
use crate::session::{Session, ValueSpec};
use crate::shape::Shape;
use crate::sys::{IoBinding, MemoryInfo, RunArgs, Value};
use crate::tensor::{AllocatedOutput, Tensor};
use crate::values::{ValueInputSlot, ValueOutputSlot};

/// The tensors of one binding, and how to bind them.
///
/// Generated code implements this for its `Io` struct; users normally never do.
///
/// # Safety
/// Implementors promise that no method other than [`BindingIo::set_dims`] (and code run
/// inside [`Binding::modify`]) moves, replaces, reallocates or frees a tensor that
/// [`BindingIo::bind`] bound: the views returned by `inputs_mut`/`outputs` may only
/// read and write elements in place. ONNX Runtime keeps raw pointers to that memory. Two
/// exceptions:
/// - when [`BindingIo::HAS_VALUE_INPUTS`] is `true`, the inputs view may replace the value
///   inputs it hands out (maps, sequences, sequences of maps, optionals), and [`Binding`]
///   binds everything again before the next run after each `inputs_mut`;
/// - the inputs view may give an input new dims through the view's own methods
///   ([`TensorMut::resize`](crate::TensorMut::resize), `set`, `fill_resized`; the same on
///   `StringTensorMut`), which may reallocate it, provided [`BindingIo::take_resized`]
///   reports every such change: [`Binding`] asks it after each `inputs_mut` and rebinds
///   before the next run.
pub unsafe trait BindingIo {
    /// Input specs, in binding order (index = position). Empty for an `Io` whose values
    /// are known only at run time, which overrides [`BindingIo::names`] instead.
    const INPUTS: &'static [ValueSpec];
    /// Output specs, in binding order (index = position); empty like
    /// [`BindingIo::INPUTS`] for an `Io` whose values are known only at run time.
    const OUTPUTS: &'static [ValueSpec];
    /// Overridable input specs (inputs whose initializer is a default), bound after the
    /// inputs: [`Binder`] input index `INPUTS.len() + k` is `OVERRIDABLE[k]`. One is bound only
    /// while it is set; unbound, ONNX Runtime runs with the model's default. Empty by default.
    const OVERRIDABLE: &'static [ValueSpec] = &[];
    /// The declared axes of each of [`BindingIo::OVERRIDABLE`] (`None`: unknown rank), which
    /// an adapter's parameters are checked against. Empty by default.
    const OVERRIDABLE_AXES: &'static [Option<&'static [DeclaredAxis]>] = &[];
    /// Whether some outputs are allocated by ONNX Runtime ([`Binder::allocated_output`],
    /// and every [`Binder::value_output`]: strings, sequences, maps, optionals), so their
    /// values must be collected after each run.
    const HAS_ALLOCATED_OUTPUTS: bool;
    /// Whether the inputs view hands out value inputs (maps, sequences, sequences of maps,
    /// optionals) to fill in place (`inputs().m.set_pairs(..)`): such a value is a new ONNX
    /// Runtime value once filled, so [`Binding::inputs`] and [`Binding::split`] make the next
    /// run bind everything again. `false` by default.
    const HAS_VALUE_INPUTS: bool = false;
    /// The values of the model's symbolic dimensions (compared to find the binding of
    /// dims used recently; see [`Binding::set_dims`]).
    type Dims: Clone + PartialEq + Send;
    /// Mutable views of the inputs.
    type InputsMut<'a>
    where
        Self: 'a;
    /// Shared views of the outputs.
    type OutputsRef<'a>
    where
        Self: 'a;

    /// Checks `session` against this `Io`'s signature and names its inputs and outputs in
    /// binding order ([`Binder`] indices are positions in these lists); [`Binding::new`] calls
    /// it once. The default checks [`BindingIo::INPUTS`] and [`BindingIo::OUTPUTS`] (what
    /// generated code declares); an `Io` whose values are known only at run time (the
    /// dynamic route's `DynamicIo`, the `dynamic` feature) reads them from itself.
    fn names(&self, session: &Session) -> Result<IoNames> {
        IoNames::checked(session, Self::INPUTS, Self::OVERRIDABLE, Self::OUTPUTS)
    }
    /// Binds every input and output through `binder`.
    fn bind<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> Result<()>;
    /// Binds again every output that [`BindingIo::bind`] bound with
    /// [`Binder::allocated_output`] or [`Binder::value_output`]; [`Binding::run`] calls it before each run but the first
    /// after a full bind. After a run, ONNX Runtime's binding holds the value it produced
    /// for such an output and would write the next result into that value, failing the
    /// run when the shape changes; binding the output to its device again makes ONNX
    /// Runtime allocate a value of the right shape. The default binds everything again;
    /// generated code binds just those outputs.
    fn rebind_allocated<'io>(&'io self, binder: &mut Binder<'_, 'io>) -> Result<()> {
        self.bind(binder)
    }
    /// Resizes tensors to `dims`, reusing capacity.
    fn set_dims(&mut self, dims: &Self::Dims) -> Result<()>;
    /// Keeps `adapter` (already checked against [`BindingIo::OVERRIDABLE`]) for
    /// [`Binder::adapter_input`] to bind, or forgets the one kept (`None`); called inside
    /// [`Binding::set_adapter`], which rebinds afterwards. The default refuses an adapter: an
    /// `Io` without overridable inputs has nothing to bind it as.
    fn set_adapter(&mut self, adapter: Option<BoundAdapter>) -> Result<()> {
        match adapter {
            None => Ok(()),
            Some(a) => Err(Error::Adapter {
                adapter: a.source().to_owned(),
                problem: "this binding's model has no overridable inputs to bind it as".into(),
            }),
        }
    }
    /// Receives output `index`'s value after a run, when it was bound with
    /// [`Binder::allocated_output`].
    fn store_output(&mut self, index: usize, value: OutputValue) -> Result<()>;
    /// Forgets the values [`BindingIo::store_output`] received (each
    /// [`AllocatedOutput::clear`]), so they read as absent; [`Binding`] calls it when dims
    /// change and when a run fails. The default does nothing (no allocated outputs).
    fn clear_allocated(&mut self) {}
    /// The binding index of the first value input that has no value yet (a map,
    /// sequence or sequence of maps never filled): a run is then
    /// [`Error::MissingInput`] naming it. The default: none.
    fn missing_input(&self) -> Option<usize> {
        None
    }
    /// Whether an input view gave an input new dims since the last call (see the safety
    /// section), forgetting it. [`Binding`] asks after handing out the inputs, and before
    /// the next run derives its dims from [`BindingIo::dims_of_inputs`], resizes everything
    /// else to match and binds again. Generated impls ask each input; an `Io` whose views
    /// cannot change dims returns `false`.
    fn take_resized(&mut self) -> bool;
    /// The dims under which the inputs have the shapes they have now (generated code:
    /// `Dims::from_input_shapes` on them), or `None` when the input shapes do not determine
    /// every dim (the default): an input given new dims through its view is then an error at
    /// the next run, which names the way out, [`Binding::set_dims`].
    fn dims_of_inputs(&self) -> Option<Result<Self::Dims>> {
        None
    }
    /// Views for filling inputs in place.
    fn inputs_mut(&mut self) -> Self::InputsMut<'_>;
    /// Views for reading outputs in place.
    fn outputs(&self) -> Self::OutputsRef<'_>;
}

/// What [`BindingIo::bind`] is handed to bind its values with: binds tensors (and value
/// slots) that live at least as long as `'io` (the borrow of the [`BindingIo`] being
/// bound); the invariant lifetime stops a temporary tensor from being bound.
#[derive(Debug)]
pub struct Binder<'b, 'io> {
    // `None`: only record (see `Binding::set_dims`, which may reuse a binding made earlier).
    io: Option<&'b mut IoBinding>,
    input_names: &'b [CString],
    output_names: &'b [CString],
    session: &'b Session,
    // The same values, recorded for `RunAsync` (which takes arrays, not a binding).
    args: &'b mut RunArgs,
    // The value and memory of every bound tensor, in binding order (see `Binding::set_dims`).
    storage: Option<&'b mut Vec<StorageKey>>,
    // Only fill `storage`: nothing is bound, recorded or checked.
    keys_only: bool,
    // Whether any bound memory is host-accessible (then a run must not return before
    // ONNX Runtime's copies to and from it are done; see `Binding::run`).
    host_memory: bool,
    // Why `run_async` cannot run this binding, if it cannot.
    async_blocker: Option<&'static str>,
    _io: PhantomData<fn(&'io ()) -> &'io ()>,
}

fn lookup<'a>(names: &'a [CString], index: usize, what: &str) -> Result<&'a CStr> {
    names
        .get(index)
        .map(CString::as_c_str)
        .ok_or_else(|| Error::SignatureMismatch {
            problem: format!("{what} index {index} is out of range"),
        })
}

impl<'io> Binder<'_, 'io> {
    /// Binds `tensor` as input number `index`.
    pub fn input<T: Element, S: Shape, D: Device>(
        &mut self,
        index: usize,
        tensor: &'io Tensor<T, S, D>,
    ) -> Result<()> {
        if self.keys_only {
            return self.key(tensor);
        }
        let name = lookup(self.input_names, index, "input")?;
        tensor.device().check_session(self.session, tensor.name())?;
        self.host_memory |= D::HOST_ACCESSIBLE;
        if let Some(io) = &mut self.io {
            io.bind_input(name, tensor.value())?;
        }
        self.args.record_input(index, name, tensor.value());
        self.key(tensor)
    }

    /// Binds `tensor` as the buffer output number `index` is written into.
    pub fn output<T: Element, S: Shape, D: Device>(
        &mut self,
        index: usize,
        tensor: &'io Tensor<T, S, D>,
    ) -> Result<()> {
        if self.keys_only {
            return self.key(tensor);
        }
        let name = lookup(self.output_names, index, "output")?;
        tensor.device().check_session(self.session, tensor.name())?;
        self.host_memory |= D::HOST_ACCESSIBLE;
        if let Some(io) = &mut self.io {
            io.bind_output(name, tensor.value())?;
        }
        self.args.record_output(index, name, Some(tensor.value()));
        self.key(tensor)
    }

    /// Lets ONNX Runtime allocate output number `index` on the slot's device at run time.
    pub fn allocated_output<T: Element, S: Shape, D: Device>(
        &mut self,
        index: usize,
        slot: &'io AllocatedOutput<T, S, D>,
    ) -> Result<()> {
        if self.keys_only {
            return Ok(());
        }
        slot.device().check_session(self.session, slot.name())?;
        self.host_memory |= D::HOST_ACCESSIBLE;
        let info = slot.device().memory_info()?;
        let name = lookup(self.output_names, index, "output")?;
        if let Some(io) = &mut self.io {
            io.bind_output_to_device(name, info)?;
        }
        if TypeId::of::<D>() != TypeId::of::<Cpu>() {
            self.async_blocker =
                Some("an output that ONNX Runtime allocates is bound to a device other than `Cpu`");
        }
        self.args.record_output(index, name, None);
        Ok(())
    }
}

impl<'io> Binder<'_, 'io> {
    /// Binds a string tensor, sequence, map or optional (any [`ValueInputSlot`]) as input number
    /// `index`. An [`Optional`](crate::Optional) without a value is left unbound, which ONNX
    /// Runtime takes as an absent optional input.
    ///
    /// A value input with no value yet ([`ValueInputSlot::is_set`] is `false`) is left
    /// unbound; [`BindingIo::missing_input`] names it when a run is asked for.
    pub fn value_input<V: ValueInputSlot>(&mut self, index: usize, value: &'io V) -> Result<()> {
        let bound = if value.is_set() {
            value.bound_value()?
        } else {
            None
        };
        if let Some(storage) = &mut self.storage {
            // A binding kept for other dims (`Binding::set_dims`) holds ONNX Runtime's own
            // reference to the value bound then, so a new value that happens to sit at a
            // freed value's address is not what that binding reads: the key of a value
            // input never matches an earlier one, and a change of dims rebinds it.
            static NEXT_KEY: std::sync::atomic::AtomicUsize =
                std::sync::atomic::AtomicUsize::new(1);
            let address = bound.map_or(0, |v| v.as_ptr().addr());
            let unique = NEXT_KEY.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            storage.push([address, unique, usize::MAX]);
        }
        if self.keys_only {
            return Ok(());
        }
        let name = lookup(self.input_names, index, "input")?;
        self.host_memory = true;
        if let Some(v) = bound {
            if let Some(io) = &mut self.io {
                io.bind_input(name, v)?;
            }
            self.args.record_input(index, name, v);
        }
        Ok(())
    }

    /// Binds the parameter `adapter` has for overridable input `k` (the `k`-th of
    /// [`BindingIo::OVERRIDABLE`]) as input number `index`; binds nothing when no adapter is
    /// set or it has no such parameter (the model's default then applies).
    pub fn adapter_input(
        &mut self,
        index: usize,
        adapter: Option<&'io BoundAdapter>,
        k: usize,
    ) -> Result<()> {
        let Some((value, id)) = adapter.and_then(|a| Some((a.value(k)?, a.id()))) else {
            return Ok(());
        };
        if let Some(storage) = &mut self.storage {
            // The adapter's own number: a value of another adapter at a freed address is not
            // what a kept binding holds.
            storage.push([value.as_ptr().addr(), id, usize::MAX - 1]);
        }
        if self.keys_only {
            return Ok(());
        }
        let name = lookup(self.input_names, index, "input")?;
        self.host_memory = true;
        if let Some(io) = &mut self.io {
            io.bind_input(name, value)?;
        }
        self.args.record_input(index, name, value);
        Ok(())
    }

    /// Lets ONNX Runtime allocate output number `index` in host memory at run time, for a
    /// string tensor, sequence, map or optional slot (any [`ValueOutputSlot`]); the run's value
    /// reaches the slot through [`BindingIo::store_output`] and
    /// [`OutputValue::store_in_slot`] (so the `Io` sets
    /// [`BindingIo::HAS_ALLOCATED_OUTPUTS`], and clears the slot in
    /// [`BindingIo::clear_allocated`]).
    pub fn value_output<V: ValueOutputSlot>(&mut self, index: usize, slot: &'io V) -> Result<()> {
        let _ = slot;
        if self.keys_only {
            return Ok(());
        }
        let name = lookup(self.output_names, index, "output")?;
        self.host_memory = true;
        if let Some(io) = &mut self.io {
            io.bind_output_to_device(name, MemoryInfo::cpu()?)?;
        }
        self.args.record_output(index, name, None);
        Ok(())
    }
}

impl Binder<'_, '_> {
    fn key<T: Element, S: Shape, D: Device>(&mut self, tensor: &Tensor<T, S, D>) -> Result<()> {
        if let Some(storage) = &mut self.storage {
            storage.push(tensor.storage_key());
        }
        Ok(())
    }
}

/// What a binding made for a tensor depends on: its value (whose address `RunAsync`'s
/// arrays hold), and the address and element count of the memory under it.
pub(crate) type StorageKey = [usize; 3];

/// An output value ONNX Runtime produced; store it in its typed slot or drop it.
#[derive(Debug)]
pub struct OutputValue(pub(crate) Value);

impl OutputValue {
    /// Moves the value into `slot`, checking element type and shape.
    pub fn store_in<T: Element, S: Shape, D: Device>(
        self,
        slot: &mut AllocatedOutput<T, S, D>,
    ) -> Result<()> {
        slot.accept(self.0)
    }

    /// Moves the value into a slot of a string tensor, sequence, map or optional
    /// ([`ValueOutputSlot`]), checking its type.
    pub fn store_in_slot<V: crate::values::ValueOutputSlot>(self, slot: &mut V) -> Result<()> {
        slot.accept(self.0)
    }
}

/// The names of a binding's inputs and outputs, in binding order (see [`BindingIo::names`]).
#[derive(Debug, Clone)]
pub struct IoNames {
    inputs: Vec<CString>,
    outputs: Vec<CString>,
}

impl IoNames {
    /// The names of `inputs` and `outputs`; fails when a name contains a NUL byte.
    pub fn new<'a>(
        inputs: impl IntoIterator<Item = &'a str>,
        outputs: impl IntoIterator<Item = &'a str>,
    ) -> Result<IoNames> {
        Ok(IoNames {
            inputs: c_names(&mut inputs.into_iter())?,
            outputs: c_names(&mut outputs.into_iter())?,
        })
    }

    /// The names of values declared as `inputs` (then the `overridable` ones) and
    /// `outputs`, once `session` is checked against them. Not generic: one copy for every
    /// binding type.
    fn checked(
        session: &Session,
        inputs: &[ValueSpec],
        overridable: &[ValueSpec],
        outputs: &[ValueSpec],
    ) -> Result<IoNames> {
        session.check_signature(inputs, outputs)?;
        session.check_overridable(overridable)?;
        IoNames::new(
            inputs.iter().chain(overridable).map(|s| s.name),
            outputs.iter().map(|s| s.name),
        )
    }
}

fn c_names(names: &mut dyn Iterator<Item = &str>) -> Result<Vec<CString>> {
    names
        .map(|name| {
            CString::new(name).map_err(|_| Error::SignatureMismatch {
                problem: format!("value name {name:?} contains a NUL byte"),
            })
        })
        .collect()
}

/// A binding: a [`BindingIo`] (the tensors it owns) bound to a session once, run many
/// times.
///
/// The derive route uses it directly (`Binding::new(&session, io)`); each generated
/// module's own `Binding` wraps a `Binding<Io<D>>`, and a [`PooledBinding`](crate::PooledBinding)
/// is one lent by a [`Pool`](crate::Pool).
///
/// `run` takes `&mut self`, so no view of an output can be alive while a run writes it.
///
/// # Threads
/// A `Binding` is `Send` (when its tensors are, as ort-bind's are): move it to the thread or
/// task that runs it. It is not `Sync`: one binding runs one run at a time. Any number of
/// bindings of one [`Session`] may run at the same time, on as many threads (ONNX Runtime
/// allows concurrent runs on a session, each with its own binding); a [`Pool`](crate::Pool)
/// shares bindings between request handlers.
pub struct Binding<Io: BindingIo> {
    // Declared first: its ONNX Runtime binding is dropped before the tensors it points at.
    core: Core,
    // The dims `io` was last set to through `set_dims` (`None`: unknown).
    dims: Option<Io::Dims>,
    // Shape buckets: the dims of the bindings `core.recent` keeps, in the same order.
    recent: Vec<Io::Dims>,
    io: Io,
}

/// Everything a [`Binding`] holds that does not depend on its `Io`: one type (and one copy
/// of the code that makes and moves it) for every binding type.
struct Core {
    io_binding: IoBinding,
    input_names: Vec<CString>,
    output_names: Vec<CString>,
    session: Session,
    // False while the ONNX Runtime binding may point at stale memory (between a change
    // of storage and a successful rebind); `run` refuses then.
    ready: bool,
    // Whether outputs bound with `Binder::allocated_output` are bound afresh (no run since
    // the last bind); see `BindingIo::rebind_allocated`.
    allocated_fresh: bool,
    // Whether runs may return before the device finished (only when every bound tensor is
    // device memory and the session runs on the caller's CUDA stream).
    async_run: bool,
    // The values for `RunAsync`, in binding order (recorded by every bind). Boxed, like a
    // bucket's, so that switching buckets swaps a pointer instead of seven `Vec`s.
    args: Box<RunArgs>,
    // Why `run_async` cannot run this binding (set by the last bind), if it cannot.
    async_blocker: Option<&'static str>,
    // The run options of this binding's runs and requests to stop them.
    control: Arc<RunControl>,
    // Where ONNX Runtime's callback leaves an asynchronous run's result.
    completion: Arc<Completion>,
    // An asynchronous run was started and its result not yet collected (its future is
    // still alive, or was leaked): everything waits for it first (`settle`).
    in_flight: Option<InFlight>,
    // The memory each tensor bound in `io_binding` views.
    storage: Vec<StorageKey>,
    // Shape buckets: bindings of recently used dims (`Binding::recent` holds the dims),
    // each still bound to the values of its dims, oldest first; at most `keep_dims`.
    recent: Vec<Bucket>,
    keep_dims: usize,
    // Arrays for buckets to come, reserved up front so that no switch allocates.
    spare: Vec<(Vec<StorageKey>, Box<RunArgs>)>,
    scratch: Vec<StorageKey>,
    // Full binds so far (see `Binding::binds`).
    binds: u64,
    // The inputs were handed out since the binding last asked `take_resized`.
    inputs_open: bool,
    // An input view gave an input new dims, and the binding has not yet followed them.
    resized: bool,
    // Inputs that read another binding's tensor (`run_fed`): a view of its memory each,
    // bound over the binding's own tensor before each fed run.
    fed: Vec<Fed>,
    // A `run_fed` is under way (a plain run of a fed binding is refused).
    feeding: bool,
}

/// An input that reads another binding's tensor (see [`Binding::run_fed`]).
#[derive(Debug)]
struct Fed {
    /// The input's index.
    input: usize,
    /// What the view was made for: the source value, its data address and size, and the
    /// binding's own value for the input (whose dims the view takes).
    key: [usize; 4],
    /// The view of the source's memory.
    value: Value,
}

impl Core {
    fn new(session: &Session, names: IoNames) -> Result<Core> {
        let IoNames { inputs, outputs } = names;
        let (n_in, n_out) = (inputs.len(), outputs.len());
        // SAFETY: the session pointer is live (borrowed for this call), and the `Core` this
        // binding goes into holds a counted reference to the session (`session` field) for as
        // long as it exists; on an error here the IO binding is released while still borrowed.
        let io_binding = unsafe { IoBinding::new(session.raw(), session.on_device())? };
        Ok(Core {
            io_binding,
            input_names: inputs,
            output_names: outputs,
            session: session.clone(),
            ready: false,
            allocated_fresh: false,
            async_run: false,
            args: Box::new(RunArgs::with_capacity(n_in, n_out)),
            async_blocker: None,
            control: Arc::new(RunControl::new(session)?),
            completion: Arc::new(Completion::default()),
            in_flight: None,
            storage: Vec::with_capacity(n_in + n_out),
            recent: Vec::with_capacity(DEFAULT_RECENT_DIMS),
            keep_dims: DEFAULT_RECENT_DIMS,
            spare: (0..DEFAULT_RECENT_DIMS)
                .map(|_| parts(n_in, n_out))
                .collect(),
            scratch: Vec::with_capacity(n_in + n_out),
            binds: 0,
            inputs_open: false,
            resized: false,
            fed: Vec::new(),
            feeding: false,
        })
    }

    /// Arrays for one binding of this binding's values.
    fn parts(&self) -> (Vec<StorageKey>, Box<RunArgs>) {
        parts(self.input_names.len(), self.output_names.len())
    }

    /// Whether bucket `hit` is bound to the values the tensors have now (their keys, just
    /// collected into `scratch`, are the bucket's).
    // Inlined where it is called: the hot path of a shape-bucket switch.
    #[inline]
    fn bucket_current(&self, hit: usize) -> bool {
        crate::tensor::same(&self.scratch, &self.recent[hit].storage)
    }

    /// Makes bucket `hit` the current binding: with `keep`, the current one takes its
    /// place; without, the bucket leaves `recent` and the current one's arrays go spare.
    // Inlined where it is called: the hot path of a shape-bucket switch.
    #[inline(always)]
    fn use_bucket(&mut self, hit: usize, keep: bool) {
        let bucket = &mut self.recent[hit];
        std::mem::swap(&mut self.io_binding, &mut bucket.io_binding);
        std::mem::swap(&mut self.storage, &mut bucket.storage);
        std::mem::swap(&mut self.args, &mut bucket.args);
        if !keep {
            let old = self.recent.swap_remove(hit);
            self.spare.push((old.storage, old.args));
        }
        self.ready = true;
        // The newly current binding may hold values ONNX Runtime allocated in its last
        // run: bind those outputs afresh before the next run.
        self.allocated_fresh = false;
    }

    /// Keeps the current binding as the newest bucket, replacing it with `stale` (a bucket
    /// whose values changed since), the oldest bucket when `recent` is full, or a new one;
    /// `true` when the oldest bucket was taken (its dims must leave too).
    fn shelve_current(&mut self, stale: Option<Bucket>) -> Result<bool> {
        let mut evicted = false;
        let fresh = match stale {
            Some(b) => b,
            None if self.recent.len() >= self.keep_dims => {
                evicted = true;
                self.recent.remove(0)
            }
            None => {
                let (storage, args) = match self.spare.pop() {
                    Some(parts) => parts,
                    None => self.parts(),
                };
                Bucket {
                    // SAFETY: the session pointer is live and `Core` holds a counted
                    // reference to the session for as long as this binding (kept in
                    // `recent` or current) exists.
                    io_binding: unsafe {
                        IoBinding::new(self.session.raw(), self.session.on_device())?
                    },
                    storage,
                    args,
                }
            }
        };
        self.recent.push(Bucket {
            io_binding: std::mem::replace(&mut self.io_binding, fresh.io_binding),
            storage: std::mem::replace(&mut self.storage, fresh.storage),
            args: std::mem::replace(&mut self.args, fresh.args),
        });
        Ok(evicted)
    }

    /// Keeps at most `n` buckets (dropping the oldest; their arrays go spare), and reserves
    /// the arrays `n` buckets need so that no later switch allocates.
    fn keep_buckets(&mut self, n: usize) {
        self.keep_dims = n;
        if self.recent.len() > n {
            let excess = self.recent.len() - n;
            for bucket in self.recent.drain(..excess) {
                self.spare.push((bucket.storage, bucket.args));
            }
        }
        self.recent.reserve(n);
        while self.recent.len() + self.spare.len() < n {
            let parts = self.parts();
            self.spare.push(parts);
        }
    }

    /// [`Error::MissingInput`] naming input `index`.
    #[cold]
    fn missing_input(&self, index: usize) -> Error {
        Error::MissingInput {
            input: self
                .input_names
                .get(index)
                .map_or_else(|| format!("#{index}"), |n| n.to_string_lossy().into_owned()),
        }
    }

    /// The error of a run after an input view gave an input new dims that the binding
    /// cannot derive its dims from.
    #[cold]
    fn dims_not_derivable() -> Error {
        Error::Dim {
            dim: "Dims".to_owned(),
            reason: "an input was given new dims through its view (`resize`, `set`, \
                     `fill_resized`), but the shapes of this binding's inputs do not \
                     determine all of its dims: give them with `set_dims`"
                .to_owned(),
        }
    }
}

/// Arrays for one binding of `inputs` inputs and `outputs` outputs.
fn parts(inputs: usize, outputs: usize) -> (Vec<StorageKey>, Box<RunArgs>) {
    (
        Vec::with_capacity(inputs + outputs),
        Box::new(RunArgs::with_capacity(inputs, outputs)),
    )
}

/// A binding made for other dims earlier, kept for switching back (see
/// [`Binding::set_dims`]; its dims are in [`Binding`]'s `recent`, at the same index).
#[derive(Debug)]
struct Bucket {
    io_binding: IoBinding,
    storage: Vec<StorageKey>,
    args: Box<RunArgs>,
}

/// Bindings of other dims a [`Binding`] keeps by default (see [`Binding::keep_recent_dims`]).
pub const DEFAULT_RECENT_DIMS: usize = 3;

/// What [`Binding`] remembers of an asynchronous run in flight.
#[derive(Debug, Clone, Copy)]
struct InFlight {
    /// The run's epoch ([`RunControl::epoch`]); once the control has moved past it, the
    /// run was abandoned (its stop requested) and only its completion is awaited.
    epoch: u64,
    /// Where it runs: ONNX Runtime's `RunAsync`, or a blocking run on ort-bind's worker
    /// threads (whose outputs are collected as a synchronous run's are).
    path: AsyncPath,
}

/// Where [`Binding::run_async`] runs a binding (see the [`run_async`](crate::run_async)
/// module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AsyncPath {
    /// ONNX Runtime's `RunAsync`, on a thread of the session's intra-op pool.
    RunAsync,
    /// The binding's ordinary blocking run, on one of ort-bind's worker threads.
    Worker,
}

impl<Io: BindingIo> std::fmt::Debug for Binding<Io> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Binding")
            .field("inputs", &self.core.input_names)
            .field("outputs", &self.core.output_names)
            .field("ready", &self.core.ready)
            .finish_non_exhaustive()
    }
}

impl<Io: BindingIo> Binding<Io> {
    /// Checks `session` against `Io`'s signature and binds every tensor of `io`.
    pub fn new(session: &Session, io: Io) -> Result<Self> {
        let mut bound = Self::new_unbound(session, io)?;
        bound.rebind()?;
        Ok(bound)
    }

    /// [`Binding::new`] without the first bind: the first run (or [`Binding::set_dims`]) binds.
    /// For an `Io` whose values are set one by one after it is made (the dynamic route's).
    pub(crate) fn new_unbound(session: &Session, io: Io) -> Result<Self> {
        Ok(Binding {
            core: Core::new(session, io.names(session)?)?,
            dims: None,
            recent: Vec::with_capacity(DEFAULT_RECENT_DIMS),
            io,
        })
    }

    fn rebind(&mut self) -> Result<()> {
        self.core.ready = false;
        self.core.binds += 1;
        self.core.args.clear();
        self.core.storage.clear();
        // An input this bind leaves out (an optional made absent, a value input emptied)
        // must not stay bound to the value an earlier bind gave it.
        self.core.io_binding.clear_inputs();
        let mut binder = Binder {
            io: Some(&mut self.core.io_binding),
            input_names: &self.core.input_names,
            output_names: &self.core.output_names,
            session: &self.core.session,
            args: &mut self.core.args,
            storage: Some(&mut self.core.storage),
            keys_only: false,
            host_memory: false,
            async_blocker: None,
            _io: PhantomData,
        };
        self.io.bind(&mut binder)?;
        self.core.async_blocker = binder.async_blocker;
        // Host memory bound to a device session is copied by ONNX Runtime during the run; the
        // run must finish those copies before the host may touch the memory again.
        self.core.async_run =
            !binder.host_memory && self.core.session.async_run_options().is_some();
        self.core.ready = true;
        self.core.allocated_fresh = true;
        Ok(())
    }

    fn rebind_allocated(&mut self) -> Result<()> {
        let mut binder = Binder {
            io: Some(&mut self.core.io_binding),
            input_names: &self.core.input_names,
            output_names: &self.core.output_names,
            session: &self.core.session,
            args: &mut self.core.args,
            storage: None,
            keys_only: false,
            host_memory: false,
            async_blocker: None,
            _io: PhantomData,
        };
        if let Err(e) = self.io.rebind_allocated(&mut binder) {
            self.core.ready = false;
            return Err(e);
        }
        self.core.allocated_fresh = true;
        Ok(())
    }

    /// Runs the model on the bound buffers. ort-bind's own code allocates nothing here.
    ///
    /// With the `cuda` feature, on a session built with `SessionOptions::cuda(&device)`
    /// and a binding whose tensors are all device memory, the run is only enqueued on the
    /// device's stream: it returns once ONNX Runtime has launched its work, and anything the
    /// caller enqueues on that stream afterwards sees the results (call the device's
    /// `synchronize` to wait on the host). When any bound tensor is host memory, the run
    /// returns only after the device has finished with it.
    ///
    /// A run stopped by a [`Terminator`] taken for it returns [`Error::Terminated`]; the
    /// binding stays usable.
    pub fn run(&mut self) -> Result<()> {
        self.settle();
        self.run_inner()
    }

    /// [`Binding::run`], terminated when it has not finished after `timeout`: it then returns
    /// [`Error::TimedOut`] (ONNX Runtime stops after the kernel it is in) and the binding
    /// stays usable. The timeout is kept by one process-wide timer thread; arming it costs
    /// a lock and a heap push, no thread and no allocation per run.
    pub fn run_with_timeout(&mut self, timeout: Duration) -> Result<()> {
        self.settle();
        // The timeout is for this run only: it names the run's epoch.
        if let Err(e) = deadline::schedule(&self.core.control, self.core.control.epoch(), timeout) {
            self.core.control.close();
            return Err(e);
        }
        self.run_inner()
    }

    /// A handle that stops this binding's next run (the one `run`, `run_with_timeout`,
    /// `run_async` or `run_async_with_timeout` starts next) from any thread, and no run
    /// after it: once that run has finished, the handle does nothing (see [`Terminator`]).
    /// Take one per run.
    ///
    /// A run still in flight for a leaked [`RunFuture`](crate::RunFuture) is stopped (the
    /// binding waits for it before its next use anyway), so the handle is for the next run.
    pub fn terminator(&self) -> Terminator {
        self.abandon_leaked();
        Terminator::new(Arc::clone(&self.core.control))
    }

    /// Ends every stop and timeout taken for this binding's runs so far (a [`Pool`]
    /// calls it when the binding comes back): none of them can stop a later run.
    ///
    /// [`Pool`]: crate::Pool
    pub(crate) fn end_stops(&self) {
        if !self.abandon_leaked() {
            self.core.control.close();
        }
    }

    /// Stops the asynchronous run in flight, whose future is being dropped, without waiting
    /// for it: [`Binding::settle`] (the binding's next use, or its drop) waits.
    pub(crate) fn abandon_in_flight(&mut self) {
        self.abandon_leaked();
        self.core.completion.forget_waker();
    }

    /// Whether an asynchronous run (of a dropped or leaked future) still uses the buffers,
    /// so that the binding's next use would wait for it.
    pub(crate) fn busy(&self) -> bool {
        self.core.in_flight.is_some() && self.core.completion.running()
    }

    /// Stops an asynchronous run still in flight whose future was leaked, and ends its
    /// epoch; `true` when there was one.
    fn abandon_leaked(&self) -> bool {
        self.core
            .in_flight
            .as_ref()
            .is_some_and(|f| self.core.control.abandon(f.epoch))
    }

    fn run_inner(&mut self) -> Result<()> {
        let result = self.run_sync();
        let reason = self.core.control.close();
        match (result, reason) {
            (Err(_), Some(reason)) => Err(reason.error()),
            (result, _) => result,
        }
    }

    /// Runs the model with the inputs `feeds` name reading other bindings' tensors in place
    /// (the edges of a chain of models): each is bound to a view of its source's memory in
    /// the input's own shape, made again only when the source's buffer or the input's dims
    /// changed. The source and the input must hold the same number of elements of the same
    /// type; a view of another shape is fine. Nothing is copied between the models.
    ///
    /// Once fed, a binding runs only this way ([`Binding::run`] is an error naming the fed
    /// input): the source may have moved its buffers since, and each fed run binds them as
    /// they are now. The binding's own buffer for a fed input is left unused.
    pub fn run_fed(&mut self, feeds: &[Feed<'_>]) -> Result<()> {
        self.settle();
        self.core.feeding = true;
        let result = self
            .prepare_run()
            .and_then(|()| self.apply_feeds(feeds))
            .and_then(|()| self.launch_run());
        self.core.feeding = false;
        let reason = self.core.control.close();
        match (result, reason) {
            (Err(_), Some(reason)) => Err(reason.error()),
            (result, _) => result,
        }
    }

    /// The address of the memory input `input` read in the last fed run (its source's),
    /// or `None` when it is not fed: how a test sees that nothing was copied.
    pub fn fed_address(&self, input: &str) -> Option<usize> {
        let index = self.index_of(false, input)?;
        self.core
            .fed
            .iter()
            .find(|f| f.input == index)
            .map(|f| f.key[1])
    }

    /// Binds each fed input to a view of its source (see [`Binding::run_fed`]); the
    /// binding is ready (`prepare_run`), so its own recorded values are current.
    fn apply_feeds(&mut self, feeds: &[Feed<'_>]) -> Result<()> {
        for feed in feeds {
            let input = self
                .index_of(false, feed.input)
                .ok_or_else(|| Error::Value {
                    value: feed.input.to_owned(),
                    problem: "the model has no input of this name to feed".into(),
                })?;
            let source = feed.from.fed_value(feed.output)?;
            let own = self
                .core
                .args
                .recorded(false, input)
                .filter(|p| !p.is_null())
                .ok_or_else(|| Error::Unsupported {
                    role: "input",
                    name: feed.input.to_owned(),
                    kind: "not a tensor the binding holds, so it cannot read another model's"
                        .to_owned(),
                })?;
            // SAFETY: `source` is a value the source binding holds (borrowed by `feeds` for
            // this call) and `own` this binding's value for the input, recorded by its last
            // bind (`prepare_run` made the binding ready): both are live tensor values.
            let ((elem, data, bytes), (own_elem, _, own_bytes)) =
                unsafe { (Value::memory_of(source)?, Value::memory_of(own)?) };
            if elem != own_elem || bytes != own_bytes {
                return Err(Error::Value {
                    value: feed.input.to_owned(),
                    problem: format!(
                        "fed from `{}` ({bytes} bytes of {}), but under this binding's dims it holds {own_bytes} bytes of {}: a fed input must hold exactly its source's elements",
                        feed.output,
                        crate::element::onnx_type_name(elem),
                        crate::element::onnx_type_name(own_elem),
                    ),
                });
            }
            let key = [source.addr(), data, bytes, own.addr()];
            let core = &mut self.core;
            let at = core.fed.iter().position(|f| f.input == input);
            let at = match at {
                Some(at) if core.fed[at].key == key => at,
                _ => {
                    let mut dims = Vec::new();
                    // SAFETY: as above, both values are live; the view's memory (the
                    // source's) is read only by fed runs, each of which first binds the
                    // source's buffer as it is then (a plain run of a fed binding is
                    // refused in `check_inputs`), so it is never used after it moved.
                    let value = unsafe {
                        Value::dims_of(own, &mut dims)?;
                        Value::view_of(source, Some(&dims))?
                    };
                    let fed = Fed { input, key, value };
                    match at {
                        Some(at) => {
                            core.fed[at] = fed;
                            at
                        }
                        None => {
                            core.fed.push(fed);
                            core.fed.len() - 1
                        }
                    }
                }
            };
            core.io_binding
                .bind_input(&core.input_names[input], &core.fed[at].value)?;
        }
        Ok(())
    }

    /// The value this binding holds for `name` (an output, else an input), for a binding
    /// that reads it ([`Feed`]): refused while the binding's tensors may have moved since
    /// its last bind (a run brings it up to date).
    pub(crate) fn source_value(&self, name: &str) -> Result<*const ort_sys::OrtValue> {
        let (output, index) = match self.index_of(true, name) {
            Some(index) => (true, index),
            None => (
                false,
                self.index_of(false, name).ok_or_else(|| Error::Value {
                    value: name.to_owned(),
                    problem: "the model feeding another has no tensor of this name".into(),
                })?,
            ),
        };
        if !self.core.ready || self.core.inputs_open || self.core.resized {
            return Err(Error::Value {
                value: name.to_owned(),
                problem:
                    "the model feeding another changed its buffers since its last run: run it first"
                        .into(),
            });
        }
        self.recorded_tensor(output, index)
    }

    /// The value of the tensor this binding holds for input (`output == false`) or output
    /// `index`, as its last bind recorded it; an output ONNX Runtime allocates has none.
    fn recorded_tensor(&self, output: bool, index: usize) -> Result<*const ort_sys::OrtValue> {
        self.core
            .args
            .recorded(output, index)
            .filter(|p| !p.is_null())
            .ok_or_else(|| {
                let names = if output {
                    &self.core.output_names
                } else {
                    &self.core.input_names
                };
                Error::Unsupported {
                    role: if output { "output" } else { "input" },
                    name: names
                        .get(index)
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                    kind: "a value ONNX Runtime allocates, with no buffer of the binding to share (only tensors the binding holds can feed another model)".to_owned(),
                }
            })
    }

    /// Whether an input view gave an input new dims (`resize`, `set` or `fill_resized` on
    /// `inputs()`) that the binding has not followed yet: it follows them at the next run
    /// (dims derived from the inputs) or [`Binding::set_dims`] (which replaces them).
    pub fn inputs_resized(&mut self) -> bool {
        if std::mem::take(&mut self.core.inputs_open) && self.io.take_resized() {
            self.core.resized = true;
        }
        self.core.resized
    }

    /// After an input view gave an input new dims: the dims the inputs now have
    /// ([`BindingIo::dims_of_inputs`]), everything else resized to them, bound again. Until
    /// it succeeds (inputs that disagree, say) every run tries again.
    fn follow_resized_inputs(&mut self) -> Result<()> {
        if !self.inputs_resized() {
            return Ok(());
        }
        let dims = match self.io.dims_of_inputs() {
            Some(dims) => dims?,
            None => return Err(Core::dims_not_derivable()),
        };
        self.core.resized = false;
        if self.core.ready && self.dims.as_ref() == Some(&dims) {
            // Back to the dims it is bound for: nothing to do unless a value was made anew
            // meanwhile (a string tensor is, on every change).
            if !(self.storage_keys() && crate::tensor::same(&self.core.scratch, &self.core.storage))
            {
                self.rebind()?;
            }
            return Ok(());
        }
        self.set_dims(&dims)
    }

    /// [`Error::MissingInput`] when a value input has no value yet.
    fn check_inputs(&self) -> Result<()> {
        if let Some(fed) = self.core.fed.first()
            && !self.core.feeding
        {
            let name = self.core.input_names[fed.input].to_string_lossy();
            return Err(Error::Value {
                value: name.into_owned(),
                problem: "this input reads another model's tensor: run this binding with `run_fed` (its pipeline's `run`), which binds that tensor as it is now".into(),
            });
        }
        match self.io.missing_input() {
            None => Ok(()),
            Some(index) => Err(self.core.missing_input(index)),
        }
    }

    fn run_sync(&mut self) -> Result<()> {
        self.prepare_run()?;
        self.launch_run()
    }

    /// Everything before the run itself: inputs resized through their views followed,
    /// inputs checked, the binding made ready.
    fn prepare_run(&mut self) -> Result<()> {
        self.follow_resized_inputs()?;
        self.check_inputs()?;
        if !self.core.ready {
            self.rebind()?;
        } else if Io::HAS_ALLOCATED_OUTPUTS && !self.core.allocated_fresh {
            self.rebind_allocated()?;
        }
        Ok(())
    }

    /// Runs the prepared binding and hands ONNX Runtime's allocated outputs to the `Io`.
    fn launch_run(&mut self) -> Result<()> {
        self.core.allocated_fresh = false;
        let options = self.core.control.options(self.core.async_run);
        if let Err(e) = self.core.io_binding.run_with(Some(options)) {
            // No result of an earlier run stays readable as if it were this one's.
            self.io.clear_allocated();
            return Err(self.core.session.run_error(e));
        }
        if Io::HAS_ALLOCATED_OUTPUTS {
            let io = &mut self.io;
            let mut result = Ok(());
            self.core.io_binding.bound_outputs(|index, value| {
                if result.is_ok() {
                    result = io.store_output(index, OutputValue(value));
                }
            })?;
            result?;
        }
        Ok(())
    }

    /// Changes the symbolic dims: tensors are resized (capacity reused; a tensor grows
    /// with one allocation when it must) and rebound.
    ///
    /// Shape buckets: the binding keeps the ONNX Runtime bindings of the last few dims it
    /// was set to ([`Binding::keep_recent_dims`]; 3 by default), each still bound to values
    /// of its dims over the same buffers. Switching back to one of them, within capacity,
    /// makes no ONNX Runtime call and allocates nothing: a run after such a switch costs
    /// about what a run of a fixed binding costs. Setting the dims the binding already has
    /// does nothing.
    pub fn set_dims(&mut self, dims: &Io::Dims) -> Result<()> {
        self.settle();
        if self.inputs_resized() {
            // An input view changed an input since the last bind: these dims replace
            // its change, and the binding as it is may point at memory that moved.
            self.core.resized = false;
            self.core.ready = false;
        }
        if self.core.ready && self.dims.as_ref() == Some(dims) {
            return Ok(());
        }
        // The binding in `io_binding` is complete for `previous` only when `ready`.
        let previous = if self.core.ready {
            self.dims.take()
        } else {
            None
        };
        self.core.ready = false;
        // Outputs of the old dims are not outputs of the new ones.
        self.io.clear_allocated();
        self.dims = None;
        self.io.set_dims(dims)?;
        let mut stale = None;
        if let Some(hit) = self.recent.iter().position(|d| d == dims) {
            if self.storage_keys() && self.core.bucket_current(hit) {
                // Same values over the same memory as when this binding was made: use it.
                self.core.use_bucket(hit, previous.is_some());
                self.dims = Some(match previous {
                    Some(previous) => std::mem::replace(&mut self.recent[hit], previous),
                    None => self.recent.swap_remove(hit),
                });
                return Ok(());
            }
            // A value or buffer changed since (a buffer grew or was swapped, a value was
            // made again): reuse the parts, rebound below.
            self.recent.swap_remove(hit);
            stale = Some(self.core.recent.swap_remove(hit));
        }
        if let Some(previous) = previous
            && self.core.keep_dims > 0
        {
            if self.core.shelve_current(stale.take())? {
                self.recent.remove(0);
            }
            self.recent.push(previous);
        }
        if let Some(unused) = stale {
            self.core.spare.push((unused.storage, unused.args));
        }
        self.rebind()?;
        self.dims = Some(dims.clone());
        Ok(())
    }

    /// How many times the binding was bound in full: by [`Binding::new`], by
    /// [`Binding::modify`], and by [`Binding::set_dims`] when it kept no binding for the new
    /// dims (a switch back to a kept binding does not count). Counts what the shape
    /// buckets save; tests and diagnostics read it.
    pub fn binds(&self) -> u64 {
        self.core.binds
    }

    /// The dims the binding was last set to with [`Binding::set_dims`], or derived from
    /// inputs given new dims through their views (`None` before the first change, and after
    /// [`Binding::modify`] or a failed change).
    pub fn dims(&self) -> Option<&Io::Dims> {
        self.dims.as_ref()
    }

    /// How cheaply the binding switches to `dims`: 2 when it has them, 1 when it keeps a
    /// binding for them (a shape bucket), 0 otherwise.
    pub(crate) fn dims_score(&self, dims: &Io::Dims) -> u8 {
        if self.core.ready && self.dims.as_ref() == Some(dims) {
            2
        } else if self.recent.contains(dims) {
            1
        } else {
            0
        }
    }

    /// How many bindings of other dims to keep for switching back (shape buckets; see
    /// [`Binding::set_dims`]); 0 rebinds on every change. Each costs an ONNX Runtime binding
    /// object and one value per tensor (over the same buffers, no memory of its own).
    pub fn keep_recent_dims(&mut self, n: usize) {
        if self.recent.len() > n {
            self.recent.drain(..self.recent.len() - n);
        }
        self.recent.reserve(n);
        self.core.keep_buckets(n);
    }

    /// Collects the storage keys of the tensors as they are now into `scratch`, binding
    /// nothing; `false` when the `Io` refuses.
    fn storage_keys(&mut self) -> bool {
        self.core.scratch.clear();
        let mut binder = Binder {
            io: None,
            input_names: &self.core.input_names,
            output_names: &self.core.output_names,
            session: &self.core.session,
            // Not written: a keys-only binder records nothing.
            args: &mut self.core.args,
            storage: Some(&mut self.core.scratch),
            keys_only: true,
            host_memory: false,
            async_blocker: None,
            _io: PhantomData,
        };
        self.io.bind(&mut binder).is_ok()
    }

    /// Mutable views of the inputs, to fill them in place. With value inputs
    /// ([`BindingIo::HAS_VALUE_INPUTS`]: maps, sequences, optionals, which filling makes new
    /// ONNX Runtime values) the next run binds everything again.
    pub fn inputs(&mut self) -> Io::InputsMut<'_> {
        self.open_inputs();
        self.io.inputs_mut()
    }

    /// Shared views of the outputs, read in place.
    pub fn outputs(&self) -> Io::OutputsRef<'_> {
        self.wait_idle();
        self.io.outputs()
    }

    /// Inputs to fill and outputs of the last run at once (e.g. to feed an output back).
    pub fn split(&mut self) -> (Io::InputsMut<'_>, Io::OutputsRef<'_>)
    where
        Io: SplitIo,
    {
        self.open_inputs();
        self.io.split()
    }

    /// Before the inputs are handed out: the run in flight settles, and with value inputs
    /// (which filling replaces) the next run binds everything again.
    fn open_inputs(&mut self) {
        self.settle();
        self.core.inputs_open = true;
        if Io::HAS_VALUE_INPUTS {
            self.core.ready = false;
        }
    }

    /// Runs `f` with full access to the tensors (to swap or replace storage), then
    /// rebinds everything before the next run.
    pub fn modify<R>(&mut self, f: impl FnOnce(&mut Io) -> Result<R>) -> Result<R> {
        self.settle();
        // Everything is bound again below: an input view's change is followed by that.
        self.inputs_resized();
        self.core.resized = false;
        self.core.ready = false;
        // `f` may change anything, dims included.
        self.dims = None;
        let r = f(&mut self.io)?;
        self.rebind()?;
        Ok(r)
    }

    /// Binds `adapter`'s parameters as the model's overridable inputs of their names (no
    /// copy), or unbinds the adapter set before (`None`): the model's defaults again. The
    /// adapter is checked against [`BindingIo::OVERRIDABLE`] first (see
    /// [`Adapter`]); a misfit is [`Error::Adapter`] and leaves the binding as it was. The
    /// binding keeps a counted reference to the parameters, so they stay alive while bound.
    /// Everything is bound again before the next run. (Generated bindings wrap this in a
    /// guard that borrows the adapter: their `set_adapter`.)
    pub fn set_adapter(&mut self, adapter: Option<&Adapter>) -> Result<()> {
        let bound = adapter
            .map(|a| BoundAdapter::new(a, Io::OVERRIDABLE, Io::OVERRIDABLE_AXES))
            .transpose()?;
        self.modify(|io| io.set_adapter(bound))
    }

    /// [`Binding::modify`] without the rebind: `f` may change anything, and the next run
    /// (or [`Binding::set_dims`]) binds everything again. For an `Io` whose values are set one
    /// by one (the dynamic route's), which cannot be bound until every one is set.
    #[cfg(feature = "dynamic")]
    pub(crate) fn modify_later<R>(&mut self, f: impl FnOnce(&mut Io) -> Result<R>) -> Result<R> {
        self.settle();
        self.core.ready = false;
        self.dims = None;
        f(&mut self.io)
    }

    /// The tensors, read-only.
    pub fn io(&self) -> &Io {
        self.wait_idle();
        &self.io
    }

    /// A second value over the memory of input (`output == false`) or output `index` as
    /// bound now (nothing copied), for a pipeline that binds it into another model.
    /// Outputs ONNX Runtime allocates have no memory of this binding's to alias.
    ///
    /// # Safety
    /// The alias must not be used (bound or run) after this binding's tensors change
    /// storage or dims (any `&mut` use of the binding but `run`), or after the binding is
    /// dropped.
    pub(crate) unsafe fn alias(&self, output: bool, index: usize) -> Result<Value> {
        let raw = self.recorded_tensor(output, index)?;
        // SAFETY: `raw` is the value of a tensor this binding holds (recorded by its last
        // bind); the caller keeps the memory in place while the alias is used.
        unsafe { Value::alias_of(raw) }
    }

    /// The index of input (`output == false`) or output `name` in binding order.
    pub(crate) fn index_of(&self, output: bool, name: &str) -> Option<usize> {
        let names = if output {
            &self.core.output_names
        } else {
            &self.core.input_names
        };
        names.iter().position(|n| n.as_bytes() == name.as_bytes())
    }

    /// The session this binding runs.
    pub fn session(&self) -> &Session {
        &self.core.session
    }

    /// Where [`Binding::run_async`] runs this binding: ONNX Runtime's `RunAsync` needs an
    /// intra-op pool of at least 2 threads (it runs there), a CPU session (it cannot say
    /// on which device to allocate outputs) and outputs allocated on the `Cpu`; every other
    /// binding runs on ort-bind's worker threads.
    fn async_path(&self) -> AsyncPath {
        let pooled = match self.core.session.intra_threads() {
            Some(1) => false,
            // 0 or unset: ONNX Runtime starts one thread per core.
            Some(0) | None => crate::workers::cores() > 1,
            Some(_) => true,
        };
        #[cfg(feature = "cuda")]
        if self.core.session.cuda_device().is_some() {
            return AsyncPath::Worker;
        }
        if pooled && self.core.async_blocker.is_none() {
            AsyncPath::RunAsync
        } else {
            AsyncPath::Worker
        }
    }

    /// Starts an asynchronous run whose completion wakes `waker`.
    pub(crate) fn start_async(&mut self, waker: &Waker, timeout: Option<Duration>) -> Result<()> {
        self.settle();
        let started = self.start_async_inner(waker, timeout);
        if started.is_err() {
            // The run is over before it began: its stops and timeout end with it.
            self.core.control.close();
        }
        started
    }

    fn start_async_inner(&mut self, waker: &Waker, timeout: Option<Duration>) -> Result<()> {
        self.follow_resized_inputs()?;
        self.check_inputs()?;
        if !self.core.ready {
            self.rebind()?;
        }
        let epoch = self.core.control.epoch();
        self.core.completion.begin(Some(waker));
        let mut path = self.async_path();
        if path == AsyncPath::RunAsync {
            // SAFETY: until the completion fires, everything `run_async` reads stays alive
            // and untouched: the session (`self.core.session`), the run options
            // (`self.core.control`), the arrays of `self.core.args`, and the names
            // (`self.core.input_names`, `self.core.output_names`) and values (owned by `self.io`'s
            // tensors) recorded in them are owned by `self`, and every method of `self` that
            // could touch them, and `Drop`, first waits for the completion (`settle`,
            // `wait_idle`) because `in_flight` is set below. The future that started the
            // run borrows `self` mutably meanwhile.
            let started = unsafe {
                crate::sys::run_async(
                    self.core.session.raw(),
                    self.core.control.options(false),
                    &mut self.core.args,
                    Arc::clone(&self.core.completion),
                )
            };
            if started.is_err() {
                // ONNX Runtime refused to start it (e.g. it has no intra-op pool after
                // all): the worker threads run it instead.
                path = AsyncPath::Worker;
            }
        }
        if path == AsyncPath::Worker {
            self.start_on_worker()?;
        }
        self.core.in_flight = Some(InFlight { epoch, path });
        if let Some(timeout) = timeout
            && deadline::schedule(&self.core.control, epoch, timeout).is_err()
        {
            // No timer thread: stop the run rather than let it run unbounded.
            let _ = self.core.control.request(Reason::Terminated, epoch);
        }
        Ok(())
    }

    /// Hands the binding's blocking run to ort-bind's worker threads (the completion was
    /// begun); on error nothing runs and the completion is abandoned.
    fn start_on_worker(&mut self) -> Result<()> {
        if Io::HAS_ALLOCATED_OUTPUTS
            && !self.core.allocated_fresh
            && let Err(e) = self.rebind_allocated()
        {
            self.core.completion.abandon();
            return Err(e);
        }
        self.core.allocated_fresh = false;
        let options = self.core.control.options(self.core.async_run);
        // SAFETY: as for `run_async` above: until the completion fires, the binding
        // (`self.core.io_binding`, an ONNX Runtime object that stays where it is when `self`
        // moves), the session (`self.core.session`), the run options (`self.core.control`) and every
        // bound value and buffer (owned by `self.io`) are owned by `self`, and every method
        // of `self` that could touch them (`set_dims`, which swaps bindings, included), and
        // `Drop`, first waits for the completion (`settle`, `wait_idle`) because
        // `in_flight` is set by the caller; the job calls `complete` only after its run has
        // returned. The future borrows `self` mutably meanwhile.
        let run = match unsafe { self.core.io_binding.detach_run(options) } {
            Ok(run) => run,
            Err(e) => {
                self.core.completion.abandon();
                return Err(e);
            }
        };
        let job = crate::workers::Job {
            runs: [Some(run), None, None],
            completion: Arc::clone(&self.core.completion),
        };
        if let Err(e) = crate::workers::submit(job) {
            self.core.completion.abandon();
            return Err(e);
        }
        Ok(())
    }

    /// Collects the result of the asynchronous run that just completed: stores the outputs
    /// ONNX Runtime allocated and names a stop that was requested.
    pub(crate) fn finish_async(&mut self, result: Result<()>) -> Result<()> {
        let path = self.core.in_flight.take().map(|f| f.path);
        let reason = self.core.control.close();
        let result = match (result, reason) {
            (Err(_), Some(reason)) => Err(reason.error()),
            (result, _) => result.map_err(|e| self.core.session.run_error(e)),
        };
        match path {
            Some(AsyncPath::Worker) => self.collect_worker(result),
            _ => self.collect_async(result),
        }
    }

    /// Stores the outputs ONNX Runtime allocated for a run on a worker thread that ended
    /// with `result`, as [`Binding::run`] does after its run.
    fn collect_worker(&mut self, result: Result<()>) -> Result<()> {
        if let Err(e) = result {
            // No result of an earlier run stays readable as if it were this one's.
            self.io.clear_allocated();
            return Err(e);
        }
        if Io::HAS_ALLOCATED_OUTPUTS {
            let io = &mut self.io;
            let mut stored = Ok(());
            self.core.io_binding.bound_outputs(|index, value| {
                if stored.is_ok() {
                    stored = io.store_output(index, OutputValue(value));
                }
            })?;
            stored?;
        }
        Ok(())
    }

    /// Stores the outputs ONNX Runtime allocated for an asynchronous run that ended with
    /// `result`, and releases what it left in the run's arrays.
    fn collect_async(&mut self, result: Result<()>) -> Result<()> {
        let stored = if result.is_ok() && Io::HAS_ALLOCATED_OUTPUTS {
            let mut stored = Ok(());
            for pos in 0..self.core.args.output_count() {
                if let Some(value) = self.core.args.take_allocated(pos)
                    && stored.is_ok()
                {
                    stored = self.io.store_output(pos, OutputValue(value));
                }
            }
            stored
        } else {
            Ok(())
        };
        self.core.args.release_allocated();
        result.and(stored)
    }

    pub(crate) fn completion(&self) -> &Completion {
        &self.core.completion
    }

    /// Waits for an asynchronous run whose future was dropped or leaked: stops it (unless
    /// it was abandoned already), waits for ONNX Runtime's callback, and collects it (its
    /// result is discarded).
    pub(crate) fn settle(&mut self) {
        if let Some(InFlight { path, .. }) = self.core.in_flight {
            self.abandon_leaked();
            let result = self.core.completion.wait();
            self.core.in_flight = None;
            self.core.control.settled();
            let _ = match path {
                AsyncPath::RunAsync => self.collect_async(result),
                AsyncPath::Worker => self.collect_worker(result),
            };
        }
    }

    /// Blocks while an asynchronous run (of a leaked future) may still use the buffers.
    fn wait_idle(&self) {
        if self.core.in_flight.is_some() {
            self.core.completion.wait_idle();
        }
    }
}

impl<Io: BindingIo> Drop for Binding<Io> {
    fn drop(&mut self) {
        // ONNX Runtime must be done with the buffers before they are freed.
        self.settle();
    }
}

/// Gives inputs and outputs views at the same time (disjoint borrows).
pub trait SplitIo: BindingIo {
    /// Mutable input views and shared output views.
    fn split(&mut self) -> (Self::InputsMut<'_>, Self::OutputsRef<'_>);
}
