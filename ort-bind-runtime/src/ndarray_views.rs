//! `ndarray` views of host tensors, without copies (feature `ndarray`).
//!
//! A bound host tensor is one contiguous row-major buffer, which is exactly an
//! `ndarray` view: [`TensorRef::as_array`] reads an output in place, and
//! [`TensorMut::as_array_mut`] writes an input in place. The view's dimension type follows
//! the tensor's shape type: `(Dyn, Fix<3>)` gives `Ix2`, `()` gives `Ix0`, tuples longer
//! than six axes and `AnyRank` give `IxDyn`. [`TensorMut::assign`] fills an input from any
//! `ArrayBase` (owned, a view, a slice of a larger array, any memory order) of the same
//! shape. Packed element types (`Int4x2`, ...) hold several elements per value and have
//! no such view: the methods need [`Unpacked`](crate::Unpacked).
//!
//! The dependency accepts `ndarray` 0.15, 0.16 and 0.17, so Cargo can use the version the
//! rest of a program already has (one `ndarray` in the tree instead of two whose types do
//! not mix).
//!
//! ```no_run
//! # #[cfg(feature = "ndarray")]
//! # fn demo(mut x: ort_bind_runtime::TensorMut<'_, f32, (ort_bind_runtime::Dyn, ort_bind_runtime::Fix<4>)>) -> ort_bind_runtime::Result<()> {
//! let image = ndarray::Array2::<f32>::zeros((2, 4));
//! x.assign(&image)?;                  // any ArrayBase of the tensor's shape
//! x.as_array_mut()[[0, 1]] = 1.0;     // or write in place through a view
//! # Ok(()) }
//! ```

use ndarray::{ArrayBase, ArrayView, ArrayViewMut, Data, Dimension, IxDyn};

use crate::device::HostDevice;
use crate::element::Unpacked;
use crate::error::{Error, Result};
use crate::shape::{AnyRank, Axis, Shape};
use crate::tensor::{Tensor, TensorMut, TensorRef};

/// The `ndarray` dimension type of a shape type.
pub trait NdShape: Shape {
    /// `Ix0` .. `Ix6` for tuples of up to six axes, `IxDyn` beyond and for [`AnyRank`].
    type Dim: Dimension;
}

impl NdShape for AnyRank {
    type Dim = IxDyn;
}

macro_rules! nd_shape {
    ($dim:ty; $($axis:ident),*) => {
        impl<$($axis: Axis),*> NdShape for ($($axis,)*) {
            type Dim = $dim;
        }
    };
}

nd_shape!(ndarray::Ix0;);
nd_shape!(ndarray::Ix1; A);
nd_shape!(ndarray::Ix2; A, B);
nd_shape!(ndarray::Ix3; A, B, C);
nd_shape!(ndarray::Ix4; A, B, C, D);
nd_shape!(ndarray::Ix5; A, B, C, D, E);
nd_shape!(ndarray::Ix6; A, B, C, D, E, F);
nd_shape!(IxDyn; A, B, C, D, E, F, G);
nd_shape!(IxDyn; A, B, C, D, E, F, G, H);
nd_shape!(IxDyn; A, B, C, D, E, F, G, H, I);
nd_shape!(IxDyn; A, B, C, D, E, F, G, H, I, J);
nd_shape!(IxDyn; A, B, C, D, E, F, G, H, I, J, K);
nd_shape!(IxDyn; A, B, C, D, E, F, G, H, I, J, K, L);

/// The dimension value for `dims`. A tensor's dims always have its shape type's rank (the
/// tensor checks them on every resize), so the conversion cannot fail for a real tensor.
fn dim_of<S: NdShape>(dims: &[usize]) -> S::Dim {
    match S::Dim::from_dimension(&IxDyn(dims)) {
        Some(dim) => dim,
        None => unreachable!("a tensor's dims {dims:?} have the rank of its shape type"),
    }
}

/// A view of `len == product(dims)` row-major elements.
fn view<'a, T, S: NdShape>(dims: &[usize], data: &'a [T]) -> ArrayView<'a, T, S::Dim> {
    match ArrayView::from_shape(dim_of::<S>(dims), data) {
        Ok(view) => view,
        Err(e) => unreachable!("a host tensor holds exactly its dims' element count: {e}"),
    }
}

fn view_mut<'a, T, S: NdShape>(dims: &[usize], data: &'a mut [T]) -> ArrayViewMut<'a, T, S::Dim> {
    match ArrayViewMut::from_shape(dim_of::<S>(dims), data) {
        Ok(view) => view,
        Err(e) => unreachable!("a host tensor holds exactly its dims' element count: {e}"),
    }
}

impl<'a, T: Unpacked, S: NdShape, D: HostDevice> TensorRef<'a, T, S, D> {
    /// The value as an `ndarray` view, in place (no copy).
    pub fn as_array(&self) -> ArrayView<'a, T, S::Dim> {
        view::<T, S>(self.dims(), self.as_slice())
    }
}

impl<T: Unpacked, S: NdShape, D: HostDevice> TensorMut<'_, T, S, D> {
    /// The tensor as a mutable `ndarray` view, in place (no copy).
    pub fn as_array_mut(&mut self) -> ArrayViewMut<'_, T, S::Dim> {
        let dims = self.dims().to_vec();
        view_mut::<T, S>(&dims, self.as_mut_slice())
    }

    /// The tensor as an `ndarray` view, in place (no copy).
    pub fn as_array(&self) -> ArrayView<'_, T, S::Dim> {
        view::<T, S>(self.dims(), self.as_slice())
    }

    /// Copies `array` in (any `ArrayBase`: owned, a view, strided, any memory order);
    /// its shape must equal the tensor's dims, else [`Error::Shape`].
    pub fn assign<A, E>(&mut self, array: &ArrayBase<A, E>) -> Result<()>
    where
        A: Data<Elem = T>,
        E: Dimension,
    {
        if array.shape() != self.dims() {
            return Err(Error::Shape {
                tensor: self.name().to_owned(),
                found: array.shape().to_vec(),
                reason: format!("the tensor's dims are {:?}", self.dims()),
            });
        }
        let dims = self.dims().to_vec();
        let mut target = view_mut::<T, IxDynShape>(&dims, self.as_mut_slice());
        target.assign(&array.view().into_dyn());
        Ok(())
    }
}

impl<T: Unpacked, S: NdShape, D: HostDevice> Tensor<T, S, D> {
    /// The tensor as an `ndarray` view, in place (no copy).
    pub fn as_array(&self) -> ArrayView<'_, T, S::Dim> {
        view::<T, S>(self.dims(), self.as_slice())
    }

    /// The tensor as a mutable `ndarray` view, in place (no copy).
    pub fn as_array_mut(&mut self) -> ArrayViewMut<'_, T, S::Dim> {
        let dims = self.dims().to_vec();
        view_mut::<T, S>(&dims, self.as_mut_slice())
    }
}

/// The shape type whose view is `IxDyn`, for rank-generic copies.
type IxDynShape = AnyRank;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shape::{Dyn, Fix};

    #[test]
    fn views_are_the_buffer_itself() {
        let mut t = Tensor::<f32, (Dyn, Fix<3>)>::new("x", &[2, 3]).unwrap();
        t.as_mut_slice().copy_from_slice(&[0., 1., 2., 3., 4., 5.]);
        let ptr = t.as_slice().as_ptr();
        let v: ArrayView<'_, f32, ndarray::Ix2> = t.as_array();
        assert_eq!(v.shape(), &[2, 3]);
        assert_eq!(v[[1, 2]], 5.0);
        assert_eq!(v.as_ptr(), ptr);
        let mut view = t.view_mut();
        view.as_array_mut()[[0, 0]] = 9.0;
        assert_eq!(view.as_slice()[0], 9.0);
        assert_eq!(view.as_array().as_ptr(), ptr);
        assert_eq!(t.view().as_array().as_ptr(), ptr);
    }

    #[test]
    fn assign_takes_any_layout_and_checks_the_shape() {
        let mut t = Tensor::<i64, (Dyn, Dyn)>::new("m", &[2, 3]).unwrap();
        // A transposed (column-major) view of a 3x2 array is a 2x3 array.
        let source = ndarray::Array2::from_shape_vec((3, 2), vec![0, 1, 2, 3, 4, 5]).unwrap();
        t.view_mut().assign(&source.t()).unwrap();
        assert_eq!(t.as_slice(), &[0, 2, 4, 1, 3, 5]);
        // Dynamic-rank sources work too; a wrong shape is an error naming the tensor.
        let wrong = ndarray::ArrayD::<i64>::zeros(IxDyn(&[3, 2]));
        let err = t.view_mut().assign(&wrong).unwrap_err();
        assert!(matches!(err, Error::Shape { .. }), "{err:?}");
        assert!(err.to_string().contains("`m`"), "{err}");
        assert_eq!(
            t.as_slice(),
            &[0, 2, 4, 1, 3, 5],
            "a failed assign writes nothing"
        );
    }

    #[test]
    fn any_rank_and_scalars() {
        let mut t = Tensor::<f32, AnyRank>::new("a", &[2, 1, 2]).unwrap();
        assert_eq!(t.as_array_mut().ndim(), 3);
        let s = Tensor::<f32, ()>::new("s", &[]).unwrap();
        let v: ArrayView<'_, f32, ndarray::Ix0> = s.as_array();
        assert_eq!(v[()], 0.0);
        // Eight axes: dynamic-rank view.
        type S8 = (Dyn, Dyn, Dyn, Dyn, Dyn, Dyn, Dyn, Dyn);
        let t8 = Tensor::<u8, S8>::new("t8", &[1; 8]).unwrap();
        assert_eq!(t8.as_array().ndim(), 8);
    }
}
