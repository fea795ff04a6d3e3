//! Layers point one way: no file of a library crate (dispatch-core, dispatch-derive, dispatch-device-name,
//! dispatch-nn, dispatch-conformance) uses another file that uses it back. A module's parent and children are one
//! unit (a parent declares and re-exports its children, which use the parent's helpers); any other pair of files
//! that name each other (`use crate::...`, or a `crate::` path in code) is a circle, which this test names. Macro
//! bodies are skipped: `$crate::` paths expand in the crates of derived enums, not here.

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

/// The source without comments, string literals and `macro_rules!` bodies.
fn code_of(source: &str) -> String {
    let mut code = String::with_capacity(source.len());
    let mut lines = source.lines().peekable();
    while let Some(line) = lines.next() {
        let line = line.split("//").next().unwrap_or_default();
        if line.trim_start().starts_with("macro_rules!") {
            // Skip to the line that closes the macro: the next line starting with `}` at column 0.
            for inner in lines.by_ref() {
                if inner.starts_with('}') {
                    break;
                }
            }
            continue;
        }
        let mut in_string = false;
        for character in line.chars() {
            if character == '"' {
                in_string = !in_string;
            } else if !in_string {
                code.push(character);
            }
        }
        code.push('\n');
    }
    code
}

/// The module paths `code` (in module `module`) names: `use crate::a::b::{c, d}`, `use super::x`, and `crate::a::b`
/// anywhere, each as far as it goes.
fn named_paths(code: &str, module: &ModulePath) -> Vec<ModulePath> {
    let mut paths = Vec::new();
    let words: Vec<&str> = code.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '$')).collect();
    for word in words {
        let parts: Vec<&str> = word.split("::").filter(|part| !part.is_empty()).collect();
        let Some((&first, rest)) = parts.split_first() else { continue };
        let mut path: ModulePath = match first {
            "crate" if !word.starts_with('$') => Vec::new(),
            "super" => module[..module.len().saturating_sub(1)].to_vec(),
            _ => continue,
        };
        let mut rest = rest.iter().peekable();
        while rest.peek() == Some(&&"super") {
            path.pop();
            rest.next();
        }
        path.extend(rest.map(|part| part.to_string()));
        paths.push(path);
    }
    // `use crate::a::{b, c::d}`: the prefix with each item of the group.
    for (start, _) in code.match_indices("use crate::") {
        let statement = &code[start..code[start..].find(';').map_or(code.len(), |end| start + end)];
        if let Some(open) = statement.find('{') {
            let prefix: ModulePath = statement["use crate::".len()..open]
                .split("::")
                .filter(|part| !part.trim().is_empty())
                .map(|part| part.trim().to_owned())
                .collect();
            for item in statement[open + 1..].trim_end_matches('}').split(',') {
                let mut path = prefix.clone();
                path.extend(item.trim().split("::").map(|part| part.trim().to_owned()).filter(|part| !part.is_empty()));
                paths.push(path);
            }
        }
    }
    paths
}

/// The longest prefix of `path` that is a module of the crate.
fn module_of(path: &ModulePath, modules: &BTreeMap<ModulePath, PathBuf>) -> Option<ModulePath> {
    (0..=path.len()).rev().map(|length| path[..length].to_vec()).find(|prefix| modules.contains_key(prefix))
}

fn related(a: &ModulePath, b: &ModulePath) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// Every pair of unrelated files of `src` that name each other.
fn circles(src: &Path) -> BTreeSet<(String, String)> {
    let modules = modules(src);
    let mut uses: BTreeMap<ModulePath, BTreeSet<ModulePath>> = BTreeMap::new();
    for (module, path) in &modules {
        let code = code_of(&fs::read_to_string(path).expect("a readable source file"));
        let named = named_paths(&code, module).iter().filter_map(|named| module_of(named, &modules)).collect();
        uses.insert(module.clone(), named);
    }
    let name = |module: &ModulePath| if module.is_empty() { "lib".to_owned() } else { module.join("/") };
    let mut found = BTreeSet::new();
    for (a, named) in &uses {
        for b in named {
            if !related(a, b) && uses.get(b).is_some_and(|back| back.contains(a)) {
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
fn the_check_finds_a_circle() {
    let scratch = std::env::temp_dir().join(format!("no-import-cycles-{}", std::process::id()));
    fs::create_dir_all(scratch.join("tree")).unwrap();
    fs::write(scratch.join("lib.rs"), "mod a;\nmod tree;\n").unwrap();
    fs::write(scratch.join("a.rs"), "use crate::tree::leaf::Leaf;\npub struct A;\n").unwrap();
    fs::write(scratch.join("tree/mod.rs"), "pub mod leaf;\npub use leaf::Leaf;\n").unwrap();
    // The child uses its parent (allowed) and `a`, which uses it back (a circle).
    fs::write(scratch.join("tree/leaf.rs"), "use super::Leaf as _;\nuse crate::{a::A, tree};\npub struct Leaf;\n")
        .unwrap();
    let found = circles(&scratch);
    fs::remove_dir_all(&scratch).unwrap();
    assert_eq!(found, BTreeSet::from([("a".to_owned(), "tree/leaf".to_owned())]));
}
