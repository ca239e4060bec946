//! [`DynValue`]: any value of ONNX's type system, owned, with its type decided at run time
//! (what [`DynamicBinding`](crate::DynamicBinding) and the command line read and write).

use std::fmt;

use super::{ElementType, Strings, ValueType};
use crate::element::NumericType;
use crate::error::{Error, Result};
use crate::values::host::HostArray;

/// Any ONNX value, owned: a numeric tensor, a string tensor, a sequence, a map or an
/// optional. The typed route has a Rust type per case ([`Tensor`](crate::Tensor),
/// [`StringTensor`](super::StringTensor), [`Sequence`](super::Sequence),
/// [`Map`](super::Map), [`Optional`](super::Optional)); this enum is for tools that learn
/// the type from the model.
#[derive(Debug, Clone, PartialEq)]
pub enum DynValue {
    /// A tensor of numeric or bool elements.
    Tensor(HostArray),
    /// A tensor of strings.
    Strings(Strings),
    /// A sequence of tensors, string tensors or maps.
    Sequence(Vec<DynValue>),
    /// A map.
    Map(DynMap),
    /// An optional: `None` when absent.
    Optional(Option<Box<DynValue>>),
}

impl From<HostArray> for DynValue {
    fn from(a: HostArray) -> Self {
        DynValue::Tensor(a)
    }
}

impl From<Strings> for DynValue {
    fn from(s: Strings) -> Self {
        DynValue::Strings(s)
    }
}

impl From<DynMap> for DynValue {
    fn from(m: DynMap) -> Self {
        DynValue::Map(m)
    }
}

impl DynValue {
    /// The numeric tensor, if this is one.
    pub fn as_tensor(&self) -> Option<&HostArray> {
        match self {
            DynValue::Tensor(a) => Some(a),
            _ => None,
        }
    }

    /// The string tensor, if this is one.
    pub fn as_strings(&self) -> Option<&Strings> {
        match self {
            DynValue::Strings(s) => Some(s),
            _ => None,
        }
    }

    /// The elements, if this is a sequence.
    pub fn as_sequence(&self) -> Option<&[DynValue]> {
        match self {
            DynValue::Sequence(v) => Some(v),
            _ => None,
        }
    }

    /// The map, if this is one.
    pub fn as_map(&self) -> Option<&DynMap> {
        match self {
            DynValue::Map(m) => Some(m),
            _ => None,
        }
    }

    /// A short description: `float32[2, 3]`, `string[4]`, `seq(2 elements)`,
    /// `map(int64 -> float32, 3 entries)`, `optional(none)`.
    pub fn describe(&self) -> String {
        match self {
            DynValue::Tensor(a) => format!("{}{:?}", a.dtype(), a.dims()),
            DynValue::Strings(s) => format!("string{:?}", s.dims()),
            DynValue::Sequence(v) => format!("seq({} elements)", v.len()),
            DynValue::Map(m) => format!(
                "map({} -> {}, {} entries)",
                m.key_type(),
                m.value_type(),
                m.len()
            ),
            DynValue::Optional(None) => "optional(none)".into(),
            DynValue::Optional(Some(v)) => format!("optional({})", v.describe()),
        }
    }

    /// Checks that the value fits `ty` (kinds, element types, ranks and fixed dims); a
    /// value that is not an optional fits `optional(T)` when it fits `T`.
    pub fn check_type(&self, name: &str, ty: &ValueType) -> Result<()> {
        let mismatch = |want: &dyn fmt::Display| Error::Value {
            value: name.to_owned(),
            problem: format!("the model declares {want}, the data is {}", self.describe()),
        };
        match (ty, self) {
            (ValueType::Optional(_), DynValue::Optional(None)) => Ok(()),
            (ValueType::Optional(inner), DynValue::Optional(Some(v))) => v.check_type(name, inner),
            (ValueType::Optional(inner), v) => v.check_type(name, inner),
            (ValueType::Tensor { elem, dims }, v) => {
                let (found, found_dims) = match v {
                    DynValue::Tensor(a) => (ElementType::Numeric(a.dtype()), a.dims()),
                    DynValue::Strings(s) => (ElementType::String, s.dims()),
                    _ => return Err(mismatch(ty)),
                };
                if found != *elem {
                    return Err(mismatch(ty));
                }
                check_dims(name, dims, found_dims)
            }
            (ValueType::Sequence(inner), DynValue::Sequence(items)) => {
                for (i, item) in items.iter().enumerate() {
                    item.check_type(&format!("{name}[{i}]"), inner)?;
                }
                Ok(())
            }
            (ValueType::Map { key, value }, DynValue::Map(m)) => {
                if m.key_type() == *key && m.value_type() == *value {
                    Ok(())
                } else {
                    Err(mismatch(ty))
                }
            }
            _ => Err(mismatch(ty)),
        }
    }
}

/// Checks `dims` against declared dims (rank and fixed sizes; no declared dims: any).
pub(crate) fn check_dims(name: &str, declared: &[Option<usize>], dims: &[usize]) -> Result<()> {
    if declared.is_empty() {
        // Rank 0 or unknown rank: ONNX Runtime checks it.
        return Ok(());
    }
    let reason = if dims.len() != declared.len() {
        Some(format!(
            "rank {} where the model declares rank {}",
            dims.len(),
            declared.len()
        ))
    } else {
        declared
            .iter()
            .zip(dims)
            .enumerate()
            .find_map(|(axis, (want, &got))| match want {
                Some(want) if *want != got => Some(format!(
                    "axis {axis} is {got} where the model fixes it to {want}"
                )),
                _ => None,
            })
    };
    match reason {
        Some(reason) => Err(Error::Shape {
            tensor: name.to_owned(),
            found: dims.to_vec(),
            reason,
        }),
        None => Ok(()),
    }
}

/// A map of the dynamic route: a column of keys (integers or strings) and a column of
/// values (a one-dimensional tensor or strings) of the same length, with no key twice.
#[derive(Debug, Clone, PartialEq)]
pub struct DynMap {
    keys: Box<DynValue>,
    values: Box<DynValue>,
}

/// A key of a [`DynMap`], read exactly whatever its integer type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DynKey<'a> {
    /// An integer key.
    Int(i128),
    /// A string key.
    Str(&'a str),
}

impl fmt::Display for DynKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DynKey::Int(k) => write!(f, "{k}"),
            DynKey::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl DynMap {
    /// A map of `keys` (a one-dimensional integer tensor or [`Strings`]) and `values` (a
    /// one-dimensional tensor or `Strings`, as many). A key that appears twice is an error:
    /// ort-bind does not pick which value wins.
    pub fn new(keys: DynValue, values: DynValue) -> Result<DynMap> {
        let err = |problem: String| Error::Value {
            value: "map".into(),
            problem,
        };
        let key_count = match &keys {
            DynValue::Tensor(a) if a.dims().len() == 1 && is_integer(a.dtype()) => a.dims()[0],
            DynValue::Strings(s) if s.dims().len() == 1 => s.len(),
            other => {
                return Err(err(format!(
                    "map keys must be a one-dimensional integer or string tensor, not {}",
                    other.describe()
                )));
            }
        };
        let value_count = match &values {
            DynValue::Tensor(a) if a.dims().len() == 1 => a.dims()[0],
            DynValue::Strings(s) if s.dims().len() == 1 => s.len(),
            other => {
                return Err(err(format!(
                    "map values must be a one-dimensional tensor, not {}",
                    other.describe()
                )));
            }
        };
        if key_count != value_count {
            return Err(err(format!("{key_count} keys and {value_count} values")));
        }
        let map = DynMap {
            keys: Box::new(keys),
            values: Box::new(values),
        };
        let mut all: Vec<DynKey<'_>> = (0..key_count).filter_map(|i| map.key(i)).collect();
        all.sort();
        if let Some(pair) = all.windows(2).find(|w| w[0] == w[1]) {
            return Err(err(format!("the key {} appears more than once", pair[0])));
        }
        Ok(map)
    }

    /// Key `i`.
    pub fn key(&self, i: usize) -> Option<DynKey<'_>> {
        match &*self.keys {
            DynValue::Strings(s) => s.get(i).map(DynKey::Str),
            DynValue::Tensor(a) => {
                if let Some(v) = a.as_slice::<i64>() {
                    v.get(i).map(|&k| DynKey::Int(k.into()))
                } else if let Some(v) = a.as_slice::<u64>() {
                    v.get(i).map(|&k| DynKey::Int(k.into()))
                } else {
                    // Integers of at most 32 bits are exact as `f64`.
                    a.view().data().get_f64(i).map(|k| DynKey::Int(k as i128))
                }
            }
            _ => None,
        }
    }

    /// The position of `key`.
    pub fn position(&self, key: DynKey<'_>) -> Option<usize> {
        (0..self.len()).find(|&i| self.key(i) == Some(key))
    }

    /// The keys (a one-dimensional tensor or strings).
    pub fn keys(&self) -> &DynValue {
        &self.keys
    }

    /// The values, in key order.
    pub fn values(&self) -> &DynValue {
        &self.values
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        match &*self.keys {
            DynValue::Tensor(a) => a.dims().first().copied().unwrap_or(0),
            DynValue::Strings(s) => s.len(),
            _ => 0,
        }
    }

    /// Whether the map has no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The key type.
    pub fn key_type(&self) -> ElementType {
        elem_of(&self.keys)
    }

    /// The value type.
    pub fn value_type(&self) -> ElementType {
        elem_of(&self.values)
    }
}

fn elem_of(v: &DynValue) -> ElementType {
    match v {
        DynValue::Tensor(a) => ElementType::Numeric(a.dtype()),
        _ => ElementType::String,
    }
}

fn is_integer(d: NumericType) -> bool {
    matches!(
        d,
        NumericType::I8
            | NumericType::I16
            | NumericType::I32
            | NumericType::I64
            | NumericType::U8
            | NumericType::U16
            | NumericType::U32
            | NumericType::U64
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: Vec<i64>) -> DynValue {
        DynValue::Tensor(HostArray::from_vec(vec![v.len()], v).unwrap())
    }

    #[test]
    fn maps_refuse_duplicates_and_mismatched_lengths() {
        let values = DynValue::Tensor(HostArray::from_vec(vec![2], vec![1.0f32, 2.0]).unwrap());
        let m = DynMap::new(ints(vec![3, 1]), values.clone()).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m.key_type(), ElementType::Numeric(NumericType::I64));
        let err = DynMap::new(ints(vec![3, 3]), values.clone()).unwrap_err();
        assert!(
            err.to_string().contains("the key 3 appears more than once"),
            "{err}"
        );
        let err = DynMap::new(ints(vec![1, 2, 3]), values.clone()).unwrap_err();
        assert!(err.to_string().contains("3 keys and 2 values"), "{err}");
        let keys = DynValue::Strings(Strings::from_strs(&[2], &["a", "a"]).unwrap());
        let err = DynMap::new(keys, values.clone()).unwrap_err();
        assert!(
            err.to_string().contains("\"a\" appears more than once"),
            "{err}"
        );
        let float_keys = DynValue::Tensor(HostArray::from_vec(vec![2], vec![1.0f32, 2.0]).unwrap());
        assert!(DynMap::new(float_keys, values).is_err());
    }

    #[test]
    fn types_are_checked() {
        let ty = ValueType::Optional(Box::new(ValueType::Sequence(Box::new(ValueType::Tensor {
            elem: ElementType::Numeric(NumericType::F32),
            dims: vec![None],
        }))));
        let item = DynValue::Tensor(HostArray::from_vec(vec![2], vec![1.0f32, 2.0]).unwrap());
        let seq = DynValue::Sequence(vec![item.clone()]);
        seq.check_type("s", &ty).unwrap();
        DynValue::Optional(None).check_type("s", &ty).unwrap();
        DynValue::Optional(Some(Box::new(seq)))
            .check_type("s", &ty)
            .unwrap();
        let err = item.check_type("s", &ty).unwrap_err().to_string();
        assert!(
            err.contains("optional(seq(float32[?]))") || err.contains("seq(float32[?])"),
            "{err}"
        );
        let bad = DynValue::Sequence(vec![DynValue::Tensor(
            HostArray::from_vec(vec![1, 1], vec![1.0f32]).unwrap(),
        )]);
        assert!(matches!(bad.check_type("s", &ty), Err(Error::Shape { .. })));
    }
}
