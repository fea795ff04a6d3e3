//! The main job's data: the repository's own docs and sources, read at run time, as characters.

use std::path::{Path, PathBuf};

/// A text as token ids, one per character, and the characters they stand for.
pub struct Corpus {
    /// The distinct characters, sorted: id `i` is `vocabulary[i]`.
    pub vocabulary: Vec<char>,
    /// Every character of the text as its id.
    pub ids: Vec<i64>,
    /// The files the text was read from, relative to the repository.
    pub files: Vec<PathBuf>,
}

impl Corpus {
    /// The README, BENCHMARKS.md and every `.rs` file of dispatch-core's and dispatch-nn's sources, in a fixed
    /// order, from the repository at `root`.
    pub fn read(root: &Path) -> std::io::Result<Self> {
        let mut files = vec![PathBuf::from("README.md"), PathBuf::from("BENCHMARKS.md")];
        for dir in ["dispatch-core/src", "dispatch-nn/src"] {
            collect_sources(root, Path::new(dir), &mut files)?;
        }
        let mut text = String::new();
        for file in &files {
            text.push_str(&std::fs::read_to_string(root.join(file))?);
            text.push('\n');
        }
        let mut vocabulary: Vec<char> = text.chars().collect();
        vocabulary.sort_unstable();
        vocabulary.dedup();
        let ids = text.chars().map(|c| vocabulary.binary_search(&c).map_or(0, |id| id as i64)).collect();
        Ok(Self { vocabulary, ids, files })
    }

    /// The ids of `text`; a character the corpus does not have is an `Err` naming it.
    pub fn encode(&self, text: &str) -> Result<Vec<i64>, String> {
        text.chars()
            .map(|c| {
                self.vocabulary
                    .binary_search(&c)
                    .map(|id| id as i64)
                    .map_err(|_| format!("{c:?} is not in the vocabulary"))
            })
            .collect()
    }

    /// The text of `ids` (an id outside the vocabulary reads as `?`).
    pub fn decode(&self, ids: &[i64]) -> String {
        ids.iter()
            .map(|&id| usize::try_from(id).ok().and_then(|id| self.vocabulary.get(id)).copied().unwrap_or('?'))
            .collect()
    }

    /// `batch` windows of `context` ids and their next-character targets, from offsets drawn by `seed` in `range`
    /// (a part of the corpus, e.g. the training or the held-out split): the same batch on every device.
    pub fn batch(
        &self,
        range: std::ops::Range<usize>,
        batch: usize,
        context: usize,
        seed: u64,
    ) -> (Vec<i64>, Vec<i64>) {
        let span = range.len().saturating_sub(context + 1).max(1);
        let (mut inputs, mut targets) = (Vec::with_capacity(batch * context), Vec::with_capacity(batch * context));
        let mut state = seed;
        for _ in 0..batch {
            state = splitmix64(state);
            let start = range.start + (state % span as u64) as usize;
            inputs.extend_from_slice(&self.ids[start..start + context]);
            targets.extend_from_slice(&self.ids[start + 1..start + context + 1]);
        }
        (inputs, targets)
    }
}

fn collect_sources(root: &Path, dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(root.join(dir))?
        .map(|entry| entry.map(|entry| dir.join(entry.file_name())))
        .collect::<Result<_, _>>()?;
    entries.sort();
    for entry in entries {
        if root.join(&entry).is_dir() {
            collect_sources(root, &entry, files)?;
        } else if entry.extension().is_some_and(|extension| extension == "rs") {
            files.push(entry);
        }
    }
    Ok(())
}

fn splitmix64(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
