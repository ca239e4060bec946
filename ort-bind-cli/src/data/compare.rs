//! Comparing arrays the way ONNX's backend test runner does (`numpy.testing.assert_allclose`).

use std::fmt;

use ort_bind_runtime::{DType, HostArrayRef};

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
    DType {
        /// The array's element type.
        actual: DType,
        /// The expected element type.
        expected: DType,
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
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mismatch::DType { actual, expected } => {
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
        }
    }
}

impl std::error::Error for Mismatch {}

/// Compares `actual` with `expected` like ONNX's backend test runner: same element type,
/// same dims, and every value within `tolerance` (for bfloat16 the relative tolerance is at
/// least 2^-6, two bfloat16 ULPs, as the runner does).
pub fn compare(
    actual: HostArrayRef<'_>,
    expected: HostArrayRef<'_>,
    tolerance: Tolerance,
) -> Result<(), Mismatch> {
    if actual.dtype() != expected.dtype() {
        return Err(Mismatch::DType {
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
    let tolerance = if actual.dtype() == DType::BF16 {
        Tolerance {
            rtol: tolerance.rtol.max(2f64.powi(-6)),
            ..tolerance
        }
    } else {
        tolerance
    };
    let dims = actual.dims();
    let (a, e) = (actual.data(), expected.data());
    let total = a.len();
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
    use ort_bind_runtime::{HostArray, bf16};

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
    fn bfloat16_gets_two_ulps() {
        let a = HostArray::from_vec(vec![1], vec![bf16::from_f32(1.0)]).unwrap();
        let b = HostArray::from_vec(vec![1], vec![bf16::from_f32(1.0078125)]).unwrap();
        assert_eq!(compare(a.view(), b.view(), Tolerance::ONNX_BACKEND), Ok(()));
        let c = HostArray::from_vec(vec![1], vec![bf16::from_f32(1.0625)]).unwrap();
        assert!(compare(a.view(), c.view(), Tolerance::ONNX_BACKEND).is_err());
    }
}
