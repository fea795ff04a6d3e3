//! Paired measurement of two designs, to resolve ratios near 1 on a shared, noisy machine.
//!
//! Criterion times each design in its own stretch of seconds, so load that comes and goes between stretches moves
//! their ratio by several percent. Here the two designs alternate in ABBA rounds of about a millisecond per timed
//! block (at least one call): every round gives one ratio, in which drift slower than a round cancels. The median
//! over all rounds is reported, with the quartiles.

use std::time::{Duration, Instant};

/// The median and quartiles of the per-round ratios `candidate / reference`.
pub struct Summary {
    pub median: f64,
    pub lower_quartile: f64,
    pub upper_quartile: f64,
    pub rounds: usize,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.3} [{:.3}, {:.3}]", self.median, self.lower_quartile, self.upper_quartile)
    }
}

/// Never inlined, so that both designs run in a loop of their own, placed and optimised alike: inlined into
/// `ratio`, one loop would share registers and stack with the rest of it and the other not.
#[inline(never)]
fn time(calls: u32, call: &mut impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..calls {
        call();
    }
    start.elapsed()
}

/// How long a timed block aims to last: long against the clock's resolution, short against load changes.
const BLOCK: Duration = Duration::from_millis(1);

/// Alternates `reference` and `candidate` for about `budget` of wall time and summarises `candidate / reference`.
pub fn ratio(budget: Duration, mut reference: impl FnMut(), mut candidate: impl FnMut()) -> Summary {
    // Warm-up, then a calibration: calls per block, from the reference's own speed.
    time(3, &mut reference);
    time(3, &mut candidate);
    let one_call = time(3, &mut reference) / 3;
    let calls = (BLOCK.as_nanos() / one_call.as_nanos().max(1)).clamp(1, 1_000_000) as u32;
    let round = (one_call * calls * 4).max(Duration::from_nanos(1));
    let rounds = (budget.as_nanos() / round.as_nanos()).clamp(20, 5_000) as usize;
    let mut ratios = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let first = time(calls, &mut reference);
        let second = time(calls, &mut candidate);
        let third = time(calls, &mut candidate);
        let fourth = time(calls, &mut reference);
        ratios.push((second + third).as_secs_f64() / (first + fourth).as_secs_f64());
    }
    ratios.sort_by(f64::total_cmp);
    let at = |fraction: f64| ratios[((ratios.len() - 1) as f64 * fraction).round() as usize];
    Summary { median: at(0.5), lower_quartile: at(0.25), upper_quartile: at(0.75), rounds }
}
