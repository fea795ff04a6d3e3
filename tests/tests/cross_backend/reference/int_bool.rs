//! Int and bool ops, and the conversions between kinds.

use super::zip;
use crate::support::program::{BoolBinary, IntBinary, IntCompare};
use crate::support::values::{Bools, Floats, Ints, Outcome, invalid};
use dispatch_core::DType;

/// Wrapping arithmetic; a zero divisor, or `i64::MIN / -1`, is `InvalidArgument`.
pub fn int_binary(op: IntBinary, a: &Ints, b: &Ints) -> Outcome<Ints> {
    let (dims, results) = zip(&a.dims, &b.dims, |i, j| {
        let (x, y) = (a.values[i], b.values[j]);
        match op {
            IntBinary::Add => Some(x.wrapping_add(y)),
            IntBinary::Sub => Some(x.wrapping_sub(y)),
            IntBinary::Mul => Some(x.wrapping_mul(y)),
            IntBinary::Div => x.checked_div(y),
        }
    })?;
    match results.into_iter().collect::<Option<Vec<i64>>>() {
        Some(values) => Ok(Ints { dims, values }),
        None => invalid("an int division by zero"),
    }
}

pub fn int_scalar(a: &Ints, f: impl Fn(i64) -> i64) -> Ints {
    Ints { dims: a.dims.clone(), values: a.values.iter().map(|&x| f(x)).collect() }
}

pub fn int_sum(a: &Ints) -> Ints {
    Ints { dims: vec![1], values: vec![a.values.iter().fold(0i64, |sum, &x| sum.wrapping_add(x))] }
}

pub fn int_compare(op: IntCompare, a: &Ints, b: &Ints) -> Outcome<Bools> {
    let (dims, values) = zip(&a.dims, &b.dims, |i, j| {
        let (x, y) = (a.values[i], b.values[j]);
        match op {
            IntCompare::Eq => x == y,
            IntCompare::Lt => x < y,
            IntCompare::Le => x <= y,
            IntCompare::Gt => x > y,
            IntCompare::Ge => x >= y,
        }
    })?;
    Ok(Bools { dims, values })
}

pub fn int_to_float(a: &Ints, dtype: DType) -> Floats {
    Floats::new(a.dims.clone(), a.values.iter().map(|&x| x as f64).collect(), dtype)
}

/// `[.., classes]` rows of zeros with a one at each index; an index outside `0..classes` is `InvalidArgument`.
pub fn one_hot(a: &Ints, classes: usize, dtype: DType) -> Outcome<Floats> {
    let mut values = vec![0.0; a.values.len() * classes];
    for (row, &index) in a.values.iter().enumerate() {
        match usize::try_from(index) {
            Ok(class) if class < classes => values[row * classes + class] = 1.0,
            _ => return invalid(format!("one_hot index {index} outside 0..{classes}")),
        }
    }
    Ok(Floats::new([a.dims.as_slice(), &[classes]].concat(), values, dtype))
}

pub fn bool_binary(op: BoolBinary, a: &Bools, b: &Bools) -> Outcome<Bools> {
    let (dims, values) = zip(&a.dims, &b.dims, |i, j| match op {
        BoolBinary::And => a.values[i] && b.values[j],
        BoolBinary::Or => a.values[i] || b.values[j],
    })?;
    Ok(Bools { dims, values })
}

pub fn bool_map(a: &Bools, f: impl Fn(bool) -> bool) -> Bools {
    Bools { dims: a.dims.clone(), values: a.values.iter().map(|&x| f(x)).collect() }
}

/// `any` (false for no elements) or `all` (true for no elements), as `[1]`.
pub fn bool_reduce(a: &Bools, all: bool) -> Bools {
    let value = if all { a.values.iter().all(|&x| x) } else { a.values.iter().any(|&x| x) };
    Bools { dims: vec![1], values: vec![value] }
}

pub fn bool_to_int(a: &Bools) -> Ints {
    Ints { dims: a.dims.clone(), values: a.values.iter().map(|&x| i64::from(x)).collect() }
}

pub fn bool_to_float(a: &Bools, dtype: DType) -> Floats {
    Floats::new(a.dims.clone(), a.values.iter().map(|&x| f64::from(u8::from(x))).collect(), dtype)
}
