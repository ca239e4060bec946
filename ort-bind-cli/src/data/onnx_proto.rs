//! ONNX's protobuf messages for tensor data files (`.pb`): [`TensorProto`] with its payload
//! fields, and the [`SequenceProto`], [`MapProto`] and [`OptionalProto`] that hold other
//! values, declared for `prost` with the official field numbers of `onnx/onnx.proto`.
//! Only the fields the readers read are declared; prost skips the others.
//!
//! (The messages of a model's signature are `ort-bind-codegen`'s, read without prost: the
//! macros run that code in every user's build, and this module is the CLI's alone.)
//!
//! prost limits nesting to 100 messages, which bounds recursion through
//! `SequenceProto` (a sequence of sequences of ...).

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
