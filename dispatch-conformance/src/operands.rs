//! The operands every op is called with: at least two distinct entries along every axis, so that a permutation,
//! a flip, a narrow or a window that picks the wrong entries gives other values.

use dispatch_core::{Backend, DType, Result, Shape};

/// Declares [`Operands`] with its float tensors listed once: the fields, their names, and the accessors the
/// gradient check perturbs them through (a float operand left out of a hand-written list would go unchecked).
macro_rules! operands_with_floats {
    ($($(#[$doc:meta])* $float:ident,)*) => {
        /// The tensors of one backend and dtype that the calls of `calls` read. Float values but `fine`'s are
        /// multiples of a power of two with at most 9 significant bits: F64, F32 and F16 hold them exactly, BF16
        /// (8 bits) rounds some of `columns`. What a dtype rounds, `from_f64_vec` rounds once, alike on every
        /// backend.
        #[derive(Clone)]
        pub struct Operands<B: Backend> {
            pub device: B::Device,
            /// The dtype the calls are about: what the float operands hold (in the exact reference, the values
            /// they hold), what the calls create and what they mix with `other`.
            pub dtype: DType,
            /// Every dtype the backend under test holds: the targets of the calls that convert to each dtype.
            pub dtypes: Vec<DType>,
            /// Another dtype the backend holds, if it holds two: mixing it with `dtype` is an error.
            pub other: Option<DType>,
            /// `cube`'s values in `other`.
            pub other_dtype: Option<B::FloatTensor>,
            $($(#[$doc])* pub $float: B::FloatTensor,)*
            /// `[4]`: `[2, 0, 2, 1]`, repeated and out of order, along `cube`'s axis 1.
            pub picks: B::IntTensor,
            /// `[2]`: `[1, 3]`, where 3 is out of range along `cube`'s axis 1.
            pub bad_picks: B::IntTensor,
            /// `[2, 3, 3]`: indices into `cube`'s axis 2, repeated within lanes.
            pub lane_picks: B::IntTensor,
            /// `[2, 3, 3]`: `lane_picks` with one index 4, out of range along `cube`'s axis 2.
            pub bad_lane_picks: B::IntTensor,
            /// `[2, 3]`: ids into `table`'s 5 rows, repeated and out of order.
            pub ids: B::IntTensor,
            /// `[2, 3]`: `[-7, 3, 12, -1, 0, 5]`.
            pub ints: B::IntTensor,
            /// `[3]`: `[2, 3, -4]`, no zero, its 3 tying an entry of `ints`, which it broadcasts over.
            pub int_row: B::IntTensor,
            /// `[3]`: one zero: dividing by it is an error.
            pub int_zeros: B::IntTensor,
            /// `[4]`: `[2^24 + 1, -2^53 - 1, 2049, -257]`, which each float dtype rounds its own way.
            pub large_ints: B::IntTensor,
            /// `[3, 4]`: a mask that broadcasts over `cube`.
            pub mask: B::BoolTensor,
            /// `[2, 3]`: both values on every axis.
            pub flags: B::BoolTensor,
            /// `[3]`: broadcasts over `flags`.
            pub flag_row: B::BoolTensor,
            /// `[3]`: all false.
            pub no_flags: B::BoolTensor,
            /// `[3]`: all true.
            pub all_flags: B::BoolTensor,
            /// `[0, 2]`: no flags at all.
            pub empty_flags: B::BoolTensor,
        }

        impl<B: Backend> Operands<B> {
            /// The names of the float operands, in the order of [`Operands::floats`].
            pub const FLOAT_NAMES: &'static [&'static str] = &[$(stringify!($float)),*];

            /// Every float operand in `dtype` (so not `other_dtype`).
            pub fn floats(&self) -> Vec<&B::FloatTensor> {
                vec![$(&self.$float),*]
            }

            /// [`Operands::floats`], to replace one.
            pub fn floats_mut(&mut self) -> Vec<&mut B::FloatTensor> {
                vec![$(&mut self.$float),*]
            }
        }
    };
}

operands_with_floats! {
    /// `[2, 3, 4]`: 24 distinct odd multiples of 1/16 in `[-23/16, 23/16]` (never zero), scrambled.
    cube,
    /// `[2, 3, 4]`: 24 distinct values in `[1/16, 47/16]`, for the ops defined above zero only.
    positive,
    /// `[2, 3, 4]`: values in `[-4.3, 4.7]` with more significant bits than F32 holds, so a cast to a narrower
    /// dtype rounds them.
    fine,
    /// `[2, 2, 4]`: fits `cube` along axes 0 and 2.
    slab,
    /// `[2, 4, 4]`: what `select_add` adds along `cube`'s axis 1 at `picks`.
    spread,
    /// `[2, 3, 3]`: what `scatter_add` adds along `cube`'s axis 2 at `lane_picks`.
    lanes,
    /// `[3, 1]`: broadcasts over `cube`'s last two axes as a column.
    column,
    /// `[4]`: broadcasts over `cube` as a row; no zero, so dividing by it is finite.
    row,
    /// `[3, 4]`: `cube[0]` with every other entry raised by 1/4, so comparisons with `cube` hold, fail and tie.
    /// Without ties, every entry is raised by an odd multiple of 1/32, so that it equals no entry of `cube`.
    partner,
    /// `[2, 1, 3]`: a size-1 axis to squeeze and to expand.
    thin,
    /// `[4, 5]`: the right operand of `cube`'s matmul.
    matrix,
    /// `[2, 3]`: few entries, so their product stays in range in every dtype.
    pair,
    /// `[2, 4]`: rows holding ties, for the reductions that pick among equal entries; without ties, distinct.
    ties,
    /// `[5, 3]`: the weights of an embedding.
    table,
    /// `[2, 4, 5, 6]`: an image batch of 4 channels.
    image,
    /// `[6, 2, 2, 3]`: 6 filters of 2 channels each, for 2 groups over `image`.
    filters,
    /// `[2, 4, 9]`: a batch of 4-channel signals.
    signal,
    /// `[6, 2, 3]`: 6 filters of 2 channels each, for 2 groups over `signal`.
    filters1d,
    /// `[4, 3, 2, 3]`: the weight of a transposed convolution from 4 to 6 channels in 2 groups.
    transposed_filters,
    /// `[2, 4, 3, 3]`: the input of the transposed convolution.
    small_image,
    /// `[2, 24, 6]`: columns of `image`'s unfolding by `calls::WINDOW`, for `fold2d`.
    columns,
}

/// `n` distinct odd multiples of `1 / scale`, symmetric about zero (so never zero), in a scrambled order that
/// `offset` shifts: entry `i` is the `(7 i + offset) mod n`-th smallest. 7 must not divide `n`.
pub fn scrambled(n: usize, scale: f64, offset: usize) -> Vec<f64> {
    debug_assert_ne!(n % 7, 0, "i -> 7 i mod {n} is not a permutation");
    (0..n).map(|i| (2.0 * ((7 * i + offset) % n) as f64 - (n as f64 - 1.0)) / scale).collect()
}

/// How the float operands are built: the dtype whose values they hold, the dtype they are stored in, and whether
/// `partner` and `ties` hold equal entries.
#[derive(Clone, Copy)]
struct Recipe {
    dtype: DType,
    storage: DType,
    ties: bool,
}

impl<B: Backend> Operands<B> {
    /// The operands in `dtype`, for a backend that holds `dtypes`.
    pub fn new(device: B::Device, dtype: DType, dtypes: &[DType]) -> Result<Self> {
        Self::build(device, dtypes, Recipe { dtype, storage: dtype, ties: true })
    }

    /// The values of [`Operands::new`] in `dtype`, stored in `F64`: the same calls then compute exactly on them,
    /// which is what the values of a backend computing in `dtype` are compared with.
    pub fn exact(device: B::Device, dtype: DType, dtypes: &[DType]) -> Result<Self> {
        Self::build(device, dtypes, Recipe { dtype, storage: DType::F64, ties: true })
    }

    /// The operands in `F64`, without entries that tie across `partner` and `cube` or within `ties`' rows: every
    /// op that is differentiable is smooth at them, so central differences measure its gradient.
    pub fn without_ties(device: B::Device, dtypes: &[DType]) -> Result<Self> {
        Self::build(device, dtypes, Recipe { dtype: DType::F64, storage: DType::F64, ties: false })
    }

    fn build(device: B::Device, dtypes: &[DType], recipe: Recipe) -> Result<Self> {
        let Recipe { dtype, storage, ties } = recipe;
        let float = |values: Vec<f64>, dims: &[usize]| {
            let values = values.into_iter().map(|value| dtype.round(value)).collect();
            B::from_f64_vec(values, Shape::new(dims), storage, &device)
        };
        let int = |values: &[i64], dims: &[usize]| B::int_from_vec(values.to_vec(), Shape::new(dims), &device);
        let bool = |values: &[bool], dims: &[usize]| B::bool_from_vec(values.to_vec(), Shape::new(dims), &device);
        let cube = scrambled(24, 16.0, 0);
        let raise = |(i, &v): (usize, &f64)| match (ties, i % 2) {
            (true, 0) => v,
            (true, _) => v + 0.25,
            (false, 0) => v + 1.0 / 32.0,
            (false, _) => v + 9.0 / 32.0,
        };
        let partner = cube[..12].iter().enumerate().map(raise).collect();
        let tied_rows = if ties {
            [1.0, 3.0, 3.0, -1.0, 0.5, -2.0, 0.5, 0.5]
        } else {
            [1.0, 3.0, 2.5, -1.0, 0.5, -2.0, 0.75, 0.25]
        };
        let fine = (0..24).map(|i| (f64::from(i) * 0.37 - 4.1) * std::f64::consts::PI / 3.0).collect();
        let lane_picks = [3, 0, 3, 1, 2, 1, 0, 0, 2, 3, 1, 3, 2, 2, 0, 1, 3, 1];
        let mut bad_lane_picks = lane_picks;
        bad_lane_picks[10] = 4;
        // F32 and F64 first, so that a backend of every dtype mixes these two, as candle and ndarray do natively.
        let other = [DType::F32, DType::F64, DType::F16, DType::BF16]
            .into_iter()
            .find(|&other| other != dtype && dtypes.contains(&other));
        let other_dtype =
            other.map(|other| B::from_f64_vec(cube.clone(), Shape::new([2, 3, 4]), other, &device)).transpose()?;
        Ok(Self {
            positive: float(cube.iter().map(|v| v + 1.5).collect(), &[2, 3, 4])?,
            cube: float(cube, &[2, 3, 4])?,
            fine: float(fine, &[2, 3, 4])?,
            slab: float(scrambled(16, 8.0, 5), &[2, 2, 4])?,
            spread: float(scrambled(32, 16.0, 9), &[2, 4, 4])?,
            lanes: float(scrambled(18, 8.0, 4), &[2, 3, 3])?,
            column: float(vec![0.5, -1.25, 2.0], &[3, 1])?,
            row: float(vec![-0.75, 1.5, 0.25, -2.0], &[4])?,
            partner: float(partner, &[3, 4])?,
            thin: float(vec![1.5, -0.5, 0.75, -2.25, 1.25, 0.125], &[2, 1, 3])?,
            matrix: float(scrambled(20, 8.0, 3), &[4, 5])?,
            pair: float(scrambled(6, 4.0, 1), &[2, 3])?,
            ties: float(tied_rows.to_vec(), &[2, 4])?,
            table: float(scrambled(15, 8.0, 2), &[5, 3])?,
            image: float(scrambled(240, 64.0, 0), &[2, 4, 5, 6])?,
            filters: float(scrambled(72, 32.0, 11), &[6, 2, 2, 3])?,
            signal: float(scrambled(72, 32.0, 5), &[2, 4, 9])?,
            filters1d: float(scrambled(36, 16.0, 4), &[6, 2, 3])?,
            transposed_filters: float(scrambled(72, 32.0, 17), &[4, 3, 2, 3])?,
            small_image: float(scrambled(72, 32.0, 29), &[2, 4, 3, 3])?,
            columns: float(scrambled(288, 64.0, 3), &[2, 24, 6])?,
            picks: int(&[2, 0, 2, 1], &[4])?,
            bad_picks: int(&[1, 3], &[2])?,
            lane_picks: int(&lane_picks, &[2, 3, 3])?,
            bad_lane_picks: int(&bad_lane_picks, &[2, 3, 3])?,
            ids: int(&[4, 0, 2, 2, 1, 4], &[2, 3])?,
            ints: int(&[-7, 3, 12, -1, 0, 5], &[2, 3])?,
            int_row: int(&[2, 3, -4], &[3])?,
            int_zeros: int(&[1, 0, 2], &[3])?,
            large_ints: int(&[(1 << 24) + 1, -(1 << 53) - 1, 2049, -257], &[4])?,
            mask: bool(&[true, false, false, true, true, true, false, false, false, true, false, true], &[3, 4])?,
            flags: bool(&[true, false, true, false, false, true], &[2, 3])?,
            flag_row: bool(&[true, true, false], &[3])?,
            no_flags: bool(&[false; 3], &[3])?,
            all_flags: bool(&[true; 3], &[3])?,
            empty_flags: bool(&[], &[0, 2])?,
            other_dtype,
            device,
            dtype,
            dtypes: dtypes.to_vec(),
            other,
        })
    }

    /// `call` on `other_dtype`, if the backend holds a second dtype: a call that mixes dtypes, which must fail.
    pub fn mixing<T>(&self, call: impl FnOnce(&B::FloatTensor) -> T) -> Option<T> {
        self.other_dtype.as_ref().map(call)
    }

    /// Every operand, each as its outcome, to tell an op's output from an operand handed back.
    #[cfg(test)]
    pub fn outcomes(&self) -> Vec<crate::outcome::Outcome> {
        use crate::outcome::{bool, float, int};
        let floats = self.floats().into_iter().chain(&self.other_dtype);
        let ints = [&self.picks, &self.bad_picks, &self.lane_picks, &self.bad_lane_picks, &self.ids, &self.ints];
        let ints = ints.into_iter().chain([&self.int_row, &self.int_zeros, &self.large_ints]);
        let bools = [&self.mask, &self.flags, &self.flag_row, &self.no_flags, &self.all_flags, &self.empty_flags];
        (floats.map(|tensor| float::<B>(Ok(tensor.clone()))))
            .chain(ints.map(|tensor| int::<B>(Ok(tensor.clone()))))
            .chain(bools.into_iter().map(|tensor| bool::<B>(Ok(tensor.clone()))))
            .collect()
    }
}
