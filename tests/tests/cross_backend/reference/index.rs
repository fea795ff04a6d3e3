//! Picking float entries by int indices, and adding back: index_select, select_add, gather, scatter_add,
//! embedding.

use super::{check_axis, split_at};
use crate::support::values::{Floats, Ints, Outcome, dtype_mismatch, invalid, mismatch, ravel, unravel};

/// The indices as positions along an axis of `len`, or `InvalidArgument` naming the first out of range.
pub(super) fn positions(indices: &[i64], len: usize) -> Outcome<Vec<usize>> {
    indices
        .iter()
        .map(|&index| match usize::try_from(index) {
            Ok(position) if position < len => Ok(position),
            _ => invalid(format!("index {index} out of range for an axis of {len}")),
        })
        .collect()
}

fn one_dimensional(indices: &Ints) -> Outcome<()> {
    if indices.dims.len() != 1 {
        return invalid(format!("indices of dims {:?} are not 1-D", indices.dims));
    }
    Ok(())
}

pub fn index_select(a: &Floats, axis: usize, indices: &Ints) -> Outcome<Floats> {
    check_axis(&a.dims, axis)?;
    one_dimensional(indices)?;
    let picks = positions(&indices.values, a.dims[axis])?;
    let (outer, len, inner) = split_at(&a.dims, axis);
    let mut values = Vec::new();
    for o in 0..outer {
        for &pick in &picks {
            values.extend_from_slice(&a.values[(o * len + pick) * inner..][..inner]);
        }
    }
    let mut dims = a.dims.clone();
    dims[axis] = picks.len();
    Ok(Floats::new(dims, values, a.dtype))
}

/// `a` with the slices of `source` along `axis` added at `indices` (repeats add up).
pub fn select_add(a: &Floats, axis: usize, indices: &Ints, source: &Floats) -> Outcome<Floats> {
    dtype_mismatch(a.dtype, source.dtype)?;
    check_axis(&a.dims, axis)?;
    one_dimensional(indices)?;
    let picks = positions(&indices.values, a.dims[axis])?;
    let mut expected = a.dims.clone();
    expected[axis] = picks.len();
    if source.dims != expected {
        return mismatch(format!("select_add of {:?} into {:?}", source.dims, a.dims));
    }
    let mut values = a.values.clone();
    for (index, &added) in source.values.iter().enumerate() {
        let mut coordinates = unravel(index, &source.dims);
        coordinates[axis] = picks[coordinates[axis]];
        values[ravel(&coordinates, &a.dims)] += added;
    }
    Ok(Floats::new(a.dims.clone(), values, a.dtype))
}

/// The checks shared by gather and scatter_add: indices of `a`'s rank and dims but along `axis`, in range.
fn gather_positions(a: &Floats, axis: usize, indices: &Ints) -> Outcome<Vec<usize>> {
    check_axis(&a.dims, axis)?;
    let fits =
        indices.dims.len() == a.dims.len() && (0..a.dims.len()).all(|d| d == axis || indices.dims[d] == a.dims[d]);
    if !fits {
        return mismatch(format!("indices {:?} for {:?} along {axis}", indices.dims, a.dims));
    }
    positions(&indices.values, a.dims[axis])
}

pub fn gather(a: &Floats, axis: usize, indices: &Ints) -> Outcome<Floats> {
    let picks = gather_positions(a, axis, indices)?;
    let values = picks
        .iter()
        .enumerate()
        .map(|(index, &pick)| {
            let mut coordinates = unravel(index, &indices.dims);
            coordinates[axis] = pick;
            a.values[ravel(&coordinates, &a.dims)]
        })
        .collect();
    Ok(Floats::new(indices.dims.clone(), values, a.dtype))
}

pub fn scatter_add(a: &Floats, axis: usize, indices: &Ints, source: &Floats) -> Outcome<Floats> {
    dtype_mismatch(a.dtype, source.dtype)?;
    let picks = gather_positions(a, axis, indices)?;
    if source.dims != indices.dims {
        return mismatch(format!("scatter_add source {:?} for indices {:?}", source.dims, indices.dims));
    }
    let mut values = a.values.clone();
    for (index, &pick) in picks.iter().enumerate() {
        let mut coordinates = unravel(index, &indices.dims);
        coordinates[axis] = pick;
        values[ravel(&coordinates, &a.dims)] += source.values[index];
    }
    Ok(Floats::new(a.dims.clone(), values, a.dtype))
}

/// The rows of `[vocabulary, width]` weights picked by ids of any dims: `ids.dims + [width]`.
pub fn embedding(weights: &Floats, ids: &Ints) -> Outcome<Floats> {
    let [vocabulary, width] = weights.dims[..] else {
        return invalid(format!("embedding weights of dims {:?}", weights.dims));
    };
    let rows = positions(&ids.values, vocabulary)?;
    let values = rows.iter().flat_map(|&row| weights.values[row * width..][..width].iter().copied()).collect();
    Ok(Floats::new([ids.dims.as_slice(), &[width]].concat(), values, weights.dtype))
}
