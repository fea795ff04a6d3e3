//! The data set of the examples: interleaved spirals, one arm per class, generated (no download) and identical on
//! every run, so every device trains on exactly the same numbers.

/// `features` is `[points, 2]` row-major; `labels[i]` is the arm point `i` lies on.
pub struct Spirals {
    pub features: Vec<f32>,
    pub labels: Vec<usize>,
    pub classes: usize,
}

impl Spirals {
    pub fn generate(points_per_class: usize, classes: usize) -> Self {
        let mut features = Vec::with_capacity(points_per_class * classes * 2);
        let mut labels = Vec::with_capacity(points_per_class * classes);
        for class in 0..classes {
            for i in 0..points_per_class {
                let radius = i as f32 / points_per_class as f32;
                // A deterministic jitter keeps the arms from being perfect curves without a random generator.
                let jitter = 0.2 * ((i * 7919 + class * 104_729) as f32).sin();
                let angle = class as f32 * 4.0 + radius * 4.0 + jitter;
                features.extend([radius * angle.sin(), radius * angle.cos()]);
                labels.push(class);
            }
        }
        Self { features, labels, classes }
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether the data set has no points.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Rows `range` of the data set: features and labels.
    pub fn rows(&self, range: std::ops::Range<usize>) -> (Vec<f32>, &[usize]) {
        (self.features[range.start * 2..range.end * 2].to_vec(), &self.labels[range])
    }
}
