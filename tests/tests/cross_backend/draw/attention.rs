//! Candidate `attention_weights` steps.

use super::{Draw, pick};
use crate::support::program::Step;

/// The current tensor `[..., rows, width]` as the query or as the key; the other of the same leading dims and width
/// with as many rows (a square causal mask), more or fewer (a top-left aligned mask over more keys than queries, or
/// fewer), or none. Causal or not, scaled by `1/√width` mostly, or by a value the dtype may have to round. A fault gives the
/// other a width or a leading size that does not fit (a 1 against a larger size too: nothing broadcasts), another
/// rank, or a rank of 1; on a tensor of rank 1, the current tensor's rank is the fault.
pub(super) fn attention_weights(dims: &[usize], draw: &Draw) -> Step {
    let rank = dims.len();
    if rank < 2 && !draw.argument_fault() {
        return Step::Unsqueeze(0);
    }
    let mut draws = draw.draws(21);
    let (rows, width) = if rank >= 2 { (dims[rank - 2], dims[rank - 1]) } else { (1, dims[0]) };
    let leading = &dims[..rank.saturating_sub(2)];
    let other_rows = match draws.next() % 8 {
        0 | 1 => rows,
        2 => 0,
        3..=5 => rows + 1 + (draws.next() % 3) as usize,
        _ => rows.saturating_sub(1 + (draws.next() % 2) as usize),
    };
    let mut other = [leading, &[other_rows, width]].concat();
    if draw.argument_fault() && rank >= 2 {
        match draw.variant / 3 % 4 {
            0 => other[rank - 1] = width + 1,
            1 if rank > 2 => {
                let axis = draw.b % leading.len();
                other[axis] = if leading[axis] == 1 { 2 } else { 1 };
            }
            1 | 2 if rank < 4 => other.insert(0, 2),
            1 | 2 => {
                other.remove(0);
            }
            _ => other = vec![width],
        }
    }
    let inverse_root = if width > 0 { 1.0 / (width as f64).sqrt() } else { 1.0 };
    Step::AttentionWeights {
        other: draw.operand(other, 4),
        current_is_query: (draw.a / 4).is_multiple_of(2),
        scale: pick(&[inverse_root, inverse_root, 1.0, 0.1, -0.5, 2.0], draws.next() as usize),
        causal: draw.bit(22),
    }
}
