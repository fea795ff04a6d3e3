//! The CNN example's data: 28x28 images of four kinds of shape, generated from a seed.

/// The shapes, by class id.
pub const SHAPES: [&str; 4] = ["square", "circle", "triangle", "cross"];

/// `count` images (`[count, 1, 28, 28]`, row-major, values in [0, 1]) and their class ids, from `seed`: each a shape of
/// a random kind, size and place, with a little noise.
pub fn images(count: usize, seed: u64) -> (Vec<f32>, Vec<i64>) {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f32 / (1u64 << 53) as f32
    };
    let (mut pixels, mut labels) = (Vec::with_capacity(count * 784), Vec::with_capacity(count));
    for _ in 0..count {
        let class = ((next() * 4.0) as usize).min(3);
        let radius = 5.0 + next() * 5.0;
        let (cx, cy) = (radius + next() * (27.0 - 2.0 * radius), radius + next() * (27.0 - 2.0 * radius));
        for y in 0..28 {
            for x in 0..28 {
                let (dx, dy) = (x as f32 - cx, y as f32 - cy);
                let inside = match class {
                    0 => dx.abs() <= radius && dy.abs() <= radius,
                    1 => dx * dx + dy * dy <= radius * radius,
                    2 => dy <= radius && dy >= -radius && dx.abs() <= (dy + radius) / 2.0,
                    _ => {
                        (dx.abs() <= radius / 4.0 && dy.abs() <= radius)
                            || (dy.abs() <= radius / 4.0 && dx.abs() <= radius)
                    }
                };
                let noise = next() * 0.2;
                pixels.push(if inside { 0.8 + noise } else { noise });
            }
        }
        labels.push(class as i64);
    }
    (pixels, labels)
}
