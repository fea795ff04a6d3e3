//! `RankResults<T>`: what a run returns, one result per rank that ran in this process.

use std::slice;

use crate::error::{Error, Result};

/// The result of every rank that ran in this process, by rank: all of them for an in-process group, this
/// process's rank under MPI, rank 0 for a local device (a world of one).
#[derive(Debug)]
pub struct RankResults<T> {
    results: Vec<(usize, Result<T>)>,
}

impl<T> RankResults<T> {
    pub(crate) fn new(results: Vec<(usize, Result<T>)>) -> Self {
        Self { results }
    }

    /// `(rank, result)` pairs, by rank.
    pub fn iter(&self) -> slice::Iter<'_, (usize, Result<T>)> {
        self.results.iter()
    }

    /// The result of `rank`, if it ran in this process.
    pub fn get(&self, rank: usize) -> Option<&Result<T>> {
        self.results.iter().find(|(index, _)| *index == rank).map(|(_, result)| result)
    }

    /// The number of ranks that ran in this process.
    pub fn len(&self) -> usize {
        self.results.len()
    }

    /// Whether no rank ran in this process.
    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }

    /// Every rank's value, by rank, if every rank succeeded. Otherwise the error that started the failure: a
    /// rank's own error in preference to the [`Error::PeerFailed`] it caused on the others.
    pub fn into_values(self) -> Result<Vec<T>> {
        let mut values = Vec::with_capacity(self.results.len());
        let mut first_error: Option<Error> = None;
        for (_, result) in self.results {
            match result {
                Ok(value) => values.push(value),
                Err(error) => {
                    let replaces = match &first_error {
                        None => true,
                        Some(Error::PeerFailed { .. }) => !matches!(error, Error::PeerFailed { .. }),
                        Some(_) => false,
                    };
                    if replaces {
                        first_error = Some(error);
                    }
                }
            }
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(values),
        }
    }
}

impl<T> IntoIterator for RankResults<T> {
    type Item = (usize, Result<T>);
    type IntoIter = std::vec::IntoIter<(usize, Result<T>)>;

    fn into_iter(self) -> Self::IntoIter {
        self.results.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a RankResults<T> {
    type Item = &'a (usize, Result<T>);
    type IntoIter = slice::Iter<'a, (usize, Result<T>)>;

    fn into_iter(self) -> Self::IntoIter {
        self.results.iter()
    }
}
