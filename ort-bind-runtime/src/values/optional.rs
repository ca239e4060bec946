//! Optionals: [`Optional<V>`] (`optional(tensor)`, `optional(sequence)`), read as
//! `Option<view>`.

use super::{ValueInputSlot, ValueOutputSlot, not_run, sealed};
use crate::error::Result;
use crate::sys::Value;

/// `optional(T)`: a value that may be absent, around the slot or input `V` of `T`
/// (`Optional<AllocatedOutput<f32, (Dyn,)>>`, `Optional<Sequence<f32>>`, ...).
///
/// As an output, [`Optional::get`] is `Ok(None)` when the run produced no value, so
/// reading it makes the caller handle absence; as an input, [`Optional::some`] binds the
/// inner value and [`Optional::none`] leaves the input without one (ONNX Runtime takes an
/// unbound optional input as absent).
#[derive(Debug)]
pub struct Optional<V> {
    inner: V,
    // Outputs: `None` until a run produced something. Inputs: always `Some`.
    present: Option<bool>,
}

impl<V> Optional<V> {
    /// An output slot around `inner` (the slot of the contained type); empty until a run.
    pub fn slot(inner: V) -> Self {
        Optional {
            inner,
            present: None,
        }
    }

    /// An input holding `inner`.
    pub fn some(inner: V) -> Self {
        Optional {
            inner,
            present: Some(true),
        }
    }

    /// An input without a value; `inner` is kept for [`Optional::set_present`].
    pub fn none(inner: V) -> Self {
        Optional {
            inner,
            present: Some(false),
        }
    }

    /// Whether an input has its value (a bound input must be bound again after a change).
    pub fn set_present(&mut self, present: bool) {
        self.present = Some(present);
    }

    /// Whether there is a value (`false` also for an output before a run).
    pub fn is_present(&self) -> bool {
        self.present == Some(true)
    }

    /// The inner slot or input, whether or not a value is present.
    pub fn inner(&self) -> &V {
        &self.inner
    }

    /// The inner slot or input, mutably.
    pub fn inner_mut(&mut self) -> &mut V {
        &mut self.inner
    }
}

impl<V: ValueOutputSlot> Optional<V> {
    /// The last run's value: `Ok(None)` when it produced none, [`Error::NotRun`](crate::Error::NotRun)
    /// before a successful run.
    pub fn get(&self) -> Result<Option<V::View<'_>>> {
        match self.present {
            None => Err(not_run(self.inner.name())),
            Some(false) => Ok(None),
            Some(true) => self.inner.view().map(Some),
        }
    }
}

impl<V: sealed::Sealed> sealed::Sealed for Optional<V> {}

impl<V: ValueOutputSlot> ValueOutputSlot for Optional<V> {
    type View<'a>
        = Option<V::View<'a>>
    where
        V: 'a;

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn view(&self) -> Result<Option<V::View<'_>>> {
        self.get()
    }

    fn clear(&mut self) {
        self.present = None;
        self.inner.clear();
    }

    fn accept(&mut self, value: Value) -> Result<()> {
        self.clear();
        if value.has_value()? {
            self.inner.accept(value)?;
            self.present = Some(true);
        } else {
            self.present = Some(false);
        }
        Ok(())
    }
}

impl<V: ValueInputSlot> ValueInputSlot for Optional<V> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn bound_value(&self) -> Result<Option<&Value>> {
        if self.present == Some(true) {
            self.inner.bound_value()
        } else {
            Ok(None)
        }
    }

    fn is_set(&self) -> bool {
        self.present != Some(true) || self.inner.is_set()
    }
}
