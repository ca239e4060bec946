//! ONNX `TensorProto` files (`.pb`): the serialized tensors ONNX's backend test data and
//! model zoos ship as `input_N.pb` / `output_N.pb`.
//!
//! The message is declared for `prost` with the official field numbers of `onnx/onnx.proto`
//! in [`onnx_proto`](super::onnx_proto). Payloads are read from `raw_data` (little-endian, fixed width) or from
//! the typed fields ONNX uses when `raw_data` is empty: `float_data` (float32),
//! `double_data` (float64), `int64_data` (int64), `uint64_data` (uint32, uint64) and
//! `int32_data` (every narrower type, float16/bfloat16 as their bit patterns, bool as 0/1).
//!
//! ONNX's narrow types (`float8e4m3fn`, `float8e4m3fnuz`, `float8e5m2`, `float8e5m2fnuz`,
//! `float8e8m0`, and the packed `int4`, `uint4`, `float4e2m1`, `int2`, `uint2`) are read
//! from `raw_data` (one byte per float8 value; for the packed types exactly
//! `count.div_ceil(per byte)` bytes, the first element in the lowest bits) or, when it is
//! empty, from `int32_data` as `onnx.helper.make_tensor` stores them: one entry per byte,
//! `0..=255` (a float8 value's bits, or one packed byte). They are written to `raw_data`.

use std::path::Path;

use super::onnx_proto::TensorProto;
use super::{DataError, element_count, read_file, write_file};
use ort_bind_elements::{ElementType, OTHER_ONNX_CODES};
use ort_bind_runtime::{
    DynValue, Float4E2M1x2, Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0,
    HostArray, HostArrayRef, HostData, HostDataRef, Int2x4, Int4x2, NumericType, Strings, UInt2x4,
    UInt4x2, bf16, f16,
};

/// The element type ort-bind binds of an ONNX `TensorProto.DataType` code (the shared
/// element table's; ONNX Runtime numbers three of them differently).
fn from_code(code: i32) -> Option<NumericType> {
    let ort = ElementType::from_onnx(code)?.ort_code();
    NumericType::ALL
        .iter()
        .copied()
        .find(|d| d.onnx() as i32 == ort)
}

/// Calls `$mac!` with `Variant: RustType,` for each of ONNX's narrow element types.
macro_rules! narrow_types {
    ($mac:ident) => {
        $mac! {
            F8E4M3FN: Float8E4M3FN,
            F8E4M3FNUZ: Float8E4M3FNUZ,
            F8E5M2: Float8E5M2,
            F8E5M2FNUZ: Float8E5M2FNUZ,
            F8E8M0: Float8E8M0,
            I4: Int4x2,
            U4: UInt4x2,
            F4E2M1: Float4E2M1x2,
            I2: Int2x4,
            U2: UInt2x4,
        }
    };
}

/// Whether `dtype` is one of ONNX's narrow types (one byte per value).
pub(crate) fn is_narrow(dtype: NumericType) -> bool {
    macro_rules! test {
        ($($variant:ident: $t:ident,)*) => {
            matches!(dtype, $(NumericType::$variant)|*)
        };
    }
    narrow_types!(test)
}

/// Values of a narrow type from their bytes (bit patterns, or packed bytes); `None` for a
/// wide type.
fn narrow_from_bytes(dtype: NumericType, bytes: impl Iterator<Item = u8>) -> Option<HostData> {
    macro_rules! arms {
        ($($variant:ident: $t:ident,)*) => {
            match dtype {
                $(NumericType::$variant => Some(HostData::$variant(bytes.map($t::from_bits).collect())),)*
                _ => None,
            }
        };
    }
    narrow_types!(arms)
}

/// The bytes of narrow-typed values; `None` for a wide type.
fn narrow_bytes(data: HostDataRef<'_>) -> Option<Vec<u8>> {
    macro_rules! arms {
        ($($variant:ident: $t:ident,)*) => {
            match data {
                $(HostDataRef::$variant(v) => Some(v.iter().map(|x| x.to_bits()).collect()),)*
                _ => None,
            }
        };
    }
    narrow_types!(arms)
}

/// Names of the codes ort-bind does not bind, for messages.
fn unbound_code_name(code: i32) -> &'static str {
    OTHER_ONNX_CODES
        .iter()
        .find(|(c, _)| *c == code)
        .map_or("unknown", |(_, name)| name)
}

/// The ONNX `TensorProto.DataType` code of `dtype`.
pub fn onnx_code(dtype: NumericType) -> i32 {
    ElementType::from_ort(dtype.onnx() as i32)
        .expect("every NumericType is in the element table")
        .onnx_code()
}

/// Reads a `TensorProto` file: the tensor's name (may be empty) and its values.
pub fn read(path: impl AsRef<Path>) -> Result<(String, HostArray), DataError> {
    let path = path.as_ref();
    decode(&read_file(path)?, &path.display().to_string())
}

/// Decodes a serialized `TensorProto` of numeric or bool elements; `origin` names the bytes
/// in errors (string tensors: [`decode_value`]).
pub fn decode(bytes: &[u8], origin: &str) -> Result<(String, HostArray), DataError> {
    let proto = <TensorProto as prost::Message>::decode(bytes).map_err(|e| DataError::Invalid {
        origin: origin.to_owned(),
        format: "ONNX TensorProto",
        detail: format!("protobuf decoding failed ({e})"),
    })?;
    array_from_proto(proto, origin)
}

/// Decodes a serialized `TensorProto` of any element type ort-bind binds, strings included.
pub fn decode_value(bytes: &[u8], origin: &str) -> Result<(String, DynValue), DataError> {
    let proto = <TensorProto as prost::Message>::decode(bytes).map_err(|e| DataError::Invalid {
        origin: origin.to_owned(),
        format: "ONNX TensorProto",
        detail: format!("protobuf decoding failed ({e})"),
    })?;
    let name = proto.name.clone();
    Ok((name, value_from_proto(proto, origin)?))
}

/// `TensorProto.DataType.STRING`.
pub(crate) const STRING_CODE: i32 = ElementType::String.onnx_code();

/// The value of a decoded `TensorProto`: a numeric tensor, or strings.
pub(crate) fn value_from_proto(proto: TensorProto, origin: &str) -> Result<DynValue, DataError> {
    if proto.data_type != STRING_CODE {
        return array_from_proto(proto, origin).map(|(_, a)| DynValue::Tensor(a));
    }
    let invalid = |detail: String| DataError::Invalid {
        origin: origin.to_owned(),
        format: "ONNX TensorProto",
        detail,
    };
    let dims = proto
        .dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| invalid(format!("negative dim {d}"))))
        .collect::<Result<Vec<usize>, _>>()?;
    let count = element_count(&dims).ok_or_else(|| {
        invalid(format!(
            "dims {dims:?} hold more elements than fit in memory"
        ))
    })?;
    if proto.string_data.len() != count {
        return Err(invalid(format!(
            "dims {dims:?} need {count} strings, the tensor holds {}",
            proto.string_data.len()
        )));
    }
    let mut items = Vec::with_capacity(count);
    for (i, bytes) in proto.string_data.iter().enumerate() {
        items.push(std::str::from_utf8(bytes).map_err(|e| {
            invalid(format!(
                "string {i} of tensor `{}` is not UTF-8 ({e})",
                proto.name
            ))
        })?);
    }
    let strings = Strings::from_strs(&dims, &items).map_err(|e| invalid(e.to_string()))?;
    Ok(DynValue::Strings(strings))
}

/// A `TensorProto` holding `strings`.
pub(crate) fn proto_of_strings(name: &str, strings: &Strings) -> TensorProto {
    TensorProto {
        dims: strings.dims().iter().map(|&d| d as i64).collect(),
        data_type: STRING_CODE,
        name: name.to_owned(),
        string_data: strings.iter().map(|s| s.as_bytes().to_vec()).collect(),
        ..TensorProto::default()
    }
}

/// The array of a decoded `TensorProto` of numeric or bool elements.
pub(crate) fn array_from_proto(
    proto: TensorProto,
    origin: &str,
) -> Result<(String, HostArray), DataError> {
    let invalid = |detail: String| DataError::Invalid {
        origin: origin.to_owned(),
        format: "ONNX TensorProto",
        detail,
    };
    let unsupported = |detail: String| DataError::Unsupported {
        origin: origin.to_owned(),
        detail,
    };
    if proto.data_type == STRING_CODE {
        return Err(unsupported(format!(
            "tensor `{}` holds strings where a numeric tensor is expected",
            proto.name
        )));
    }
    let dtype = from_code(proto.data_type).ok_or_else(|| {
        unsupported(format!(
            "tensor `{}` has element type {} (code {}), which ort-bind does not bind",
            proto.name,
            unbound_code_name(proto.data_type),
            proto.data_type
        ))
    })?;
    if proto.data_location == 1 {
        return Err(unsupported(format!(
            "tensor `{}` keeps its data in an external file, which this reader does not follow",
            proto.name
        )));
    }
    if proto.segment.is_some() {
        return Err(unsupported(format!(
            "tensor `{}` is one segment of a larger tensor",
            proto.name
        )));
    }
    let dims = proto
        .dims
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| invalid(format!("negative dim {d}"))))
        .collect::<Result<Vec<usize>, _>>()?;
    let count = element_count(&dims).ok_or_else(|| {
        invalid(format!(
            "dims {dims:?} hold more elements than fit in memory"
        ))
    })?;

    let data = if !proto.raw_data.is_empty() {
        from_raw(dtype, &proto.raw_data, count).map_err(invalid)?
    } else {
        from_typed(dtype, &proto).map_err(invalid)?
    };
    // Packed types hold `packing` elements per value.
    let values = count.div_ceil(dtype.packing());
    if data.len() != values {
        let packed = if dtype.packing() > 1 {
            format!(" ({count} {dtype} elements, {} to a byte)", dtype.packing())
        } else {
            String::new()
        };
        return Err(invalid(format!(
            "dims {dims:?} need {values} values{packed}, the tensor holds {}",
            data.len()
        )));
    }
    let array = HostArray::new(dims, data).map_err(|e| invalid(e.to_string()))?;
    Ok((proto.name, array))
}

/// Decodes little-endian `raw_data` holding `count` elements (for the packed types,
/// `count.div_ceil(packing)` bytes).
fn from_raw(dtype: NumericType, raw: &[u8], count: usize) -> Result<HostData, String> {
    let size = dtype.size();
    let values = count.div_ceil(dtype.packing());
    if values.checked_mul(size) != Some(raw.len()) {
        let what = if dtype.packing() > 1 {
            format!(
                "{count} {dtype} elements packed {} to a byte",
                dtype.packing()
            )
        } else {
            format!("{count} {dtype} values")
        };
        return Err(format!(
            "raw_data holds {} bytes where {what} need {}",
            raw.len(),
            values.saturating_mul(size)
        ));
    }
    if let Some(data) = narrow_from_bytes(dtype, raw.iter().copied()) {
        return Ok(data);
    }
    macro_rules! le {
        ($t:ty, $variant:ident) => {
            HostData::$variant(
                raw.chunks_exact(size_of::<$t>())
                    .map(|c| <$t>::from_le_bytes(c.try_into().expect("chunk of the type's size")))
                    .collect(),
            )
        };
    }
    Ok(match dtype {
        NumericType::F32 => le!(f32, F32),
        NumericType::F64 => le!(f64, F64),
        NumericType::I8 => le!(i8, I8),
        NumericType::I16 => le!(i16, I16),
        NumericType::I32 => le!(i32, I32),
        NumericType::I64 => le!(i64, I64),
        NumericType::U8 => le!(u8, U8),
        NumericType::U16 => le!(u16, U16),
        NumericType::U32 => le!(u32, U32),
        NumericType::U64 => le!(u64, U64),
        NumericType::F16 => HostData::F16(
            raw.chunks_exact(2)
                .map(|c| f16::from_le_bytes([c[0], c[1]]))
                .collect(),
        ),
        NumericType::BF16 => HostData::BF16(
            raw.chunks_exact(2)
                .map(|c| bf16::from_le_bytes([c[0], c[1]]))
                .collect(),
        ),
        NumericType::Bool => HostData::Bool(raw.iter().map(|&b| b != 0).collect()),
        _ => unreachable!("narrow types are decoded above"),
    })
}

/// Narrows the `int32_data` values into `T`, refusing values out of its range.
fn narrow<T: TryFrom<i32>>(values: &[i32], dtype: NumericType) -> Result<Vec<T>, String> {
    values
        .iter()
        .map(|&v| {
            T::try_from(v).map_err(|_| format!("int32_data value {v} is out of range for {dtype}"))
        })
        .collect()
}

/// Decodes the typed field ONNX uses for `dtype` when `raw_data` is empty.
fn from_typed(dtype: NumericType, p: &TensorProto) -> Result<HostData, String> {
    // Narrow types: one `int32_data` entry per byte (a float8 value, or a packed byte).
    if is_narrow(dtype) {
        let bytes = narrow::<u8>(&p.int32_data, dtype)?;
        if let Some(data) = narrow_from_bytes(dtype, bytes.into_iter()) {
            return Ok(data);
        }
    }
    Ok(match dtype {
        NumericType::F32 => HostData::F32(p.float_data.clone()),
        NumericType::F64 => HostData::F64(p.double_data.clone()),
        NumericType::I64 => HostData::I64(p.int64_data.clone()),
        NumericType::I32 => HostData::I32(p.int32_data.clone()),
        NumericType::I16 => HostData::I16(narrow(&p.int32_data, dtype)?),
        NumericType::I8 => HostData::I8(narrow(&p.int32_data, dtype)?),
        NumericType::U16 => HostData::U16(narrow(&p.int32_data, dtype)?),
        NumericType::U8 => HostData::U8(narrow(&p.int32_data, dtype)?),
        NumericType::Bool => HostData::Bool(
            narrow::<u8>(&p.int32_data, dtype)?
                .into_iter()
                .map(|b| b != 0)
                .collect(),
        ),
        NumericType::F16 => HostData::F16(
            narrow::<u16>(&p.int32_data, dtype)?
                .into_iter()
                .map(f16::from_bits)
                .collect(),
        ),
        NumericType::BF16 => HostData::BF16(
            narrow::<u16>(&p.int32_data, dtype)?
                .into_iter()
                .map(bf16::from_bits)
                .collect(),
        ),
        NumericType::U64 => HostData::U64(p.uint64_data.clone()),
        NumericType::U32 => HostData::U32(
            p.uint64_data
                .iter()
                .map(|&v| {
                    u32::try_from(v)
                        .map_err(|_| format!("uint64_data value {v} is out of range for uint32"))
                })
                .collect::<Result<_, _>>()?,
        ),
        _ => unreachable!("narrow types are decoded above"),
    })
}

/// Serializes `array` as a `TensorProto` named `name`, values in `raw_data`.
pub fn encode(name: &str, array: HostArrayRef<'_>) -> Vec<u8> {
    prost::Message::encode_to_vec(&proto_of_array(name, array))
}

/// A `TensorProto` named `name` holding `array`, values in `raw_data`.
pub(crate) fn proto_of_array(name: &str, array: HostArrayRef<'_>) -> TensorProto {
    let mut raw = Vec::with_capacity(array.data().len() * array.dtype().size());
    macro_rules! put {
        ($values:expr) => {
            for v in $values {
                raw.extend_from_slice(&v.to_le_bytes());
            }
        };
    }
    match array.data() {
        HostDataRef::F32(v) => put!(v),
        HostDataRef::F64(v) => put!(v),
        HostDataRef::F16(v) => put!(v),
        HostDataRef::BF16(v) => put!(v),
        HostDataRef::I8(v) => put!(v),
        HostDataRef::I16(v) => put!(v),
        HostDataRef::I32(v) => put!(v),
        HostDataRef::I64(v) => put!(v),
        HostDataRef::U8(v) => put!(v),
        HostDataRef::U16(v) => put!(v),
        HostDataRef::U32(v) => put!(v),
        HostDataRef::U64(v) => put!(v),
        HostDataRef::Bool(v) => raw.extend(v.iter().map(|&b| u8::from(b))),
        narrow => raw = narrow_bytes(narrow).expect("every wide type is matched above"),
    }
    TensorProto {
        dims: array.dims().iter().map(|&d| d as i64).collect(),
        data_type: onnx_code(array.dtype()),
        name: name.to_owned(),
        raw_data: raw,
        ..TensorProto::default()
    }
}

/// Writes `array` to `path` as a `TensorProto` named `name`.
pub fn write(path: impl AsRef<Path>, name: &str, array: HostArrayRef<'_>) -> Result<(), DataError> {
    write_file(path.as_ref(), &encode(name, array))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_data_round_trips_for_every_type() {
        let arrays = [
            HostArray::from_vec(vec![2, 2], vec![1.5f32, -2.0, 0.0, f32::INFINITY]).unwrap(),
            HostArray::from_vec(vec![3], vec![1i64, -2, i64::MAX]).unwrap(),
            HostArray::from_vec(vec![2], vec![true, false]).unwrap(),
            HostArray::from_vec(vec![], vec![f16::from_f32(0.5)]).unwrap(),
            HostArray::from_vec(vec![1, 2], vec![bf16::from_f32(-3.0), bf16::ONE]).unwrap(),
            HostArray::from_vec(vec![0, 4], Vec::<u16>::new()).unwrap(),
            HostArray::from_vec(vec![2], vec![u64::MAX, 7]).unwrap(),
        ];
        for a in arrays {
            let bytes = encode("t", a.view());
            let (name, back) = decode(&bytes, "mem").unwrap();
            assert_eq!(name, "t");
            assert_eq!(back, a);
        }
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// `TensorProto`s of 5 elements that onnx 1.23.2 wrote: `helper.make_tensor("t", type,
    /// [5], values, raw=False)` (values in `int32_data`), then `numpy_helper.from_array` of
    /// it (`raw_data`), and the elements as float32 (`ml_dtypes`' `astype`).
    const ONNX_WROTE: [(NumericType, &str, &str, [f64; 5]); 10] = [
        (
            NumericType::F8E4M3FN,
            "080510112a0638c2017e7f01420174",
            "080510114201744a0538c27e7f01",
            [1.0, -2.5, 448.0, f64::NAN, 0.001953125],
        ),
        (
            NumericType::F8E4M3FNUZ,
            "080510122a0740ca017f800101420174",
            "080510124201744a0540ca7f8001",
            [1.0, -2.5, 240.0, f64::NAN, 0.0009765625],
        ),
        (
            NumericType::F8E5M2,
            "080510132a063cc2017b7e01420174",
            "080510134201744a053cc27b7e01",
            [1.0, -3.0, 57344.0, f64::NAN, 1.52587890625e-05],
        ),
        (
            NumericType::F8E5M2FNUZ,
            "080510142a0740c6017f800101420174",
            "080510144201744a0540c67f8001",
            [1.0, -3.0, 57344.0, f64::NAN, 7.62939453125e-06],
        ),
        (
            NumericType::F8E8M0,
            "080510182a077f7e860101ff01420174",
            "080510184201744a057f7e8601ff",
            [1.0, 0.5, 128.0, 1.1754943508222875e-38, f64::NAN],
        ),
        (
            NumericType::I4,
            "080510162a05f101870103420174",
            "080510164201744a03f18703",
            [1.0, -1.0, 7.0, -8.0, 3.0],
        ),
        (
            NumericType::U4,
            "080510152a04f1010709420174",
            "080510154201744a03f10709",
            [1.0, 15.0, 7.0, 0.0, 9.0],
        ),
        (
            NumericType::F4E2M1,
            "080510172a059201f70103420174",
            "080510174201744a0392f703",
            [1.0, -0.5, 6.0, -6.0, 1.5],
        ),
        (
            NumericType::I2,
            "0805101a2a022d01420174",
            "0805101a4201744a022d01",
            [1.0, -1.0, -2.0, 0.0, 1.0],
        ),
        (
            NumericType::U2,
            "080510192a022d03420174",
            "080510194201744a022d03",
            [1.0, 3.0, 2.0, 0.0, 3.0],
        ),
    ];

    #[test]
    fn narrow_types_decode_what_onnx_wrote_and_round_trip() {
        // Every element type has its ONNX code, and the codes are distinct.
        let mut codes: Vec<i32> = NumericType::ALL.iter().map(|&d| onnx_code(d)).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), NumericType::ALL.len());
        assert_eq!(
            ONNX_WROTE.iter().filter(|(d, ..)| is_narrow(*d)).count(),
            10
        );
        for (dtype, typed, raw, want) in ONNX_WROTE {
            let (name, from_typed) = decode(&hex(typed), "typed.pb").unwrap();
            let (_, from_raw) = decode(&hex(raw), "raw.pb").unwrap();
            assert_eq!(name, "t");
            assert_eq!(from_typed, from_raw, "{dtype}");
            assert_eq!(from_raw.dtype(), dtype);
            assert_eq!(from_raw.dims(), &[5]);
            assert_eq!(from_raw.data().len(), 5usize.div_ceil(dtype.packing()));
            let got: Vec<f64> = (0..5)
                .map(|i| from_raw.view().data().get_f64(i).unwrap())
                .collect();
            for (g, w) in got.iter().zip(want) {
                assert!(g == &w || g.is_nan() && w.is_nan(), "{dtype}: {got:?}");
            }
            // Written back in `raw_data`, the message onnx writes (prost packs `dims`, onnx
            // does not: the same message either way).
            let ours = <TensorProto as prost::Message>::decode(&encode("t", from_raw.view())[..]);
            let onnx = <TensorProto as prost::Message>::decode(&hex(raw)[..]);
            assert_eq!(ours.unwrap(), onnx.unwrap(), "{dtype}");
        }
    }

    #[test]
    fn typed_fields_are_read() {
        let p = TensorProto {
            dims: vec![3],
            data_type: 3, // int8
            int32_data: vec![-1, 2, 127],
            ..TensorProto::default()
        };
        let (_, a) = decode(&prost::Message::encode_to_vec(&p), "mem").unwrap();
        assert_eq!(a.as_slice::<i8>(), Some(&[-1i8, 2, 127][..]));

        let p = TensorProto {
            dims: vec![2],
            data_type: 10, // float16 as bits
            int32_data: vec![0x3c00, 0xc000],
            ..TensorProto::default()
        };
        let (_, a) = decode(&prost::Message::encode_to_vec(&p), "mem").unwrap();
        assert_eq!(
            a.as_slice::<f16>(),
            Some(&[f16::ONE, f16::from_f32(-2.0)][..])
        );

        let p = TensorProto {
            dims: vec![1],
            data_type: 12, // uint32 in uint64_data
            uint64_data: vec![4_000_000_000],
            ..TensorProto::default()
        };
        let (_, a) = decode(&prost::Message::encode_to_vec(&p), "mem").unwrap();
        assert_eq!(a.as_slice::<u32>(), Some(&[4_000_000_000u32][..]));
    }

    #[test]
    fn bad_tensors_are_clear_errors() {
        let enc = |p: TensorProto| prost::Message::encode_to_vec(&p);
        let cases = [
            (
                enc(TensorProto {
                    dims: vec![2],
                    data_type: 1,
                    float_data: vec![1.0],
                    ..TensorProto::default()
                }),
                "need 2 values, the tensor holds 1",
            ),
            (
                enc(TensorProto {
                    dims: vec![2],
                    data_type: 1,
                    raw_data: vec![0; 7],
                    ..TensorProto::default()
                }),
                "raw_data holds 7 bytes",
            ),
            (
                enc(TensorProto {
                    dims: vec![1],
                    data_type: 8,
                    name: "s".into(),
                    string_data: vec![b"a".to_vec()],
                    ..TensorProto::default()
                }),
                "holds strings where a numeric tensor is expected",
            ),
            (
                enc(TensorProto {
                    dims: vec![1],
                    data_type: 14,
                    ..TensorProto::default()
                }),
                "element type complex64 (code 14), which ort-bind does not bind",
            ),
            (
                // 5 int4 elements pack into 3 bytes.
                enc(TensorProto {
                    dims: vec![5],
                    data_type: 22,
                    raw_data: vec![0x21, 0x43],
                    ..TensorProto::default()
                }),
                "raw_data holds 2 bytes where 5 int4 elements packed 2 to a byte need 3",
            ),
            (
                enc(TensorProto {
                    dims: vec![5],
                    data_type: 25,
                    raw_data: vec![0; 5],
                    ..TensorProto::default()
                }),
                "raw_data holds 5 bytes where 5 uint2 elements packed 4 to a byte need 2",
            ),
            (
                enc(TensorProto {
                    dims: vec![3],
                    data_type: 17,
                    raw_data: vec![0; 2],
                    ..TensorProto::default()
                }),
                "raw_data holds 2 bytes where 3 float8e4m3fn values need 3",
            ),
            (
                enc(TensorProto {
                    dims: vec![3],
                    data_type: 26,
                    int32_data: vec![0x21, 0x01],
                    ..TensorProto::default()
                }),
                "need 1 values (3 int2 elements, 4 to a byte), the tensor holds 2",
            ),
            (
                enc(TensorProto {
                    dims: vec![3],
                    data_type: 23,
                    int32_data: vec![0x21],
                    ..TensorProto::default()
                }),
                "need 2 values (3 float4e2m1 elements, 2 to a byte), the tensor holds 1",
            ),
            (
                enc(TensorProto {
                    dims: vec![1],
                    data_type: 24,
                    int32_data: vec![256],
                    ..TensorProto::default()
                }),
                "int32_data value 256 is out of range for float8e8m0",
            ),
            (
                enc(TensorProto {
                    dims: vec![2],
                    data_type: 22,
                    int32_data: vec![-1],
                    ..TensorProto::default()
                }),
                "int32_data value -1 is out of range for int4",
            ),
            (
                enc(TensorProto {
                    dims: vec![i64::MAX, i64::MAX],
                    data_type: 21,
                    raw_data: vec![0],
                    ..TensorProto::default()
                }),
                "more elements than fit",
            ),
            (
                enc(TensorProto {
                    dims: vec![-1],
                    data_type: 1,
                    ..TensorProto::default()
                }),
                "negative dim -1",
            ),
            (
                enc(TensorProto {
                    dims: vec![i64::MAX, i64::MAX],
                    data_type: 1,
                    ..TensorProto::default()
                }),
                "more elements than fit",
            ),
            (
                enc(TensorProto {
                    dims: vec![1],
                    data_type: 2,
                    int32_data: vec![300],
                    ..TensorProto::default()
                }),
                "300 is out of range for uint8",
            ),
            (
                enc(TensorProto {
                    dims: vec![1],
                    data_type: 1,
                    data_location: 1,
                    ..TensorProto::default()
                }),
                "external file",
            ),
            (vec![0xff, 0xff, 0xff], "protobuf decoding failed"),
        ];
        for (bytes, want) in cases {
            let err = decode(&bytes, "case.pb").unwrap_err().to_string();
            assert!(err.contains(want) && err.contains("case.pb"), "{err}");
        }
    }
}
