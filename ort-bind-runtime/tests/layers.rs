//! The runtime's folders are its layers: `src/lib.rs` lists them bottom up in a table, and
//! this test keeps the table true. A file of one layer may name (`crate::module`) the
//! modules of its own layer and of the layers below it, never one above: so the layers
//! can be read bottom up, and a change to a lower layer cannot need a higher one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `module -> layer`, from the table in `lib.rs`'s docs: rows `//! | N | `a`, `b` | ... |`.
fn layers() -> BTreeMap<String, usize> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("lib.rs");
    let mut out = BTreeMap::new();
    for line in lib.lines() {
        let Some(row) = line.strip_prefix("//! | ") else {
            continue;
        };
        let mut cells = row.split(" | ");
        let Some(Ok(layer)) = cells.next().map(str::parse::<usize>) else {
            continue;
        };
        let modules = cells.next().expect("a modules cell");
        for m in modules.split(", ") {
            let m = m.trim().trim_matches('`');
            assert!(
                out.insert(m.to_owned(), layer).is_none(),
                "`{m}` is listed twice"
            );
        }
    }
    assert!(out.len() > 5, "no layer table found in lib.rs");
    out
}

/// `item -> module` for the items `lib.rs` re-exports at the root (`pub use module::{A, B}`),
/// so that `crate::Tensor` counts as naming `tensor`.
fn root_items() -> BTreeMap<String, String> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("lib.rs");
    let mut out = BTreeMap::new();
    let mut rest = lib.as_str();
    while let Some(at) = rest.find("pub use ") {
        rest = &rest[at + "pub use ".len()..];
        let end = rest.find(';').expect("a `;` ends the use");
        let path = &rest[..end];
        let Some((module, items)) = path.split_once("::") else {
            continue;
        };
        for item in items.trim_matches(|c| c == '{' || c == '}').split(',') {
            // `a::B` inside the braces re-exports `B`; `self` and renames are not used here.
            let item = item.trim().rsplit("::").next().unwrap_or("").trim();
            if !item.is_empty() {
                out.insert(item.to_owned(), module.trim().to_owned());
            }
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`device/cuda/copy.rs` -> `device`).
fn module_of(file: &Path) -> String {
    let rel = file.strip_prefix(src()).expect("under src");
    let first = rel.components().next().expect("a component");
    let first = first.as_os_str().to_string_lossy();
    first.trim_end_matches(".rs").to_owned()
}

/// Every `crate::name` in code (comment lines and trailing comments left out), with its line.
/// (`crate::Tensor` and `crate::tensor::Tensor` both yield their first segment.)
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.push((n + 1, name));
            rest = after;
        }
    }
    out
}

#[test]
fn no_file_names_a_higher_layer() {
    let layers = layers();
    let root = root_items();
    assert!(
        root.contains_key("Tensor"),
        "lib.rs's re-exports were not read"
    );
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    let mut problems = Vec::new();
    for file in &files {
        let module = module_of(file);
        if module == "lib" {
            continue;
        }
        let Some(&own) = layers.get(&module) else {
            problems.push(format!("module `{module}` is not in lib.rs's layer table"));
            continue;
        };
        let text = std::fs::read_to_string(file).expect("readable");
        for (line, name) in crate_paths(&text) {
            // A module, or an item re-exported at the root (counted as its module); other
            // names (`crate::ort` paths of dependencies) are not layers.
            let Some(&theirs) = layers
                .get(&name)
                .or_else(|| root.get(&name).and_then(|m| layers.get(m)))
            else {
                continue;
            };
            if theirs > own {
                problems.push(format!(
                    "{}:{line}: `{module}` (layer {own}) names `crate::{name}` (layer {theirs})",
                    file.strip_prefix(src()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "lib.rs's layers are not true:\n{}",
        problems.join("\n")
    );
}
