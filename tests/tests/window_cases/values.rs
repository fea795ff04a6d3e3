//! The values of each window op by direct loops in f64, over the input cells each window reads.

use dispatch_core::backend::{Conv2dOptions, Window2d};

use super::reference::{both_positions, sides, wide};

/// The value at `[a, b, c, d]` of row-major `values` of `dims`.
fn at4(values: &[f32], dims: [usize; 4], [a, b, c, d]: [usize; 4]) -> f64 {
    f64::from(values[((a * dims[1] + b) * dims[2] + c) * dims[3] + d])
}

pub fn unfold2d_values(input: &[f32], dims: [usize; 4], window: &Window2d, pad: f64) -> Vec<f64> {
    let [n, c, h, w] = dims;
    let sides = sides(window, [h, w]);
    let [oh, ow] = both_positions(&sides).expect("a window that fits");
    let mut values = Vec::new();
    for image in 0..n {
        for channel in 0..c {
            for i in 0..wide(window.kernel[0]) {
                for j in 0..wide(window.kernel[1]) {
                    for y in 0..oh {
                        for x in 0..ow {
                            values.push(match (sides[0].cell(y, i), sides[1].cell(x, j)) {
                                (Some(row), Some(column)) => at4(input, dims, [image, channel, row, column]),
                                _ => pad,
                            });
                        }
                    }
                }
            }
        }
    }
    values
}

pub fn fold2d_values(
    columns: &[f32],
    [n, rows, _]: [usize; 3],
    [height, width]: [usize; 2],
    window: &Window2d,
) -> Vec<f64> {
    let sides = sides(window, [height, width]);
    let [oh, ow] = both_positions(&sides).expect("a window that fits");
    let [kh, kw] = window.kernel;
    let c = rows / (kh * kw);
    let mut values = vec![0.0; n * c * height * width];
    let mut entries = columns.iter();
    for image in 0..n {
        for channel in 0..c {
            for i in 0..wide(kh) {
                for j in 0..wide(kw) {
                    for y in 0..oh {
                        for x in 0..ow {
                            let entry = f64::from(*entries.next().expect("one entry per tap and position"));
                            if let (Some(row), Some(column)) = (sides[0].cell(y, i), sides[1].cell(x, j)) {
                                values[((image * c + channel) * height + row) * width + column] += entry;
                            }
                        }
                    }
                }
            }
        }
    }
    values
}

pub fn conv2d_values(
    input: &[f32],
    dims: [usize; 4],
    weight: &[f32],
    weight_dims: [usize; 4],
    options: &Conv2dOptions,
) -> Vec<f64> {
    let ([n, _, h, w], [o, cg, kh, kw]) = (dims, weight_dims);
    let window =
        Window2d { kernel: [kh, kw], stride: options.stride, padding: options.padding, dilation: options.dilation };
    let sides = sides(&window, [h, w]);
    let [oh, ow] = both_positions(&sides).expect("a window that fits");
    let out_per_group = o / options.groups;
    let mut values = Vec::new();
    for image in 0..n {
        for out in 0..o {
            for y in 0..oh {
                for x in 0..ow {
                    let mut sum = 0.0;
                    for k in 0..cg {
                        let channel = out / out_per_group * cg + k;
                        for i in 0..kh {
                            for j in 0..kw {
                                let (Some(row), Some(column)) = (sides[0].cell(y, wide(i)), sides[1].cell(x, wide(j)))
                                else {
                                    continue;
                                };
                                sum += at4(input, dims, [image, channel, row, column])
                                    * at4(weight, weight_dims, [out, k, i, j]);
                            }
                        }
                    }
                    values.push(sum);
                }
            }
        }
    }
    values
}

/// Every input cell times every tap of its channel's filters, added where the tap lands in the output `out_dims`.
pub fn conv_transpose2d_values(
    input: &[f32],
    dims: [usize; 4],
    weight: &[f32],
    weight_dims: [usize; 4],
    options: &Conv2dOptions,
    out_dims: [usize; 4],
) -> Vec<f64> {
    let ([n, c, h, w], [_, og, kh, kw], [_, o, height, width]) = (dims, weight_dims, out_dims);
    let c_per_group = c / options.groups;
    let mut values = vec![0.0; n * o * height * width];
    let land = |side: usize, cell: usize, tap: usize, size: usize| {
        let [stride, padding, dilation] =
            [options.stride, options.padding, options.dilation].map(|pair| pair[side] as i128);
        let landed = cell as i128 * stride + tap as i128 * dilation - padding;
        (0..size as i128).contains(&landed).then_some(landed as usize)
    };
    for image in 0..n {
        for channel in 0..c {
            for (y, x) in (0..h).flat_map(|y| (0..w).map(move |x| (y, x))) {
                let value = at4(input, dims, [image, channel, y, x]);
                for out in 0..og {
                    let out_channel = channel / c_per_group * og + out;
                    for (i, j) in (0..kh).flat_map(|i| (0..kw).map(move |j| (i, j))) {
                        if let (Some(row), Some(column)) = (land(0, y, i, height), land(1, x, j, width)) {
                            values[((image * o + out_channel) * height + row) * width + column] +=
                                value * at4(weight, weight_dims, [channel, out, i, j]);
                        }
                    }
                }
            }
        }
    }
    values
}

/// Each window's first largest input cell, by a scan of the whole plane: `(value, row * width + column)`, or
/// `(-inf, None)` for a window of padding alone.
pub fn max_pool_values(input: &[f32], dims: [usize; 4], window: &Window2d) -> Vec<(f64, Option<i64>)> {
    window_cells(input, dims, window, |cells| {
        cells.iter().fold((f64::NEG_INFINITY, None), |best, &(at, value)| {
            if best.1.is_none() || value > best.0 { (value, Some(at as i64)) } else { best }
        })
    })
}

/// Each window's sum over its input cells, divided by its taps (the padding counts as zeros).
pub fn avg_pool_values(input: &[f32], dims: [usize; 4], window: &Window2d) -> Vec<f64> {
    let taps = (wide(window.kernel[0]) * wide(window.kernel[1])) as f64;
    window_cells(input, dims, window, |cells| cells.iter().map(|&(_, value)| value).sum::<f64>() / taps)
}

/// `reduce` of the `(flat index, value)` input cells each window reads, in row-major order, window by window.
fn window_cells<T>(
    input: &[f32],
    dims: [usize; 4],
    window: &Window2d,
    reduce: impl Fn(&[(usize, f64)]) -> T,
) -> Vec<T> {
    let [n, c, h, w] = dims;
    let sides = sides(window, [h, w]);
    let [oh, ow] = both_positions(&sides).expect("a window that fits");
    let mut values = Vec::new();
    for image in 0..n {
        for channel in 0..c {
            for y in 0..oh {
                for x in 0..ow {
                    let cells: Vec<(usize, f64)> = (0..h)
                        .flat_map(|row| (0..w).map(move |column| (row, column)))
                        .filter(|&(row, column)| {
                            sides[0].tap_reading(y, row).is_some() && sides[1].tap_reading(x, column).is_some()
                        })
                        .map(|(row, column)| (row * w + column, at4(input, dims, [image, channel, row, column])))
                        .collect();
                    values.push(reduce(&cells));
                }
            }
        }
    }
    values
}

/// The mean over rows `floor(i * h / oh)..ceil((i + 1) * h / oh)` and the columns alike.
pub fn adaptive_values(input: &[f32], dims: [usize; 4], [oh, ow]: [usize; 2]) -> Vec<f64> {
    let [n, c, h, w] = dims;
    let cells = |cell: usize, output: usize, input: usize| cell * input / output..((cell + 1) * input).div_ceil(output);
    let mut values = Vec::new();
    for image in 0..n {
        for channel in 0..c {
            for y in 0..oh {
                for x in 0..ow {
                    let (rows, columns) = (cells(y, oh, h), cells(x, ow, w));
                    let count = (rows.len() * columns.len()) as f64;
                    let sum: f64 = rows
                        .flat_map(|row| columns.clone().map(move |column| (row, column)))
                        .map(|(row, column)| at4(input, dims, [image, channel, row, column]))
                        .sum();
                    values.push(sum / count);
                }
            }
        }
    }
    values
}
