//! The matrix product both CPU backends run: `matrixmultiply` (through ndarray's `general_mat_mul`), which reads
//! strided operands directly, so a transposed weight is multiplied without being copied first. On the step's shapes
//! it is faster than the `gemm` crate candle calls, and `gemm`'s own threads slow the GPT step down on two cores
//! (BENCHMARKS.md, group 8).

use ndarray::linalg::general_mat_mul;
use ndarray::parallel::prelude::*;
use ndarray::{Array, ArrayD, ArrayView2, ArrayViewD, ArrayViewMut2, Axis, Dimension, Ix2, IxDyn, LinalgScalar};

use crate::error::{Error, Result};
use crate::memory;
use crate::parallel::{self, Work};
use crate::shape::Shape;

/// Below this many operand elements (`m·k + k·n`) matrixmultiply runs a product on one thread.
const SMALL_PRODUCT: usize = 1 << 15;

/// Whether matrixmultiply runs an `[m, inner] @ [inner, columns]` product on one thread.
pub(crate) fn runs_on_one_thread(m: usize, inner: usize, columns: usize) -> bool {
    m.saturating_mul(inner).saturating_add(inner.saturating_mul(columns)) < SMALL_PRODUCT
}

/// `lhs @ rhs` into `output` (`shape.num_elements()` values whose old contents are never read), which becomes the
/// row-major result of `shape`, the product's shape as `Shape::matmul` gives it. Batches broadcast; each operand is
/// read in its own layout. `backend` names the caller in an error.
pub(crate) fn product<E: LinalgScalar + Send + Sync>(
    backend: &'static str,
    lhs: ArrayViewD<'_, E>,
    rhs: ArrayViewD<'_, E>,
    shape: &Shape,
    output: Vec<E>,
) -> Result<ArrayD<E>> {
    let error = |error| Error::backend(backend, "matmul", error);
    // Each path below writes every element with β = 0, which matrixmultiply documents as never reading the output:
    // its stale values need no clearing.
    let mut output = Array::from_shape_vec(shape.dims(), output).map_err(error)?;
    if shape.rank() == 2 {
        let (lhs, rhs) = (fixed_rank::<E, Ix2>(backend, lhs)?, fixed_rank::<E, Ix2>(backend, rhs)?);
        let mut matrix = output.view_mut().into_dimensionality::<Ix2>().map_err(error)?;
        general_mat_mul(E::one(), &lhs, &rhs, E::zero(), &mut matrix);
        return Ok(output);
    }
    let rows = shape.dims()[..shape.rank() - 1].iter().product::<usize>();
    let (inner, columns) = (lhs.shape()[lhs.ndim() - 1], shape.dims()[shape.rank() - 1]);
    // A batch of rows times one matrix (a layer's weight): one product of all the rows, when they are laid out
    // as one matrix, rather than a small product per batch entry.
    if rhs.ndim() == 2
        && let Ok(all_rows) = lhs.view().into_shape_with_order((rows, inner))
    {
        let mut all_outputs = output.view_mut().into_shape_with_order((rows, columns)).map_err(error)?;
        general_mat_mul(E::one(), &all_rows, &fixed_rank::<E, Ix2>(backend, rhs)?, E::zero(), &mut all_outputs);
        return Ok(output);
    }
    let (batch, m) = (&shape.dims()[..shape.rank() - 2], shape.dims()[shape.rank() - 2]);
    let batch_len: usize = batch.iter().product();
    let (lhs, rhs) = (batch_matrices(backend, &lhs, batch)?, batch_matrices(backend, &rhs, batch)?);
    let mut outputs = output.view_mut().into_shape_with_order((batch_len, m, columns)).map_err(error)?;
    let product = |(mut out, (a, b)): (ArrayViewMut2<'_, E>, (&ArrayView2<'_, E>, &ArrayView2<'_, E>))| {
        general_mat_mul(E::one(), a, b, E::zero(), &mut out);
    };
    // matrixmultiply gives a product this small one thread (its operands hold under 2^15 elements), so a batch of
    // them (attention's per-head products) is split across threads here instead.
    let small = runs_on_one_thread(m, inner, columns);
    if small && parallel::split(Work::Heavy, shape.num_elements()) {
        outputs.axis_iter_mut(Axis(0)).into_par_iter().zip(lhs.par_iter().zip(&rhs)).for_each(product);
    } else {
        outputs.outer_iter_mut().zip(lhs.iter().zip(&rhs)).for_each(product);
    }
    Ok(output)
}

/// An operand's matrices, its batch broadcast to `batch`, in row-major batch order: views with the operand's own
/// strides (a permuted or transposed operand, a broadcast one), which `matrixmultiply` reads without a copy.
fn batch_matrices<'a, E>(
    backend: &'static str,
    array: &'a ArrayViewD<'_, E>,
    batch: &[usize],
) -> Result<Vec<ArrayView2<'a, E>>> {
    let shape = Shape::new(array.shape());
    let (_, rows, columns) = shape.matrix_parts();
    let full = [batch, &[rows, columns]].concat();
    let broadcast = array
        .broadcast(IxDyn(&full))
        .ok_or_else(|| Error::shape_mismatch("matmul", &shape, &Shape::new(full.clone())))?;
    let mut matrices = memory::try_vec("matmul", batch.iter().product())?;
    collect_matrices(backend, broadcast, &mut matrices)?;
    Ok(matrices)
}

fn collect_matrices<'a, E>(
    backend: &'static str,
    view: ArrayViewD<'a, E>,
    matrices: &mut Vec<ArrayView2<'a, E>>,
) -> Result<()> {
    if view.ndim() == 2 {
        matrices.push(fixed_rank::<E, Ix2>(backend, view)?);
        return Ok(());
    }
    view.into_outer_iter().try_for_each(|inner| collect_matrices(backend, inner, matrices))
}

fn fixed_rank<'a, E, D: Dimension>(
    backend: &'static str,
    view: ArrayViewD<'a, E>,
) -> Result<ndarray::ArrayView<'a, E, D>> {
    view.into_dimensionality::<D>().map_err(|error| Error::backend(backend, "matmul", error))
}
