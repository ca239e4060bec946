//! Empty sequences of tensors, made by running a one-node model.
//!
//! # Why this exists
//!
//! ONNX Runtime's C API builds a sequence from its elements (`CreateValue` with
//! `ONNX_TYPE_SEQUENCE`) and takes the sequence's element type from the first of them, so
//! it refuses to make a sequence of none ("Number of values should be at least 1"). Models
//! do take empty sequences as inputs (ONNX's `test_loop13_seq` feeds an empty
//! `seq(tensor(float))` to a `Loop` that appends to it), and Python onnxruntime makes them
//! through its C++ internals, which a C API user cannot reach.
//!
//! The one way the public C API allows: ONNX's `SequenceEmpty` operator makes an empty
//! sequence of the element type its `dtype` attribute names. This module builds, in memory,
//! a model of that single node (no inputs, one output of type `seq(tensor(<elem>))`), loads
//! it into a session once per element type (cached for the process; one intra-op thread,
//! no spinning, no graph optimisation: there is nothing to optimise), and runs it whenever
//! an empty sequence is needed. Each request gets a value of its own: before every run the
//! output is bound to the host again, so ONNX Runtime allocates a new sequence rather than
//! reusing the one the previous caller holds.
//!
//! `SequenceEmpty` makes sequences of tensors only; an empty `seq(map(..))` or
//! `seq(seq(..))` stays out of reach of the C API, and asking for one is an error that
//! says so.
//!
//! # The model bytes
//!
//! The runtime has no protobuf dependency (only codegen decodes models), and the model
//! here needs eight fields, so a small encoder writes them by hand (protobuf's wire format:
//! a key `field << 3 | wire type`, then a varint or a length-prefixed payload):
//!
//! ```text
//! ModelProto     ir_version (1) = 7, opset_import (8) = { version (2) = 11 },
//!                graph (7)
//! GraphProto     node (1), name (2) = "empty", output (12)
//! NodeProto      output (2) = "seq", op_type (4) = "SequenceEmpty", attribute (5)
//! AttributeProto name (1) = "dtype", i (3) = <elem>, type (20) = INT (2)
//! ValueInfoProto name (1) = "seq", type (2)
//! TypeProto      sequence_type (4) = { elem_type (1) = TypeProto { tensor_type (1) =
//!                { elem_type (1) = <elem> } } }
//! ```
//!
//! `SequenceEmpty` exists since opset 11 and has not changed since, so the model imports
//! opset 11; IR version 7 is new enough for that opset (6 is the least) and old enough for
//! every ONNX Runtime this crate loads.

use std::collections::HashMap;
use std::ffi::CStr;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use ort_sys::ONNXTensorElementDataType as Onnx;

use crate::error::{Error, Result};
use crate::session::{Session, SessionOptions};
use crate::sys::{IoBinding, MemoryInfo, Value};

/// The name of the one graph output.
const OUTPUT: &CStr = c"seq";

/// A loaded `SequenceEmpty` model for one element type, and the binding that runs it.
struct Maker {
    // Declared before `session`: a binding is released before its session.
    binding: Mutex<IoBinding>,
    session: Session,
}

impl Maker {
    fn new(elem: Onnx) -> Result<Maker> {
        let options = SessionOptions::new()
            .intra_threads(1)
            .intra_spinning(false)
            .inter_threads(1)
            .optimization_level(0);
        let session = Session::from_memory(&model(elem), &options).map_err(|e| match e {
            Error::Ort { message, .. } => Error::Ort {
                context: format!(
                    "making an empty sequence of {}: loading the one-node `SequenceEmpty` \
                     model",
                    crate::element::onnx_type_name(elem)
                ),
                message,
            },
            other => other,
        })?;
        // SAFETY: the session pointer is live, and the binding is stored next to a counted
        // reference to the session (`session` field, dropped after `binding`).
        let binding = unsafe { IoBinding::new(session.raw(), session.on_device())? };
        Ok(Maker {
            binding: Mutex::new(binding),
            session,
        })
    }

    /// Runs the model once and takes its output: a new empty sequence.
    fn make(&self) -> Result<Value> {
        let mut binding = self.binding.lock().unwrap_or_else(PoisonError::into_inner);
        // Bound again before every run: the binding then holds no allocated value, so ONNX
        // Runtime allocates a new sequence instead of writing into the last caller's.
        binding.bind_output_to_device(OUTPUT, MemoryInfo::cpu()?)?;
        binding.run().map_err(|e| self.session.run_error(e))?;
        let mut out = None;
        binding.bound_outputs(|_, value| out = Some(value))?;
        // Release the binding's own reference to the value; only the caller holds it now.
        binding.bind_output_to_device(OUTPUT, MemoryInfo::cpu()?)?;
        out.ok_or_else(|| Error::Ort {
            context: "making an empty sequence".into(),
            message: "the `SequenceEmpty` model produced no output".into(),
        })
    }
}

/// The process's makers, one per element type code, created on first use.
fn makers() -> &'static Mutex<HashMap<i32, Arc<Maker>>> {
    static MAKERS: OnceLock<Mutex<HashMap<i32, Arc<Maker>>>> = OnceLock::new();
    MAKERS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A new, empty `seq(tensor(elem))` value that ONNX Runtime owns. The first call for an
/// element type loads a one-node model (15 ms measured here); later calls run it (about
/// 3 µs, as much as building a sequence of one small tensor): see
/// `tests/empty_sequences.rs`, `cost_of_one_empty_sequence`. Element types ONNX Runtime
/// has no `SequenceEmpty` kernel for (the narrow float8/int4/... types) are an
/// [`Error::Ort`] saying so (each call tries again; nothing is cached for them).
pub(crate) fn empty_sequence(elem: Onnx) -> Result<Value> {
    crate::library::init()?;
    let maker = {
        let mut map = makers().lock().unwrap_or_else(PoisonError::into_inner);
        match map.get(&(elem as i32)) {
            Some(m) => Arc::clone(m),
            None => {
                // Created under the lock: two first requests for one type load one session.
                let m = Arc::new(Maker::new(elem)?);
                map.insert(elem as i32, Arc::clone(&m));
                m
            }
        }
    };
    maker.make()
}

/// The serialised `ModelProto` of the graph `seq = SequenceEmpty<dtype = elem>()`.
fn model(elem: Onnx) -> Vec<u8> {
    let elem = elem as i32 as u64;
    let tensor_type = Msg::new().varint(1, elem);
    let element_type = Msg::new().message(1, tensor_type);
    let sequence_type = Msg::new().message(1, element_type);
    let output_type = Msg::new().message(4, sequence_type);
    let output = Msg::new().bytes(1, b"seq").message(2, output_type);
    let attribute = Msg::new().bytes(1, b"dtype").varint(3, elem).varint(20, 2);
    let node = Msg::new()
        .bytes(2, b"seq")
        .bytes(4, b"SequenceEmpty")
        .message(5, attribute);
    let graph = Msg::new()
        .message(1, node)
        .bytes(2, b"empty")
        .message(12, output);
    let opset = Msg::new().varint(2, 11);
    Msg::new()
        .varint(1, 7)
        .message(8, opset)
        .message(7, graph)
        .0
}

/// A protobuf message being written: fields in the order they are added.
struct Msg(Vec<u8>);

impl Msg {
    fn new() -> Msg {
        Msg(Vec::new())
    }

    fn raw_varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    /// Field `field` of wire type 0 (varint): integers and enums.
    fn varint(mut self, field: u64, v: u64) -> Msg {
        self.raw_varint(field << 3);
        self.raw_varint(v);
        self
    }

    /// Field `field` of wire type 2 (length-delimited): strings and bytes.
    fn bytes(mut self, field: u64, data: &[u8]) -> Msg {
        self.raw_varint(field << 3 | 2);
        self.raw_varint(data.len() as u64);
        self.0.extend_from_slice(data);
        self
    }

    /// Field `field` holding the embedded message `inner`.
    fn message(self, field: u64, inner: Msg) -> Msg {
        self.bytes(field, &inner.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_follow_the_wire_format() {
        let mut m = Msg::new();
        m.raw_varint(0);
        m.raw_varint(1);
        m.raw_varint(127);
        m.raw_varint(128);
        m.raw_varint(300);
        assert_eq!(m.0, [0x00, 0x01, 0x7f, 0x80, 0x01, 0xac, 0x02]);
    }

    #[test]
    fn fields_carry_their_keys_and_lengths() {
        // Field 1 varint 150 is the protobuf documentation's own example: 08 96 01.
        assert_eq!(Msg::new().varint(1, 150).0, [0x08, 0x96, 0x01]);
        // Field 2 string "testing": 12 07 74 65 73 74 69 6e 67.
        assert_eq!(
            Msg::new().bytes(2, b"testing").0,
            [0x12, 0x07, b't', b'e', b's', b't', b'i', b'n', b'g']
        );
        // Field 20 needs a two-byte key: (20 << 3) = 160 = a0 01.
        assert_eq!(Msg::new().varint(20, 2).0, [0xa0, 0x01, 0x02]);
    }

    #[test]
    fn the_model_starts_with_its_ir_version_and_opset() {
        let bytes = model(Onnx::ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT);
        // ir_version = 7, then opset_import { version = 11 }.
        assert_eq!(&bytes[..6], [0x08, 0x07, 0x42, 0x02, 0x10, 0x0b]);
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.contains("SequenceEmpty"));
        assert!(text.contains("dtype"));
    }
}
