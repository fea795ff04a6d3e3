//! The main job's data: the repository's own docs and sources, read at run time, as characters.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::random::splitmix64;

/// What the corpus is read from, relative to the repository: these files, and every `.rs` file under these folders.
const CORPUS_FILES: [&str; 2] = ["README.md", "BENCHMARKS.md"];
const CORPUS_SOURCES: [&str; 2] = ["dispatch-core/src", "dispatch-nn/src"];

/// The characters a model reads and writes, sorted and distinct: id `i` is the `i`-th.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vocabulary(Vec<char>);

impl Vocabulary {
    /// Every distinct character of `text`.
    pub fn of(text: &str) -> Self {
        let mut chars: Vec<char> = text.chars().collect();
        chars.sort_unstable();
        chars.dedup();
        Self(chars)
    }

    /// The vocabulary whose [`Display`](fmt::Display) form is `stored`; an `Err` unless its characters are sorted
    /// and distinct (and so could have been written by it).
    pub fn parse(stored: &str) -> Result<Self, String> {
        let chars: Vec<char> = stored.chars().collect();
        if chars.is_empty() {
            return Err("the vocabulary is empty".to_owned());
        }
        match chars.windows(2).find(|pair| pair[0] >= pair[1]) {
            Some(pair) => Err(format!("the vocabulary is not sorted and distinct: {:?} before {:?}", pair[0], pair[1])),
            None => Ok(Self(chars)),
        }
    }

    /// The number of characters.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no characters.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The ids of `text`; a character the vocabulary does not have is an `Err` naming it.
    pub fn encode(&self, text: &str) -> Result<Vec<i64>, String> {
        text.chars().map(|c| self.id(c).ok_or_else(|| format!("{c:?} is not in the vocabulary"))).collect()
    }

    /// The text of `ids` (an id outside the vocabulary reads as `?`).
    pub fn decode(&self, ids: &[i64]) -> String {
        ids.iter().map(|&id| usize::try_from(id).ok().and_then(|id| self.0.get(id)).copied().unwrap_or('?')).collect()
    }

    fn id(&self, c: char) -> Option<i64> {
        self.0.binary_search(&c).ok().and_then(|id| i64::try_from(id).ok())
    }
}

/// Its characters in order, which [`Vocabulary::parse`] reads back.
impl fmt::Display for Vocabulary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|c| write!(f, "{c}"))
    }
}

/// A text as token ids, one per character, and the characters they stand for.
pub struct Corpus {
    pub vocabulary: Vocabulary,
    /// Every character of the text as its id.
    pub ids: Vec<i64>,
    /// The files the text was read from, relative to the repository.
    pub files: Vec<PathBuf>,
}

impl Corpus {
    /// The repository whose text to read: `given` (an example's `--corpus DIR`), else the nearest folder at or above
    /// the current directory that holds the corpus, so that the examples run from anywhere inside a checkout, on
    /// any machine, wherever it was built.
    pub fn locate(given: Option<PathBuf>) -> Result<PathBuf, String> {
        if let Some(root) = given {
            return Ok(root);
        }
        let here = std::env::current_dir().map_err(|error| format!("reading the current directory: {error}"))?;
        here.ancestors().find(|dir| holds_corpus(dir)).map(Path::to_path_buf).ok_or_else(|| {
            let needed: Vec<&str> = CORPUS_FILES.iter().chain(&CORPUS_SOURCES).copied().collect();
            format!(
                "no checkout of dispatch (a folder with {}) at or above {}: run from inside the repository, or pass \
                 --corpus DIR",
                needed.join(", "),
                here.display()
            )
        })
    }

    /// The README, BENCHMARKS.md and every `.rs` file of dispatch-core's and dispatch-nn's sources, in a fixed
    /// order, from the repository at `root`; an `Err` names the file or folder that could not be read.
    pub fn read(root: &Path) -> Result<Self, String> {
        let mut files: Vec<PathBuf> = CORPUS_FILES.iter().map(PathBuf::from).collect();
        for dir in CORPUS_SOURCES {
            collect_sources(root, Path::new(dir), &mut files)
                .map_err(|error| format!("reading {}: {error}", root.join(dir).display()))?;
        }
        let mut text = String::new();
        for file in &files {
            let path = root.join(file);
            text.push_str(
                &std::fs::read_to_string(&path).map_err(|error| format!("reading {}: {error}", path.display()))?,
            );
            text.push('\n');
        }
        let vocabulary = Vocabulary::of(&text);
        let ids = vocabulary.encode(&text)?;
        Ok(Self { vocabulary, ids, files })
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

    /// The bigram entropy of `range` of the text, in nats: the mean loss, over its characters after the first, of
    /// the best prediction from the character before alone (each pair's frequency in `range` itself). A model must
    /// use more than one character of context to train below it.
    pub fn bigram_entropy(&self, range: std::ops::Range<usize>) -> f64 {
        let ids = self.ids.get(range).unwrap_or_default();
        let index = |id: i64| usize::try_from(id).unwrap_or(0);
        let size = self.vocabulary.len();
        let (mut pairs, mut firsts) = (vec![0u64; size * size], vec![0u64; size]);
        for pair in ids.windows(2) {
            let (first, next) = (index(pair[0]), index(pair[1]));
            if first < size && next < size {
                pairs[first * size + next] += 1;
                firsts[first] += 1;
            }
        }
        let total = firsts.iter().sum::<u64>().max(1) as f64;
        let loss: f64 = pairs
            .iter()
            .enumerate()
            .filter(|&(_, &count)| count > 0)
            .map(|(at, &count)| count as f64 * (firsts[at / size] as f64 / count as f64).ln())
            .sum();
        loss / total
    }
}

fn holds_corpus(dir: &Path) -> bool {
    CORPUS_FILES.iter().all(|file| dir.join(file).is_file())
        && CORPUS_SOURCES.iter().all(|sources| dir.join(sources).is_dir())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vocabulary_reads_back_from_its_stored_form_and_encodes_alike() {
        let vocabulary = Vocabulary::of("fn main() { \"é→\" }\n");
        let stored = vocabulary.to_string();
        assert_eq!(stored, "\n \"()afimn{}é→");
        let parsed = Vocabulary::parse(&stored).unwrap();
        assert_eq!(parsed, vocabulary);
        let ids = parsed.encode("main(é→)").unwrap();
        assert_eq!(ids, [8, 5, 7, 9, 3, 12, 13, 4]);
        assert_eq!(vocabulary.decode(&ids), "main(é→)");
        assert_eq!(vocabulary.decode(&[0, 14, -1]), "\n??");
        assert_eq!(vocabulary.encode("x").unwrap_err(), "'x' is not in the vocabulary");
    }

    #[test]
    fn a_stored_vocabulary_that_is_empty_unsorted_or_repeated_is_refused() {
        assert_eq!(Vocabulary::parse("").unwrap_err(), "the vocabulary is empty");
        assert_eq!(Vocabulary::parse("ba").unwrap_err(), "the vocabulary is not sorted and distinct: 'b' before 'a'");
        assert_eq!(Vocabulary::parse("abb").unwrap_err(), "the vocabulary is not sorted and distinct: 'b' before 'b'");
    }

    /// After `a`, `a` and `b` come equally often (ln 2 each time); after `b`, always `a` (0).
    #[test]
    fn the_bigram_entropy_is_the_mean_loss_of_predicting_from_the_character_before() {
        let text = "aabaabaab";
        let vocabulary = Vocabulary::of(text);
        let corpus = Corpus { ids: vocabulary.encode(text).unwrap(), vocabulary, files: Vec::new() };
        let (pairs_after_a, pairs_after_b) = (6.0, 2.0);
        let expected = pairs_after_a * std::f64::consts::LN_2 / (pairs_after_a + pairs_after_b);
        assert!((corpus.bigram_entropy(0..9) - expected).abs() < 1e-12);
        assert!((corpus.bigram_entropy(0..3) - std::f64::consts::LN_2).abs() < 1e-12, "`aab`: after `a`, `a` or `b`");
        assert_eq!(corpus.bigram_entropy(0..1), 0.0, "no pair");
        assert_eq!(corpus.bigram_entropy(5..20), 0.0, "a range past the end reads nothing");
    }

    #[test]
    fn the_corpus_is_read_from_a_named_checkout_and_a_missing_file_is_named() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let corpus = Corpus::read(&Corpus::locate(Some(root.clone())).unwrap()).unwrap();
        assert_eq!(corpus.files[..2], [PathBuf::from("README.md"), PathBuf::from("BENCHMARKS.md")]);
        assert!(corpus.files.contains(&PathBuf::from("dispatch-nn/src/record.rs")));
        assert_eq!(corpus.vocabulary.decode(&corpus.ids[..8]), "# dispat");
        let elsewhere = root.join("examples");
        let error = Corpus::read(&elsewhere).err().unwrap();
        assert!(error.starts_with(&format!("reading {}", elsewhere.join("dispatch-core/src").display())), "{error}");
    }
}
