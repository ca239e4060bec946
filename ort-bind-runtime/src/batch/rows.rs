//! One item's share of a batch: a [`Row`] (dims without the batch axis, and data), and
//! the two copies batching makes: an item's row into the bound input, a row of the bound
//! output back out.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::tensor::{TensorMut, TensorRef};

/// One item's value of a batched input or output: its dims without the batch axis and its
/// elements, row-major. A 3x48x192 image is `Row::new([3, 48, 192], pixels)?`; its dims
/// take part in the checks a batcher makes, so a 3x96x96 image of the same length is
/// never mistaken for it.
///
/// ```
/// use ort_bind_runtime::batch::Row;
/// let row = Row::new([2, 3], vec![0.0f32; 6])?;
/// assert_eq!((row.dims(), row.len()), (&[2, 3][..], 6));
/// assert!(Row::new([2, 3], vec![0.0f32; 5]).is_err());
/// # Ok::<(), ort_bind_runtime::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Row<T> {
    dims: Vec<usize>,
    data: Vec<T>,
}

impl<T> Row<T> {
    /// A row of `dims` holding `data` (row-major); [`Error::Shape`] when the dims do not
    /// hold exactly `data.len()` elements.
    pub fn new(dims: impl Into<Vec<usize>>, data: impl Into<Vec<T>>) -> Result<Self> {
        let (dims, data) = (dims.into(), data.into());
        let elements = dims
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .unwrap_or(usize::MAX);
        if elements != data.len() {
            return Err(Error::Shape {
                tensor: "a batch row".into(),
                found: dims,
                reason: format!(
                    "they hold {elements} elements but the row's data has {}",
                    data.len()
                ),
            });
        }
        Ok(Row { dims, data })
    }

    /// The dims, without the batch axis.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The elements, row-major.
    pub fn data(&self) -> &[T] {
        &self.data
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether the row holds no element (a dim is 0).
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The elements, row-major, without the dims.
    pub fn into_data(self) -> Vec<T> {
        self.data
    }

    /// The shape of a batch holding just this row: `[1, dims..]` (what a generated
    /// batcher checks against the model).
    pub fn batch_of_one(&self) -> Vec<usize> {
        std::iter::once(1)
            .chain(self.dims.iter().copied())
            .collect()
    }
}

/// Copies one item into row `row` (along axis 0) of a batched input: what a
/// [`Batching::gather`](super::Batching::gather) does per input. `item` must hold exactly
/// one row (the input's shape without its batch axis, row-major); otherwise
/// [`Error::Length`] names the input.
pub fn gather_row<T: Element, S: Shape>(
    input: &mut TensorMut<'_, T, S>,
    row: usize,
    item: &[T],
) -> Result<()> {
    let (name, dims) = (input.name().to_owned(), input.dims().to_vec());
    let dst = input.row_mut(row)?;
    if dst.len() != item.len() {
        return Err(Error::Length {
            tensor: name,
            expected: dst.len(),
            found: item.len(),
            dims: dims.get(1..).unwrap_or_default().to_vec(),
        });
    }
    dst.copy_from_slice(item);
    Ok(())
}

/// Copies row `row` (along axis 0) of a batched output out, with its dims: what a
/// [`Batching::scatter`](super::Batching::scatter) does per output (the reply must outlive
/// the bound buffer, so this is the one allocation per reply and output).
pub fn scatter_row<T: Element, S: Shape>(
    output: &TensorRef<'_, T, S>,
    row: usize,
) -> Result<Row<T>> {
    let data = output.row(row)?.to_vec();
    Ok(Row {
        dims: output.dims().get(1..).unwrap_or_default().to_vec(),
        data,
    })
}
