//! The reference's values: row-major `f64`, `i64` and `bool` buffers with their dims, what a reference op fails
//! with, rounding to a dtype written from IEEE 754's rule, and the seeded data every program is built from.

use dispatch_core::DType;

/// A float tensor of the reference: values in `f64` (already rounded to `dtype` by the interpreter), and whether
/// every backend must hold exactly these values (`exact`), which makes comparisons and ties on them decidable.
#[derive(Clone, Debug, PartialEq)]
pub struct Floats {
    pub dims: Vec<usize>,
    pub values: Vec<f64>,
    pub dtype: DType,
    pub exact: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Ints {
    pub dims: Vec<usize>,
    pub values: Vec<i64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Bools {
    pub dims: Vec<usize>,
    pub values: Vec<bool>,
}

/// What a program step hands to the next one.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Float(Floats),
    Int(Ints),
    Bool(Bools),
}

impl Value {
    pub fn dims(&self) -> &[usize] {
        match self {
            Value::Float(floats) => &floats.dims,
            Value::Int(ints) => &ints.dims,
            Value::Bool(bools) => &bools.dims,
        }
    }
}

impl Floats {
    pub fn new(dims: Vec<usize>, values: Vec<f64>, dtype: DType) -> Self {
        Self { dims, values, dtype, exact: false }
    }
}

/// The `dispatch_core::Error` variants an op on bad input may give, as the reference predicts them. The reference
/// says that an argument is out of the op's domain (`BadArgument`), not which of the structured variants that
/// describe one (an axis, an index, a rank, a window...) the op picks; the backends must agree on that among
/// themselves, variant for variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    ShapeMismatch,
    BadArgument,
    DTypeMismatch,
    UnexpectedDType,
}

impl ErrorKind {
    /// The kind of a backend's error; any other variant is a finding in itself, reported by its text.
    pub fn of(error: &dispatch_core::Error) -> Result<Self, String> {
        use dispatch_core::Error;
        match error {
            Error::ShapeMismatch { .. } => Ok(Self::ShapeMismatch),
            Error::InvalidArgument { .. }
            | Error::UnexpectedRank { .. }
            | Error::UnexpectedShape { .. }
            | Error::ElementCountMismatch { .. }
            | Error::ShapeTooLarge { .. }
            | Error::AxisOutOfRange { .. }
            | Error::IndexOutOfRange { .. }
            | Error::RangeOutOfBounds { .. }
            | Error::InvalidValue { .. }
            | Error::WindowTooLarge { .. } => Ok(Self::BadArgument),
            Error::DTypeMismatch { .. } => Ok(Self::DTypeMismatch),
            Error::UnexpectedDType { .. } => Ok(Self::UnexpectedDType),
            other => Err(format!("{other:?}")),
        }
    }
}

/// Why the reference rejects a step: the error kind every backend must give, and in words why, for the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub kind: ErrorKind,
    pub why: String,
}

pub type Outcome<T> = Result<T, Failure>;

pub fn invalid<T>(why: impl Into<String>) -> Outcome<T> {
    Err(Failure { kind: ErrorKind::BadArgument, why: why.into() })
}

pub fn mismatch<T>(why: impl Into<String>) -> Outcome<T> {
    Err(Failure { kind: ErrorKind::ShapeMismatch, why: why.into() })
}

pub fn dtype_mismatch(a: DType, b: DType) -> Outcome<()> {
    if a == b {
        return Ok(());
    }
    Err(Failure { kind: ErrorKind::DTypeMismatch, why: format!("{a} and {b}") })
}

/// A tensor of `actual` dtype given to an op that reads `expected` only (`to_vec` reads `F32`).
pub fn dtype_expected(expected: DType, actual: DType) -> Outcome<()> {
    if expected == actual {
        return Ok(());
    }
    Err(Failure { kind: ErrorKind::UnexpectedDType, why: format!("{actual} where {expected} is read") })
}

// ---- rounding -----------------------------------------------------------------------------------------------------

/// The significand bits of each dtype, the leading one included.
pub fn precision_bits(dtype: DType) -> i32 {
    match dtype {
        DType::F64 => 53,
        DType::F32 => 24,
        DType::F16 => 11,
        DType::BF16 => 8,
    }
}

/// `x` rounded to the nearest value of `dtype`, ties to even, overflowing to infinity past the largest finite
/// value plus half an ulp: IEEE 754's rule, written out here rather than taken from the crate under test.
pub fn round_to(dtype: DType, x: f64) -> f64 {
    match dtype {
        DType::F64 => x,
        DType::F32 => f64::from(x as f32),
        DType::F16 => round_binary(x, 11, -14, 65504.0),
        DType::BF16 => round_binary(x, 8, -126, (2.0 - 2f64.powi(-7)) * 2f64.powi(127)),
    }
}

/// Round to nearest even in a format of `precision` significand bits whose smallest normal exponent is
/// `min_exponent` (below it the quantum stays that of the subnormals) and whose largest finite value is `max`.
fn round_binary(x: f64, precision: i32, min_exponent: i32, max: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    // The binary exponent of |x| from its bits (f64 subnormals are far below every format's subnormals).
    let biased = ((x.to_bits() >> 52) & 0x7ff) as i32;
    let exponent = (biased - 1023).max(min_exponent);
    let quantum = 2f64.powi(exponent - (precision - 1));
    let rounded = (x / quantum).round_ties_even() * quantum;
    if rounded.abs() > max { f64::INFINITY.copysign(x) } else { rounded }
}

/// Whether `x` is a value of `dtype` (NaN counts: it is NaN in every dtype).
pub fn representable(dtype: DType, x: f64) -> bool {
    x.is_nan() || round_to(dtype, x) == x
}

/// The smallest `q` with `x * 2^q` an integer (0 for integers and zero; large for values off every short grid).
pub fn granularity(x: f64) -> i32 {
    if x == 0.0 || !x.is_finite() {
        return 0;
    }
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let mantissa = (bits & ((1 << 52) - 1)) | if biased == 0 { 0 } else { 1 << 52 };
    // x = mantissa * 2^(biased - 1075); its lowest set bit decides.
    (1075 - biased.max(1) - mantissa.trailing_zeros() as i32).max(0)
}

// ---- seeded data ----------------------------------------------------------------------------------------------------

/// splitmix64: a fixed, well-mixed sequence per seed, so the reference and every backend build the same operands.
pub struct Draws(u64);

impl Draws {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// An integer in `low..=high`.
    pub fn int(&mut self, low: i64, high: i64) -> i64 {
        let span = (high - low + 1) as u64;
        low + (self.next() % span) as i64
    }
}

/// `count` multiples of 1/8 in `[low, high]`: exact in every dtype, with ties and zeros common enough that the
/// rules for them (first maximum, gradient shared among ties, relu at 0) are exercised.
pub fn grid(seed: u64, count: usize, (low, high): (f64, f64)) -> Vec<f64> {
    let mut draws = Draws::new(seed);
    let (low, high) = ((low * 8.0).ceil() as i64, (high * 8.0).floor() as i64);
    (0..count).map(|_| draws.int(low, high) as f64 / 8.0).collect()
}

pub fn ints(seed: u64, count: usize, (low, high): (i64, i64)) -> Vec<i64> {
    let mut draws = Draws::new(seed);
    (0..count).map(|_| draws.int(low, high)).collect()
}

pub fn bools(seed: u64, count: usize) -> Vec<bool> {
    let mut draws = Draws::new(seed);
    (0..count).map(|_| draws.next().is_multiple_of(2)).collect()
}

// ---- row-major indexing -------------------------------------------------------------------------------------------

pub fn count(dims: &[usize]) -> usize {
    dims.iter().product()
}

/// The coordinates of row-major position `index` in `dims`.
pub fn unravel(mut index: usize, dims: &[usize]) -> Vec<usize> {
    let mut coordinates = vec![0; dims.len()];
    for (axis, &size) in dims.iter().enumerate().rev() {
        coordinates[axis] = index % size.max(1);
        index /= size.max(1);
    }
    coordinates
}

/// The row-major position of `coordinates` in `dims`.
pub fn ravel(coordinates: &[usize], dims: &[usize]) -> usize {
    coordinates.iter().zip(dims).fold(0, |position, (&coordinate, &size)| position * size + coordinate)
}

/// The numpy broadcast of two shapes: trailing dims aligned, each pair equal or one of them 1.
pub fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let rank = a.len().max(b.len());
    let dim = |dims: &[usize], i: usize| if i < rank - dims.len() { 1 } else { dims[i - (rank - dims.len())] };
    (0..rank)
        .map(|i| match (dim(a, i), dim(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// The position in a tensor of `dims` that output coordinates `out` (of a broadcast shape) read.
pub fn broadcast_position(out: &[usize], dims: &[usize]) -> usize {
    let offset = out.len() - dims.len();
    let coordinates: Vec<usize> =
        dims.iter().enumerate().map(|(axis, &size)| if size == 1 { 0 } else { out[offset + axis] }).collect();
    ravel(&coordinates, dims)
}
