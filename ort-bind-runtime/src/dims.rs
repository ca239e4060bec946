//! Deriving a binding's dims from the shapes of its inputs.
//!
//! Generated `Dims::from_input_shapes` hands [`solve`] a table: each input's name and
//! shape, and which list of [`AxisRule`]s (how the model sizes each axis) applies to it,
//! inputs sized alike sharing one list; [`solve`] feeds them to a [`DimsSolver`]. The solver checks the
//! shapes against the model (rank, fixed axes) and against each other (every axis that
//! carries one symbolic dim must agree), and errors name the dim that disagrees.
//! It allocates nothing unless it reports an error.

use crate::error::{Error, Result};

/// How the model sizes one axis of an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AxisRule {
    /// Fixed by the model to this size.
    Fixed(usize),
    /// Sized by the solver's dim number `i`.
    Dim(usize),
}

/// Where a dim got its value: `(value, input, axis)`.
type Source<'n> = (usize, &'n str, usize);

/// Collects the values of `N` dims from input shapes, checking them as it goes.
#[derive(Debug, Clone)]
pub struct DimsSolver<'n, const N: usize> {
    names: [&'n str; N],
    values: [Option<Source<'n>>; N],
}

impl<'n, const N: usize> DimsSolver<'n, N> {
    /// A solver for dims with these names (used in errors), none known yet.
    pub fn new(names: [&'n str; N]) -> Self {
        DimsSolver {
            names,
            values: [None; N],
        }
    }

    /// Takes the shape of input `input`, whose axes the model sizes by `axes`.
    pub fn input(&mut self, input: &'n str, shape: &[usize], axes: &[AxisRule]) -> Result<()> {
        take_input(&self.names, &mut self.values, input, shape, axes)
    }

    /// The value of every dim, in the order of the names; an error names a dim that no
    /// input shape gave a value.
    pub fn finish(&self) -> Result<[usize; N]> {
        let mut out = [0; N];
        finish_into(&self.names, &self.values, &mut out)?;
        Ok(out)
    }
}

/// [`DimsSolver::input`] past its `N`: one copy for every number of dims.
fn take_input<'n>(
    names: &[&'n str],
    values: &mut [Option<Source<'n>>],
    input: &'n str,
    shape: &[usize],
    axes: &[AxisRule],
) -> Result<()> {
    if shape.len() != axes.len() {
        return Err(Error::Shape {
            tensor: input.to_owned(),
            found: shape.to_vec(),
            reason: format!(
                "rank {} where the model declares rank {}",
                shape.len(),
                axes.len()
            ),
        });
    }
    for (axis, (&size, rule)) in shape.iter().zip(axes).enumerate() {
        match *rule {
            AxisRule::Fixed(fixed) => {
                if size != fixed {
                    return Err(Error::Dim {
                        dim: format!("{input}[{axis}]"),
                        reason: format!(
                            "the model fixes axis {axis} of `{input}` to {fixed}, the shape says {size}"
                        ),
                    });
                }
            }
            AxisRule::Dim(i) => {
                let Some(name) = names.get(i).copied() else {
                    return Err(Error::Dim {
                        dim: format!("{input}[{axis}]"),
                        reason: format!("refers to dim number {i}, of {}", names.len()),
                    });
                };
                if i64::try_from(size).is_err() {
                    return Err(Error::Dim {
                        dim: name.to_owned(),
                        reason: format!(
                            "{size} (axis {axis} of `{input}`) exceeds the largest ONNX dim, {}",
                            i64::MAX
                        ),
                    });
                }
                match values[i] {
                    None => values[i] = Some((size, input, axis)),
                    Some((known, _, _)) if known == size => {}
                    Some((known, other, other_axis)) => {
                        return Err(Error::Dim {
                            dim: name.to_owned(),
                            reason: format!(
                                "axis {other_axis} of `{other}` says {known}, \
                                 axis {axis} of `{input}` says {size}"
                            ),
                        });
                    }
                }
            }
        }
    }
    Ok(())
}

/// [`DimsSolver::finish`] past its `N`, into `out` (as long as `names`).
fn finish_into(names: &[&str], values: &[Option<Source<'_>>], out: &mut [usize]) -> Result<()> {
    for ((slot, value), name) in out.iter_mut().zip(values).zip(names) {
        match value {
            Some((value, _, _)) => *slot = *value,
            None => {
                return Err(Error::Dim {
                    dim: (*name).to_owned(),
                    reason: "no input shape gives it a value".into(),
                });
            }
        }
    }
    Ok(())
}

/// The dims named `names`, solved from a table of input shapes: each entry of `inputs` is
/// an input's name, its shape, and the index in `rules` of how the model sizes its axes
/// (inputs sized alike share one list, which keeps the generated table small). Checks as
/// [`DimsSolver::input`] does, input by input in table order, then as
/// [`DimsSolver::finish`]; an index past the end of `rules` is an error naming the input.
pub fn solve<'n, const N: usize>(
    names: [&'n str; N],
    rules: &[&[AxisRule]],
    inputs: &[(&'n str, &[usize], usize)],
) -> Result<[usize; N]> {
    let mut values = [None; N];
    let mut out = [0; N];
    solve_into(&names, &mut values, rules, inputs, &mut out)?;
    Ok(out)
}

/// [`solve`] past its `N` (`values` all `None`, `out` as long as `names`): the one copy
/// every generated `from_input_shapes` calls.
fn solve_into<'n>(
    names: &[&'n str],
    values: &mut [Option<Source<'n>>],
    rules: &[&[AxisRule]],
    inputs: &[(&'n str, &[usize], usize)],
    out: &mut [usize],
) -> Result<()> {
    for &(input, shape, rule) in inputs {
        let Some(axes) = rules.get(rule) else {
            return Err(Error::Dim {
                dim: input.to_owned(),
                reason: format!("refers to axis rules number {rule}, of {}", rules.len()),
            });
        };
        take_input(names, values, input, shape, axes)?;
    }
    finish_into(names, values, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use AxisRule::{Dim, Fixed};

    #[test]
    fn consistent_shapes_solve() {
        let mut s = DimsSolver::new(["batch", "samples"]);
        s.input("input", &[1, 576], &[Dim(0), Dim(1)]).unwrap();
        s.input("state", &[2, 1, 128], &[Fixed(2), Dim(0), Fixed(128)])
            .unwrap();
        s.input("sr", &[], &[]).unwrap();
        assert_eq!(s.finish().unwrap(), [1, 576]);
    }

    #[test]
    fn disagreements_name_the_dim() {
        let mut s = DimsSolver::new(["batch"]);
        s.input("input", &[1, 576], &[Dim(0), Fixed(576)]).unwrap();
        let e = s
            .input("state", &[2, 3, 128], &[Fixed(2), Dim(0), Fixed(128)])
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "dimension `batch`: axis 0 of `input` says 1, axis 1 of `state` says 3"
        );
        let e = s
            .input("state", &[3, 1, 128], &[Fixed(2), Dim(0), Fixed(128)])
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "dimension `state[0]`: the model fixes axis 0 of `state` to 2, the shape says 3"
        );
        let e = s
            .input("state", &[2, 1], &[Fixed(2), Dim(0), Fixed(128)])
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("rank 2 where the model declares rank 3"),
            "{e}"
        );
        let e = DimsSolver::new(["n"]).finish().unwrap_err();
        assert!(e.to_string().contains("`n`"), "{e}");
    }

    #[test]
    fn solve_reads_a_table_with_shared_rules() {
        let rules: &[&[AxisRule]] = &[&[Dim(0), Fixed(16)], &[Fixed(2), Dim(0), Dim(1)]];
        let dims = solve(
            ["batch", "len"],
            rules,
            &[("a", &[3, 16], 0), ("b", &[3, 16], 0), ("c", &[2, 3, 7], 1)],
        )
        .unwrap();
        assert_eq!(dims, [3, 7]);
        // Inputs are checked in table order; the error names the one that disagrees.
        let e = solve(["batch"], rules, &[("a", &[3, 16], 0), ("b", &[4, 16], 0)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "dimension `batch`: axis 0 of `a` says 3, axis 0 of `b` says 4"
        );
        let e = solve(["batch"], rules, &[("a", &[3, 15], 0)]).unwrap_err();
        assert!(e.to_string().contains("fixes axis 1 of `a` to 16"), "{e}");
        // A dim no input sizes, and a rules index past the end, are errors, not panics.
        let e = solve(["batch", "len"], rules, &[("a", &[3, 16], 0)]).unwrap_err();
        assert!(e.to_string().contains("`len`"), "{e}");
        let e = solve(["batch"], rules, &[("a", &[3, 16], 2)]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "dimension `a`: refers to axis rules number 2, of 2"
        );
        assert_eq!(solve([], &[], &[]).unwrap(), [0usize; 0]);
    }
}

/// One step of a size program: how generated code writes the size of an output axis that
/// the graph computes from the dims (codegen's shape inference). A stack machine over `i64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeOp {
    /// Push a constant.
    Const(i64),
    /// Push dim number `i` of the program's dims.
    Dim(usize),
    /// Pop two, push their sum.
    Add,
    /// Pop two, push their product.
    Mul,
    /// Pop the divisor, then the dividend; push the floor of their quotient.
    FloorDiv,
    /// Pop two, push the smaller.
    Min,
    /// Pop two, push the larger.
    Max,
}

/// The size of axis `axis` of output `output`, which the graph computes as `expr` (the
/// program `program` over `dims`, each dim's name and value): an error, never a wrapped or
/// negative size, when the arithmetic overflows, divides by zero or gives a negative size
/// (inputs too small for the model).
pub fn sized_axis(
    program: &[SizeOp],
    dims: &[(&str, usize)],
    output: &str,
    axis: usize,
    expr: &str,
) -> Result<usize> {
    let fail = |why: &str| {
        let values: Vec<String> = dims.iter().map(|(n, v)| format!("{n} = {v}")).collect();
        Error::Dim {
            dim: format!("{output}[{axis}]"),
            reason: format!(
                "the graph computes it as `{expr}`, which {why} with {}",
                if values.is_empty() {
                    "no dims".to_owned()
                } else {
                    values.join(", ")
                }
            ),
        }
    };
    // Programs are short (codegen caps an expression's size); a fixed stack allocates nothing.
    let mut stack = [0i64; 32];
    let mut top = 0usize;
    for op in program {
        let value = match *op {
            SizeOp::Const(c) => c,
            SizeOp::Dim(i) => {
                let v = dims
                    .get(i)
                    .ok_or_else(|| fail("reads a dim it is not given"))?
                    .1;
                i64::try_from(v).map_err(|_| fail("overflows"))?
            }
            binary => {
                if top < 2 {
                    return Err(fail("is malformed"));
                }
                top -= 2;
                let (a, b) = (stack[top], stack[top + 1]);
                let r = match binary {
                    SizeOp::Add => a.checked_add(b),
                    SizeOp::Mul => a.checked_mul(b),
                    SizeOp::FloorDiv if b == 0 => return Err(fail("divides by zero")),
                    SizeOp::FloorDiv => a.checked_div(b).map(|q| {
                        if a % b != 0 && ((a < 0) != (b < 0)) {
                            q - 1
                        } else {
                            q
                        }
                    }),
                    SizeOp::Min => Some(a.min(b)),
                    _ => Some(a.max(b)),
                };
                r.ok_or_else(|| fail("overflows"))?
            }
        };
        if top == stack.len() {
            return Err(fail("is too long"));
        }
        stack[top] = value;
        top += 1;
    }
    match top {
        1 => usize::try_from(stack[0]).map_err(|_| {
            fail(&format!(
                "is {}, a negative size (the inputs are too small for the model)",
                stack[0]
            ))
        }),
        _ => Err(fail("is malformed")),
    }
}

#[cfg(test)]
mod sized_axis_tests {
    use super::*;

    /// floor((w - 1) / 8) + 1
    const PROGRAM: [SizeOp; 9] = [
        SizeOp::Const(1),
        SizeOp::Dim(0),
        SizeOp::Mul,
        SizeOp::Const(-1),
        SizeOp::Add,
        SizeOp::Const(8),
        SizeOp::FloorDiv,
        SizeOp::Const(1),
        SizeOp::Add,
    ];

    #[test]
    fn evaluates_with_floor_division() {
        for (w, want) in [(1, 1), (8, 1), (9, 2), (100, 13)] {
            assert_eq!(
                sized_axis(&PROGRAM, &[("w", w)], "y", 1, "e").unwrap(),
                want
            );
        }
    }

    #[test]
    fn negative_sizes_overflow_and_division_by_zero_are_errors_naming_the_axis() {
        let e = sized_axis(&PROGRAM[..7], &[("w", 0)], "y", 1, "floor((w - 1) / 8)").unwrap_err();
        assert_eq!(
            e.to_string(),
            "dimension `y[1]`: the graph computes it as `floor((w - 1) / 8)`, which is -1, a \
             negative size (the inputs are too small for the model) with w = 0"
        );
        let mul = [SizeOp::Dim(0), SizeOp::Dim(0), SizeOp::Mul];
        let e = sized_axis(&mul, &[("n", usize::MAX / 2)], "y", 0, "n*n").unwrap_err();
        assert!(e.to_string().contains("overflows"), "{e}");
        let div = [SizeOp::Const(4), SizeOp::Dim(0), SizeOp::FloorDiv];
        let e = sized_axis(&div, &[("n", 0)], "y", 0, "floor(4 / n)").unwrap_err();
        assert!(e.to_string().contains("divides by zero"), "{e}");
        assert!(sized_axis(&[SizeOp::Add], &[], "y", 0, "?").is_err());
        assert!(sized_axis(&[SizeOp::Dim(3)], &[], "y", 0, "?").is_err());
    }
}
