//! No two files of a library crate (dispatch-core, dispatch-derive, dispatch-device-name, dispatch-nn,
//! dispatch-conformance) use each other, a parent module and its children included. A file uses another when it names
//! it: `use crate::...`, `super::`, `self::`, a child's name or the crate's own other name in a path, anywhere in code,
//! followed through re-exports (`pub use`) to the file that defines the item; a glob names its module, and a
//! `#[macro_export]` macro is its defining file's. So a parent may declare and re-export its children, and a child may
//! name a sibling, or its parent's own items where the parent names it by nothing but `mod child;`. Skipped, as they
//! are not paths of this crate's code: comments and literals, visibilities (`pub(super)`), `$crate::` paths (they
//! expand in the crates of derived enums), `quote!` bodies (the code a derive generates) and `#[cfg(test)] mod tests`,
//! which sit on top of their file by design. Only pairs are checked, as the issue words it; longer loops through
//! several files are not.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module's path from the crate root: `["backend", "defaults"]`; the root is empty.
type ModulePath = Vec<String>;

/// Every `.rs` file under `src`, by the module path it holds (`mod.rs` and `lib.rs` hold their folder's module).
fn modules(src: &Path) -> BTreeMap<ModulePath, PathBuf> {
    let mut found = BTreeMap::new();
    let mut folders = vec![src.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(&folder).expect("the source folder is readable") {
            let path = entry.expect("a readable entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                let relative = path.strip_prefix(src).expect("under src").with_extension("");
                let mut module: ModulePath =
                    relative.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
                if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                    module.pop();
                }
                // `#[path = "private/mod.rs"] pub mod __private01;`
                if module.first().is_some_and(|first| first == "private") {
                    module[0] = "__private01".to_owned();
                }
                found.insert(module, path);
            }
        }
    }
    found
}

/// `source` without comments, string and char literals (their lines kept, so that lines still line up).
fn without_comments_and_literals(source: &str) -> String {
    let mut kept = String::with_capacity(source.len());
    let mut characters = source.chars().peekable();
    while let Some(character) = characters.next() {
        match character {
            '/' if characters.peek() == Some(&'/') => {
                characters.by_ref().find(|&next| next == '\n');
                kept.push('\n');
            }
            '/' if characters.peek() == Some(&'*') => {
                characters.next();
                let mut depth = 1;
                while depth > 0 {
                    match characters.next() {
                        Some('*') if characters.peek() == Some(&'/') => {
                            characters.next();
                            depth -= 1;
                        }
                        Some('/') if characters.peek() == Some(&'*') => {
                            characters.next();
                            depth += 1;
                        }
                        Some('\n') => kept.push('\n'),
                        Some(_) => {}
                        None => break,
                    }
                }
            }
            '"' => {
                while let Some(inner) = characters.next() {
                    match inner {
                        '\\' => {
                            characters.next();
                        }
                        '"' => break,
                        '\n' => kept.push('\n'),
                        _ => {}
                    }
                }
            }
            // A char literal (`'"'`, `'\''`), not a lifetime (`'a`): its closing quote comes within three characters.
            '\'' => {
                let ahead: Vec<char> = characters.clone().take(3).collect();
                let literal_len = match ahead.as_slice() {
                    ['\\', _, '\'', ..] => Some(3),
                    [_, '\'', ..] => Some(2),
                    _ => None,
                };
                match literal_len {
                    Some(len) => {
                        characters.by_ref().take(len).for_each(drop);
                    }
                    None => kept.push(character),
                }
            }
            _ => kept.push(character),
        }
    }
    kept
}

/// The code of `source` that names other files: without comments, literals, visibility paths (`pub(super)`,
/// `pub(in crate::a)`), `quote!` bodies and test modules; a glob (`use super::*`) names its module; in an inline
/// module (`mod visits { ... }`), a leading `super::` is the file's own module. `macro_rules!` bodies are read too:
/// their `$crate::` paths are skipped where paths are read.
fn code_of(source: &str) -> String {
    let source = without_comments_and_literals(source);
    let mut code = String::with_capacity(source.len());
    let mut lines = source.lines();
    let mut inline_module_end: Option<String> = None;
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if line.starts_with("mod tests {") {
            // Skip to the line that closes the module: the next line starting with `}` at column 0.
            lines.by_ref().find(|inner| inner.starts_with('}'));
            continue;
        }
        if inline_module_end.as_deref() == Some(line) {
            inline_module_end = None;
        } else if inline_module_end.is_none()
            && (trimmed.starts_with("mod ") || trimmed.starts_with("pub mod "))
            && trimmed.ends_with('{')
        {
            inline_module_end = Some(format!("{}}}", &line[..line.len() - trimmed.len()]));
        }
        let mut kept = line.to_owned();
        if inline_module_end.is_some() {
            // One level up from the inline module is this file; two levels up, its parent.
            kept = kept.replace("super::super::", "\u{1}").replace("super::", "self::").replace('\u{1}', "super::");
        }
        code.push_str(&kept);
        code.push('\n');
    }
    for visibility in ["pub(super)", "pub(crate)", "pub(self)"] {
        code = code.replace(visibility, "pub");
    }
    while let Some(start) = code.find("pub(in ") {
        let end = code[start..].find(')').map_or(code.len(), |end| start + end + 1);
        code.replace_range(start..end, "pub");
    }
    // A glob as a segment that is no module's name, so the path names the module it reads.
    without_quoted_code(&code).replace("::*", "::__glob")
}

/// `code` without the bodies of `quote!`, `quote_spanned!` and `parse_quote!`: tokens a derive emits, whose paths
/// resolve in the user's crate.
fn without_quoted_code(code: &str) -> String {
    let mut kept = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(start) = ["quote!", "quote_spanned!", "parse_quote!"]
        .iter()
        .filter_map(|name| rest.find(name).map(|at| at + name.len()))
        .min()
    {
        kept.push_str(&rest[..start]);
        let body = &rest[start..];
        let Some(open) = body.find(['(', '{', '[']) else { break };
        let mut depth = 0usize;
        let mut end = body.len();
        for (at, character) in body.char_indices().skip(open) {
            match character {
                '(' | '{' | '[' => depth += 1,
                ')' | '}' | ']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = at + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &body[end..];
    }
    kept.push_str(rest);
    kept
}

/// Where a path starting with `first` begins, seen from `module`: `crate`, `super`, `self`, or a child of `module`.
fn path_root(first: &str, module: &ModulePath, modules: &BTreeMap<ModulePath, PathBuf>) -> Option<ModulePath> {
    match first {
        "crate" => Some(Vec::new()),
        "super" => Some(module[..module.len().saturating_sub(1)].to_vec()),
        "self" => Some(module.clone()),
        child => {
            let mut path = module.clone();
            path.push(child.to_owned());
            modules.contains_key(&path).then_some(path)
        }
    }
}

/// `rest` of a path, after `root`, with leading `super`s applied.
fn joined(mut root: ModulePath, rest: &[&str]) -> ModulePath {
    let mut rest = rest.iter().peekable();
    while rest.peek() == Some(&&"super") {
        root.pop();
        rest.next();
    }
    root.extend(rest.map(|part| part.trim().to_owned()).filter(|part| !part.is_empty()));
    root
}

/// The module paths `code` (in module `module`) names: `crate::a::b`, `super::x`, `self::x` and `child::x`
/// anywhere, each as far as it goes, and `use <path>::{c, d::e}` with each item of the group.
fn named_paths(code: &str, module: &ModulePath, modules: &BTreeMap<ModulePath, PathBuf>) -> Vec<ModulePath> {
    let mut paths = Vec::new();
    let words = code.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '$'));
    for word in words {
        // `$crate::` expands elsewhere; `a::` before a group is read with the group below; `::a` is another crate.
        if word.starts_with('$') || word.ends_with("::") || word.starts_with("::") || !word.contains("::") {
            continue;
        }
        let parts: Vec<&str> = word.split("::").collect();
        if let Some(root) = path_root(parts[0], module, modules) {
            paths.push(joined(root, &parts[1..]));
        }
    }
    for (start, _) in code.match_indices("use ") {
        let statement = &code[start + "use ".len()..code[start..].find(';').map_or(code.len(), |end| start + end)];
        let Some(open) = statement.find('{') else { continue };
        let prefix: Vec<&str> = statement[..open].split("::").map(str::trim).filter(|part| !part.is_empty()).collect();
        let Some(root) = prefix.first().and_then(|first| path_root(first, module, modules)) else { continue };
        let root = joined(root, &prefix[1..]);
        for item in statement[open + 1..].split([',', '{', '}']).filter(|item| !item.trim().is_empty()) {
            let item: Vec<&str> = item.split("::").collect();
            paths.push(joined(root.clone(), &item));
        }
    }
    paths
}

/// What a crate's files know of its names: its modules, its `#[macro_export]` macros by the file that defines
/// them, and each module's re-exports (`pub use a::B;`, `pub use a::{B as C}`) by name, with the path they stand for.
struct Names {
    modules: BTreeMap<ModulePath, PathBuf>,
    macros: BTreeMap<String, ModulePath>,
    re_exports: BTreeMap<ModulePath, BTreeMap<String, ModulePath>>,
}

impl Names {
    /// The file `path` names: a `#[macro_export]` macro's (`crate::for_each_op`); else the longest prefix of `path`
    /// that is a module, followed through the re-exports of that module to the file that defines the item.
    fn file_of(&self, path: &ModulePath) -> Option<ModulePath> {
        if let [name] = path.as_slice()
            && let Some(defined_in) = self.macros.get(name)
        {
            return Some(defined_in.clone());
        }
        let mut path = path.clone();
        // A re-export of a re-export is followed too, a few steps at most.
        for _ in 0..8 {
            let module = (0..=path.len())
                .rev()
                .map(|length| path[..length].to_vec())
                .find(|prefix| self.modules.contains_key(prefix))?;
            let Some(item) = path.get(module.len()) else { return Some(module) };
            let Some(source) = self.re_exports.get(&module).and_then(|items| items.get(item)) else {
                return Some(module);
            };
            let mut followed = source.clone();
            followed.extend(path[module.len() + 1..].iter().cloned());
            if followed == path {
                return Some(module);
            }
            path = followed;
        }
        None
    }
}

/// The re-exports of `code` (in module `module`): each name a `pub use` gives, with the path it stands for.
fn re_exports(
    code: &str,
    module: &ModulePath,
    modules: &BTreeMap<ModulePath, PathBuf>,
) -> BTreeMap<String, ModulePath> {
    let mut found = BTreeMap::new();
    for (start, _) in code.match_indices("pub use ") {
        let statement = &code[start + "pub use ".len()..code[start..].find(';').map_or(code.len(), |end| start + end)];
        let (prefix, items) = match statement.find('{') {
            Some(open) => (&statement[..open], statement[open + 1..].split([',', '{', '}']).collect::<Vec<_>>()),
            None => ("", vec![statement]),
        };
        for item in items.iter().map(|item| format!("{prefix}{}", item.trim())) {
            let (path, alias) = match item.split_once(" as ") {
                Some((path, alias)) => (path.trim().to_owned(), Some(alias.trim().to_owned())),
                None => (item.trim().to_owned(), None),
            };
            let parts: Vec<&str> = path.split("::").map(str::trim).filter(|part| !part.is_empty()).collect();
            let Some((&last, _)) = parts.split_last() else { continue };
            if last == "__glob" || last == "self" {
                continue;
            }
            if let Some(root) = path_root(parts[0], module, modules) {
                found.insert(alias.unwrap_or_else(|| last.to_owned()), joined(root, &parts[1..]));
            }
        }
    }
    found
}

/// The `#[macro_export]` macros of each file, which the crate names from its root.
fn exported_macros(sources: &BTreeMap<ModulePath, String>) -> BTreeMap<String, ModulePath> {
    let mut macros = BTreeMap::new();
    for (module, source) in sources {
        let mut exported = false;
        for line in source.lines().map(str::trim) {
            if line == "#[macro_export]" {
                exported = true;
            } else if let Some(name) = line.strip_prefix("macro_rules! ").filter(|_| exported) {
                macros.insert(name.trim_end_matches([' ', '{']).to_owned(), module.clone());
                exported = false;
            } else if !line.starts_with("#[") {
                exported = false;
            }
        }
    }
    macros
}

/// Every pair of files of `src` that name each other.
fn circles(src: &Path) -> BTreeSet<(String, String)> {
    let modules = modules(src);
    let sources: BTreeMap<ModulePath, String> = modules
        .iter()
        .map(|(module, path)| (module.clone(), fs::read_to_string(path).expect("a readable source file")))
        .collect();
    // `extern crate self as name;` lets the crate name itself as `name::`.
    let alias = sources.get(&Vec::new()).and_then(|root| {
        let (_, rest) = root.split_once("extern crate self as ")?;
        Some(format!("{}::", rest.split(';').next()?.trim()))
    });
    let codes: BTreeMap<ModulePath, String> = sources
        .iter()
        .map(|(module, source)| {
            let code = code_of(source);
            let code = match &alias {
                Some(alias) => code.replace(alias.as_str(), "crate::"),
                None => code,
            };
            (module.clone(), code)
        })
        .collect();
    let names = Names {
        macros: exported_macros(&sources),
        re_exports: codes.iter().map(|(module, code)| (module.clone(), re_exports(code, module, &modules))).collect(),
        modules,
    };
    let mut uses: BTreeMap<ModulePath, BTreeSet<ModulePath>> = BTreeMap::new();
    for (module, code) in &codes {
        let named = named_paths(code, module, &names.modules)
            .iter()
            .filter_map(|named| names.file_of(named))
            .filter(|named| named != module)
            .collect();
        uses.insert(module.clone(), named);
    }
    let name = |module: &ModulePath| if module.is_empty() { "lib".to_owned() } else { module.join("/") };
    let mut found = BTreeSet::new();
    for (a, named) in &uses {
        for b in named {
            if uses.get(b).is_some_and(|back| back.contains(a)) {
                let (first, second) = if a < b { (a, b) } else { (b, a) };
                found.insert((name(first), name(second)));
            }
        }
    }
    found
}

#[test]
fn no_two_files_of_a_library_crate_use_each_other() {
    for library in ["dispatch-core", "dispatch-derive", "dispatch-device-name", "dispatch-nn", "dispatch-conformance"] {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(library).join("src");
        let found = circles(&src);
        assert!(found.is_empty(), "files of {library} that use each other: {found:?}");
    }
}

#[test]
fn the_check_finds_circles_and_only_circles() {
    let scratch = std::env::temp_dir().join(format!("no-import-cycles-{}", std::process::id()));
    fs::create_dir_all(scratch.join("tree")).unwrap();
    let files = [
        ("lib.rs", "extern crate self as scratch;\nmod a;\nmod tree;\n"),
        // Uses `leaf` only after literals that hold `//` and quotes, and `twig` through its exported macro.
        (
            "a.rs",
            "pub struct A;\nfn f() { g(\"https://x\", '\"', \"\\\"\", crate::tree::leaf::Leaf); crate::shout!(); }\n",
        ),
        ("tree/mod.rs", "pub mod leaf;\npub mod twig;\npub use leaf::Leaf;\npub use twig::Twig;\npub struct Root;\n"),
        // Names its parent's own items through a glob (a circle with `tree`, which re-exports it), `a` under the
        // crate's other name (a circle), its own item through the parent's re-export (not a use) and its sibling.
        (
            "tree/leaf.rs",
            "use super::Leaf as _;\nuse super::*;\nuse scratch::a::A;\nuse crate::tree::twig::Twig;\npub struct Leaf;\n",
        ),
        // None of these is a use of another file: visibilities, generated code, a macro's `$crate` path, an inline
        // module's `super`, a test module.
        (
            "tree/twig.rs",
            "pub(super) struct Twig;\npub(in crate::tree) fn f() { quote!(use crate::a::A;); }\n#[macro_export]\n\
             macro_rules! shout {\n    () => { $crate::tree::leaf::Leaf };\n}\npub mod inner {\n    use super::Twig;\n}\n\
             #[cfg(test)]\nmod tests {\n    use crate::tree::leaf::Leaf;\n}\n",
        ),
    ];
    for (file, source) in files {
        fs::write(scratch.join(file), source).unwrap();
    }
    let found = circles(&scratch);
    fs::remove_dir_all(&scratch).unwrap();
    let expected = [("a", "tree/leaf"), ("tree", "tree/leaf")];
    assert_eq!(found, expected.iter().map(|&(a, b)| (a.to_owned(), b.to_owned())).collect());
}
