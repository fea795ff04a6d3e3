//! Layers point one way: no file of a library crate (dispatch-core, dispatch-derive, dispatch-device-name,
//! dispatch-nn, dispatch-conformance) uses another file that uses it back, a parent module and its children
//! included. A parent declares and re-exports its children; a child names its siblings (`super::sibling::Item`),
//! never its parent's own items or re-exports. A file uses another when it names it: `use crate::...`, `super::`,
//! `self::` or a child's name in a path, anywhere in code, or a `#[macro_export]` macro the other file defines.
//! Skipped, as they are not this crate's code: macro bodies (`$crate::` paths expand in the crates of derived
//! enums), `quote!` bodies (the code a derive generates), and `#[cfg(test)] mod tests`, which sit on top of their
//! file by design.

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

/// The source without comments, string literals, visibility paths (`pub(super)`, `pub(in crate::a)`), `macro_rules!` and `quote!`
/// bodies, and test modules; in an inline module (`mod visits { ... }`), `super::` is the file's own module.
fn code_of(source: &str) -> String {
    let mut code = String::with_capacity(source.len());
    let mut lines = source.lines().peekable();
    let mut inline_module_end: Option<String> = None;
    while let Some(line) = lines.next() {
        let line = line.split("//").next().unwrap_or_default();
        let trimmed = line.trim_start();
        if trimmed.starts_with("macro_rules!") || line.starts_with("mod tests {") {
            // Skip to the line that closes the item: the next line starting with `}` at column 0.
            for inner in lines.by_ref() {
                if inner.starts_with('}') {
                    break;
                }
            }
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
        let mut in_string = false;
        let mut kept = String::with_capacity(line.len());
        for character in line.chars() {
            if character == '"' {
                in_string = !in_string;
            } else if !in_string {
                kept.push(character);
            }
        }
        if inline_module_end.is_some() {
            kept = kept.replace("super::", "self::");
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
    without_quoted_code(&code)
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

/// The file `path` names: a `#[macro_export]` macro's (`crate::for_each_op`), else the longest prefix of `path`
/// that is a module of the crate.
fn module_of(
    path: &ModulePath,
    modules: &BTreeMap<ModulePath, PathBuf>,
    macros: &BTreeMap<String, ModulePath>,
) -> Option<ModulePath> {
    if let [name] = path.as_slice()
        && let Some(defined_in) = macros.get(name)
    {
        return Some(defined_in.clone());
    }
    (0..=path.len()).rev().map(|length| path[..length].to_vec()).find(|prefix| modules.contains_key(prefix))
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
    let macros = exported_macros(&sources);
    let mut uses: BTreeMap<ModulePath, BTreeSet<ModulePath>> = BTreeMap::new();
    for (module, source) in &sources {
        let named = named_paths(&code_of(source), module, &modules)
            .iter()
            .filter_map(|named| module_of(named, &modules, &macros))
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
        ("lib.rs", "mod a;\nmod tree;\n"),
        // Uses `leaf`, which uses it back, and `twig` through its exported macro, which does not.
        ("a.rs", "use crate::tree::leaf::Leaf;\npub struct A;\nfn f() { crate::shout!(); }\n"),
        ("tree/mod.rs", "pub mod leaf;\npub mod twig;\npub use leaf::Leaf;\npub use twig::Twig;\n"),
        // Names its parent's re-export (a circle with `tree`), `a` (a circle) and its sibling `twig`.
        ("tree/leaf.rs", "use super::Leaf as _;\nuse crate::{a::A, tree::twig::Twig};\npub struct Leaf;\n"),
        // None of these is a use of another file: a visibility, generated code, a macro body, an inline module's
        // `super`, a test module.
        (
            "tree/twig.rs",
            "pub(super) struct Twig;\npub(in crate::tree) fn f() { quote!(use crate::a::A;); }\n#[macro_export]\nmacro_rules! shout {\n    \
             () => { $crate::tree::leaf::Leaf };\n}\npub mod inner {\n    use super::Twig;\n}\n#[cfg(test)]\n\
             mod tests {\n    use crate::tree::leaf::Leaf;\n}\n",
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
