//! A small deterministic classification set: points in the square, labelled by which side of a diagonal they fall.

/// `count` points of 2 features, row-major, and their labels (0 or 1).
pub fn two_classes(count: usize) -> (Vec<f32>, Vec<usize>) {
    let mut features = Vec::with_capacity(count * 2);
    let mut labels = Vec::with_capacity(count);
    for index in 0..count {
        // A low-discrepancy walk over [-1, 1)^2: deterministic and evenly spread.
        let x = ((index as f32 * 0.618_034).fract()) * 2.0 - 1.0;
        let y = ((index as f32 * 0.754_878 + 0.5).fract()) * 2.0 - 1.0;
        features.extend([x, y]);
        labels.push(usize::from(x + 0.5 * y > 0.1));
    }
    (features, labels)
}
