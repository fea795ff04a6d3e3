//! The op list in dispatch-core is the only place that names every op: a derived enum's backend is expanded from it,
//! so it sends every op, defaulted ones included, to the variant's own backend, and the derive itself names none.

use std::cell::RefCell;

use dispatch_core::backend::{DEFAULTED_OPS, OPS};
use dispatch_core::backends::{NdArray, NdArrayDevice};
use dispatch_core::{Backend, Dispatch, Shape};

thread_local! {
    static REACHED: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
}

/// The ops `Recording` ran on this thread since the last call, in order.
fn take_reached() -> Vec<&'static str> {
    REACHED.with(|reached| std::mem::take(&mut *reached.borrow_mut()))
}

/// `NdArray` with every op of the op list written out (defaulted ones too), each noting that it ran.
#[derive(Clone, Copy, Debug, Default)]
pub struct Recording;

/// The callback that writes `Recording`'s ops: note the op, then run `NdArray`'s.
#[macro_export]
macro_rules! recording_ops {
    ({} $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?, $autodiff:ident;)*) => {
        impl Backend for Recording {
            type Device = NdArrayDevice;
            type FloatTensor = <NdArray as Backend>::FloatTensor;
            type IntTensor = <NdArray as Backend>::IntTensor;
            type BoolTensor = <NdArray as Backend>::BoolTensor;

            fn name() -> String {
                "recording".to_owned()
            }

            $(
                fn $op($($param: dispatch_core::__op_param_type!(Self: $kind)),*) -> dispatch_core::__op_output_type!(Self: $output) {
                    REACHED.with(|reached| reached.borrow_mut().push(stringify!($op)));
                    <NdArray as Backend>::$op($($param),*)
                }
            )*
        }
    };
}

dispatch_core::for_each_op! { crate::recording_ops {} }

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Recording)]
    Recording(NdArrayDevice),
}

/// A value of each kind of operand, on one device of the derived enum.
struct Operands {
    float: <DeviceBackend as Backend>::FloatTensor,
    floats: Vec<<DeviceBackend as Backend>::FloatTensor>,
    int: <DeviceBackend as Backend>::IntTensor,
    bool: <DeviceBackend as Backend>::BoolTensor,
    device: Device,
}

/// The callback that calls every op on the derived backend and records which ops reached `Recording`.
#[macro_export]
macro_rules! call_every_op {
    ({ $operands:ident, $reached:ident } $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?, $autodiff:ident;)*) => {
        $(
            take_reached();
            let _ = <DeviceBackend as Backend>::$op($(dispatch_tests::sample_operand!($operands, $kind)),*);
            $reached.push((stringify!($op), take_reached()));
        )*
    };
}

#[test]
fn every_op_reaches_the_variants_own_backend_defaulted_ones_included() {
    let device = Device::Recording(NdArrayDevice);
    let float = DeviceBackend::from_vec(vec![1.0], Shape::new([1]), &device).unwrap();
    let operands = Operands {
        floats: vec![float.clone()],
        float,
        int: DeviceBackend::int_from_vec(vec![1], Shape::new([1]), &device).unwrap(),
        bool: DeviceBackend::bool_from_vec(vec![true], Shape::new([1]), &device).unwrap(),
        device,
    };
    let mut reached = Vec::new();
    dispatch_core::for_each_op! { crate::call_every_op { operands, reached } }
    assert_eq!(reached.len(), OPS.len());
    for (op, ran) in reached {
        assert_eq!(ran, [op], "{op} through the derived enum ran {ran:?} on the variant's backend");
    }
    assert!(DEFAULTED_OPS.len() > 3, "{DEFAULTED_OPS:?}");
}

#[test]
fn the_op_list_names_each_op_once() {
    let mut names = OPS.to_vec();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), OPS.len(), "{OPS:?}");
    assert!(DEFAULTED_OPS.iter().all(|op| OPS.contains(op)));
}

/// Every `.rs` file below `dir`, with its text.
fn sources(dir: &std::path::Path, into: &mut Vec<(std::path::PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, into);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            into.push((path, text));
        }
    }
}

/// Op names that are words of the derive's own, each with what it names there. An identifier spelled like one of
/// them is not counted as naming the op; each must still occur in the derive, or it leaves this list.
const HOMONYMS: &[(&str, &str)] = &[
    ("device", "a device value, and dispatch-core's `Arm::device` that each arm implements"),
    ("expand", "the derive's expansion step, its module and its entry point"),
];

/// What the derive's source holds that could name an op: identifiers and the text of string literals.
#[derive(Debug, PartialEq)]
enum Token {
    Ident(String),
    Str(String),
}

/// The identifiers and string literals of Rust `source`, in order; comments (nested ones too), char and byte
/// literals, lifetimes, numbers and punctuation are skipped, and a raw identifier `r#name` is `name`. An
/// unterminated comment or literal is an `Err`, so that a mistake of this lexer cannot hide the rest of a file.
fn tokens(source: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = source.chars().collect();
    let at = |index: usize| chars.get(index).copied();
    let is_ident_char = |c: char| c.is_alphanumeric() || c == '_';
    let mut tokens = Vec::new();
    let mut index = 0;
    while let Some(c) = at(index) {
        let next = at(index + 1);
        if c == '/' && next == Some('/') {
            while at(index).is_some_and(|c| c != '\n') {
                index += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            loop {
                match (at(index), at(index + 1)) {
                    (Some('/'), Some('*')) => (depth, index) = (depth + 1, index + 2),
                    (Some('*'), Some('/')) => (depth, index) = (depth - 1, index + 2),
                    (Some(_), _) => index += 1,
                    (None, _) => return Err("unterminated block comment".to_owned()),
                }
                if depth == 0 {
                    break;
                }
            }
        } else if c == '"' {
            let (text, end) = quoted(&chars, index + 1)?;
            tokens.push(Token::Str(text));
            index = end;
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a): a lifetime has no closing quote after one
            // character.
            if next == Some('\\') {
                index += 2;
                while at(index).is_some_and(|c| c != '\'') {
                    index += 1;
                }
                if at(index).is_none() {
                    return Err("unterminated char literal".to_owned());
                }
                index += 1;
            } else if at(index + 2) == Some('\'') {
                index += 3;
            } else {
                index += 1;
                while at(index).is_some_and(is_ident_char) {
                    index += 1;
                }
            }
        } else if c.is_ascii_digit() {
            // `1_000u64`, `0x1F`, `2.5e3`; the `.` of a range (`0..len`) ends the number.
            let in_number = |index: usize| match at(index) {
                Some('.') => at(index + 1).is_some_and(|c| c.is_ascii_digit()),
                Some(c) => is_ident_char(c),
                None => false,
            };
            while in_number(index) {
                index += 1;
            }
        } else if is_ident_char(c) {
            let start = index;
            while at(index).is_some_and(is_ident_char) {
                index += 1;
            }
            let word: String = chars[start..index].iter().collect();
            match (word.as_str(), at(index)) {
                ("r", Some('#')) if at(index + 1).is_some_and(is_ident_char) => {
                    let start = index + 1;
                    index = start;
                    while at(index).is_some_and(is_ident_char) {
                        index += 1;
                    }
                    tokens.push(Token::Ident(chars[start..index].iter().collect()));
                }
                ("r" | "br" | "cr", Some('#' | '"')) => {
                    let hashes = chars[index..].iter().take_while(|&&c| c == '#').count();
                    if at(index + hashes) != Some('"') {
                        return Err(format!("`{word}` then `#` that opens no raw string"));
                    }
                    let start = index + hashes + 1;
                    let closing: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
                    let length = chars[start..]
                        .windows(closing.len())
                        .position(|window| window == closing.as_slice())
                        .ok_or("unterminated raw string")?;
                    tokens.push(Token::Str(chars[start..start + length].iter().collect()));
                    index = start + length + closing.len();
                }
                ("b" | "c", Some('"')) => {
                    let (text, end) = quoted(&chars, index + 1)?;
                    tokens.push(Token::Str(text));
                    index = end;
                }
                // A byte literal, `b'x'`: its quote is read as a char literal's.
                _ => tokens.push(Token::Ident(word)),
            }
        } else {
            index += 1;
        }
    }
    Ok(tokens)
}

/// The text of a string literal whose contents start at `start`, escapes as written, and the index after it.
fn quoted(chars: &[char], start: usize) -> Result<(String, usize), String> {
    let mut index = start;
    loop {
        match chars.get(index) {
            Some('\\') => index += 2,
            Some('"') => return Ok((chars[start..index].iter().collect(), index + 1)),
            Some(_) => index += 1,
            None => return Err("unterminated string literal".to_owned()),
        }
    }
}

/// The ops `source` names: as an identifier (homonyms aside) or as a whole string literal.
fn ops_named(source: &str) -> Result<Vec<String>, String> {
    let is_op = |word: &str| OPS.contains(&word);
    let is_homonym = |word: &str| HOMONYMS.iter().any(|(homonym, _)| *homonym == word);
    Ok(tokens(source)?
        .into_iter()
        .filter_map(|token| match token {
            Token::Ident(ident) if is_op(&ident) && !is_homonym(&ident) => Some(ident),
            Token::Str(text) if is_op(&text) => Some(format!("\"{text}\"")),
            Token::Ident(_) | Token::Str(_) => None,
        })
        .collect())
}

/// No op name in `dispatch-derive/src` as an identifier or a whole string literal, comments aside.
#[test]
fn the_derive_names_no_op() {
    let derive_src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../dispatch-derive/src");
    let mut files = Vec::new();
    sources(&derive_src, &mut files);
    assert!(files.len() > 5, "found only {} files in {}", files.len(), derive_src.display());
    let mut identifiers = Vec::new();
    for (path, text) in &files {
        let named = ops_named(text).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
        assert!(named.is_empty(), "{} names the ops {named:?}", path.display());
        let tokens = tokens(text).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
        identifiers.extend(tokens.into_iter().filter_map(|token| match token {
            Token::Ident(ident) => Some(ident),
            Token::Str(_) => None,
        }));
    }
    // The lexer read the code, not just its first lines: identifiers from all over the derive are there.
    for expected in ["proc_macro_derive", "TokenStream", "quote_spanned", "Accumulator", "located_at"] {
        assert!(identifiers.iter().any(|ident| ident == expected), "no identifier {expected} in the derive's source");
    }
    for (homonym, meaning) in HOMONYMS {
        assert!(OPS.contains(homonym), "{homonym} ({meaning}) is no op: take it off HOMONYMS");
        assert!(
            identifiers.iter().any(|ident| ident == homonym),
            "the derive no longer says {homonym}: take it off HOMONYMS"
        );
    }
}

#[test]
fn the_scanner_finds_an_op_named_in_code_and_nowhere_else() {
    // Named in generated code, as a raw identifier, and as a whole string.
    let named = ops_named("quote!(<#b as Backend>::matmul(lhs, rhs)); let r#reshape = 1; f(\"gather\");");
    assert_eq!(named, Ok(vec!["matmul".to_owned(), "reshape".to_owned(), "\"gather\"".to_owned()]));
    // Comments, nested ones too, words inside strings and raw strings, char literals, lifetimes and homonyms.
    let quiet = "/// calls matmul\n// then add\n/* sum /* nested mean */ max */ let s = \"matmul twice\";\n\
                 let r = r#\"a \"sum\" b\"#; let c = '\"'; let e = '\\''; let b = b'x'; fn f<'add>(device: u8) {}";
    assert_eq!(ops_named(quiet), Ok(vec![]));
    // After all of that, an op in code is still found, after a number too.
    let loud = format!("{quiet} fn g() {{ B::softmax(x, 2.5e3) }} for i in 0..sum {{}}");
    assert_eq!(ops_named(&loud), Ok(vec!["softmax".to_owned(), "sum".to_owned()]));
    assert!(tokens("/* open").is_err() && tokens("\"open").is_err() && tokens("r#\"open\"").is_err());
}
