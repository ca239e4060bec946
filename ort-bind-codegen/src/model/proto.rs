//! The slice of `onnx.proto` that ort-bind reads, as hand-written `prost` messages: the
//! workspace's one declaration of ONNX's protobuf messages.
//!
//! Field numbers are the official ones from ONNX's `onnx/onnx.proto` (proto2). Only the
//! fields a reader reads are declared: prost skips every other field on the wire by
//! advancing past it.
//!
//! Two groups:
//! - the model's signature (`ModelProto` down to `TensorShapeProto`, crate-private), read
//!   by the decoder. Graph nodes' attributes, initializer payloads (`raw_data`,
//!   `float_data`, ...) and training data are never copied or even looked at: an
//!   initializer decodes as [`InitializerName`], which keeps only the `name`, all that is
//!   needed to tell initializers apart from real inputs; for models with external data
//!   this means the data files are never opened.
//! - tensor data files (`.pb`): [`TensorProto`] with its payload fields, and the
//!   `SequenceProto`, `MapProto` and `OptionalProto` that hold other values, public
//!   (through the hidden `ort_bind_codegen::onnx_proto`) for the CLI's readers of ONNX's
//!   test data. They are never part of decoding a model.
//!
//! Scalars are declared without proto2 presence (`Option`): an absent field reads as its
//! default, which is what the decoder wants everywhere. The `Dimension.value` oneof keeps
//! presence, so `dim_value: 0` is told apart from "neither set".
//!
//! Documentation strings are declared as `bytes` and converted lossily, so a stray
//! non-UTF-8 doc string does not make a model unreadable; names are `string`, so invalid
//! UTF-8 in a name is a decoding error.
//!
//! prost derives `Debug` for every message, and limits nesting to 100 levels, which bounds
//! recursion through `TypeProto` (sequence of sequence of ...).

/// `ModelProto`: the top-level message of an `.onnx` file.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ModelProto {
    /// `ir_version = 1`.
    #[prost(int64, tag = "1")]
    pub(crate) ir_version: i64,
    /// `producer_name = 2`.
    #[prost(string, tag = "2")]
    pub(crate) producer_name: String,
    /// `producer_version = 3`.
    #[prost(string, tag = "3")]
    pub(crate) producer_version: String,
    /// `doc_string = 6`.
    #[prost(bytes = "vec", tag = "6")]
    pub(crate) doc_string: Vec<u8>,
    /// `graph = 7`.
    #[prost(message, optional, tag = "7")]
    pub(crate) graph: Option<GraphProto>,
    /// `opset_import = 8`.
    #[prost(message, repeated, tag = "8")]
    pub(crate) opset_import: Vec<OperatorSetIdProto>,
    /// `metadata_props = 14`.
    #[prost(message, repeated, tag = "14")]
    pub(crate) metadata_props: Vec<StringStringEntryProto>,
}

/// `GraphProto`: the main graph. `value_info = 13` is skipped.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct GraphProto {
    /// `node = 1`: only the operator and its value names are decoded (attributes, which
    /// may hold tensors, are skipped).
    #[prost(message, repeated, tag = "1")]
    pub(crate) node: Vec<NodeProto>,
    /// `name = 2`.
    #[prost(string, tag = "2")]
    pub(crate) name: String,
    /// `initializer = 5`: only their names are decoded.
    #[prost(message, repeated, tag = "5")]
    pub(crate) initializer: Vec<InitializerName>,
    /// `doc_string = 10`.
    #[prost(bytes = "vec", tag = "10")]
    pub(crate) doc_string: Vec<u8>,
    /// `input = 11`.
    #[prost(message, repeated, tag = "11")]
    pub(crate) input: Vec<ValueInfoProto>,
    /// `output = 12`.
    #[prost(message, repeated, tag = "12")]
    pub(crate) output: Vec<ValueInfoProto>,
    /// `sparse_initializer = 15`.
    #[prost(message, repeated, tag = "15")]
    pub(crate) sparse_initializer: Vec<SparseTensorProto>,
}

/// `NodeProto`: one operator of the graph, as far as codegen reads it.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct NodeProto {
    /// `input = 1`.
    #[prost(string, repeated, tag = "1")]
    pub(crate) input: Vec<String>,
    /// `output = 2`.
    #[prost(string, repeated, tag = "2")]
    pub(crate) output: Vec<String>,
    /// `op_type = 4`.
    #[prost(string, tag = "4")]
    pub(crate) op_type: String,
    /// `domain = 7`.
    #[prost(string, tag = "7")]
    pub(crate) domain: String,
}

/// `ValueInfoProto`: a named, typed graph value.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ValueInfoProto {
    /// `name = 1`.
    #[prost(string, tag = "1")]
    pub(crate) name: String,
    /// `type = 2`.
    #[prost(message, optional, tag = "2")]
    pub(crate) r#type: Option<TypeProto>,
    /// `doc_string = 3`.
    #[prost(bytes = "vec", tag = "3")]
    pub(crate) doc_string: Vec<u8>,
}

/// `TypeProto`: the type of a value; `denotation = 6` is skipped.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TypeProto {
    /// The `value` oneof.
    #[prost(oneof = "type_proto::Value", tags = "1, 4, 5, 7, 8, 9")]
    pub(crate) value: Option<type_proto::Value>,
}

/// Nested messages of `TypeProto`.
pub(crate) mod type_proto {
    use super::{TensorShapeProto, TypeProto};

    /// `TypeProto.value`.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub(crate) enum Value {
        /// `tensor_type = 1`.
        #[prost(message, tag = "1")]
        Tensor(Tensor),
        /// `sequence_type = 4`.
        #[prost(message, tag = "4")]
        Sequence(Sequence),
        /// `map_type = 5`.
        #[prost(message, tag = "5")]
        Map(Map),
        /// `opaque_type = 7`.
        #[prost(message, tag = "7")]
        Opaque(Opaque),
        /// `sparse_tensor_type = 8`.
        #[prost(message, tag = "8")]
        SparseTensor(SparseTensor),
        /// `optional_type = 9`.
        #[prost(message, tag = "9")]
        Optional(Optional),
    }

    /// `TypeProto.Tensor`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Tensor {
        /// `elem_type = 1` (a `TensorProto.DataType` code).
        #[prost(int32, tag = "1")]
        pub(crate) elem_type: i32,
        /// `shape = 2`; absent means unknown rank.
        #[prost(message, optional, tag = "2")]
        pub(crate) shape: Option<TensorShapeProto>,
    }

    /// `TypeProto.Sequence`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Sequence {
        /// `elem_type = 1`.
        #[prost(message, optional, boxed, tag = "1")]
        pub(crate) elem_type: Option<Box<TypeProto>>,
    }

    /// `TypeProto.Map`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Map {
        /// `key_type = 1` (a `TensorProto.DataType` code).
        #[prost(int32, tag = "1")]
        pub(crate) key_type: i32,
        /// `value_type = 2`.
        #[prost(message, optional, boxed, tag = "2")]
        pub(crate) value_type: Option<Box<TypeProto>>,
    }

    /// `TypeProto.Optional`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Optional {
        /// `elem_type = 1`.
        #[prost(message, optional, boxed, tag = "1")]
        pub(crate) elem_type: Option<Box<TypeProto>>,
    }

    /// `TypeProto.SparseTensor`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct SparseTensor {
        /// `elem_type = 1`.
        #[prost(int32, tag = "1")]
        pub(crate) elem_type: i32,
        /// `shape = 2`.
        #[prost(message, optional, tag = "2")]
        pub(crate) shape: Option<TensorShapeProto>,
    }

    /// `TypeProto.Opaque`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Opaque {
        /// `domain = 1`.
        #[prost(string, tag = "1")]
        pub(crate) domain: String,
        /// `name = 2`.
        #[prost(string, tag = "2")]
        pub(crate) name: String,
    }
}

/// `TensorShapeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct TensorShapeProto {
    /// `dim = 1`.
    #[prost(message, repeated, tag = "1")]
    pub(crate) dim: Vec<tensor_shape_proto::Dimension>,
}

/// Nested messages of `TensorShapeProto`.
pub(crate) mod tensor_shape_proto {
    /// `TensorShapeProto.Dimension`; `denotation = 3` is skipped.
    #[derive(Clone, PartialEq, prost::Message)]
    pub(crate) struct Dimension {
        /// The `value` oneof; `None` when neither field is set.
        #[prost(oneof = "dimension::Value", tags = "1, 2")]
        pub(crate) value: Option<dimension::Value>,
    }

    /// Nested types of `Dimension`.
    pub(crate) mod dimension {
        /// `Dimension.value`.
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub(crate) enum Value {
            /// `dim_value = 1`.
            #[prost(int64, tag = "1")]
            DimValue(i64),
            /// `dim_param = 2`.
            #[prost(string, tag = "2")]
            DimParam(String),
        }
    }
}

/// `OperatorSetIdProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct OperatorSetIdProto {
    /// `domain = 1`.
    #[prost(string, tag = "1")]
    pub(crate) domain: String,
    /// `version = 2`.
    #[prost(int64, tag = "2")]
    pub(crate) version: i64,
}

/// `StringStringEntryProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct StringStringEntryProto {
    /// `key = 1`.
    #[prost(string, tag = "1")]
    pub(crate) key: String,
    /// `value = 2`.
    #[prost(string, tag = "2")]
    pub(crate) value: String,
}

/// A `TensorProto` as a model's initializer, reduced to its name: every payload field is
/// skipped unread (the data files' [`TensorProto`] declares them).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct InitializerName {
    /// `name = 8`.
    #[prost(string, tag = "8")]
    pub(crate) name: String,
}

/// `SparseTensorProto`, reduced to `values`, whose name is the initializer's name.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SparseTensorProto {
    /// `values = 1`.
    #[prost(message, optional, tag = "1")]
    pub(crate) values: Option<InitializerName>,
}

/// `TensorProto` of a tensor data file, with the fields ort-bind reads: shape, element
/// type, and the payload in `raw_data` or in the typed fields.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorProto {
    /// `dims = 1`.
    #[prost(int64, repeated, tag = "1")]
    pub dims: Vec<i64>,
    /// `data_type = 2` (a `TensorProto.DataType` code).
    #[prost(int32, tag = "2")]
    pub data_type: i32,
    /// `segment = 3`: only its presence is checked.
    #[prost(message, optional, tag = "3")]
    pub segment: Option<Segment>,
    /// `float_data = 4`.
    #[prost(float, repeated, tag = "4")]
    pub float_data: Vec<f32>,
    /// `int32_data = 5`.
    #[prost(int32, repeated, tag = "5")]
    pub int32_data: Vec<i32>,
    /// `string_data = 6`.
    #[prost(bytes = "vec", repeated, tag = "6")]
    pub string_data: Vec<Vec<u8>>,
    /// `int64_data = 7`.
    #[prost(int64, repeated, tag = "7")]
    pub int64_data: Vec<i64>,
    /// `name = 8`.
    #[prost(string, tag = "8")]
    pub name: String,
    /// `raw_data = 9`.
    #[prost(bytes = "vec", tag = "9")]
    pub raw_data: Vec<u8>,
    /// `double_data = 10`.
    #[prost(double, repeated, tag = "10")]
    pub double_data: Vec<f64>,
    /// `uint64_data = 11`.
    #[prost(uint64, repeated, tag = "11")]
    pub uint64_data: Vec<u64>,
    /// `data_location = 14` (`0` default, `1` external).
    #[prost(int32, tag = "14")]
    pub data_location: i32,
}

/// `TensorProto.Segment`: no fields read.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Segment {}

/// `SequenceProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SequenceProto {
    /// `name = 1`.
    #[prost(string, tag = "1")]
    pub name: String,
    /// `elem_type = 2`.
    #[prost(int32, tag = "2")]
    pub elem_type: i32,
    /// `tensor_values = 3`.
    #[prost(message, repeated, tag = "3")]
    pub tensor_values: Vec<TensorProto>,
    /// `sparse_tensor_values = 4`: only counted.
    #[prost(message, repeated, tag = "4")]
    pub sparse_tensor_values: Vec<Skipped>,
    /// `sequence_values = 5`.
    #[prost(message, repeated, tag = "5")]
    pub sequence_values: Vec<SequenceProto>,
    /// `map_values = 6`.
    #[prost(message, repeated, tag = "6")]
    pub map_values: Vec<MapProto>,
    /// `optional_values = 7`.
    #[prost(message, repeated, tag = "7")]
    pub optional_values: Vec<OptionalProto>,
}

/// `MapProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct MapProto {
    /// `name = 1`.
    #[prost(string, tag = "1")]
    pub name: String,
    /// `key_type = 2` (a `TensorProto.DataType`).
    #[prost(int32, tag = "2")]
    pub key_type: i32,
    /// `keys = 3` (integer keys).
    #[prost(int64, repeated, tag = "3")]
    pub keys: Vec<i64>,
    /// `string_keys = 4`.
    #[prost(bytes = "vec", repeated, tag = "4")]
    pub string_keys: Vec<Vec<u8>>,
    /// `values = 5`.
    #[prost(message, optional, boxed, tag = "5")]
    pub values: Option<Box<SequenceProto>>,
}

/// `OptionalProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OptionalProto {
    /// `name = 1`.
    #[prost(string, tag = "1")]
    pub name: String,
    /// `elem_type = 2`.
    #[prost(int32, tag = "2")]
    pub elem_type: i32,
    /// `tensor_value = 3`.
    #[prost(message, optional, tag = "3")]
    pub tensor_value: Option<TensorProto>,
    /// `sparse_tensor_value = 4`: only its presence is checked.
    #[prost(message, optional, tag = "4")]
    pub sparse_tensor_value: Option<Skipped>,
    /// `sequence_value = 5`.
    #[prost(message, optional, boxed, tag = "5")]
    pub sequence_value: Option<Box<SequenceProto>>,
    /// `map_value = 6`.
    #[prost(message, optional, boxed, tag = "6")]
    pub map_value: Option<Box<MapProto>>,
    /// `optional_value = 7`.
    #[prost(message, optional, boxed, tag = "7")]
    pub optional_value: Option<Box<OptionalProto>>,
}

/// A message whose fields are not read (sparse tensors in data files).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Skipped {}
