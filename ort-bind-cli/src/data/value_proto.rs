//! ONNX `SequenceProto`, `MapProto` and `OptionalProto` files (`.pb`): the serialized
//! sequences, maps and optionals ONNX's backend test data holds for inputs and outputs of
//! those types.
//!
//! The messages are declared for `prost` with the field numbers of `onnx/onnx.proto` (only
//! the fields ort-bind reads) in [`onnx_proto`](super::onnx_proto). A `.pb` file does not say which message it holds: the
//! reader is told ([`ProtoKind`], from the model's declared type, as ONNX's own test runner
//! does).
//!
//! Decisions for malformed files, all errors ([`DataError::Invalid`]), never a panic:
//! values nested deeper than [`MAX_DEPTH`] levels; a map whose keys and values differ in
//! number; a map with a key twice (ONNX's Python helpers would keep the last value silently;
//! ort-bind refuses to guess); map values that are not scalars of one element type; an
//! optional whose declared element type contradicts the value it holds. An empty sequence
//! and an optional without a value decode (as `Sequence([])` and `Optional(None)`).

use super::onnx_proto::{MapProto, OptionalProto, SequenceProto, TensorProto};
use super::tensor_proto::{
    STRING_CODE, onnx_code, proto_of_array, proto_of_strings, value_from_proto,
};
use super::{DataError, read_file, write_file};
use ort_bind_runtime::{DynMap, DynValue, HostArray, Strings, ValueType};

/// Values nest at most this deep (a sequence of sequences of ... counts one per level);
/// deeper files are refused before anything is built from them. ONNX models nest a few
/// levels; `prost` itself stops at 100 nested messages.
pub const MAX_DEPTH: usize = 32;

/// `SequenceProto` / `OptionalProto` `DataType` codes.
const UNDEFINED: i32 = 0;
const TENSOR: i32 = 1;
const SPARSE_TENSOR: i32 = 2;
const SEQUENCE: i32 = 3;
const MAP: i32 = 4;
const OPTIONAL: i32 = 5;

/// Which ONNX message a `.pb` file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtoKind {
    /// `TensorProto` (numeric or string tensor).
    Tensor,
    /// `SequenceProto`.
    Sequence,
    /// `MapProto`.
    Map,
    /// `OptionalProto`.
    Optional,
}

impl ProtoKind {
    /// The message ONNX serialises a value of type `ty` as.
    pub fn of(ty: &ValueType) -> ProtoKind {
        match ty {
            ValueType::Tensor { .. } => ProtoKind::Tensor,
            ValueType::Sequence(_) => ProtoKind::Sequence,
            ValueType::Map { .. } => ProtoKind::Map,
            ValueType::Optional(_) => ProtoKind::Optional,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ProtoKind::Tensor => "ONNX TensorProto",
            ProtoKind::Sequence => "ONNX SequenceProto",
            ProtoKind::Map => "ONNX MapProto",
            ProtoKind::Optional => "ONNX OptionalProto",
        }
    }
}

/// Reads a `.pb` file holding the message `kind`.
pub fn read(path: impl AsRef<std::path::Path>, kind: ProtoKind) -> Result<DynValue, DataError> {
    let path = path.as_ref();
    decode(&read_file(path)?, &path.display().to_string(), kind)
}

/// Decodes a serialized message of `kind`; `origin` names the bytes in errors.
pub fn decode(bytes: &[u8], origin: &str, kind: ProtoKind) -> Result<DynValue, DataError> {
    let cx = Cx { origin, kind };
    let bad = |e: prost::DecodeError| cx.invalid(format!("protobuf decoding failed ({e})"));
    match kind {
        ProtoKind::Tensor => {
            let proto = <TensorProto as prost::Message>::decode(bytes).map_err(bad)?;
            value_from_proto(proto, origin)
        }
        ProtoKind::Sequence => {
            let proto = <SequenceProto as prost::Message>::decode(bytes).map_err(bad)?;
            cx.sequence(proto, 1)
        }
        ProtoKind::Map => {
            let proto = <MapProto as prost::Message>::decode(bytes).map_err(bad)?;
            cx.map(proto, 1)
        }
        ProtoKind::Optional => {
            let proto = <OptionalProto as prost::Message>::decode(bytes).map_err(bad)?;
            cx.optional(proto, 1)
        }
    }
}

struct Cx<'a> {
    origin: &'a str,
    kind: ProtoKind,
}

impl Cx<'_> {
    fn invalid(&self, detail: String) -> DataError {
        DataError::Invalid {
            origin: self.origin.to_owned(),
            format: self.kind.name(),
            detail,
        }
    }

    fn depth(&self, depth: usize) -> Result<(), DataError> {
        if depth > MAX_DEPTH {
            Err(self.invalid(format!("values nest deeper than {MAX_DEPTH} levels")))
        } else {
            Ok(())
        }
    }

    fn sequence(&self, p: SequenceProto, depth: usize) -> Result<DynValue, DataError> {
        self.depth(depth)?;
        if !p.sparse_tensor_values.is_empty() || p.elem_type == SPARSE_TENSOR {
            return Err(DataError::Unsupported {
                origin: self.origin.to_owned(),
                detail: "sequences of sparse tensors are not supported".into(),
            });
        }
        let filled = [
            !p.tensor_values.is_empty(),
            !p.sequence_values.is_empty(),
            !p.map_values.is_empty(),
            !p.optional_values.is_empty(),
        ];
        if filled.iter().filter(|&&f| f).count() > 1 {
            return Err(self.invalid(format!(
                "sequence `{}` mixes elements of different kinds",
                p.name
            )));
        }
        let declared = match p.elem_type {
            TENSOR => 0,
            SEQUENCE => 1,
            MAP => 2,
            OPTIONAL => 3,
            UNDEFINED => usize::MAX,
            other => {
                return Err(self.invalid(format!(
                    "sequence `{}` has unknown elem_type {other}",
                    p.name
                )));
            }
        };
        if let Some(kind) = filled.iter().position(|&f| f)
            && declared != usize::MAX
            && kind != declared
        {
            return Err(self.invalid(format!(
                "sequence `{}` declares elem_type {} but holds other elements",
                p.name, p.elem_type
            )));
        }
        let mut items = Vec::new();
        for t in p.tensor_values {
            items.push(value_from_proto(t, self.origin)?);
        }
        for s in p.sequence_values {
            items.push(self.sequence(s, depth + 1)?);
        }
        for m in p.map_values {
            items.push(self.map(m, depth + 1)?);
        }
        for o in p.optional_values {
            items.push(self.optional(o, depth + 1)?);
        }
        Ok(DynValue::Sequence(items))
    }

    fn map(&self, p: MapProto, depth: usize) -> Result<DynValue, DataError> {
        self.depth(depth)?;
        let keys = if p.key_type == STRING_CODE {
            if !p.keys.is_empty() {
                return Err(self.invalid(format!(
                    "map `{}` has string keys but also integer keys",
                    p.name
                )));
            }
            let mut items = Vec::with_capacity(p.string_keys.len());
            for (i, k) in p.string_keys.iter().enumerate() {
                items.push(std::str::from_utf8(k).map_err(|e| {
                    self.invalid(format!("key {i} of map `{}` is not UTF-8 ({e})", p.name))
                })?);
            }
            DynValue::Strings(Strings::from_iter_1d(items))
        } else {
            if !p.string_keys.is_empty() {
                return Err(self.invalid(format!(
                    "map `{}` has key_type {} but string keys",
                    p.name, p.key_type
                )));
            }
            integer_keys(&p.keys, p.key_type, self)?
        };
        let values = match p.values {
            Some(v) => self.column(*v, &p.name)?,
            None => {
                return Err(self.invalid(format!("map `{}` has no values", p.name)));
            }
        };
        DynMap::new(keys, values)
            .map(DynValue::Map)
            .map_err(|e| self.invalid(format!("map `{}`: {e}", p.name)))
    }

    /// A map's values (a sequence of scalar tensors) as one column.
    fn column(&self, p: SequenceProto, map: &str) -> Result<DynValue, DataError> {
        if !p.sequence_values.is_empty()
            || !p.map_values.is_empty()
            || !p.optional_values.is_empty()
        {
            return Err(DataError::Unsupported {
                origin: self.origin.to_owned(),
                detail: format!(
                    "map `{map}` has values that are not scalars; ONNX Runtime maps hold scalars"
                ),
            });
        }
        let n = p.tensor_values.len();
        let mut merged = TensorProto {
            dims: vec![n as i64],
            data_type: p.tensor_values.first().map_or(1, |t| t.data_type),
            ..TensorProto::default()
        };
        for (i, t) in p.tensor_values.into_iter().enumerate() {
            let count = t.dims.iter().try_fold(1i64, |n, &d| n.checked_mul(d));
            if t.data_type != merged.data_type || count != Some(1) {
                return Err(self.invalid(format!(
                    "value {i} of map `{map}` is not a scalar of the first value's type"
                )));
            }
            merged.float_data.extend(t.float_data);
            merged.int32_data.extend(t.int32_data);
            merged.string_data.extend(t.string_data);
            merged.int64_data.extend(t.int64_data);
            merged.raw_data.extend(t.raw_data);
            merged.double_data.extend(t.double_data);
            merged.uint64_data.extend(t.uint64_data);
        }
        value_from_proto(merged, self.origin)
    }

    fn optional(&self, p: OptionalProto, depth: usize) -> Result<DynValue, DataError> {
        self.depth(depth)?;
        if p.sparse_tensor_value.is_some() || p.elem_type == SPARSE_TENSOR {
            return Err(DataError::Unsupported {
                origin: self.origin.to_owned(),
                detail: "optional sparse tensors are not supported".into(),
            });
        }
        let present = [
            p.tensor_value.is_some(),
            p.sequence_value.is_some(),
            p.map_value.is_some(),
            p.optional_value.is_some(),
        ];
        if present.iter().filter(|&&f| f).count() > 1 {
            return Err(self.invalid(format!("optional `{}` holds more than one value", p.name)));
        }
        let declared = [TENSOR, SEQUENCE, MAP, OPTIONAL];
        if let Some(i) = present.iter().position(|&f| f)
            && p.elem_type != UNDEFINED
            && p.elem_type != declared[i]
        {
            return Err(self.invalid(format!(
                "optional `{}` declares elem_type {} but holds another kind of value",
                p.name, p.elem_type
            )));
        }
        let inner = if let Some(t) = p.tensor_value {
            Some(value_from_proto(t, self.origin)?)
        } else if let Some(s) = p.sequence_value {
            Some(self.sequence(*s, depth + 1)?)
        } else if let Some(m) = p.map_value {
            Some(self.map(*m, depth + 1)?)
        } else if let Some(o) = p.optional_value {
            Some(self.optional(*o, depth + 1)?)
        } else {
            None
        };
        Ok(DynValue::Optional(inner.map(Box::new)))
    }
}

/// Integer map keys (`MapProto.keys` is `int64` for every key type) as a column of
/// `key_type`, refusing keys out of its range.
fn integer_keys(keys: &[i64], key_type: i32, cx: &Cx<'_>) -> Result<DynValue, DataError> {
    let out_of_range = |k: i64| {
        cx.invalid(format!(
            "map key {k} is out of range for key_type {key_type}"
        ))
    };
    let mut proto = TensorProto {
        dims: vec![keys.len() as i64],
        data_type: key_type,
        ..TensorProto::default()
    };
    match key_type {
        // int64
        7 => proto.int64_data = keys.to_vec(),
        // int8, int16, int32, uint8, uint16: in `int32_data`
        2..=6 => {
            proto.int32_data = keys
                .iter()
                .map(|&k| i32::try_from(k).map_err(|_| out_of_range(k)))
                .collect::<Result<_, _>>()?;
        }
        // uint32, uint64: in `uint64_data` (uint64 keys are stored as their bits)
        12 | 13 => proto.uint64_data = keys.iter().map(|&k| k as u64).collect(),
        other => {
            return Err(cx.invalid(format!(
                "map key_type {other} is not an integer or string type"
            )));
        }
    }
    value_from_proto(proto, cx.origin)
}

/// Serializes `value` as the message ONNX uses for it (a tensor as `TensorProto`, ...),
/// named `name`.
pub fn encode(name: &str, value: &DynValue) -> Vec<u8> {
    match value {
        DynValue::Tensor(a) => prost::Message::encode_to_vec(&proto_of_array(name, a.view())),
        DynValue::Strings(s) => prost::Message::encode_to_vec(&proto_of_strings(name, s)),
        DynValue::Sequence(items) => prost::Message::encode_to_vec(&sequence_of(name, items)),
        DynValue::Map(m) => prost::Message::encode_to_vec(&map_of(name, m)),
        DynValue::Optional(v) => prost::Message::encode_to_vec(&optional_of(name, v.as_deref())),
    }
}

/// Writes `value` to `path` (see [`encode`]).
pub fn write(
    path: impl AsRef<std::path::Path>,
    name: &str,
    value: &DynValue,
) -> Result<(), DataError> {
    write_file(path.as_ref(), &encode(name, value))
}

fn tensor_of(value: &DynValue) -> Option<TensorProto> {
    match value {
        DynValue::Tensor(a) => Some(proto_of_array("", a.view())),
        DynValue::Strings(s) => Some(proto_of_strings("", s)),
        _ => None,
    }
}

fn sequence_of(name: &str, items: &[DynValue]) -> SequenceProto {
    let mut p = SequenceProto {
        name: name.to_owned(),
        elem_type: items.first().map_or(UNDEFINED, kind_code),
        ..SequenceProto::default()
    };
    for item in items {
        match item {
            DynValue::Tensor(_) | DynValue::Strings(_) => {
                p.tensor_values.extend(tensor_of(item));
            }
            DynValue::Sequence(inner) => p.sequence_values.push(sequence_of("", inner)),
            DynValue::Map(m) => p.map_values.push(map_of("", m)),
            DynValue::Optional(v) => p.optional_values.push(optional_of("", v.as_deref())),
        }
    }
    p
}

fn kind_code(value: &DynValue) -> i32 {
    match value {
        DynValue::Tensor(_) | DynValue::Strings(_) => TENSOR,
        DynValue::Sequence(_) => SEQUENCE,
        DynValue::Map(_) => MAP,
        DynValue::Optional(_) => OPTIONAL,
    }
}

fn map_of(name: &str, m: &DynMap) -> MapProto {
    let mut p = MapProto {
        name: name.to_owned(),
        ..MapProto::default()
    };
    match m.keys() {
        DynValue::Strings(s) => {
            p.key_type = STRING_CODE;
            p.string_keys = s.iter().map(|k| k.as_bytes().to_vec()).collect();
        }
        DynValue::Tensor(a) => {
            p.key_type = onnx_code(a.dtype());
            p.keys = (0..a.view().data().len())
                .filter_map(|i| key_as_i64(a, i))
                .collect();
        }
        _ => {}
    }
    let mut values = SequenceProto {
        elem_type: TENSOR,
        ..SequenceProto::default()
    };
    match m.values() {
        DynValue::Strings(s) => {
            values.tensor_values = s
                .iter()
                .map(|v| TensorProto {
                    data_type: STRING_CODE,
                    string_data: vec![v.as_bytes().to_vec()],
                    ..TensorProto::default()
                })
                .collect();
        }
        DynValue::Tensor(a) => {
            let whole = proto_of_array("", a.view());
            let size = a.dtype().size();
            values.tensor_values = whole
                .raw_data
                .chunks_exact(size)
                .map(|c| TensorProto {
                    data_type: whole.data_type,
                    raw_data: c.to_vec(),
                    ..TensorProto::default()
                })
                .collect();
        }
        _ => {}
    }
    p.values = Some(Box::new(values));
    p
}

/// Integer key `i` as `MapProto.keys` stores it (`uint64` as its bits).
fn key_as_i64(a: &HostArray, i: usize) -> Option<i64> {
    if let Some(v) = a.as_slice::<i64>() {
        return v.get(i).copied();
    }
    if let Some(v) = a.as_slice::<u64>() {
        return v.get(i).map(|&k| k as i64);
    }
    // Integers of at most 32 bits are exact as `f64`.
    a.view().data().get_f64(i).map(|k| k as i64)
}

fn optional_of(name: &str, value: Option<&DynValue>) -> OptionalProto {
    let mut p = OptionalProto {
        name: name.to_owned(),
        elem_type: value.map_or(UNDEFINED, kind_code),
        ..OptionalProto::default()
    };
    match value {
        None => {}
        Some(v @ (DynValue::Tensor(_) | DynValue::Strings(_))) => p.tensor_value = tensor_of(v),
        Some(DynValue::Sequence(items)) => {
            p.sequence_value = Some(Box::new(sequence_of("", items)))
        }
        Some(DynValue::Map(m)) => p.map_value = Some(Box::new(map_of("", m))),
        Some(DynValue::Optional(inner)) => {
            p.optional_value = Some(Box::new(optional_of("", inner.as_deref())));
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message as _;

    fn f32s(dims: &[usize], v: &[f32]) -> DynValue {
        DynValue::Tensor(HostArray::from_vec(dims.to_vec(), v.to_vec()).unwrap())
    }

    fn strs(items: &[&str]) -> DynValue {
        DynValue::Strings(Strings::from_strs(&[items.len()], items).unwrap())
    }

    #[test]
    fn every_kind_round_trips() {
        let map = DynMap::new(
            DynValue::Tensor(HostArray::from_vec(vec![2], vec![10i64, -3]).unwrap()),
            f32s(&[2], &[0.5, 0.25]),
        )
        .unwrap();
        let smap = DynMap::new(strs(&["a", "é"]), strs(&["x", "y"])).unwrap();
        let cases = [
            (ProtoKind::Tensor, strs(&["a", "", "ü\0z"])),
            (
                ProtoKind::Sequence,
                DynValue::Sequence(vec![f32s(&[2], &[1.0, 2.0]), f32s(&[0], &[])]),
            ),
            (ProtoKind::Sequence, DynValue::Sequence(vec![])),
            (
                ProtoKind::Sequence,
                DynValue::Sequence(vec![DynValue::Map(map.clone()), DynValue::Map(map.clone())]),
            ),
            (ProtoKind::Map, DynValue::Map(map.clone())),
            (ProtoKind::Map, DynValue::Map(smap)),
            (ProtoKind::Optional, DynValue::Optional(None)),
            (
                ProtoKind::Optional,
                DynValue::Optional(Some(Box::new(DynValue::Sequence(vec![strs(&["q"])])))),
            ),
            (
                ProtoKind::Optional,
                DynValue::Optional(Some(Box::new(f32s(&[1], &[3.0])))),
            ),
        ];
        for (kind, value) in cases {
            let bytes = encode("v", &value);
            let back = decode(&bytes, "mem", kind).unwrap();
            assert_eq!(back, value, "{kind:?}");
        }
    }

    #[test]
    fn reads_what_onnx_numpy_helper_writes() {
        // numpy_helper.from_dict({1: np.float32(0.5), 3: np.float32(2)}).SerializeToString()
        let bytes = [
            0x10, 0x07, 0x18, 0x01, 0x18, 0x03, 0x2a, 0x16, 0x10, 0x01, 0x1a, 0x08, 0x10, 0x01,
            0x4a, 0x04, 0x00, 0x00, 0x00, 0x3f, 0x1a, 0x08, 0x10, 0x01, 0x4a, 0x04, 0x00, 0x00,
            0x00, 0x40,
        ];
        let v = decode(&bytes, "mem", ProtoKind::Map).unwrap();
        let m = v.as_map().unwrap();
        assert_eq!(
            m.keys(),
            &DynValue::Tensor(HostArray::from_vec(vec![2], vec![1i64, 3]).unwrap())
        );
        assert_eq!(m.values(), &f32s(&[2], &[0.5, 2.0]));
    }

    fn nested_sequences(depth: usize) -> Vec<u8> {
        let mut p = SequenceProto {
            elem_type: TENSOR,
            ..SequenceProto::default()
        };
        for _ in 1..depth {
            p = SequenceProto {
                elem_type: SEQUENCE,
                sequence_values: vec![p],
                ..SequenceProto::default()
            };
        }
        p.encode_to_vec()
    }

    #[test]
    fn hostile_files_are_clear_errors() {
        // Nesting: accepted up to MAX_DEPTH, refused beyond (by us, then by prost).
        assert!(decode(&nested_sequences(MAX_DEPTH), "mem", ProtoKind::Sequence).is_ok());
        for depth in [MAX_DEPTH + 1, 99, 101, 1000] {
            let err = decode(&nested_sequences(depth), "mem", ProtoKind::Sequence)
                .unwrap_err()
                .to_string();
            assert!(
                err.contains("nest deeper") || err.contains("recursion limit"),
                "{depth}: {err}"
            );
        }
        let dup = MapProto {
            key_type: 7,
            keys: vec![1, 1],
            values: Some(Box::new(sequence_of(
                "",
                &[f32s(&[], &[1.0]), f32s(&[], &[2.0])],
            ))),
            ..MapProto::default()
        };
        let miscount = MapProto {
            key_type: 7,
            keys: vec![1, 2, 3],
            values: Some(Box::new(sequence_of("", &[f32s(&[], &[1.0])]))),
            ..MapProto::default()
        };
        let not_scalar = MapProto {
            key_type: 7,
            keys: vec![1],
            values: Some(Box::new(sequence_of("", &[f32s(&[2], &[1.0, 2.0])]))),
            ..MapProto::default()
        };
        let bad_key = MapProto {
            key_type: 3,
            keys: vec![1000],
            values: Some(Box::new(sequence_of("", &[f32s(&[], &[1.0])]))),
            ..MapProto::default()
        };
        let wrong_optional = OptionalProto {
            elem_type: MAP,
            tensor_value: Some(proto_of_array(
                "",
                HostArray::from_vec(vec![], vec![1.0f32]).unwrap().view(),
            )),
            ..OptionalProto::default()
        };
        // A string claiming 2^62 bytes: prost sees the buffer end first, allocates nothing.
        let mut huge = vec![0x22u8];
        let mut n: u64 = 1 << 62;
        while n >= 0x80 {
            huge.push((n as u8) | 0x80);
            n >>= 7;
        }
        huge.push(n as u8);
        let cases: Vec<(Vec<u8>, ProtoKind, &str)> = vec![
            (
                dup.encode_to_vec(),
                ProtoKind::Map,
                "the key 1 appears more than once",
            ),
            (
                miscount.encode_to_vec(),
                ProtoKind::Map,
                "3 keys and 1 values",
            ),
            (
                not_scalar.encode_to_vec(),
                ProtoKind::Map,
                "is not a scalar",
            ),
            (
                bad_key.encode_to_vec(),
                ProtoKind::Map,
                "out of range for int8",
            ),
            (
                MapProto {
                    key_type: 7,
                    ..MapProto::default()
                }
                .encode_to_vec(),
                ProtoKind::Map,
                "has no values",
            ),
            (
                MapProto::default().encode_to_vec(),
                ProtoKind::Map,
                "key_type 0 is not",
            ),
            (
                wrong_optional.encode_to_vec(),
                ProtoKind::Optional,
                "declares elem_type 4",
            ),
            (huge.clone(), ProtoKind::Map, "protobuf decoding failed"),
            (huge, ProtoKind::Tensor, "protobuf decoding failed"),
            (
                vec![0xff; 9],
                ProtoKind::Sequence,
                "protobuf decoding failed",
            ),
        ];
        for (bytes, kind, want) in cases {
            let err = decode(&bytes, "case.pb", kind).unwrap_err().to_string();
            assert!(
                err.contains(want) && err.contains("case.pb"),
                "{want}: {err}"
            );
        }
        // Empty sequence and absent optional decode.
        let empty = SequenceProto::default().encode_to_vec();
        assert_eq!(
            decode(&empty, "mem", ProtoKind::Sequence).unwrap(),
            DynValue::Sequence(vec![])
        );
        assert_eq!(
            decode(&[], "mem", ProtoKind::Optional).unwrap(),
            DynValue::Optional(None)
        );
    }
}
