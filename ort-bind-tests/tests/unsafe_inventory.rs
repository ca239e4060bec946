//! Keeps `UNSAFE.md` honest: counts the `unsafe` keyword (blocks, impls, fns, traits,
//! extern blocks, and the `unsafe impl`s that code generators emit) in every Rust file of
//! the repository and compares the counts with the inventory table in `UNSAFE.md`. Adding
//! or removing `unsafe` anywhere fails this test until the audit is updated.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Counts `unsafe` tokens in Rust source, outside comments, strings and char literals.
fn count_unsafe(src: &str) -> usize {
    let b = src.as_bytes();
    let mut i = 0;
    let mut count = 0;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let mut depth = 1;
                i += 2;
                while i < b.len() && depth > 0 {
                    if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
            }
            b'r' if (i == 0 || !ident(b[i - 1]))
                && matches!(b.get(i + 1), Some(b'#') | Some(b'"')) =>
            {
                // Raw string r"..." / r#"..."#, or a raw identifier r#name.
                let mut j = i + 1;
                while b.get(j) == Some(&b'#') {
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    i = j;
                    continue;
                }
                let hashes = j - i - 1;
                i = j + 1;
                while i < b.len() {
                    let closing = b[i + 1..].iter().take_while(|&&c| c == b'#').count() >= hashes;
                    if b[i] == b'"' && closing {
                        i += 1 + hashes;
                        break;
                    }
                    i += 1;
                }
            }
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
                if b.get(i + 1) == Some(&b'\\') {
                    i += 2;
                    while i < b.len() && b[i] != b'\'' {
                        i += 1;
                    }
                    i += 1;
                } else {
                    let ch_len = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                    if b.get(i + 1 + ch_len) == Some(&b'\'') {
                        i += 2 + ch_len;
                    } else {
                        i += 1;
                    }
                }
            }
            c if ident(c) => {
                let start = i;
                while i < b.len() && ident(b[i]) {
                    i += 1;
                }
                if &src[start..i] == "unsafe" {
                    count += 1;
                }
            }
            _ => i += 1,
        }
    }
    count
}

fn rust_files(dir: &Path, root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() {
            rust_files(&path, root, out);
        } else if name.ends_with(".rs") {
            out.push(path.strip_prefix(root).unwrap_or(&path).to_path_buf());
        }
    }
}

/// `path -> count` from the inventory table of `UNSAFE.md` (rows `| `path` | count |`).
fn documented(doc: &str) -> BTreeMap<String, usize> {
    let section = doc
        .split("<!-- inventory:start -->")
        .nth(1)
        .and_then(|s| s.split("<!-- inventory:end -->").next())
        .expect("UNSAFE.md has an inventory table between inventory markers");
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let path = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            let count = cells.get(2)?.parse().ok()?;
            Some((path.to_owned(), count))
        })
        .collect()
}

#[test]
fn the_scanner_counts_only_code() {
    let src = r##"
        // unsafe in a comment
        /* unsafe /* nested unsafe */ still comment */
        let s = "unsafe \" unsafe";
        let r = r#"unsafe "quoted" unsafe"#;
        let c = '"'; let l: &'static str = "x";
        unsafe { call() }
        unsafe impl Send for X {}
        let not_unsafe_ident = unsafe_fn_name;
    "##;
    assert_eq!(count_unsafe(src), 2);
}

#[test]
fn every_unsafe_is_in_the_audit() {
    let root = &Path::new(env!("CARGO_MANIFEST_DIR")).join(".."); // the workspace root
    let mut files = Vec::new();
    rust_files(root, root, &mut files);
    let found: BTreeMap<String, usize> = files
        .iter()
        .filter_map(|rel| {
            let src = std::fs::read_to_string(root.join(rel)).ok()?;
            let n = count_unsafe(&src);
            (n > 0).then(|| (rel.to_string_lossy().replace('\\', "/"), n))
        })
        .collect();
    let doc = std::fs::read_to_string(root.join("UNSAFE.md")).expect("read UNSAFE.md");
    let listed = documented(&doc);
    let mut problems = Vec::new();
    for (path, n) in &found {
        match listed.get(path) {
            Some(m) if m == n => {}
            Some(m) => problems.push(format!(
                "{path}: {n} `unsafe` in the code, {m} in UNSAFE.md"
            )),
            None => problems.push(format!("{path}: {n} `unsafe`, not in UNSAFE.md")),
        }
    }
    for (path, m) in &listed {
        if !found.contains_key(path) {
            problems.push(format!(
                "{path}: listed with {m} in UNSAFE.md, none in the code"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "UNSAFE.md is out of date; document each new `unsafe` (its invariant and the test \
         that exercises it) and fix the inventory counts:\n  {}",
        problems.join("\n  ")
    );
}
