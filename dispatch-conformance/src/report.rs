//! What the suite found: per check group, how many calls it compared, what it could not check, and every
//! difference from the reference.

use std::fmt;

use dispatch_core::DType;

/// A group of checks: one `#[test]` of [`conformance_tests!`](crate::conformance_tests) each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// Every call that computes on the reference computes here too, with the same shape and values within the
    /// dtype's tolerance, the operands in this dtype. A backend may refuse every dtype but `F32`.
    Values(DType),
    /// Every op keeps its operands' dtype, and mixing two dtypes is the reference's error (`DTypeMismatch`).
    DTypes,
    /// Every call that fails on the reference fails here with an error of the same variant.
    ErrorKinds,
    /// Every differentiable op's gradient under `Autodiff` matches central finite differences in `F64`.
    Gradients,
}

impl fmt::Display for Group {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Group::Values(dtype) => write!(f, "values in {dtype}"),
            Group::DTypes => f.write_str("dtypes"),
            Group::ErrorKinds => f.write_str("error kinds"),
            Group::Gradients => f.write_str("gradients"),
        }
    }
}

/// One way the backend under test differs from the reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// The op, as the op list names it; `operands` where the operands could not be made.
    pub op: &'static str,
    /// The position of the call among the op's calls in the suite's `calls` module, if the difference is one
    /// call's.
    pub call: Option<usize>,
    /// The dtype of the operands.
    pub dtype: DType,
    /// What differs, in words: what the reference gave and what the backend gave.
    pub what: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.call {
            Some(call) => write!(f, "`{}` (call {call}) in {}: {}", self.op, self.dtype, self.what),
            None => write!(f, "`{}` in {}: {}", self.op, self.dtype, self.what),
        }
    }
}

/// The outcome of one group of checks.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupReport {
    pub group: Group,
    /// How many comparisons were made (calls, or gradient elements).
    pub checked: usize,
    /// What the group could not check and why: a dtype the backend refuses, say. Not a failure.
    pub not_checked: Vec<String>,
    pub differences: Vec<Difference>,
    /// The largest relative deviation from the reference among the values compared, and the op it was in: how
    /// close to the tolerance the backend comes (values, and gradients checked to 1e-6).
    pub largest_deviation: Option<(f64, &'static str)>,
}

impl GroupReport {
    pub(crate) fn new(group: Group) -> Self {
        Self { group, checked: 0, not_checked: Vec::new(), differences: Vec::new(), largest_deviation: None }
    }

    /// Notes a deviation measured in `op`, if it is the largest so far (none while every value is exact).
    pub(crate) fn measured(&mut self, op: &'static str, deviation: f64) {
        if deviation > self.largest_deviation.map_or(0.0, |(largest, _)| largest) {
            self.largest_deviation = Some((deviation, op));
        }
    }

    /// Whether the backend does what the reference does in everything this group checked.
    pub fn conforms(&self) -> bool {
        self.differences.is_empty()
    }

    /// Panics with the report's text if the backend differs from the reference; otherwise prints it, so that
    /// what was not checked and how close the values came show in `cargo test -- --nocapture`.
    #[track_caller]
    pub fn assert_conforms(&self) {
        assert!(self.conforms(), "{self}");
        eprint!("{self}");
    }

    pub(crate) fn differ(&mut self, op: &'static str, call: Option<usize>, dtype: DType, what: String) {
        self.differences.push(Difference { op, call, dtype, what });
    }
}

/// The differences shown in a report's text; a backend that differs everywhere is summarised by its first few.
const SHOWN: usize = 40;

impl fmt::Display for GroupReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = if self.conforms() { "conforms" } else { "differs from the reference" };
        write!(f, "{}: {verdict} ({} checked", self.group, self.checked)?;
        if let Some((deviation, op)) = self.largest_deviation {
            write!(f, ", largest deviation {deviation:.1e} in `{op}`")?;
        }
        match self.differences.len() {
            0 => writeln!(f, ")")?,
            count => writeln!(f, ", {count} differences)")?,
        }
        for difference in self.differences.iter().take(SHOWN) {
            writeln!(f, "  {difference}")?;
        }
        if self.differences.len() > SHOWN {
            writeln!(f, "  ... and {} more", self.differences.len() - SHOWN)?;
        }
        for reason in &self.not_checked {
            writeln!(f, "  not checked: {reason}")?;
        }
        Ok(())
    }
}

/// Every group's outcome for one backend.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The backend's [`Backend::name`](dispatch_core::Backend::name).
    pub backend: String,
    pub groups: Vec<GroupReport>,
}

impl Report {
    /// The report of `group`, if this report has checked it.
    pub fn group(&self, group: Group) -> Option<&GroupReport> {
        self.groups.iter().find(|report| report.group == group)
    }

    /// Whether every group conforms.
    pub fn conforms(&self) -> bool {
        self.groups.iter().all(GroupReport::conforms)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "conformance of `{}`:", self.backend)?;
        self.groups.iter().try_for_each(|group| write!(f, "{group}"))
    }
}
