//! Checking an adapter's parameters against the overridable inputs of a model: the one
//! rule both the build-time check (codegen, at compile time) and the run-time check
//! (`ort_bind::Adapter` set on a binding) apply, so they cannot disagree.

/// One axis of a model's overridable input, as the model declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpectedAxis<'a> {
    /// A fixed size: the parameter must have exactly it.
    Fixed(u64),
    /// A named dim (a LoRA rank, say): any size, but one size across all parameters of an
    /// adapter that have this dim.
    Named(&'a str),
    /// An unnamed dynamic axis: any size.
    Any,
}

/// A model's overridable input that an adapter parameter of the same name sets.
#[derive(Debug, Clone, Copy)]
pub struct ExpectedParameter<'a> {
    /// The input's ONNX name.
    pub name: &'a str,
    /// Its ONNX element type code.
    pub element: i32,
    /// Its declared axes, or `None` when the model declares no shape.
    pub dims: Option<&'a [ExpectedAxis<'a>]>,
}

/// Why an adapter's parameters do not fit a model. Element types are ONNX codes: each
/// caller names them with its own table ([`Mismatch::describe`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    /// A parameter no overridable input of the model is named after.
    Unknown {
        /// The parameter.
        param: String,
        /// The model's overridable inputs, comma-separated (or a note that it has none).
        known: String,
    },
    /// A parameter of another element type than its input.
    Element {
        /// The parameter.
        param: String,
        /// The input's element code.
        expected: i32,
        /// The parameter's element code.
        found: i32,
    },
    /// A parameter of another rank than its input.
    Rank {
        /// The parameter.
        param: String,
        /// The input's rank.
        expected: usize,
        /// The parameter's dims.
        found: Vec<i64>,
    },
    /// A parameter whose size on an axis the model fixes differs.
    Fixed {
        /// The parameter.
        param: String,
        /// The axis.
        axis: usize,
        /// The model's size.
        expected: u64,
        /// The parameter's size.
        found: i64,
    },
    /// Two parameters with different sizes for one named dim.
    Named {
        /// The dim's name.
        dim: String,
        /// The first parameter with this dim, and its size.
        first: (String, i64),
        /// The parameter that disagrees, and its size.
        second: (String, i64),
    },
}

impl Mismatch {
    /// The message, with element codes named by `element_name`.
    pub fn describe(&self, element_name: impl Fn(i32) -> String) -> String {
        match self {
            Mismatch::Unknown { param, known } => {
                format!("parameter `{param}` is not an overridable input of the model ({known})")
            }
            Mismatch::Element {
                param,
                expected,
                found,
            } => format!(
                "parameter `{param}` holds {} elements, but the model's input `{param}` is {}",
                element_name(*found),
                element_name(*expected)
            ),
            Mismatch::Rank {
                param,
                expected,
                found,
            } => format!(
                "parameter `{param}` has dims {found:?}, but the model's input `{param}` has \
                 rank {expected}"
            ),
            Mismatch::Fixed {
                param,
                axis,
                expected,
                found,
            } => format!(
                "parameter `{param}` has size {found} on axis {axis}, which the model fixes to \
                 {expected}"
            ),
            Mismatch::Named { dim, first, second } => format!(
                "dim `{dim}` is {} in parameter `{}` but {} in `{}`: an adapter has one size \
                 for each named dim (its rank)",
                first.1, first.0, second.1, second.0
            ),
        }
    }
}

/// Matches each parameter (`(name, element code, dims)`, in file order) to the expected
/// input of its name, checking element type, rank, fixed sizes and that each named dim has
/// one size across the parameters. Returns, per parameter, the index in `expected` it
/// sets. A parameter may be absent (its input keeps the model's default).
pub fn match_parameters(
    params: &[(&str, i32, &[i64])],
    expected: &[ExpectedParameter<'_>],
) -> Result<Vec<usize>, Mismatch> {
    let mut named: Vec<(&str, &str, i64)> = Vec::new();
    let mut matched = Vec::with_capacity(params.len());
    for &(param, element, dims) in params {
        let Some(index) = expected.iter().position(|e| e.name == param) else {
            let known: Vec<&str> = expected.iter().map(|e| e.name).collect();
            return Err(Mismatch::Unknown {
                param: param.to_owned(),
                known: if known.is_empty() {
                    "it has none".to_owned()
                } else {
                    format!("it has {}", known.join(", "))
                },
            });
        };
        let input = &expected[index];
        if input.element != element {
            return Err(Mismatch::Element {
                param: param.to_owned(),
                expected: input.element,
                found: element,
            });
        }
        if let Some(axes) = input.dims {
            if axes.len() != dims.len() {
                return Err(Mismatch::Rank {
                    param: param.to_owned(),
                    expected: axes.len(),
                    found: dims.to_vec(),
                });
            }
            for (axis, (rule, &size)) in axes.iter().zip(dims).enumerate() {
                match *rule {
                    ExpectedAxis::Fixed(n) if u64::try_from(size) != Ok(n) => {
                        return Err(Mismatch::Fixed {
                            param: param.to_owned(),
                            axis,
                            expected: n,
                            found: size,
                        });
                    }
                    ExpectedAxis::Named(dim) => match named.iter().find(|(d, _, _)| *d == dim) {
                        Some(&(_, first, first_size)) if first_size != size => {
                            return Err(Mismatch::Named {
                                dim: dim.to_owned(),
                                first: (first.to_owned(), first_size),
                                second: (param.to_owned(), size),
                            });
                        }
                        Some(_) => {}
                        None => named.push((dim, param, size)),
                    },
                    _ => {}
                }
            }
        }
        matched.push(index);
    }
    Ok(matched)
}

#[cfg(test)]
mod tests {
    use super::*;

    const F32: i32 = 1;
    const A: &[ExpectedAxis<'_>] = &[ExpectedAxis::Fixed(8), ExpectedAxis::Named("rank")];
    const B: &[ExpectedAxis<'_>] = &[ExpectedAxis::Named("rank"), ExpectedAxis::Fixed(4)];

    fn model() -> [ExpectedParameter<'static>; 2] {
        [
            ExpectedParameter {
                name: "a",
                element: F32,
                dims: Some(A),
            },
            ExpectedParameter {
                name: "b",
                element: F32,
                dims: Some(B),
            },
        ]
    }

    #[test]
    fn parameters_that_fit_are_matched_by_name() {
        let got = match_parameters(&[("b", F32, &[2, 4]), ("a", F32, &[8, 2])], &model());
        assert_eq!(got, Ok(vec![1, 0]));
        // A parameter may be left out: its input keeps its default.
        assert_eq!(
            match_parameters(&[("a", F32, &[8, 3])], &model()),
            Ok(vec![0])
        );
    }

    #[test]
    fn each_way_of_not_fitting_names_the_parameter() {
        let m = model();
        let unknown = match_parameters(&[("c", F32, &[8, 2])], &m).unwrap_err();
        assert_eq!(
            unknown.describe(|c| c.to_string()),
            "parameter `c` is not an overridable input of the model (it has a, b)"
        );
        assert!(matches!(
            match_parameters(&[("a", 6, &[8, 2])], &m),
            Err(Mismatch::Element {
                expected: 1,
                found: 6,
                ..
            })
        ));
        assert!(matches!(
            match_parameters(&[("a", F32, &[8])], &m),
            Err(Mismatch::Rank { expected: 2, .. })
        ));
        assert!(matches!(
            match_parameters(&[("a", F32, &[16, 2])], &m),
            Err(Mismatch::Fixed {
                axis: 0,
                expected: 8,
                found: 16,
                ..
            })
        ));
        let named = match_parameters(&[("a", F32, &[8, 2]), ("b", F32, &[3, 4])], &m).unwrap_err();
        assert_eq!(
            named,
            Mismatch::Named {
                dim: "rank".into(),
                first: ("a".into(), 2),
                second: ("b".into(), 3)
            }
        );
        assert!(
            named
                .describe(|c| c.to_string())
                .contains("dim `rank` is 2")
        );
    }
}
