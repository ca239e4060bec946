//! ONNX names -> Rust identifiers: valid, readable, and collision-free.
//!
//! Exported models carry names like `gpu_0/data_0`, `save_infer_model/scale_0.tmp_1`,
//! `type` or `1x`. Each becomes a snake_case identifier; Rust keywords become raw
//! identifiers (`r#type`); names that sanitise alike get `_2`, `_3`, ... suffixes in
//! declaration order, so the mapping is deterministic.

use std::collections::{HashMap, HashSet};

use proc_macro2::{Ident, Span};

/// Keywords that `r#` can escape.
const RAW_OK: &[&str] = &[
    "as",
    "break",
    "const",
    "continue",
    "else",
    "enum",
    "extern",
    "false",
    "fn",
    "for",
    "if",
    "impl",
    "in",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "pub",
    "ref",
    "return",
    "static",
    "struct",
    "trait",
    "true",
    "type",
    "unsafe",
    "use",
    "where",
    "while",
    "async",
    "await",
    "dyn",
    "abstract",
    "become",
    "box",
    "do",
    "final",
    "macro",
    "override",
    "priv",
    "typeof",
    "unsized",
    "virtual",
    "yield",
    "try",
    "gen",
    "union",
    "macro_rules",
    "raw",
    "safe",
];

/// Keywords that cannot be raw identifiers, and `_`.
const NEVER: &[&str] = &["self", "super", "crate", "_", "Self"];

/// Converts an ONNX name to a snake_case identifier string (without `r#`).
pub fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut prev: Option<char> = None;
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase()
                && prev.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit())
            {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
        prev = Some(c);
    }
    let trimmed = out.trim_matches('_');
    let mut s = if trimmed.is_empty() {
        "value".to_owned()
    } else {
        trimmed.to_owned()
    };
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert_str(0, "v_");
    }
    if NEVER.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

/// Makes an [`Ident`] from an already sanitised name, escaping keywords as raw identifiers.
pub fn to_ident(sanitised: &str) -> Ident {
    if RAW_OK.contains(&sanitised) {
        Ident::new_raw(sanitised, Span::call_site())
    } else {
        Ident::new(sanitised, Span::call_site())
    }
}

/// Hands out unique identifiers within one namespace (one struct's fields).
#[derive(Debug, Default)]
pub struct IdentAllocator {
    taken: HashSet<String>,
    /// Per base name, the next suffix to try: every smaller one is taken (names are
    /// never released). Keeps allocation linear when many names sanitise alike; trying
    /// `_2`, `_3`, ... from the start made 100,000 such names take minutes.
    next: HashMap<String, usize>,
}

impl IdentAllocator {
    /// A fresh namespace.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reserves a name so it is never handed out (e.g. a method name).
    pub fn reserve(&mut self, name: &str) {
        self.taken.insert(name.to_owned());
    }

    /// Sanitises `name` and makes it unique in this namespace.
    pub fn allocate(&mut self, name: &str) -> String {
        let base = snake_case(name);
        if self.taken.insert(base.clone()) {
            return base;
        }
        let n = self.next.entry(base.clone()).or_insert(2);
        loop {
            let candidate = format!("{base}_{n}");
            *n += 1;
            if self.taken.insert(candidate.clone()) {
                return candidate;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messy_names_become_readable_idents() {
        assert_eq!(snake_case("gpu_0/data_0"), "gpu_0_data_0");
        assert_eq!(
            snake_case("save_infer_model/scale_0.tmp_1"),
            "save_infer_model_scale_0_tmp_1"
        );
        assert_eq!(snake_case("sigmoid_0.tmp_0"), "sigmoid_0_tmp_0");
        assert_eq!(snake_case("inputIds"), "input_ids");
        assert_eq!(snake_case("1x"), "v_1x");
        assert_eq!(snake_case("self"), "self_");
        assert_eq!(snake_case("::"), "value");
        assert_eq!(
            snake_case("p2o.DynamicDimension.0"),
            "p2o_dynamic_dimension_0"
        );
        assert_eq!(to_ident("type").to_string(), "r#type");
        assert_eq!(to_ident("x").to_string(), "x");
    }

    #[test]
    fn collisions_get_suffixes_in_order() {
        let mut a = IdentAllocator::new();
        assert_eq!(a.allocate("a.b"), "a_b");
        assert_eq!(a.allocate("a/b"), "a_b_2");
        assert_eq!(a.allocate("A_B"), "a_b_3");
        a.reserve("run");
        assert_eq!(a.allocate("run"), "run_2");
    }

    #[test]
    fn many_colliding_names_stay_unique_and_in_order() {
        let mut a = IdentAllocator::new();
        // `x_3` is taken directly before the collisions reach it.
        assert_eq!(a.allocate("x_3"), "x_3");
        let got: Vec<String> = ["x", "x.", "x/", "x:", "x-"]
            .iter()
            .map(|n| a.allocate(n))
            .collect();
        assert_eq!(got, ["x", "x_2", "x_4", "x_5", "x_6"]);
        // Linear: 100,000 names that all sanitise to `z`.
        let start = std::time::Instant::now();
        let mut c = IdentAllocator::new();
        for _ in 0..100_000 {
            c.allocate("z.");
        }
        assert_eq!(c.allocate("z"), "z_100001");
        assert!(start.elapsed() < std::time::Duration::from_secs(10));
    }

    #[test]
    fn every_result_parses_as_an_identifier() {
        for name in [
            "type", "fn", "1x", "", "é", "a-b", "Self", "self", "async", "x.y/z:0",
        ] {
            let s = snake_case(name);
            let ident = to_ident(&s);
            syn::parse_str::<syn::Ident>(&ident.to_string())
                .unwrap_or_else(|e| panic!("{name:?} -> {ident}: {e}"));
        }
    }
}

/// The indefinite article before `word` in a message: "an" before a vowel sound
/// (`an AllocatedOutput`, `an int64 tensor`, `an optional`), "a" otherwise (`a uint8
/// tensor`, `a map`).
pub(crate) fn a_or_an(word: &str) -> &'static str {
    let w = word.trim_start_matches(['`', '(']).to_ascii_lowercase();
    let vowel = w.starts_with(['a', 'e', 'i', 'o', 'u']);
    // `u` read as "you", `one` as "won".
    let exception = ["uint", "uni", "use", "one"]
        .iter()
        .any(|p| w.starts_with(p));
    if vowel && !exception { "an" } else { "a" }
}

#[cfg(test)]
mod article_tests {
    use super::a_or_an;

    #[test]
    fn articles_follow_the_sound() {
        assert_eq!(a_or_an("`AllocatedOutput`"), "an");
        assert_eq!(a_or_an("int64"), "an");
        assert_eq!(a_or_an("optional"), "an");
        assert_eq!(a_or_an("uint8"), "a");
        assert_eq!(a_or_an("`Tensor`"), "a");
        assert_eq!(a_or_an("float32"), "a");
    }
}
