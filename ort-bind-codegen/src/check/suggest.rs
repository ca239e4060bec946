//! "Did you mean": the closest name by edit distance.

/// Edit distance between `a` and `b` (insertions, deletions, substitutions and swaps of
/// two neighbouring characters each count one), compared case-insensitively.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().flat_map(char::to_lowercase).collect();
    let b: Vec<char> = b.chars().flat_map(char::to_lowercase).collect();
    // Rows i-2, i-1 and i of the optimal-string-alignment table.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 0..a.len() {
        cur[0] = i + 1;
        for j in 0..b.len() {
            let mut d = (prev[j] + usize::from(a[i] != b[j]))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
            if i > 0 && j > 0 && a[i] == b[j - 1] && a[i - 1] == b[j] {
                d = d.min(before[j - 1] + 1);
            }
            cur[j + 1] = d;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `wanted`, if it is close enough to be a plausible typo: at
/// most a third of the longer name's length edits away (at least one), ties going to the
/// earliest candidate. Names longer than 256 characters are not compared (the distance is
/// quadratic).
pub fn closest<'c>(wanted: &str, candidates: impl IntoIterator<Item = &'c str>) -> Option<&'c str> {
    if wanted.len() > 256 {
        return None;
    }
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c.len() > 256 || c == wanted {
            continue;
        }
        let d = distance(wanted, c);
        let limit = (wanted.chars().count().max(c.chars().count()) / 3).max(1);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("Sum", "sum"), 0);
        assert_eq!(distance("modle", "model"), 1);
        assert_eq!(distance("ab", "ba"), 1);
    }

    #[test]
    fn suggests_plausible_typos_only() {
        let names = ["x", "y", "sum", "input_ids", "attention_mask"];
        assert_eq!(closest("summ", names), Some("sum"));
        assert_eq!(closest("input_id", names), Some("input_ids"));
        assert_eq!(closest("atention_mask", names), Some("attention_mask"));
        assert_eq!(closest("z", names), Some("x"));
        assert_eq!(closest("logits", names), None);
    }
}
