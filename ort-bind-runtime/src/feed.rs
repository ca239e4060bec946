//! One model reading another's buffer: the edges of a chain of models
//! ([`Binding::run_fed`]). The downstream input is bound to a view of the upstream
//! tensor's memory in the input's own shape (the same elements; another shape is fine,
//! such as an image's rows read as crops), so nothing is copied between the models.

use std::fmt;

use crate::binding::{Binding, BindingIo};
use crate::error::Result;

/// An edge of a chain: the input `input` of the binding that runs
/// ([`Binding::run_fed`]) reads the tensor `output` of the binding `from` (one of its
/// outputs, or else one of its inputs), in place.
///
/// ```no_run
/// # use ort_bind_runtime::{Binding, BindingIo, Feed};
/// # fn chain<A: BindingIo, B: BindingIo>(detector: &mut Binding<A>, recognizer: &mut Binding<B>) -> ort_bind_runtime::Result<()> {
/// detector.run()?;
/// recognizer.run_fed(&[Feed::new(detector, "heatmap", "crops")])?;
/// # Ok(()) }
/// ```
#[derive(Clone, Copy)]
pub struct Feed<'a> {
    pub(crate) from: &'a dyn FeedSource,
    pub(crate) output: &'a str,
    pub(crate) input: &'a str,
}

impl<'a> Feed<'a> {
    /// `input` of the running binding reads `output` of `from`.
    pub fn new<U: BindingIo>(from: &'a Binding<U>, output: &'a str, input: &'a str) -> Self {
        Feed {
            from,
            output,
            input,
        }
    }
}

impl fmt::Debug for Feed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Feed")
            .field("output", &self.output)
            .field("input", &self.input)
            .finish()
    }
}

/// What a [`Feed`] reads from: a binding's bound tensors, by name.
pub(crate) trait FeedSource {
    /// The live value bound for `name` (an output, else an input), or why there is none.
    fn fed_value(&self, name: &str) -> Result<*const ort_sys::OrtValue>;
}

impl<U: BindingIo> FeedSource for Binding<U> {
    fn fed_value(&self, name: &str) -> Result<*const ort_sys::OrtValue> {
        self.source_value(name)
    }
}
