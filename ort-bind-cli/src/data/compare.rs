//! Comparing arrays the way ONNX's backend test runner does (`numpy.testing.assert_allclose`).

use std::fmt;

use ort_bind_runtime::{DynMap, DynValue, HostArrayRef, NumericType, Strings};

/// Relative and absolute tolerance: `actual` matches `expected` when
/// `|actual - expected| <= atol + rtol * |expected|` (numpy's `isclose`); NaN matches NaN and
/// an infinity matches only the same infinity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
}

impl Tolerance {
    /// ONNX's backend test defaults (`onnx/backend/test/loader`): `rtol = 1e-3`, `atol = 1e-7`.
    pub const ONNX_BACKEND: Tolerance = Tolerance {
        rtol: 1e-3,
        atol: 1e-7,
    };

    /// Exact equality.
    pub const EXACT: Tolerance = Tolerance {
        rtol: 0.0,
        atol: 0.0,
    };

    /// Whether `actual` is close enough to `expected`.
    pub fn accepts(&self, actual: f64, expected: f64) -> bool {
        if actual.is_nan() || expected.is_nan() {
            return actual.is_nan() && expected.is_nan();
        }
        if actual.is_infinite() || expected.is_infinite() {
            return actual == expected;
        }
        (actual - expected).abs() <= self.atol + self.rtol * expected.abs()
    }
}

/// How an array differs from the expected one.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Mismatch {
    /// The element types differ.
    NumericType {
        /// The array's element type.
        actual: NumericType,
        /// The expected element type.
        expected: NumericType,
    },
    /// The dims differ.
    Shape {
        /// The array's dims.
        actual: Vec<usize>,
        /// The expected dims.
        expected: Vec<usize>,
    },
    /// Some values are not within tolerance.
    Values {
        /// Number of values out of tolerance.
        count: usize,
        /// Number of values compared.
        total: usize,
        /// Position (one index per axis) of the first value out of tolerance.
        first_index: Vec<usize>,
        /// The value there.
        actual: f64,
        /// The expected value there.
        expected: f64,
        /// Largest `|actual - expected|` over all values.
        max_abs_diff: f64,
        /// The tolerance applied.
        tolerance: Tolerance,
    },
    /// The values are of different kinds (a tensor where a sequence was expected, numbers
    /// where strings were, an optional without a value where one was expected, ...).
    Kind {
        /// The value, described.
        actual: String,
        /// The expected value, described.
        expected: String,
    },
    /// Some strings differ (strings are compared exactly).
    Strings {
        /// Number of strings that differ.
        count: usize,
        /// Number of strings compared.
        total: usize,
        /// Position (one index per axis) of the first one.
        first_index: Vec<usize>,
        /// The string there.
        actual: String,
        /// The expected string there.
        expected: String,
    },
    /// A sequence or map holds a different number of elements.
    Len {
        /// Elements of the value.
        actual: usize,
        /// Elements expected.
        expected: usize,
    },
    /// A map lacks a key the expected map has.
    MissingKey {
        /// The key.
        key: String,
    },
    /// An element of a sequence, map or optional differs.
    At {
        /// Where: `[2]` (sequence element), `[\"cat\"]` (map entry), `?` (optional's value).
        path: String,
        /// How it differs.
        mismatch: Box<Mismatch>,
    },
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::NumericType { actual, expected } => {
                write!(f, "element type is {actual}, expected {expected}")
            }
            Mismatch::Shape { actual, expected } => {
                write!(f, "dims are {actual:?}, expected {expected:?}")
            }
            Mismatch::Values {
                count,
                total,
                first_index,
                actual,
                expected,
                max_abs_diff,
                tolerance,
            } => write!(
                f,
                "{count} of {total} values differ beyond rtol {} / atol {}; first at {first_index:?}: \
                 {actual} where {expected} was expected; largest absolute difference {max_abs_diff}",
                tolerance.rtol, tolerance.atol
            ),
            Mismatch::Kind { actual, expected } => write!(f, "is {actual}, expected {expected}"),
            Mismatch::Strings {
                count,
                total,
                first_index,
                actual,
                expected,
            } => write!(
                f,
                "{count} of {total} strings differ; first at {first_index:?}: {actual:?} where \
                 {expected:?} was expected"
            ),
            Mismatch::Len { actual, expected } => {
                write!(f, "holds {actual} elements, expected {expected}")
            }
            Mismatch::MissingKey { key } => write!(f, "has no key {key}"),
            Mismatch::At { path, mismatch } => {
                // Nested paths read left to right: `[1]["cat"]: ...`.
                let mut path = path.clone();
                let mut inner = &**mismatch;
                while let Mismatch::At { path: p, mismatch } = inner {
                    path.push_str(p);
                    inner = mismatch;
                }
                write!(f, "{path}: {inner}")
            }
        }
    }
}

impl std::error::Error for Mismatch {}

/// Compares `actual` with `expected` like ONNX's backend test runner: same element type,
/// same dims, and every value within `tolerance` (for bfloat16 the relative tolerance is at
/// least 2^-6, two bfloat16 ULPs, as the runner does). ONNX's narrow types compare element
/// by element as the exact float (float8, float4) or integer (int4, int2, ...) values they
/// hold, packed elements unpacked, at `tolerance` like float16 does.
pub fn compare(
    actual: HostArrayRef<'_>,
    expected: HostArrayRef<'_>,
    tolerance: Tolerance,
) -> Result<(), Mismatch> {
    if actual.dtype() != expected.dtype() {
        return Err(Mismatch::NumericType {
            actual: actual.dtype(),
            expected: expected.dtype(),
        });
    }
    if actual.dims() != expected.dims() {
        return Err(Mismatch::Shape {
            actual: actual.dims().to_vec(),
            expected: expected.dims().to_vec(),
        });
    }
    let tolerance = if actual.dtype() == NumericType::BF16 {
        Tolerance {
            rtol: tolerance.rtol.max(2f64.powi(-6)),
            ..tolerance
        }
    } else {
        tolerance
    };
    let dims = actual.dims();
    let (a, e) = (actual.data(), expected.data());
    // Elements, not stored values: a packed `int4` array of 5 elements holds 3 bytes.
    let total = actual.element_count();
    let mut count = 0;
    let mut first = None;
    let mut max_abs_diff = 0f64;
    for i in 0..total {
        let (x, y) = (
            a.get_f64(i).expect("index below the length"),
            e.get_f64(i).expect("same length as `actual`"),
        );
        if !tolerance.accepts(x, y) {
            count += 1;
            first.get_or_insert((i, x, y));
        }
        let diff = (x - y).abs();
        if diff > max_abs_diff || diff.is_nan() && !(x.is_nan() && y.is_nan()) {
            max_abs_diff = diff;
        }
    }
    match first {
        None => Ok(()),
        Some((flat, x, y)) => Err(Mismatch::Values {
            count,
            total,
            first_index: unflatten(flat, dims),
            actual: x,
            expected: y,
            max_abs_diff,
            tolerance,
        }),
    }
}

/// Compares any two values: tensors like [`compare`], strings exactly, sequences element by
/// element, maps entry by entry (by key, whatever the order; values with `tolerance`), and
/// optionals by presence and then value.
pub fn compare_values(
    actual: &DynValue,
    expected: &DynValue,
    tolerance: Tolerance,
) -> Result<(), Mismatch> {
    let kind = || Mismatch::Kind {
        actual: actual.describe(),
        expected: expected.describe(),
    };
    let at = |path: String, mismatch: Mismatch| Mismatch::At {
        path,
        mismatch: Box::new(mismatch),
    };
    match (actual, expected) {
        (DynValue::Tensor(a), DynValue::Tensor(e)) => compare(a.view(), e.view(), tolerance),
        (DynValue::Strings(a), DynValue::Strings(e)) => compare_strings(a, e),
        (DynValue::Sequence(a), DynValue::Sequence(e)) => {
            if a.len() != e.len() {
                return Err(Mismatch::Len {
                    actual: a.len(),
                    expected: e.len(),
                });
            }
            for (i, (x, y)) in a.iter().zip(e).enumerate() {
                compare_values(x, y, tolerance).map_err(|m| at(format!("[{i}]"), m))?;
            }
            Ok(())
        }
        (DynValue::Map(a), DynValue::Map(e)) => compare_maps(a, e, tolerance),
        (DynValue::Optional(None), DynValue::Optional(None)) => Ok(()),
        (DynValue::Optional(Some(a)), DynValue::Optional(Some(e))) => {
            compare_values(a, e, tolerance).map_err(|m| at("?".into(), m))
        }
        // ONNX's test data may store a present optional as the bare value.
        (DynValue::Optional(Some(a)), e) if !matches!(e, DynValue::Optional(_)) => {
            compare_values(a, e, tolerance)
        }
        (a, DynValue::Optional(Some(e))) if !matches!(a, DynValue::Optional(_)) => {
            compare_values(a, e, tolerance)
        }
        _ => Err(kind()),
    }
}

fn compare_strings(actual: &Strings, expected: &Strings) -> Result<(), Mismatch> {
    if actual.dims() != expected.dims() {
        return Err(Mismatch::Shape {
            actual: actual.dims().to_vec(),
            expected: expected.dims().to_vec(),
        });
    }
    let mut count = 0;
    let mut first = None;
    for (i, (x, y)) in actual.iter().zip(expected).enumerate() {
        if x != y {
            count += 1;
            first.get_or_insert((i, x, y));
        }
    }
    match first {
        None => Ok(()),
        Some((flat, x, y)) => Err(Mismatch::Strings {
            count,
            total: actual.len(),
            first_index: unflatten(flat, actual.dims()),
            actual: x.to_owned(),
            expected: y.to_owned(),
        }),
    }
}

fn compare_maps(actual: &DynMap, expected: &DynMap, tolerance: Tolerance) -> Result<(), Mismatch> {
    if actual.key_type() != expected.key_type() || actual.value_type() != expected.value_type() {
        return Err(Mismatch::Kind {
            actual: DynValue::Map(actual.clone()).describe(),
            expected: DynValue::Map(expected.clone()).describe(),
        });
    }
    if actual.len() != expected.len() {
        return Err(Mismatch::Len {
            actual: actual.len(),
            expected: expected.len(),
        });
    }
    for i in 0..expected.len() {
        let Some(key) = expected.key(i) else { continue };
        let Some(j) = actual.position(key) else {
            return Err(Mismatch::MissingKey {
                key: key.to_string(),
            });
        };
        let path = || format!("[{key}]");
        match (actual.values(), expected.values()) {
            (DynValue::Strings(a), DynValue::Strings(e)) => {
                let (x, y) = (a.get(j).unwrap_or(""), e.get(i).unwrap_or(""));
                if x != y {
                    return Err(Mismatch::At {
                        path: path(),
                        mismatch: Box::new(Mismatch::Strings {
                            count: 1,
                            total: 1,
                            first_index: vec![],
                            actual: x.to_owned(),
                            expected: y.to_owned(),
                        }),
                    });
                }
            }
            (DynValue::Tensor(a), DynValue::Tensor(e)) => {
                let x = a.view().data().get_f64(j).unwrap_or(f64::NAN);
                let y = e.view().data().get_f64(i).unwrap_or(f64::NAN);
                let tolerance = if a.dtype() == NumericType::BF16 {
                    Tolerance {
                        rtol: tolerance.rtol.max(2f64.powi(-6)),
                        ..tolerance
                    }
                } else {
                    tolerance
                };
                if !tolerance.accepts(x, y) {
                    return Err(Mismatch::At {
                        path: path(),
                        mismatch: Box::new(Mismatch::Values {
                            count: 1,
                            total: 1,
                            first_index: vec![],
                            actual: x,
                            expected: y,
                            max_abs_diff: (x - y).abs(),
                            tolerance,
                        }),
                    });
                }
            }
            _ => {
                return Err(Mismatch::Kind {
                    actual: actual.values().describe(),
                    expected: expected.values().describe(),
                });
            }
        }
    }
    Ok(())
}

/// The per-axis index of flat (row-major) position `flat` in an array of `dims`.
fn unflatten(mut flat: usize, dims: &[usize]) -> Vec<usize> {
    let mut index = vec![0; dims.len()];
    for (axis, &d) in dims.iter().enumerate().rev() {
        if d > 0 {
            index[axis] = flat % d;
            flat /= d;
        }
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;
    use ort_bind_runtime::{Float8E5M2, HostArray, Int4x2, bf16};

    fn f32s(dims: &[usize], v: &[f32]) -> HostArray {
        HostArray::from_vec(dims.to_vec(), v.to_vec()).unwrap()
    }

    #[test]
    fn tolerance_is_numpys_isclose() {
        let t = Tolerance::ONNX_BACKEND;
        assert!(t.accepts(1.0005, 1.0));
        assert!(!t.accepts(1.002, 1.0));
        assert!(t.accepts(5e-8, 0.0));
        assert!(!t.accepts(2e-7, 0.0));
        assert!(t.accepts(f64::NAN, f64::NAN));
        assert!(!t.accepts(f64::NAN, 0.0));
        assert!(!t.accepts(0.0, f64::NAN));
        assert!(t.accepts(f64::INFINITY, f64::INFINITY));
        assert!(!t.accepts(f64::INFINITY, f64::NEG_INFINITY));
        assert!(!t.accepts(1e300, f64::INFINITY));
        assert!(Tolerance::EXACT.accepts(3.0, 3.0));
        assert!(!Tolerance::EXACT.accepts(3.0, 3.0000001));
    }

    #[test]
    fn reports_type_shape_and_values() {
        let a = f32s(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(compare(a.view(), a.view(), Tolerance::EXACT), Ok(()));

        let b = HostArray::from_vec(vec![2, 2], vec![1.0f64, 2.0, 3.0, 4.0]).unwrap();
        let err = compare(a.view(), b.view(), Tolerance::ONNX_BACKEND).unwrap_err();
        assert_eq!(err.to_string(), "element type is float32, expected float64");

        let c = f32s(&[4], &[1.0, 2.0, 3.0, 4.0]);
        let err = compare(a.view(), c.view(), Tolerance::ONNX_BACKEND).unwrap_err();
        assert_eq!(err.to_string(), "dims are [2, 2], expected [4]");

        let d = f32s(&[2, 2], &[1.0, 2.0, 3.5, 4.5]);
        let err = compare(a.view(), d.view(), Tolerance::ONNX_BACKEND).unwrap_err();
        let Mismatch::Values {
            count,
            first_index,
            max_abs_diff,
            ..
        } = &err
        else {
            panic!("{err:?}");
        };
        assert_eq!(
            (*count, first_index.as_slice(), *max_abs_diff),
            (2, &[1usize, 0][..], 0.5)
        );
        assert!(err.to_string().contains("2 of 4 values differ"), "{err}");
    }

    #[test]
    fn nested_values_compare_element_wise() {
        let strs = |v: &[&str]| DynValue::Strings(Strings::from_strs(&[v.len()], v).unwrap());
        let t = |v: &[f32]| DynValue::Tensor(f32s(&[v.len()], v));
        let tol = Tolerance::ONNX_BACKEND;
        assert_eq!(
            compare_values(&strs(&["a", "b"]), &strs(&["a", "b"]), tol),
            Ok(())
        );
        let err = compare_values(&strs(&["a", "b"]), &strs(&["a", "c"]), tol).unwrap_err();
        assert_eq!(
            err.to_string(),
            "1 of 2 strings differ; first at [1]: \"b\" where \"c\" was expected"
        );
        let seq = |v: Vec<DynValue>| DynValue::Sequence(v);
        let a = seq(vec![t(&[1.0]), t(&[2.0, 3.0])]);
        let b = seq(vec![t(&[1.0]), t(&[2.0, 3.0005])]);
        assert_eq!(compare_values(&a, &b, tol), Ok(()));
        let c = seq(vec![t(&[1.0]), t(&[2.0, 4.0])]);
        let err = compare_values(&a, &c, tol).unwrap_err().to_string();
        assert!(err.starts_with("[1]: 1 of 2 values differ"), "{err}");
        let err = compare_values(&a, &seq(vec![t(&[1.0])]), tol).unwrap_err();
        assert_eq!(err.to_string(), "holds 2 elements, expected 1");
        let err = compare_values(&a, &t(&[1.0]), tol).unwrap_err().to_string();
        assert!(
            err.contains("is seq(2 elements), expected float32[1]"),
            "{err}"
        );

        // Maps compare by key, whatever the order.
        let keys =
            |k: &[i64]| DynValue::Tensor(HostArray::from_vec(vec![k.len()], k.to_vec()).unwrap());
        let m1 = DynMap::new(keys(&[1, 2]), t(&[0.5, 0.25])).unwrap();
        let m2 = DynMap::new(keys(&[2, 1]), t(&[0.25, 0.5])).unwrap();
        let m3 = DynMap::new(keys(&[2, 1]), t(&[0.25, 0.75])).unwrap();
        let m4 = DynMap::new(keys(&[3, 1]), t(&[0.25, 0.5])).unwrap();
        let (m1, m2, m3, m4) = (
            DynValue::Map(m1),
            DynValue::Map(m2),
            DynValue::Map(m3),
            DynValue::Map(m4),
        );
        assert_eq!(compare_values(&m1, &m2, tol), Ok(()));
        let err = compare_values(&seq(vec![m1.clone()]), &seq(vec![m3]), tol).unwrap_err();
        assert!(
            err.to_string().starts_with("[0][1]: 1 of 1 values differ"),
            "{err}"
        );
        assert_eq!(
            compare_values(&m1, &m4, tol).unwrap_err().to_string(),
            "has no key 3"
        );

        let none = DynValue::Optional(None);
        let some = DynValue::Optional(Some(Box::new(t(&[1.0]))));
        assert_eq!(compare_values(&none, &none, tol), Ok(()));
        assert_eq!(compare_values(&some, &t(&[1.0]), tol), Ok(()));
        let err = compare_values(&none, &some, tol).unwrap_err().to_string();
        assert!(
            err.contains("is optional(none), expected optional(float32[1])"),
            "{err}"
        );
    }

    #[test]
    fn bfloat16_gets_two_ulps() {
        let a = HostArray::from_vec(vec![1], vec![bf16::from_f32(1.0)]).unwrap();
        let b = HostArray::from_vec(vec![1], vec![bf16::from_f32(1.0078125)]).unwrap();
        assert_eq!(compare(a.view(), b.view(), Tolerance::ONNX_BACKEND), Ok(()));
        let c = HostArray::from_vec(vec![1], vec![bf16::from_f32(1.0625)]).unwrap();
        assert!(compare(a.view(), c.view(), Tolerance::ONNX_BACKEND).is_err());
    }

    #[test]
    fn narrow_types_compare_by_element() {
        // int4 [5]: 3 bytes; the last byte's unused high nibble is not an element.
        let a = HostArray::from_vec(
            vec![5],
            vec![
                Int4x2::pack([1, -2]),
                Int4x2::pack([3, 4]),
                Int4x2::from_bits(0xF5),
            ],
        )
        .unwrap();
        let b = HostArray::from_vec(
            vec![5],
            vec![
                Int4x2::pack([1, -2]),
                Int4x2::pack([3, 4]),
                Int4x2::pack([5, 0]),
            ],
        )
        .unwrap();
        assert_eq!(compare(a.view(), b.view(), Tolerance::EXACT), Ok(()));
        let c = HostArray::from_vec(
            vec![5],
            vec![
                Int4x2::pack([1, -2]),
                Int4x2::pack([3, -4]),
                Int4x2::pack([5, 0]),
            ],
        )
        .unwrap();
        match compare(a.view(), c.view(), Tolerance::ONNX_BACKEND) {
            Err(Mismatch::Values {
                count: 1,
                total: 5,
                first_index,
                actual,
                expected,
                ..
            }) => assert_eq!((first_index, actual, expected), (vec![3], 4.0, -4.0)),
            other => panic!("{other:?}"),
        }
        // float8 values as exact floats, NaN matching NaN, at the tolerance.
        let f = |v: [f32; 3]| {
            HostArray::from_vec(vec![3], v.map(Float8E5M2::from_f32).to_vec()).unwrap()
        };
        let (x, y) = (f([1.0, f32::NAN, -57344.0]), f([1.0, f32::NAN, -57344.0]));
        assert_eq!(compare(x.view(), y.view(), Tolerance::EXACT), Ok(()));
        let z = f([1.25, f32::NAN, -57344.0]);
        let err = compare(x.view(), z.view(), Tolerance::ONNX_BACKEND).unwrap_err();
        assert!(
            err.to_string().contains("1 where 1.25 was expected"),
            "{err}"
        );
        let wide = Tolerance {
            rtol: 0.25,
            atol: 0.0,
        };
        assert_eq!(compare(x.view(), z.view(), wide), Ok(()));
    }
}
