//! Shapes in the type system: each axis is either [`Fix<N>`] (fixed at compile
//! time) or [`Dyn`] (sized at run time), and a shape is a tuple of axes.
//!
//! `(Fix<1>, Dyn, Fix<3>)` is a rank-3 shape whose middle axis is chosen when
//! the binding is created; `()` is a scalar; [`AnyRank`] accepts any rank (for
//! model values that declare no shape).

/// One axis whose size is fixed at compile time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fix<const N: usize>;

/// One axis whose size is chosen at run time (a symbolic or unknown ONNX dim).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Dyn;

/// A shape of unknown rank: rank and sizes are both chosen at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AnyRank;

/// One axis of a [`Shape`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tensor axis",
    label = "expected `Fix<N>` or `Dyn`",
    note = "each axis of a shape tuple is `ort_bind::Fix<N>` (fixed size N) or `ort_bind::Dyn` (sized at run time)"
)]
pub trait Axis: 'static {
    /// The fixed size, or `None` for a dynamic axis.
    const FIXED: Option<usize>;
}

impl<const N: usize> Axis for Fix<N> {
    const FIXED: Option<usize> = Some(N);
}

impl Axis for Dyn {
    const FIXED: Option<usize> = None;
}

/// A tensor shape known to the type system.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tensor shape",
    label = "expected a tuple of `Fix<N>` / `Dyn` axes, `()` for a scalar, or `AnyRank`"
)]
pub trait Shape: 'static {
    /// Rank, or `None` when any rank is accepted.
    const RANK: Option<usize>;
    /// Fixed size of each axis (`None` for a dynamic one); empty for [`AnyRank`].
    const AXES: &'static [Option<usize>];

    /// Checks that `dims` fits this shape; on mismatch returns a description of the problem.
    fn check(dims: &[usize]) -> Result<(), String> {
        check_dims(dims, Self::RANK, Self::AXES)
    }
}

/// [`Shape::check`] for a shape of `rank` (`None`: any) with fixed `axes`: one copy for every
/// shape type.
fn check_dims(dims: &[usize], rank: Option<usize>, axes: &[Option<usize>]) -> Result<(), String> {
    let Some(rank) = rank else {
        return Ok(());
    };
    if dims.len() != rank {
        return Err(format!(
            "rank {} where the shape has rank {rank}",
            dims.len()
        ));
    }
    for (axis, (&got, want)) in dims.iter().zip(axes).enumerate() {
        if let Some(want) = *want
            && got != want
        {
            return Err(format!(
                "axis {axis} is {got} where the shape fixes it to {want}"
            ));
        }
    }
    Ok(())
}

impl Shape for AnyRank {
    const RANK: Option<usize> = None;
    const AXES: &'static [Option<usize>] = &[];
}

/// Implemented by shapes of rank `R`; generated code uses it to reject a shape of the
/// wrong rank at compile time, even when it hides behind a type alias.
#[diagnostic::on_unimplemented(
    message = "the shape `{Self}` does not have the rank the model declares",
    label = "wrong number of axes",
    note = "the model declares this value with a different rank; write one `Fix<N>`/`Dyn` axis per model dimension"
)]
pub trait HasRank<const R: usize>: Shape {}

/// Implemented by axes compatible with a model dimension fixed to `N`: `Fix<N>` or `Dyn`.
#[diagnostic::on_unimplemented(
    message = "axis `{Self}` contradicts the model, which fixes this dimension",
    label = "the model fixes this axis to a different size",
    note = "use `Fix<N>` with the model's size, or `Dyn`"
)]
pub trait AcceptsFixed<const N: usize>: Axis {}

impl<const N: usize> AcceptsFixed<N> for Fix<N> {}
impl<const N: usize> AcceptsFixed<N> for Dyn {}

macro_rules! tuple_shape {
    ($rank:literal; $($axis:ident),*) => {
        impl<$($axis: Axis),*> Shape for ($($axis,)*) {
            const RANK: Option<usize> = Some($rank);
            const AXES: &'static [Option<usize>] = &[$($axis::FIXED),*];
        }
        impl<$($axis: Axis),*> HasRank<$rank> for ($($axis,)*) {}
    };
}

tuple_shape!(0;);
tuple_shape!(1; A);
tuple_shape!(2; A, B);
tuple_shape!(3; A, B, C);
tuple_shape!(4; A, B, C, D);
tuple_shape!(5; A, B, C, D, E);
tuple_shape!(6; A, B, C, D, E, F);
tuple_shape!(7; A, B, C, D, E, F, G);
tuple_shape!(8; A, B, C, D, E, F, G, H);
tuple_shape!(9; A, B, C, D, E, F, G, H, I);
tuple_shape!(10; A, B, C, D, E, F, G, H, I, J);
tuple_shape!(11; A, B, C, D, E, F, G, H, I, J, K);
tuple_shape!(12; A, B, C, D, E, F, G, H, I, J, K, L);

/// An input whose dims its view may change (`TensorMut::resize`, `fill_resized`, `set`;
/// the same on `StringTensorMut`): generated `BindingIo` impls report
/// such changes through `take_resized` and derive the binding's dims from `input_dims`.
pub trait InputShape {
    /// The input's current dims.
    fn input_dims(&self) -> &[usize];
    /// Whether its view gave it new dims since the last call.
    fn take_resized(&mut self) -> bool;
}

/// The dims of a shape of `rank` with fixed `axes` (one [`Shape`]'s `RANK` and `AXES`) that
/// hold `count` elements, when the shape has exactly one dynamic axis: that axis holds what
/// the fixed ones leave (`fill_resized` on the input views). The dims are the first `rank`
/// of the array (tuple shapes have rank 12 at most); an error says what is wrong. Nothing is
/// allocated but an error.
/// One copy for every shape type.
pub(crate) fn dims_holding(
    rank: Option<usize>,
    axes: &[Option<usize>],
    count: usize,
) -> Result<[usize; 12], String> {
    let problem = |problem: String| problem;
    let shape = || {
        let axes: Vec<String> = axes
            .iter()
            .map(|a| a.map_or_else(|| "?".to_owned(), |n| n.to_string()))
            .collect();
        format!("[{}]", axes.join(", "))
    };
    let free = axes.iter().filter(|a| a.is_none()).count();
    let axis = match axes.iter().position(Option::is_none) {
        Some(axis) if free == 1 && axes.len() <= 12 => axis,
        _ => {
            let has = match rank {
                None => "its shape type leaves the rank open".to_owned(),
                Some(_) => format!("its shape type {} has {free} dynamic axes", shape()),
            };
            return Err(problem(format!(
                "`fill_resized` sizes the one dynamic axis of the shape type, and {has}: \
                 give the dims with `set(dims, data)`"
            )));
        }
    };
    let slice: usize = axes.iter().flatten().product();
    if slice == 0 || !count.is_multiple_of(slice) {
        return Err(problem(format!(
            "{count} elements do not fill whole slices of {slice} along axis {axis} of {}",
            shape()
        )));
    }
    let mut dims = [0; 12];
    for (d, a) in dims.iter_mut().zip(axes) {
        *d = a.unwrap_or(count / slice);
    }
    Ok(dims)
}

/// Number of elements of a tensor with these dims, or `None` when the product overflows.
pub fn element_count(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_dynamic_axis_is_sized_to_hold_the_elements() {
        type Rows = (Dyn, Fix<3>);
        assert_eq!(
            dims_holding(Rows::RANK, Rows::AXES, 6).unwrap()[..2],
            [2, 3]
        );
        type Chunk = (Fix<1>, Dyn);
        assert_eq!(
            dims_holding(Chunk::RANK, Chunk::AXES, 5).unwrap()[..2],
            [1, 5]
        );
        assert_eq!(
            dims_holding(Rows::RANK, Rows::AXES, 0).unwrap()[..2],
            [0, 3]
        );
        let err = dims_holding(Rows::RANK, Rows::AXES, 7)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("7 elements do not fill whole slices of 3"),
            "{err}"
        );
        type Two = (Dyn, Dyn);
        let err = dims_holding(Two::RANK, Two::AXES, 4)
            .unwrap_err()
            .to_string();
        assert!(err.contains("[?, ?] has 2 dynamic axes"), "{err}");
        let err = dims_holding(AnyRank::RANK, AnyRank::AXES, 4).unwrap_err();
        assert!(err.contains("leaves the rank open"), "{err}");
        type Fixed = (Fix<2>,);
        let err = dims_holding(Fixed::RANK, Fixed::AXES, 2)
            .unwrap_err()
            .to_string();
        assert!(err.contains("has 0 dynamic axes"), "{err}");
    }

    #[test]
    fn tuple_shapes_know_their_axes() {
        type S = (Fix<1>, Dyn, Fix<3>);
        assert_eq!(S::RANK, Some(3));
        assert_eq!(S::AXES, &[Some(1), None, Some(3)]);
        assert!(S::check(&[1, 7, 3]).is_ok());
        assert!(S::check(&[2, 7, 3]).unwrap_err().contains("axis 0 is 2"));
        assert!(S::check(&[1, 3]).unwrap_err().contains("rank 2"));
        assert_eq!(<() as Shape>::RANK, Some(0));
        assert!(AnyRank::check(&[5, 6, 7, 8]).is_ok());
    }

    #[test]
    fn element_count_detects_overflow() {
        assert_eq!(element_count(&[]), Some(1));
        assert_eq!(element_count(&[2, 3, 0]), Some(0));
        assert_eq!(element_count(&[usize::MAX, 2]), None);
    }
}
