//! The operands every op is called with: at least two distinct entries along every axis, so that a permutation,
//! a flip, a narrow or a window that picks the wrong entries gives other values.

use dispatch_core::{Backend, DType, Shape};

use super::outcome::{Outcome, bool, float, int};

/// The tensors of one backend and dtype that the calls of `calls` read. Float values but `fine`'s are multiples of a
/// power of two with at most 9 significant bits: F64, F32 and F16 hold them exactly, BF16 (8 bits) rounds some of
/// `columns`. What a dtype rounds, `from_f64_vec` rounds once, alike on every backend.
pub struct Operands<B: Backend> {
    pub device: B::Device,
    pub dtype: DType,
    /// `[2, 3, 4]`: 24 distinct odd multiples of 1/16 in `[-23/16, 23/16]` (never zero), scrambled.
    pub cube: B::FloatTensor,
    /// `[2, 3, 4]`: 24 distinct values in `[1/16, 47/16]`, for the ops defined above zero only.
    pub positive: B::FloatTensor,
    /// `[2, 3, 4]`: values in `[-4.3, 4.7]` with more significant bits than F32 holds, so a cast to a narrower
    /// dtype rounds them.
    pub fine: B::FloatTensor,
    /// Another dtype than `dtype`: mixing the two is an error.
    pub other: DType,
    /// `cube`'s values in `other`.
    pub other_dtype: B::FloatTensor,
    /// `[2, 2, 4]`: fits `cube` along axes 0 and 2.
    pub slab: B::FloatTensor,
    /// `[2, 4, 4]`: what `select_add` adds along `cube`'s axis 1 at `picks`.
    pub spread: B::FloatTensor,
    /// `[2, 3, 3]`: what `scatter_add` adds along `cube`'s axis 2 at `lane_picks`.
    pub lanes: B::FloatTensor,
    /// `[3, 1]`: broadcasts over `cube`'s last two axes as a column.
    pub column: B::FloatTensor,
    /// `[4]`: broadcasts over `cube` as a row; no zero, so dividing by it is finite.
    pub row: B::FloatTensor,
    /// `[3, 4]`: `cube[0]` with every other entry raised by 1/4, so comparisons with `cube` hold, fail and tie.
    pub partner: B::FloatTensor,
    /// `[2, 1, 3]`: a size-1 axis to squeeze and to expand.
    pub thin: B::FloatTensor,
    /// `[4, 5]`: the right operand of `cube`'s matmul.
    pub matrix: B::FloatTensor,
    /// `[2, 3]`: few entries, so their product stays in range in every dtype.
    pub pair: B::FloatTensor,
    /// `[2, 4]`: rows holding ties, for the reductions that pick among equal entries.
    pub ties: B::FloatTensor,
    /// `[5, 3]`: the weights of an embedding.
    pub table: B::FloatTensor,
    /// `[2, 4, 5, 6]`: an image batch of 4 channels.
    pub image: B::FloatTensor,
    /// `[6, 2, 2, 3]`: 6 filters of 2 channels each, for 2 groups over `image`.
    pub filters: B::FloatTensor,
    /// `[2, 4, 9]`: a batch of 4-channel signals.
    pub signal: B::FloatTensor,
    /// `[6, 2, 3]`: 6 filters of 2 channels each, for 2 groups over `signal`.
    pub filters1d: B::FloatTensor,
    /// `[4, 3, 2, 3]`: the weight of a transposed convolution from 4 to 6 channels in 2 groups.
    pub transposed_filters: B::FloatTensor,
    /// `[2, 4, 3, 3]`: the input of the transposed convolution.
    pub small_image: B::FloatTensor,
    /// `[2, 24, 6]`: columns of `image`'s unfolding by `calls::WINDOW`, for `fold2d`.
    pub columns: B::FloatTensor,
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
    /// `[3, 4]`: a mask that broadcasts over `cube`.
    pub mask: B::BoolTensor,
    /// `[2, 3]`: both values on every axis.
    pub flags: B::BoolTensor,
    /// `[3]`: broadcasts over `flags`.
    pub flag_row: B::BoolTensor,
}

/// `n` distinct odd multiples of `1 / scale`, symmetric about zero (so never zero), in a scrambled order that
/// `offset` shifts: entry `i` is the `(7 i + offset) mod n`-th smallest. 7 must not divide `n`.
pub fn scrambled(n: usize, scale: f64, offset: usize) -> Vec<f64> {
    assert_ne!(n % 7, 0, "i -> 7 i mod {n} is not a permutation");
    (0..n).map(|i| (2.0 * ((7 * i + offset) % n) as f64 - (n as f64 - 1.0)) / scale).collect()
}

impl<B: Backend> Operands<B> {
    pub fn new(device: B::Device, dtype: DType) -> Self {
        let float = |values: Vec<f64>, dims: &[usize]| {
            B::from_f64_vec(values, Shape::new(dims), dtype, &device).expect("an operand fits its shape")
        };
        let int = |values: &[i64], dims: &[usize]| {
            B::int_from_vec(values.to_vec(), Shape::new(dims), &device).expect("an operand fits its shape")
        };
        let bool = |values: &[bool], dims: &[usize]| {
            B::bool_from_vec(values.to_vec(), Shape::new(dims), &device).expect("an operand fits its shape")
        };
        let cube = scrambled(24, 16.0, 0);
        let partner = cube[..12].iter().enumerate().map(|(i, &v)| if i % 2 == 0 { v } else { v + 0.25 }).collect();
        let fine = (0..24).map(|i| (f64::from(i) * 0.37 - 4.1) * std::f64::consts::PI / 3.0).collect();
        let lane_picks = [3, 0, 3, 1, 2, 1, 0, 0, 2, 3, 1, 3, 2, 2, 0, 1, 3, 1];
        let mut bad_lane_picks = lane_picks;
        bad_lane_picks[10] = 4;
        let other = if dtype == DType::F32 { DType::F64 } else { DType::F32 };
        Self {
            positive: float(cube.iter().map(|v| v + 1.5).collect(), &[2, 3, 4]),
            other_dtype: B::from_f64_vec(cube.clone(), Shape::new([2, 3, 4]), other, &device)
                .expect("an operand fits its shape"),
            cube: float(cube, &[2, 3, 4]),
            fine: float(fine, &[2, 3, 4]),
            slab: float(scrambled(16, 8.0, 5), &[2, 2, 4]),
            spread: float(scrambled(32, 16.0, 9), &[2, 4, 4]),
            lanes: float(scrambled(18, 8.0, 4), &[2, 3, 3]),
            column: float(vec![0.5, -1.25, 2.0], &[3, 1]),
            row: float(vec![-0.75, 1.5, 0.25, -2.0], &[4]),
            partner: float(partner, &[3, 4]),
            thin: float(vec![1.5, -0.5, 0.75, -2.25, 1.25, 0.125], &[2, 1, 3]),
            matrix: float(scrambled(20, 8.0, 3), &[4, 5]),
            pair: float(scrambled(6, 4.0, 1), &[2, 3]),
            ties: float(vec![1.0, 3.0, 3.0, -1.0, 0.5, -2.0, 0.5, 0.5], &[2, 4]),
            table: float(scrambled(15, 8.0, 2), &[5, 3]),
            image: float(scrambled(240, 64.0, 0), &[2, 4, 5, 6]),
            filters: float(scrambled(72, 32.0, 11), &[6, 2, 2, 3]),
            signal: float(scrambled(72, 32.0, 5), &[2, 4, 9]),
            filters1d: float(scrambled(36, 16.0, 4), &[6, 2, 3]),
            transposed_filters: float(scrambled(72, 32.0, 17), &[4, 3, 2, 3]),
            small_image: float(scrambled(72, 32.0, 29), &[2, 4, 3, 3]),
            columns: float(scrambled(288, 64.0, 3), &[2, 24, 6]),
            picks: int(&[2, 0, 2, 1], &[4]),
            bad_picks: int(&[1, 3], &[2]),
            lane_picks: int(&lane_picks, &[2, 3, 3]),
            bad_lane_picks: int(&bad_lane_picks, &[2, 3, 3]),
            ids: int(&[4, 0, 2, 2, 1, 4], &[2, 3]),
            ints: int(&[-7, 3, 12, -1, 0, 5], &[2, 3]),
            int_row: int(&[2, 3, -4], &[3]),
            int_zeros: int(&[1, 0, 2], &[3]),
            mask: bool(&[true, false, false, true, true, true, false, false, false, true, false, true], &[3, 4]),
            flags: bool(&[true, false, true, false, false, true], &[2, 3]),
            flag_row: bool(&[true, true, false], &[3]),
            device,
            dtype,
            other,
        }
    }

    /// Every operand, each as its outcome, to tell an op's output from an operand handed back.
    pub fn outcomes(&self) -> Vec<Outcome> {
        let floats = [
            &self.cube,
            &self.positive,
            &self.fine,
            &self.other_dtype,
            &self.slab,
            &self.spread,
            &self.lanes,
            &self.column,
            &self.row,
            &self.partner,
            &self.thin,
            &self.matrix,
            &self.pair,
            &self.ties,
            &self.table,
            &self.image,
            &self.filters,
            &self.signal,
            &self.filters1d,
            &self.transposed_filters,
            &self.small_image,
            &self.columns,
        ];
        let ints = [&self.picks, &self.bad_picks, &self.lane_picks, &self.bad_lane_picks, &self.ids, &self.ints];
        let ints = ints.into_iter().chain([&self.int_row, &self.int_zeros]);
        let bools = [&self.mask, &self.flags, &self.flag_row];
        (floats.into_iter().map(|tensor| float::<B>(Ok(tensor.clone()))))
            .chain(ints.map(|tensor| int::<B>(Ok(tensor.clone()))))
            .chain(bools.into_iter().map(|tensor| bool::<B>(Ok(tensor.clone()))))
            .collect()
    }
}
