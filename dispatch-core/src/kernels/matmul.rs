//! The matrix product both CPU backends run: `matrixmultiply`, which reads strided operands directly, so a transposed
//! weight is multiplied without being copied first. On the step's shapes it is faster than the `gemm` crate candle
//! calls, and `gemm`'s own threads slow the GPT step down on two cores (BENCHMARKS.md, group 8).

use std::mem::MaybeUninit;

use ndarray::{Array, ArrayD, ArrayView2, ArrayViewD, Dimension, Ix2, IxDyn, LinalgScalar, s};

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::memory;
use crate::parallel::{self, Work};
use crate::shape::Shape;

/// Below this many operand elements (`m·k + k·n`) a product runs on one thread (matrixmultiply's own rule).
const SMALL_PRODUCT: usize = 1 << 15;

/// An element type matrixmultiply multiplies.
pub(crate) trait Gemm: LinalgScalar + Send + Sync {
    /// `C ← A B` for the `m×k` matrix `A` at `a` and the `k×n` matrix `B` at `b` (each element `(i, j)` at
    /// `i·rows + j·columns` from its pointer), into the row-major `m×n` matrix `C`, whose old contents are never read.
    ///
    /// # Safety
    /// Each pointer is valid for every element its matrix's strides reach, and `c` for `m·n` writes.
    unsafe fn product_into(m: usize, k: usize, n: usize, a: Strided<Self>, b: Strided<Self>, c: *mut Self);
}

/// A matrix's first element and its row and column strides, in elements, as matrixmultiply reads it.
pub(crate) struct Strided<E> {
    first: *const E,
    rows: isize,
    columns: isize,
}

impl<E> Strided<E> {
    fn of(matrix: &ArrayView2<'_, E>) -> Self {
        let strides = matrix.strides();
        Self { first: matrix.as_ptr(), rows: strides[0], columns: strides[1] }
    }
}

impl<E> Strided<E> {
    /// The transposed matrix: the same elements, rows and columns exchanged.
    fn transposed(self) -> Self {
        Self { first: self.first, rows: self.columns, columns: self.rows }
    }
}

/// A product `C ← A B` as matrixmultiply is called: `A` is `m×k`, `B` is `k×n`, and `C`'s element `(i, j)` is at
/// `i·c_rows + j·c_columns`.
struct Call<E> {
    m: usize,
    k: usize,
    n: usize,
    a: Strided<E>,
    b: Strided<E>,
    c_rows: isize,
    c_columns: isize,
}

impl<E> Call<E> {
    /// The product into a row-major `m×n` `C`, or the same product transposed, `Cᵀ ← Bᵀ Aᵀ`, when `C` has more
    /// columns than rows (only strides change, and each element is the same sum in the same order). matrixmultiply
    /// splits a product across two threads by blocks of 64 rows once there are 96 or more, else by columns, and
    /// packs the right operand on one thread, so the wider side goes on the left: the larger GPT's step (its
    /// weights' gradients, `[256, 128] @ [128, 768]`) took 0.976x and 0.987x its time (BENCHMARKS.md, group 8).
    fn oriented(m: usize, k: usize, n: usize, a: Strided<E>, b: Strided<E>) -> Self {
        let row = isize::try_from(n).unwrap_or(isize::MAX);
        if n > m {
            Self { m: n, k, n: m, a: b.transposed(), b: a.transposed(), c_rows: 1, c_columns: row }
        } else {
            Self { m, k, n, a, b, c_rows: row, c_columns: 1 }
        }
    }
}

/// `Gemm` for an element type, by matrixmultiply's function for it (`sgemm`, `dgemm`).
macro_rules! gemm_by {
    ($element:ty, $gemm:path) => {
        impl Gemm for $element {
            unsafe fn product_into(
                m: usize,
                k: usize,
                n: usize,
                a: Strided<$element>,
                b: Strided<$element>,
                c: *mut $element,
            ) {
                let Call { m, k, n, a, b, c_rows, c_columns } = Call::oriented(m, k, n, a, b);
                // SAFETY: the caller's contract, `Call::oriented` reaching the same elements of each matrix; with
                // β = 0 matrixmultiply documents that C need not be initialised.
                unsafe {
                    $gemm(
                        m, k, n, 1.0, a.first, a.rows, a.columns, b.first, b.rows, b.columns, 0.0, c, c_rows, c_columns,
                    )
                }
            }
        }
    };
}

gemm_by!(f32, matrixmultiply::sgemm);
gemm_by!(f64, matrixmultiply::dgemm);

/// `lhs @ rhs` written into every one of `output`'s slots, uninitialised memory as they may be; an error, with none
/// written, unless the operands' inner sizes agree and `output` holds exactly the product.
fn product_into<E: Gemm>(
    lhs: &ArrayView2<'_, E>,
    rhs: &ArrayView2<'_, E>,
    output: &mut [MaybeUninit<E>],
) -> Result<()> {
    let (m, k, n) = (lhs.nrows(), lhs.ncols(), rhs.ncols());
    if rhs.nrows() != k || m.checked_mul(n) != Some(output.len()) {
        return Err(Error::shape_mismatch("matmul", &Shape::new(lhs.shape()), &Shape::new(rhs.shape())));
    }
    let threads = rayon::current_num_threads();
    if threads > 1 && !runs_on_one_thread(m, k, n) && n > 0 {
        parallel::rearm_polling();
        // Bands of rows, one a thread: matrixmultiply runs each on the thread that calls it (its own threads are
        // left off), so every product runs on rayon's pool, which `parallel::keep_pool_spinning` can keep awake.
        let band = m.div_ceil(threads).next_multiple_of(BAND_ROWS);
        output.par_chunks_mut(band.saturating_mul(n)).enumerate().for_each(|(index, slots)| {
            let start = index.saturating_mul(band);
            let rows = slots.len() / n;
            let part = lhs.slice(s![start..start.saturating_add(rows), ..]);
            // SAFETY: as below, for the band's rows of `lhs` and the band's `rows·n` slots of `output`.
            unsafe { E::product_into(rows, k, n, Strided::of(&part), Strided::of(rhs), slots.as_mut_ptr().cast()) };
        });
        return Ok(());
    }
    // SAFETY: the views' pointers and strides reach only their own elements, and `output` has the `m·n` slots.
    unsafe { E::product_into(m, k, n, Strided::of(lhs), Strided::of(rhs), output.as_mut_ptr().cast()) };
    Ok(())
}

/// A band of rows is a multiple of this many, the most rows matrixmultiply's kernels compute at once.
const BAND_ROWS: usize = 16;

/// Whether an `[m, inner] @ [inner, columns]` product runs whole on one thread rather than in bands of rows:
/// matrixmultiply's own rule for threading it, which the bands keep.
pub(crate) fn runs_on_one_thread(m: usize, inner: usize, columns: usize) -> bool {
    m.saturating_mul(inner).saturating_add(inner.saturating_mul(columns)) < SMALL_PRODUCT
}

/// `lhs @ rhs`, the row-major result of `shape` (the product's shape as `Shape::matmul` gives it), written into
/// `output`'s allocation: its elements are dropped unread and its room grown if short, so a buffer that held an
/// earlier tensor is reused without being cleared. Batches broadcast; each operand is read in its own layout.
/// `backend` names the caller in an error.
pub(crate) fn product<E: Gemm>(
    backend: &'static str,
    lhs: ArrayViewD<'_, E>,
    rhs: ArrayViewD<'_, E>,
    shape: &Shape,
    mut output: Vec<E>,
) -> Result<ArrayD<E>> {
    let error = |error| Error::backend(backend, "matmul", error);
    let len = shape.num_elements();
    output.clear();
    memory::try_room("matmul", &mut output, len)?;
    let slots = &mut output.spare_capacity_mut()[..len];
    if len > 0 {
        write_product(backend, lhs, rhs, shape, slots)?;
        // SAFETY: `write_product` returned Ok, so it wrote each of the first `len` slots.
        unsafe { output.set_len(len) };
    }
    Array::from_shape_vec(shape.dims(), output).map_err(error)
}

/// `lhs @ rhs` written into every one of `slots` (as many as `shape` has elements, at least one), or an error.
fn write_product<E: Gemm>(
    backend: &'static str,
    lhs: ArrayViewD<'_, E>,
    rhs: ArrayViewD<'_, E>,
    shape: &Shape,
    slots: &mut [MaybeUninit<E>],
) -> Result<()> {
    if shape.rank() == 2 {
        let (lhs, rhs) = (fixed_rank::<E, Ix2>(backend, lhs)?, fixed_rank::<E, Ix2>(backend, rhs)?);
        return product_into(&lhs, &rhs, slots);
    }
    let rows = shape.dims()[..shape.rank() - 1].iter().product::<usize>();
    let (inner, columns) = (lhs.shape()[lhs.ndim() - 1], shape.dims()[shape.rank() - 1]);
    // A batch of rows times one matrix (a layer's weight): one product of all the rows, when they are laid out
    // as one matrix, rather than a small product per batch entry.
    if rhs.ndim() == 2
        && let Ok(all_rows) = lhs.view().into_shape_with_order((rows, inner))
    {
        return product_into(&all_rows, &fixed_rank::<E, Ix2>(backend, rhs)?, slots);
    }
    let (batch, m) = (&shape.dims()[..shape.rank() - 2], shape.dims()[shape.rank() - 2]);
    let (lhs, rhs) = (batch_matrices(backend, &lhs, batch)?, batch_matrices(backend, &rhs, batch)?);
    // Each entry's product is `m·columns` slots, not 0 since `slots` is not empty; each product checks that its
    // slots are exactly its output, and the entries must cover them all.
    let matrix = m * columns;
    if lhs.len() != rhs.len() || matrix.checked_mul(lhs.len()) != Some(slots.len()) {
        return Err(Error::shape_mismatch("matmul", &Shape::new([lhs.len()]), &Shape::new([rhs.len()])));
    }
    // A product this small runs on one thread (its operands hold under 2^15 elements), so a batch of them
    // (attention's per-head products) is split across threads by entries instead.
    let small = runs_on_one_thread(m, inner, columns);
    if small && parallel::split(Work::Heavy, shape.num_elements()) {
        slots.par_chunks_mut(matrix).zip(lhs.par_iter().zip(&rhs)).try_for_each(|(out, (a, b))| product_into(a, b, out))
    } else {
        slots.chunks_mut(matrix).zip(lhs.iter().zip(&rhs)).try_for_each(|(out, (a, b))| product_into(a, b, out))
    }
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

#[cfg(test)]
mod tests {
    use ndarray::{ArrayD, IxDyn};

    use super::*;

    /// A tensor of `dims` holding 1, 2, 3, ... in row-major order.
    fn counting(dims: &[usize]) -> ArrayD<f64> {
        let len = dims.iter().product::<usize>();
        ArrayD::from_shape_vec(IxDyn(dims), (1..=len).map(|value| value as f64).collect()).unwrap()
    }

    /// The product by its definition, one sum per output element, for a batch of `[m, k] @ [k, n]` entries (each
    /// operand broadcast along the batch from its own dims).
    fn by_definition(lhs: &ArrayD<f64>, rhs: &ArrayD<f64>, shape: &Shape) -> Vec<f64> {
        let dims = shape.dims();
        let (rank, inner) = (dims.len(), lhs.shape()[lhs.ndim() - 1]);
        let (lhs, rhs) = (lhs.broadcast(batch_of(lhs, dims)).unwrap(), rhs.broadcast(batch_of(rhs, dims)).unwrap());
        ndarray::indices(IxDyn(dims))
            .into_iter()
            .map(|index| {
                let at = |matrix: [usize; 2]| IxDyn(&[&index.slice()[..rank - 2], &matrix].concat());
                let (i, j) = (index[rank - 2], index[rank - 1]);
                (0..inner).map(|p| lhs[at([i, p])] * rhs[at([p, j])]).sum()
            })
            .collect()
    }

    /// An operand's dims with the output's batch.
    fn batch_of(operand: &ArrayD<f64>, output: &[usize]) -> IxDyn {
        let (rows, columns) = (operand.shape()[operand.ndim() - 2], operand.shape()[operand.ndim() - 1]);
        IxDyn(&[&output[..output.len() - 2], &[rows, columns]].concat())
    }

    #[test]
    fn a_product_written_over_a_buffer_of_stale_values_never_reads_them() {
        // One matrix, rows times a weight, a broadcast batch, one product split into bands of rows, and a batch of
        // small products split across threads by entries.
        let cases: [(&[usize], &[usize]); 5] = [
            (&[3, 4], &[4, 5]),
            (&[2, 3, 4], &[4, 5]),
            (&[2, 1, 3, 4], &[3, 4, 2]),
            (&[200, 100], &[100, 150]),
            (&[128, 16, 16], &[128, 16, 16]),
        ];
        for (lhs_dims, rhs_dims) in cases {
            let (lhs, rhs) = (counting(lhs_dims), counting(rhs_dims));
            let shape = Shape::matmul(&Shape::new(lhs_dims), &Shape::new(rhs_dims)).unwrap();
            // NaN everywhere the output will go: a read of any of it would make its element NaN.
            let stale = vec![f64::NAN; shape.num_elements() + 7];
            let product = product("test", lhs.view().into_dyn(), rhs.view().into_dyn(), &shape, stale).unwrap();
            assert_eq!(product.shape(), shape.dims());
            assert_eq!(product.as_slice().unwrap(), by_definition(&lhs, &rhs, &shape), "{lhs_dims:?} @ {rhs_dims:?}");
        }
    }

    #[test]
    fn a_transposed_operand_is_read_in_its_own_strides() {
        let (lhs, rhs) = (counting(&[3, 4]), counting(&[5, 4]));
        let transposed = rhs.t().to_owned();
        let shape = Shape::new([3, 5]);
        let product = product("test", lhs.view(), rhs.t(), &shape, Vec::new()).unwrap();
        assert_eq!(product.as_slice().unwrap(), by_definition(&lhs, &transposed, &shape));
    }

    #[test]
    fn an_empty_inner_axis_gives_zeros_and_an_empty_output_nothing() {
        let (lhs, rhs) = (counting(&[2, 0]), counting(&[0, 3]));
        let written = product("test", lhs.view(), rhs.view(), &Shape::new([2, 3]), vec![f64::NAN; 6]).unwrap();
        assert_eq!(written.as_slice().unwrap(), [0.0; 6]);
        let (lhs, rhs) = (counting(&[0, 4]), counting(&[4, 3]));
        let written = product("test", lhs.view(), rhs.view(), &Shape::new([0, 3]), vec![f64::NAN; 2]).unwrap();
        assert_eq!(written.shape(), [0, 3]);
    }

    #[test]
    fn operands_whose_inner_sizes_differ_are_an_error_with_nothing_written() {
        let (lhs, rhs) = (counting(&[2, 3]), counting(&[4, 2]));
        let written = product("test", lhs.view(), rhs.view(), &Shape::new([2, 2]), Vec::new());
        assert!(matches!(written, Err(Error::ShapeMismatch { .. })), "{written:?}");
    }
}
