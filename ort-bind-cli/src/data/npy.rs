//! numpy `.npy` files, through the `npyz` crate.
//!
//! Reads arrays of `bool`, `int8`..`int64`, `uint8`..`uint64`, `float16`, `float32` and
//! `float64` in either byte order and either memory order (Fortran-ordered arrays are
//! reordered to row-major), and string arrays (numpy `<U…`/`>U…`: fixed-width UTF-32, what
//! `np.array(["a", "b"])` is; [`decode_value`]). Object arrays (`dtype=object`, pickled) are
//! refused with an error saying how to save strings instead. Writes little-endian, row-major
//! arrays. numpy has no
//! `bfloat16`, so a `bfloat16` array is written as `float32` (exactly: every bfloat16 value
//! is a float32 value); [`write()`] says so in its return value. Nor has it ONNX's narrow
//! types (`float8e4m3fn`, ..., `int4`, `uint4`, `float4e2m1`, `int2`, `uint2`): writing one
//! is an error that says to use `.pb`, and [`read_value`](super::read_value) refuses a
//! `.npy` file for a model value of a narrow type the same way.

use std::path::Path;

use npyz::{TypeChar, WriterBuilder};

use super::{DataError, element_count, read_file, write_file};
use ort_bind_runtime::{
    DynValue, HostArray, HostArrayRef, HostData, HostDataRef, NumericType, Strings,
};

/// Reads a `.npy` file.
pub fn read(path: impl AsRef<Path>) -> Result<HostArray, DataError> {
    let path = path.as_ref();
    decode(&read_file(path)?, &path.display().to_string())
}

/// A `.npy` error about the bytes `origin` names.
fn invalid(origin: &str, detail: String) -> DataError {
    DataError::Invalid {
        origin: origin.to_owned(),
        format: ".npy",
        detail,
    }
}

/// A `.npy` file read from memory.
type NpyBytes<'b> = npyz::NpyFile<std::io::Cursor<&'b [u8]>>;

/// The parsed header of a `.npy` file, and where its data starts.
fn open<'b>(bytes: &'b [u8], origin: &str) -> Result<(NpyBytes<'b>, usize), DataError> {
    let mut cursor = std::io::Cursor::new(bytes);
    let header = npyz::NpyHeader::from_reader(&mut cursor)
        .map_err(|e| invalid(origin, format!("bad header ({e})")))?;
    let data_start = usize::try_from(cursor.position()).unwrap_or(bytes.len());
    Ok((npyz::NpyFile::with_header(header, cursor), data_start))
}

/// The dims of `file` and their element count, both checked to fit in memory.
fn shape<R: std::io::Read>(
    file: &npyz::NpyFile<R>,
    origin: &str,
) -> Result<(Vec<usize>, usize), DataError> {
    let dims = file
        .shape()
        .iter()
        .map(|&d| {
            usize::try_from(d)
                .map_err(|_| invalid(origin, format!("dim {d} does not fit in memory")))
        })
        .collect::<Result<Vec<usize>, _>>()?;
    let count = element_count(&dims).ok_or_else(|| {
        invalid(
            origin,
            format!("shape {dims:?} holds more elements than fit in memory"),
        )
    })?;
    Ok((dims, count))
}

/// Decodes the bytes of a `.npy` file; `origin` names them in errors.
pub fn decode(bytes: &[u8], origin: &str) -> Result<HostArray, DataError> {
    let invalid = |detail: String| invalid(origin, detail);
    let (file, data_start) = open(bytes, origin)?;
    let descr = file.dtype().descr();
    let npyz::DType::Plain(ts) = file.dtype() else {
        return Err(DataError::Unsupported {
            origin: origin.to_owned(),
            detail: format!("structured dtype {descr} is not a tensor element type"),
        });
    };
    let dtype = match (ts.type_char(), ts.size_field()) {
        (TypeChar::Bool, 1) => NumericType::Bool,
        (TypeChar::Int, 1) => NumericType::I8,
        (TypeChar::Int, 2) => NumericType::I16,
        (TypeChar::Int, 4) => NumericType::I32,
        (TypeChar::Int, 8) => NumericType::I64,
        (TypeChar::Uint, 1) => NumericType::U8,
        (TypeChar::Uint, 2) => NumericType::U16,
        (TypeChar::Uint, 4) => NumericType::U32,
        (TypeChar::Uint, 8) => NumericType::U64,
        (TypeChar::Float, 2) => NumericType::F16,
        (TypeChar::Float, 4) => NumericType::F32,
        (TypeChar::Float, 8) => NumericType::F64,
        _ => {
            return Err(DataError::Unsupported {
                origin: origin.to_owned(),
                detail: format!(
                    "numpy dtype `{descr}` is not an element type ort-bind binds \
                     (bool, int8..int64, uint8..uint64, float16, float32, float64)"
                ),
            });
        }
    };
    let (dims, count) = shape(&file, origin)?;
    // Refuse a header that claims more data than the file holds before reading any of it.
    let available = bytes.len().saturating_sub(data_start);
    if count
        .checked_mul(dtype.size())
        .is_none_or(|need| need > available)
    {
        return Err(invalid(format!(
            "shape {dims:?} needs {count} {dtype} values, the file holds {available} bytes of data"
        )));
    }
    let fortran = file.order() == npyz::Order::Fortran;
    let read_err = |e: std::io::Error| invalid(format!("cannot read the data ({e})"));
    macro_rules! values {
        ($variant:ident) => {
            HostData::$variant(reorder(file.into_vec().map_err(read_err)?, &dims, fortran))
        };
    }
    let data = match dtype {
        NumericType::Bool => values!(Bool),
        NumericType::I8 => values!(I8),
        NumericType::I16 => values!(I16),
        NumericType::I32 => values!(I32),
        NumericType::I64 => values!(I64),
        NumericType::U8 => values!(U8),
        NumericType::U16 => values!(U16),
        NumericType::U32 => values!(U32),
        NumericType::U64 => values!(U64),
        NumericType::F16 => values!(F16),
        NumericType::F32 => values!(F32),
        NumericType::F64 => values!(F64),
        other => unreachable!("no .npy type maps to {other}"),
    };
    HostArray::new(dims, data).map_err(|e| invalid(e.to_string()))
}

/// Reads a `.npy` file of numbers or strings.
pub fn read_value(path: impl AsRef<Path>) -> Result<DynValue, DataError> {
    let path = path.as_ref();
    decode_value(&read_file(path)?, &path.display().to_string())
}

/// Decodes the bytes of a `.npy` file of numbers or strings; `origin` names them in errors.
pub fn decode_value(bytes: &[u8], origin: &str) -> Result<DynValue, DataError> {
    let invalid = |detail: String| invalid(origin, detail);
    let (file, data_start) = open(bytes, origin)?;
    let ts = match file.dtype() {
        npyz::DType::Plain(ts) => ts,
        _ => return decode(bytes, origin).map(DynValue::Tensor),
    };
    match ts.type_char() {
        TypeChar::Object => Err(DataError::Unsupported {
            origin: origin.to_owned(),
            detail: "numpy object arrays (`dtype=object`, stored pickled) are not read; \
                     save strings as a unicode array: `np.save(path, arr.astype(str))`"
                .into(),
        }),
        TypeChar::UnicodeStr => {
            let width = usize::try_from(ts.size_field())
                .map_err(|_| invalid("string width does not fit in memory".into()))?;
            let (dims, count) = shape(&file, origin)?;
            let data = &bytes[data_start.min(bytes.len())..];
            let need = count.checked_mul(width).and_then(|n| n.checked_mul(4));
            if need.is_none_or(|need| need > data.len()) {
                return Err(invalid(format!(
                    "shape {dims:?} of {width}-character strings needs more than the {} bytes \
                     of data the file holds",
                    data.len()
                )));
            }
            let big = ts.endianness() == npyz::Endianness::Big;
            let cell_bytes = width
                .checked_mul(4)
                .ok_or_else(|| {
                    invalid(format!(
                        "strings of {width} characters do not fit in memory"
                    ))
                })?
                .max(4);
            let mut items = Vec::with_capacity(count);
            for (i, cell) in data.chunks_exact(cell_bytes).take(count).enumerate() {
                let mut s = String::with_capacity(width);
                for unit in cell.chunks_exact(4).take(width) {
                    let unit: [u8; 4] = unit.try_into().expect("chunks of 4 bytes");
                    let code = if big {
                        u32::from_be_bytes(unit)
                    } else {
                        u32::from_le_bytes(unit)
                    };
                    let c = char::from_u32(code).ok_or_else(|| {
                        invalid(format!(
                            "string {i} holds {code:#x}, which is not a character"
                        ))
                    })?;
                    s.push(c);
                }
                // numpy pads with NUL characters on the right (and so drops trailing NULs).
                let trimmed = s.trim_end_matches('\0').len();
                s.truncate(trimmed);
                items.push(s);
            }
            if width == 0 {
                items.resize(count, String::new());
            }
            let fortran = file.order() == npyz::Order::Fortran;
            let items = reorder(items, &dims, fortran);
            let strings = Strings::from_vec(&dims, items).map_err(|e| invalid(e.to_string()))?;
            Ok(DynValue::Strings(strings))
        }
        _ => decode(bytes, origin).map(DynValue::Tensor),
    }
}

/// Serializes strings as a numpy unicode array (`<U{longest}`, row-major).
pub fn encode_strings(strings: &Strings) -> Vec<u8> {
    let width = strings
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0)
        .max(1);
    let shape = match strings.dims() {
        [] => "()".to_owned(),
        [d] => format!("({d},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header =
        format!("{{'descr': '<U{width}', 'fortran_order': False, 'shape': {shape}, }}");
    // Magic (6) + version (2) + length (2) + header + '\n', padded to a multiple of 64.
    while !(10 + header.len() + 1).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for s in strings {
        let mut n = 0;
        for c in s.chars() {
            out.extend_from_slice(&u32::from(c).to_le_bytes());
            n += 1;
        }
        for _ in n..width {
            out.extend_from_slice(&[0; 4]);
        }
    }
    out
}

/// Writes `value` (a numeric tensor or strings) to `path` as `.npy`; returns a note when
/// values were widened (see [`encode`]). Sequences, maps and optionals have no `.npy` form.
pub fn write_value(path: impl AsRef<Path>, value: &DynValue) -> Result<Option<String>, DataError> {
    let path = path.as_ref();
    match value {
        DynValue::Tensor(a) => write(path, a.view()),
        DynValue::Strings(s) => write_file(path, &encode_strings(s)).map(|()| None),
        other => Err(DataError::Unsupported {
            origin: path.display().to_string(),
            detail: format!("{} has no .npy form; write it as .pb", other.describe()),
        }),
    }
}

/// Reorders column-major (Fortran-order) values to row-major; row-major values pass through.
fn reorder<T: Clone>(values: Vec<T>, dims: &[usize], fortran: bool) -> Vec<T> {
    if !fortran || dims.len() < 2 {
        return values;
    }
    let mut out = Vec::with_capacity(values.len());
    let mut index = vec![0usize; dims.len()];
    for _ in 0..values.len() {
        // Column-major offset of the row-major position `index`.
        let mut offset = 0;
        let mut stride = 1;
        for (&i, &d) in index.iter().zip(dims) {
            offset += i * stride;
            stride *= d;
        }
        out.push(values[offset].clone());
        for axis in (0..dims.len()).rev() {
            index[axis] += 1;
            if index[axis] < dims[axis] {
                break;
            }
            index[axis] = 0;
        }
    }
    out
}

/// Serializes `array` as a `.npy` file. Returns the bytes and, when the array's type has
/// no numpy equivalent and was widened (bfloat16 to float32), a note saying so.
///
/// # Errors
/// For ONNX's narrow types (`float8e4m3fn`, `int4`, ...), which numpy has no dtype for:
/// the message says to write them as `.pb`.
pub fn encode(array: HostArrayRef<'_>) -> Result<(Vec<u8>, Option<String>), String> {
    let shape: Vec<u64> = array.dims().iter().map(|&d| d as u64).collect();
    let mut out = Vec::new();
    let mut note = None;
    macro_rules! put {
        ($values:expr) => {{
            let mut writer = npyz::WriteOptions::new()
                .default_dtype()
                .shape(&shape)
                .writer(&mut out)
                .begin_nd()
                .expect("writing to memory cannot fail");
            writer
                .extend($values)
                .expect("writing to memory cannot fail");
            writer.finish().expect("writing to memory cannot fail");
        }};
    }
    match array.data() {
        HostDataRef::F32(v) => put!(v.iter().copied()),
        HostDataRef::F64(v) => put!(v.iter().copied()),
        HostDataRef::F16(v) => put!(v.iter().copied()),
        HostDataRef::BF16(v) => {
            note = Some("bfloat16 values written as float32 (numpy has no bfloat16)".to_owned());
            put!(v.iter().map(|x| x.to_f32()))
        }
        HostDataRef::I8(v) => put!(v.iter().copied()),
        HostDataRef::I16(v) => put!(v.iter().copied()),
        HostDataRef::I32(v) => put!(v.iter().copied()),
        HostDataRef::I64(v) => put!(v.iter().copied()),
        HostDataRef::U8(v) => put!(v.iter().copied()),
        HostDataRef::U16(v) => put!(v.iter().copied()),
        HostDataRef::U32(v) => put!(v.iter().copied()),
        HostDataRef::U64(v) => put!(v.iter().copied()),
        HostDataRef::Bool(v) => put!(v.iter().copied()),
        narrow => return Err(no_numpy_dtype(narrow.dtype())),
    }
    Ok((out, note))
}

/// Whether a tensor of `dtype` can be a `.npy` file: every element type but ONNX's narrow
/// ones (`float8e4m3fn`, ..., `int4`, `uint4`, `float4e2m1`, `int2`, `uint2`).
pub fn holds(dtype: NumericType) -> bool {
    !super::tensor_proto::is_narrow(dtype)
}

/// Why a tensor of `dtype` (a narrow type) cannot be a `.npy` file.
pub(crate) fn no_numpy_dtype(dtype: NumericType) -> String {
    format!(
        "{dtype} tensors have no numpy dtype, so they cannot be `.npy` files; use an ONNX \
         TensorProto `.pb` file"
    )
}

/// Writes `array` to `path` as `.npy`; returns a note when the values were widened (see
/// [`encode`]).
pub fn write(path: impl AsRef<Path>, array: HostArrayRef<'_>) -> Result<Option<String>, DataError> {
    let (bytes, note) = encode(array).map_err(|detail| DataError::Unsupported {
        origin: path.as_ref().display().to_string(),
        detail,
    })?;
    write_file(path.as_ref(), &bytes)?;
    Ok(note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ort_bind_runtime::{Float8E4M3FN, UInt4x2, bf16, f16};

    #[test]
    fn round_trips_every_numpy_type() {
        let arrays = [
            HostArray::from_vec(vec![2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, f32::NAN]).unwrap(),
            HostArray::from_vec(vec![2], vec![1.0f64, -0.5]).unwrap(),
            HostArray::from_vec(vec![1], vec![f16::from_f32(1.5)]).unwrap(),
            HostArray::from_vec(vec![], vec![-7i64]).unwrap(),
            HostArray::from_vec(vec![3], vec![i8::MIN, 0, i8::MAX]).unwrap(),
            HostArray::from_vec(vec![2], vec![u64::MAX, 1]).unwrap(),
            HostArray::from_vec(vec![2, 0], Vec::<u32>::new()).unwrap(),
            HostArray::from_vec(vec![3], vec![true, false, true]).unwrap(),
        ];
        for a in arrays {
            let (bytes, note) = encode(a.view()).unwrap();
            assert_eq!(note, None);
            let back = decode(&bytes, "mem").unwrap();
            assert_eq!(back.dims(), a.dims());
            assert_eq!(back.dtype(), a.dtype());
            // NaN != NaN: compare bit patterns through the TensorProto encoding.
            assert_eq!(
                super::super::tensor_proto::encode("", back.view()),
                super::super::tensor_proto::encode("", a.view())
            );
        }
    }

    #[test]
    fn bfloat16_is_widened_with_a_note() {
        let a =
            HostArray::from_vec(vec![2], vec![bf16::from_f32(0.25), bf16::from_f32(-3.0)]).unwrap();
        let (bytes, note) = encode(a.view()).unwrap();
        assert!(note.unwrap().contains("float32"));
        let back = decode(&bytes, "mem").unwrap();
        assert_eq!(back.as_slice::<f32>(), Some(&[0.25f32, -3.0][..]));
    }

    /// A `.npy` file as numpy writes it (version 1.0 header padded to 64 bytes).
    fn npy(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
        let mut header = format!(
            "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
            if fortran { "True" } else { "False" }
        );
        while !(10 + header.len() + 1).is_multiple_of(64) {
            header.push(' ');
        }
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn reads_big_endian_and_fortran_order() {
        let data: Vec<u8> = [1i32, 2].iter().flat_map(|v| v.to_be_bytes()).collect();
        let a = decode(&npy(">i4", false, "(2,)", &data), "mem").unwrap();
        assert_eq!(a.as_slice::<i32>(), Some(&[1, 2][..]));

        // [[1, 2, 3], [4, 5, 6]] stored column-major: 1 4 2 5 3 6.
        let data: Vec<u8> = [1u8, 4, 2, 5, 3, 6].to_vec();
        let a = decode(&npy("|u1", true, "(2, 3)", &data), "mem").unwrap();
        assert_eq!(a.dims(), &[2, 3]);
        assert_eq!(a.as_slice::<u8>(), Some(&[1u8, 2, 3, 4, 5, 6][..]));
    }

    #[test]
    fn string_arrays_round_trip_and_read_numpy_layouts() {
        let s = Strings::from_strs(&[2, 2], &["a", "héllo", "", "z\0w"]).unwrap();
        let bytes = encode_strings(&s);
        assert_eq!(decode_value(&bytes, "mem").unwrap(), DynValue::Strings(s));
        // What `np.save(f, np.array(["ab", "c"]))` writes: '<U2', NUL-padded UTF-32LE.
        let data: Vec<u8> = ['a', 'b', 'c', '\0']
            .iter()
            .flat_map(|&c| u32::from(c).to_le_bytes())
            .collect();
        let v = decode_value(&npy("<U2", false, "(2,)", &data), "mem").unwrap();
        assert_eq!(v.as_strings().unwrap().to_vec(), ["ab", "c"]);
        let data: Vec<u8> = ['x', 'y']
            .iter()
            .flat_map(|&c| u32::from(c).to_be_bytes())
            .collect();
        let v = decode_value(&npy(">U1", true, "(1, 2)", &data), "mem").unwrap();
        assert_eq!(v.as_strings().unwrap().to_vec(), ["x", "y"]);
        // Numbers still decode through `decode_value`.
        let data: Vec<u8> = [1i32, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
        let v = decode_value(&npy("<i4", false, "(2,)", &data), "mem").unwrap();
        assert_eq!(v.as_tensor().unwrap().as_slice::<i32>(), Some(&[1, 2][..]));
        let cases = [
            (npy("|O", false, "(2,)", &[0x80, 0x02]), "object arrays"),
            (
                npy("<U4", false, "(1000000,)", &[0; 16]),
                "needs more than the 16 bytes",
            ),
            (
                npy("<U1", false, "(1,)", &0x110000u32.to_le_bytes()),
                "not a character",
            ),
            (
                npy("<U1", false, "(4611686018427387904,)", &[0; 4]),
                "needs more than",
            ),
        ];
        for (bytes, want) in cases {
            let err = decode_value(&bytes, "case.npy").unwrap_err().to_string();
            assert!(
                err.contains(want) && err.contains("case.npy"),
                "{want}: {err}"
            );
        }
    }

    #[test]
    fn bad_files_are_clear_errors() {
        let cases = [
            (
                npy("<f4", false, "(1000000000, 1000000000)", &[0; 8]),
                "the file holds 8 bytes",
            ),
            (npy("<f4", false, "(4,)", &[0; 8]), "the file holds 8 bytes"),
            (
                npy("<c8", false, "(1,)", &[0; 8]),
                "not an element type ort-bind binds",
            ),
            (
                npy("<U3", false, "(1,)", &[0; 12]),
                "not an element type ort-bind binds",
            ),
            (b"\x93NUMPY\x01\x00garbage".to_vec(), "bad header"),
            (b"not numpy at all".to_vec(), "bad header"),
        ];
        for (bytes, want) in cases {
            let err = decode(&bytes, "case.npy").unwrap_err().to_string();
            assert!(
                err.contains(want) && err.contains("case.npy"),
                "{want}: {err}"
            );
        }
    }

    #[test]
    fn narrow_types_have_no_npy_form() {
        let a = HostArray::from_vec(vec![3], vec![UInt4x2::pack([1, 2]), UInt4x2::pack([3, 0])])
            .unwrap();
        let err = encode(a.view()).unwrap_err();
        assert!(
            err.contains("uint4 tensors have no numpy dtype") && err.contains(".pb"),
            "{err}"
        );
        assert!(
            !holds(NumericType::F8E4M3FN) && !holds(NumericType::U2) && holds(NumericType::BF16)
        );
        let dir = std::env::temp_dir().join(format!("ort-bind-npy-narrow-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.npy");
        let f8 = HostArray::from_vec(vec![1], vec![Float8E4M3FN::from_f32(2.0)]).unwrap();
        let err = write(&path, f8.view()).unwrap_err().to_string();
        assert!(
            err.contains("x.npy") && err.contains("float8e4m3fn tensors"),
            "{err}"
        );
        assert!(!path.exists());
        // Asking for a narrow-typed model value from a `.npy` file says to use `.pb`.
        write(
            &path,
            HostArray::from_vec(vec![1], vec![1u8]).unwrap().view(),
        )
        .unwrap();
        let ty = ort_bind_runtime::ValueType::Tensor {
            elem: ort_bind_runtime::ElementType::Numeric(NumericType::I4),
            dims: vec![None],
        };
        let err = super::super::read_value(&path, Some(&ty))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("the model's value is a tensor of int4") && err.contains(".pb"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
