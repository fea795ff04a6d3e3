//! Layout ops (every output element is one input element) and the batched matrix product.

use super::check_axis;
use crate::support::values::{
    Floats, Outcome, broadcast, broadcast_position, count, dtype_mismatch, invalid, mismatch, ravel, unravel,
};

/// `f(output coordinates)` gives the input position each output element copies.
fn gather_from(a: &Floats, dims: Vec<usize>, source: impl Fn(&[usize]) -> usize) -> Floats {
    let values = (0..count(&dims)).map(|index| a.values[source(&unravel(index, &dims))]).collect();
    Floats::new(dims, values, a.dtype)
}

pub fn reshape(a: &Floats, dims: &[usize]) -> Outcome<Floats> {
    if dims.is_empty() {
        return invalid("reshape to the empty shape");
    }
    if count(dims) != a.values.len() {
        return invalid(format!("reshape {:?} to {dims:?}", a.dims));
    }
    Ok(Floats::new(dims.to_vec(), a.values.clone(), a.dtype))
}

pub fn permute(a: &Floats, axes: &[usize]) -> Outcome<Floats> {
    let mut sorted = axes.to_vec();
    sorted.sort_unstable();
    if sorted != (0..a.dims.len()).collect::<Vec<_>>() {
        return invalid(format!("{axes:?} is not a permutation of the axes of {:?}", a.dims));
    }
    let dims: Vec<usize> = axes.iter().map(|&axis| a.dims[axis]).collect();
    Ok(gather_from(a, dims, |out| {
        let mut coordinates = vec![0; out.len()];
        for (position, &axis) in axes.iter().enumerate() {
            coordinates[axis] = out[position];
        }
        ravel(&coordinates, &a.dims)
    }))
}

pub fn swap_dims(a: &Floats, first: usize, second: usize) -> Outcome<Floats> {
    check_axis(&a.dims, first)?;
    check_axis(&a.dims, second)?;
    let mut axes: Vec<usize> = (0..a.dims.len()).collect();
    axes.swap(first, second);
    permute(a, &axes)
}

pub fn narrow(a: &Floats, axis: usize, start: usize, len: usize) -> Outcome<Floats> {
    check_axis(&a.dims, axis)?;
    if start + len > a.dims[axis] {
        return invalid(format!("narrow {start}..{} of axis {axis} of {:?}", start + len, a.dims));
    }
    let mut dims = a.dims.clone();
    dims[axis] = len;
    Ok(gather_from(a, dims, |out| {
        let mut coordinates = out.to_vec();
        coordinates[axis] += start;
        ravel(&coordinates, &a.dims)
    }))
}

/// Concatenation along `axis`: every other dimension (and the rank) agrees with the first part's.
pub fn cat(parts: &[&Floats], axis: usize) -> Outcome<Floats> {
    let first = parts[0];
    check_axis(&first.dims, axis)?;
    for part in parts {
        dtype_mismatch(first.dtype, part.dtype)?;
        let agree = part.dims.len() == first.dims.len()
            && (0..first.dims.len()).all(|d| d == axis || part.dims[d] == first.dims[d]);
        if !agree {
            return mismatch(format!("cat of {:?} and {:?} along {axis}", first.dims, part.dims));
        }
    }
    let mut dims = first.dims.clone();
    dims[axis] = parts.iter().map(|part| part.dims[axis]).sum();
    let values = (0..count(&dims))
        .map(|index| {
            let mut coordinates = unravel(index, &dims);
            let mut part = 0;
            while coordinates[axis] >= parts[part].dims[axis] {
                coordinates[axis] -= parts[part].dims[axis];
                part += 1;
            }
            parts[part].values[ravel(&coordinates, &parts[part].dims)]
        })
        .collect();
    Ok(Floats::new(dims, values, first.dtype))
}

/// Tensors of one shape stacked along a new axis `axis` (at most the rank).
pub fn stack(parts: &[&Floats], axis: usize) -> Outcome<Floats> {
    let unsqueezed = parts.iter().map(|part| unsqueeze(part, axis)).collect::<Outcome<Vec<_>>>()?;
    cat(&unsqueezed.iter().collect::<Vec<_>>(), axis)
}

/// The tensor broadcast to `dims`, which it must reach without being larger anywhere.
pub fn expand(a: &Floats, dims: &[usize]) -> Outcome<Floats> {
    if broadcast(&a.dims, dims).as_deref() != Some(dims) {
        return mismatch(format!("{:?} does not expand to {dims:?}", a.dims));
    }
    Ok(gather_from(a, dims.to_vec(), |out| broadcast_position(out, &a.dims)))
}

pub fn repeat(a: &Floats, times: &[usize]) -> Outcome<Floats> {
    if times.len() != a.dims.len() {
        return invalid(format!("repeat {times:?} of {:?}", a.dims));
    }
    let dims: Vec<usize> = a.dims.iter().zip(times).map(|(size, time)| size * time).collect();
    Ok(gather_from(a, dims, |out| {
        let coordinates: Vec<usize> = out.iter().zip(&a.dims).map(|(&c, &size)| c % size).collect();
        ravel(&coordinates, &a.dims)
    }))
}

pub fn flip(a: &Floats, axes: &[usize]) -> Outcome<Floats> {
    for &axis in axes {
        check_axis(&a.dims, axis)?;
    }
    Ok(gather_from(a, a.dims.clone(), |out| {
        let coordinates: Vec<usize> = out
            .iter()
            .enumerate()
            .map(|(axis, &c)| if axes.contains(&axis) { a.dims[axis] - 1 - c } else { c })
            .collect();
        ravel(&coordinates, &a.dims)
    }))
}

pub fn squeeze(a: &Floats, axis: usize) -> Outcome<Floats> {
    check_axis(&a.dims, axis)?;
    if a.dims[axis] != 1 || a.dims.len() == 1 {
        return invalid(format!("squeeze axis {axis} of {:?}", a.dims));
    }
    let mut dims = a.dims.clone();
    dims.remove(axis);
    Ok(Floats::new(dims, a.values.clone(), a.dtype))
}

pub fn unsqueeze(a: &Floats, axis: usize) -> Outcome<Floats> {
    if axis > a.dims.len() {
        return invalid(format!("unsqueeze at {axis} of {:?}", a.dims));
    }
    let mut dims = a.dims.clone();
    dims.insert(axis, 1);
    Ok(Floats::new(dims, a.values.clone(), a.dtype))
}

/// `tensor` with entries `start..start + len` of `axis` replaced by `source`, which has `tensor`'s dims but `len`
/// along `axis`.
pub fn slice_assign(tensor: &Floats, axis: usize, start: usize, source: &Floats) -> Outcome<Floats> {
    dtype_mismatch(tensor.dtype, source.dtype)?;
    check_axis(&tensor.dims, axis)?;
    let len = source.dims.get(axis).copied().unwrap_or(0);
    let mut expected = tensor.dims.clone();
    expected[axis] = len;
    if source.dims != expected {
        return mismatch(format!("source {:?} into {:?} along {axis}", source.dims, tensor.dims));
    }
    if start + len > tensor.dims[axis] {
        return invalid(format!("slice {start}..{} of axis {axis} of {:?}", start + len, tensor.dims));
    }
    let values = (0..tensor.values.len())
        .map(|index| {
            let mut coordinates = unravel(index, &tensor.dims);
            if (start..start + len).contains(&coordinates[axis]) {
                coordinates[axis] -= start;
                source.values[ravel(&coordinates, &source.dims)]
            } else {
                tensor.values[index]
            }
        })
        .collect();
    Ok(Floats::new(tensor.dims.clone(), values, tensor.dtype))
}

/// The product over the last two dims; the dims in front are batches that broadcast.
pub fn matmul(a: &Floats, b: &Floats) -> Outcome<Floats> {
    dtype_mismatch(a.dtype, b.dtype)?;
    let (ra, rb) = (a.dims.len(), b.dims.len());
    if ra < 2 || rb < 2 {
        return invalid(format!("matmul of {:?} and {:?}", a.dims, b.dims));
    }
    let (m, k, k2, n) = (a.dims[ra - 2], a.dims[ra - 1], b.dims[rb - 2], b.dims[rb - 1]);
    let Some(batch) = broadcast(&a.dims[..ra - 2], &b.dims[..rb - 2]).filter(|_| k == k2) else {
        return mismatch(format!("matmul of {:?} and {:?}", a.dims, b.dims));
    };
    let dims = [batch.as_slice(), &[m, n]].concat();
    let values = (0..count(&dims))
        .map(|index| {
            let out = unravel(index, &dims);
            let (batch_at, i, j) = (&out[..batch.len()], out[batch.len()], out[batch.len() + 1]);
            let a_start = broadcast_position(batch_at, &a.dims[..ra - 2]) * m * k;
            let b_start = broadcast_position(batch_at, &b.dims[..rb - 2]) * k * n;
            (0..k).map(|l| a.values[a_start + i * k + l] * b.values[b_start + l * n + j]).sum()
        })
        .collect();
    Ok(Floats::new(dims, values, a.dtype))
}
