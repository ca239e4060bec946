//! The slice of `onnx.proto` that reading a model's signature needs, declared with
//! [`message!`](super::wire::message) (one line per field, as in the `.proto` file) and
//! read by [`wire`](super::wire).
//!
//! Field numbers are the official ones from ONNX's `onnx/onnx.proto` (proto2). Only the
//! fields the decoder reads are declared; every other field is skipped on the wire without
//! being copied. Graph nodes' attributes, initializer payloads (`raw_data`, `float_data`,
//! ...) and training data are never looked at: an initializer decodes as
//! [`InitializerName`], which keeps only the `name`, all that is needed to tell initializers
//! apart from real inputs; for models with external data the data files are never opened.
//! (Tensor data files, `.pb`, are the CLI's: `ort-bind-cli`'s `data::onnx_proto`.)
//!
//! Scalars are declared without proto2 presence: an absent field reads as its default,
//! which is what the decoder wants everywhere. The `Dimension.value` oneof keeps presence,
//! so `dim_value: 0` is told apart from "neither set".
//!
//! Documentation strings are declared as `bytes` and converted lossily, so a stray
//! non-UTF-8 doc string does not make a model unreadable; names are `string`, so invalid
//! UTF-8 in a name is a decoding error.

#[cfg(test)]
use super::wire::Writer;
use super::wire::{Message, Reader, Wire, WireError, message};

message! {
    /// `ModelProto`: the top-level message of an `.onnx` file.
    pub(crate) struct ModelProto = "ModelProto" {
        1 => ir_version: int64,
        2 => producer_name: string,
        3 => producer_version: string,
        6 => doc_string: bytes,
        7 => graph: message<GraphProto>,
        8 => opset_import: messages<OperatorSetIdProto>,
        14 => metadata_props: messages<StringStringEntryProto>,
    }
}

message! {
    /// `GraphProto`: the main graph. `value_info = 13` is skipped.
    pub(crate) struct GraphProto = "GraphProto" {
        /// Only the operator and its value names are decoded (attributes, which may hold
        /// tensors, are skipped).
        1 => node: messages<NodeProto>,
        2 => name: string,
        /// Names, element types and dims; data only when small (see [`SmallTensor`]).
        5 => initializer: messages<SmallTensor>,
        10 => doc_string: bytes,
        11 => input: messages<ValueInfoProto>,
        12 => output: messages<ValueInfoProto>,
        15 => sparse_initializer: messages<SparseTensorProto>,
    }
}

message! {
    /// `NodeProto`: one operator of the graph, as far as codegen reads it.
    pub(crate) struct NodeProto = "NodeProto" {
        1 => input: strings,
        2 => output: strings,
        3 => name: string,
        4 => op_type: string,
        /// What shape inference reads: numbers, small tensors and subgraphs.
        5 => attribute: messages<AttributeProto>,
        7 => domain: string,
    }
}

message! {
    /// `AttributeProto`, as far as shape inference reads it (`strings`, `tensors`,
    /// sparse tensors and type protos are skipped).
    pub(crate) struct AttributeProto = "AttributeProto" {
        1 => name: string,
        2 => f: float,
        3 => i: int64,
        4 => s: bytes,
        5 => t: message<SmallTensor>,
        6 => g: boxed<GraphProto>,
        7 => floats: floats,
        8 => ints: int64s,
        11 => graphs: messages<GraphProto>,
        20 => r#type: int32,
    }
}

/// How many bytes of tensor data are read: shapes, axes, pads, scales and `k` are a few
/// numbers; anything larger is a weight and is sought past.
pub(crate) const SMALL_DATA: u64 = 1024;

/// A `TensorProto` (an initializer, or a `Constant`'s value) read for shape inference: its
/// name, element type and dims always, its numbers only when they fit in [`SMALL_DATA`]
/// bytes (`large` says they did not). `string_data` and external data are never read.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SmallTensor {
    /// `dims = 1`.
    pub(crate) dims: Vec<i64>,
    /// `data_type = 2`: a `TensorProto.DataType` code.
    pub(crate) data_type: i32,
    /// `float_data = 4`.
    pub(crate) float_data: Vec<f32>,
    /// `int32_data = 5` (also holds narrower integer types and bool).
    pub(crate) int32_data: Vec<i64>,
    /// `int64_data = 7`.
    pub(crate) int64_data: Vec<i64>,
    /// `name = 8`.
    pub(crate) name: String,
    /// `raw_data = 9`.
    pub(crate) raw_data: Vec<u8>,
    /// `double_data = 10`.
    pub(crate) double_data: Vec<f64>,
    /// Some data field was past [`SMALL_DATA`] bytes (or stored externally) and was skipped.
    pub(crate) large: bool,
}

impl Message for SmallTensor {
    const NAME: &'static str = "TensorProto";

    fn merge_field(
        &mut self,
        number: u32,
        wire: Wire,
        r: &mut Reader<'_>,
    ) -> Result<(), WireError> {
        let within = |e: WireError, field| e.within(Self::NAME, field);
        match number {
            1 => r
                .int64s(wire, &mut self.dims)
                .map_err(|e| within(e, "dims")),
            2 => r
                .int32(wire, &mut self.data_type)
                .map_err(|e| within(e, "data_type")),
            4 => r
                .small(wire, SMALL_DATA, &mut self.large, |r, w| {
                    r.floats(w, &mut self.float_data)
                })
                .map_err(|e| within(e, "float_data")),
            5 => r
                .small(wire, SMALL_DATA, &mut self.large, |r, w| {
                    r.int64s(w, &mut self.int32_data)
                })
                .map_err(|e| within(e, "int32_data")),
            7 => r
                .small(wire, SMALL_DATA, &mut self.large, |r, w| {
                    r.int64s(w, &mut self.int64_data)
                })
                .map_err(|e| within(e, "int64_data")),
            8 => r
                .string(wire, &mut self.name)
                .map_err(|e| within(e, "name")),
            9 => r
                .small(wire, SMALL_DATA, &mut self.large, |r, w| {
                    r.bytes(w, &mut self.raw_data)
                })
                .map_err(|e| within(e, "raw_data")),
            10 => r
                .small(wire, SMALL_DATA, &mut self.large, |r, w| {
                    r.doubles(w, &mut self.double_data)
                })
                .map_err(|e| within(e, "double_data")),
            // `data_location = 14`: EXTERNAL (1) means the data is in another file.
            14 => {
                let mut location = 0;
                r.int32(wire, &mut location)
                    .map_err(|e| within(e, "data_location"))?;
                self.large |= location == 1;
                Ok(())
            }
            _ => r.skip(wire),
        }
    }

    #[cfg(test)]
    fn encode(&self, w: &mut Writer) {
        w.int64s(1, &self.dims);
        w.int32(2, &self.data_type);
        w.floats(4, &self.float_data);
        w.int64s(5, &self.int32_data);
        w.int64s(7, &self.int64_data);
        w.string(8, &self.name);
        w.bytes(9, &self.raw_data);
    }
}

message! {
    /// `ValueInfoProto`: a named, typed graph value.
    pub(crate) struct ValueInfoProto = "ValueInfoProto" {
        1 => name: string,
        2 => r#type: message<TypeProto>,
        3 => doc_string: bytes,
    }
}

/// `TypeProto`: the type of a value; `denotation = 6` is skipped.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TypeProto {
    /// The `value` oneof.
    pub(crate) value: Option<type_proto::Value>,
}

impl Message for TypeProto {
    const NAME: &'static str = "TypeProto";

    fn merge_field(
        &mut self,
        number: u32,
        wire: Wire,
        r: &mut Reader<'_>,
    ) -> Result<(), WireError> {
        use type_proto::Value;
        // A oneof member that appears again merges into the one already read; another
        // member replaces it.
        macro_rules! member {
            ($variant:ident, $field:literal) => {{
                if !matches!(self.value, Some(Value::$variant(_))) {
                    self.value = Some(Value::$variant(Default::default()));
                }
                let Some(Value::$variant(m)) = &mut self.value else {
                    unreachable!("set just above")
                };
                r.merge(wire, m).map_err(|e| e.within(Self::NAME, $field))
            }};
        }
        match number {
            1 => member!(Tensor, "tensor_type"),
            4 => member!(Sequence, "sequence_type"),
            5 => member!(Map, "map_type"),
            7 => member!(Opaque, "opaque_type"),
            8 => member!(SparseTensor, "sparse_tensor_type"),
            9 => member!(Optional, "optional_type"),
            _ => r.skip(wire),
        }
    }

    #[cfg(test)]
    fn encode(&self, w: &mut Writer) {
        use type_proto::Value;
        match &self.value {
            Some(Value::Tensor(m)) => w.present(1, m),
            Some(Value::Sequence(m)) => w.present(4, m),
            Some(Value::Map(m)) => w.present(5, m),
            Some(Value::Opaque(m)) => w.present(7, m),
            Some(Value::SparseTensor(m)) => w.present(8, m),
            Some(Value::Optional(m)) => w.present(9, m),
            None => {}
        }
    }
}

/// Nested messages of `TypeProto`.
pub(crate) mod type_proto {
    use super::super::wire::message;
    use super::{TensorShapeProto, TypeProto};

    /// `TypeProto.value`.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) enum Value {
        /// `tensor_type = 1`.
        Tensor(Tensor),
        /// `sequence_type = 4`.
        Sequence(Sequence),
        /// `map_type = 5`.
        Map(Map),
        /// `opaque_type = 7`.
        Opaque(Opaque),
        /// `sparse_tensor_type = 8`.
        SparseTensor(SparseTensor),
        /// `optional_type = 9`.
        Optional(Optional),
    }

    message! {
        /// `TypeProto.Tensor`.
        pub(crate) struct Tensor = "TypeProto.Tensor" {
            /// A `TensorProto.DataType` code.
            1 => elem_type: int32,
            /// Absent means unknown rank.
            2 => shape: message<TensorShapeProto>,
        }
    }

    message! {
        /// `TypeProto.Sequence`.
        pub(crate) struct Sequence = "TypeProto.Sequence" {
            1 => elem_type: boxed<TypeProto>,
        }
    }

    message! {
        /// `TypeProto.Map`.
        pub(crate) struct Map = "TypeProto.Map" {
            /// A `TensorProto.DataType` code.
            1 => key_type: int32,
            2 => value_type: boxed<TypeProto>,
        }
    }

    message! {
        /// `TypeProto.Optional`.
        pub(crate) struct Optional = "TypeProto.Optional" {
            1 => elem_type: boxed<TypeProto>,
        }
    }

    message! {
        /// `TypeProto.SparseTensor`.
        pub(crate) struct SparseTensor = "TypeProto.SparseTensor" {
            1 => elem_type: int32,
            2 => shape: message<TensorShapeProto>,
        }
    }

    message! {
        /// `TypeProto.Opaque`.
        pub(crate) struct Opaque = "TypeProto.Opaque" {
            1 => domain: string,
            2 => name: string,
        }
    }
}

message! {
    /// `TensorShapeProto`.
    pub(crate) struct TensorShapeProto = "TensorShapeProto" {
        1 => dim: messages<tensor_shape_proto::Dimension>,
    }
}

/// Nested messages of `TensorShapeProto`.
pub(crate) mod tensor_shape_proto {
    #[cfg(test)]
    use super::super::wire::Writer;
    use super::super::wire::{Message, Reader, Wire, WireError};

    /// `TensorShapeProto.Dimension`; `denotation = 3` is skipped.
    #[derive(Debug, Clone, Default, PartialEq)]
    pub(crate) struct Dimension {
        /// The `value` oneof; `None` when neither field is set.
        pub(crate) value: Option<dimension::Value>,
    }

    impl Message for Dimension {
        const NAME: &'static str = "TensorShapeProto.Dimension";

        fn merge_field(
            &mut self,
            number: u32,
            wire: Wire,
            r: &mut Reader<'_>,
        ) -> Result<(), WireError> {
            use dimension::Value;
            match number {
                1 => {
                    let mut v = 0;
                    r.int64(wire, &mut v)
                        .map_err(|e| e.within(Self::NAME, "dim_value"))?;
                    self.value = Some(Value::DimValue(v));
                    Ok(())
                }
                2 => {
                    let mut v = String::new();
                    r.string(wire, &mut v)
                        .map_err(|e| e.within(Self::NAME, "dim_param"))?;
                    self.value = Some(Value::DimParam(v));
                    Ok(())
                }
                _ => r.skip(wire),
            }
        }

        #[cfg(test)]
        fn encode(&self, w: &mut Writer) {
            use dimension::Value;
            match &self.value {
                // A oneof member is written even at its default value: it is present.
                Some(Value::DimValue(v)) => w.present_int64(1, *v),
                Some(Value::DimParam(v)) => w.present_string(2, v),
                None => {}
            }
        }
    }

    /// Nested types of `Dimension`.
    pub(crate) mod dimension {
        /// `Dimension.value`.
        #[derive(Debug, Clone, PartialEq)]
        pub(crate) enum Value {
            /// `dim_value = 1`.
            DimValue(i64),
            /// `dim_param = 2`.
            DimParam(String),
        }
    }
}

message! {
    /// `OperatorSetIdProto`.
    pub(crate) struct OperatorSetIdProto = "OperatorSetIdProto" {
        1 => domain: string,
        2 => version: int64,
    }
}

message! {
    /// `StringStringEntryProto`.
    pub(crate) struct StringStringEntryProto = "StringStringEntryProto" {
        1 => key: string,
        2 => value: string,
    }
}

message! {
    /// A `TensorProto` as a model's initializer, reduced to its name: every payload field
    /// is skipped unread.
    pub(crate) struct InitializerName = "TensorProto" {
        8 => name: string,
    }
}

message! {
    /// `SparseTensorProto`, reduced to `values`, whose name is the initializer's name.
    pub(crate) struct SparseTensorProto = "SparseTensorProto" {
        1 => values: message<InitializerName>,
    }
}
