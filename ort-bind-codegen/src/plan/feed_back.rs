//! Recurrent pairs ([`FeedBack`]): declared ones, then those found by name.

use super::*;

/// Whether the output's declared dims leave room for the input's shape, axis by axis:
/// equal, or open on the output (`?`, or a named dim that no input carries).
pub(super) fn compatible(
    out: &PlannedValue,
    input: &PlannedValue,
    named: &HashMap<String, usize>,
    dims: &[DimField],
) -> Result<(), String> {
    let (Some(od), Storage::Owned(iaxes)) = (&out.dims, &input.storage) else {
        // Unknown rank on either side: the input's shape (whatever sizes it) is taken.
        return Ok(());
    };
    if od.len() != iaxes.len() {
        return Err(format!(
            "the output has rank {} and the input rank {}",
            od.len(),
            iaxes.len()
        ));
    }
    for (axis, (d, a)) in od.iter().zip(iaxes).enumerate() {
        let ok = match (d, a) {
            (Dim::Dynamic, _) => true,
            (Dim::Fixed(n), AxisSize::Fixed(m)) => n == m,
            (Dim::Named(name), AxisSize::Field(f)) => named.get(name).is_none_or(|g| g == f),
            (Dim::Named(name), AxisSize::Fixed(_)) => !named.contains_key(name),
            (Dim::Fixed(_), AxisSize::Field(_)) => false,
            (_, AxisSize::Expr(_)) => false,
        };
        if !ok {
            let theirs = match a {
                AxisSize::Fixed(m) => m.to_string(),
                AxisSize::Expr(e) => e.to_string(),
                AxisSize::Field(f) => match &dims[*f].source {
                    DimSource::Named(n) => n.clone(),
                    _ => "?".into(),
                },
            };
            return Err(format!(
                "axis {axis} is `{d}` on the output but `{theirs}` on the input"
            ));
        }
    }
    Ok(())
}

/// Input names indexed to list, for an output name, the input names related to it: the
/// names say the values belong together when one is a proper prefix of the other
/// (`state` / `stateN`, `h` / `h_out`). Time is linear in the name's length plus the
/// matches.
pub(super) struct NameIndex<'a> {
    /// Names in byte order, with their input index: the names that extend a given name
    /// form one run.
    sorted: Vec<(&'a str, usize)>,
    /// Byte trie of the names, `(node, byte) -> child`; node 0 is the empty prefix.
    edges: HashMap<(u32, u8), u32>,
    /// Trie node where a name ends -> the inputs of that name.
    ends: HashMap<u32, Vec<usize>>,
}

impl<'a> NameIndex<'a> {
    fn new(inputs: &'a [PlannedValue]) -> Self {
        let mut sorted: Vec<(&str, usize)> = inputs
            .iter()
            .enumerate()
            .map(|(i, v)| (v.name.as_str(), i))
            .collect();
        sorted.sort_unstable();
        let mut edges: HashMap<(u32, u8), u32> = HashMap::new();
        let mut ends: HashMap<u32, Vec<usize>> = HashMap::new();
        for &(name, index) in &sorted {
            let mut node = 0u32;
            for &b in name.as_bytes() {
                // Node ids fit in u32: a model file is far smaller than 4 GiB of names.
                let fresh = u32::try_from(edges.len() + 1).unwrap_or(u32::MAX);
                node = *edges.entry((node, b)).or_insert(fresh);
            }
            ends.entry(node).or_default().push(index);
        }
        NameIndex {
            sorted,
            edges,
            ends,
        }
    }

    /// Fills `out` with the inputs whose names are related to `name`.
    fn related(&self, name: &str, out: &mut Vec<usize>) {
        out.clear();
        // Shorter names that are prefixes of `name`: the name ends met along its path.
        let mut node = 0u32;
        for &b in name.as_bytes() {
            if let Some(found) = self.ends.get(&node) {
                out.extend_from_slice(found);
            }
            match self.edges.get(&(node, b)) {
                Some(&next) => node = next,
                None => break,
            }
        }
        // Longer names that start with `name`: the run right after it in byte order.
        let start = self.sorted.partition_point(|&(s, _)| s <= name);
        out.extend(
            self.sorted[start..]
                .iter()
                .take_while(|(s, _)| s.starts_with(name))
                .map(|&(_, i)| i),
        );
    }
}

/// Recurrent pairs: declared ones first, then (unless turned off) name-related pairs of
/// equal element type whose dims are equal, or compatible and unambiguous. A pair makes
/// the output take the input's storage (its shape).
pub(super) fn feed_back_pairs(
    inputs: &[PlannedValue],
    outputs: &mut [PlannedValue],
    pairable: &[bool],
    named: &HashMap<String, usize>,
    dims: &[DimField],
    options: &ModelOptions,
) -> Result<Vec<FeedBack>, PlanError> {
    let mut pairs: Vec<FeedBack> = Vec::new();
    for (oname, iname) in &options.feed_back {
        let err = |reason: String| PlanError::FeedBack {
            output: oname.clone(),
            input: iname.clone(),
            reason,
        };
        let oi = outputs
            .iter()
            .position(|o| &o.name == oname)
            .ok_or_else(|| err(format!("the model has no output `{oname}`")))?;
        let ii = inputs
            .iter()
            .position(|i| &i.name == iname)
            .ok_or_else(|| err(format!("the model has no input `{iname}`")))?;
        if pairs.iter().any(|p| p.output == oi || p.input == ii) {
            return Err(err("one of them is already in another pair".into()));
        }
        if !pairable[oi] {
            return Err(err(
                "the output is an `AllocatedOutput`, whose memory ONNX Runtime allocates: \
                 only a `Tensor` output can become an input"
                    .into(),
            ));
        }
        let (o, i) = (&outputs[oi], &inputs[ii]);
        if !o.form.is_tensor() || !i.form.is_tensor() {
            return Err(err(format!(
                "the output is {} and the input {}: only numeric tensors exchange buffers",
                o.onnx_type, i.onnx_type
            )));
        }
        if o.elem != i.elem {
            return Err(err(format!(
                "the output is {} and the input {}",
                o.elem, i.elem
            )));
        }
        compatible(o, i, named, dims).map_err(err)?;
        outputs[oi].storage = inputs[ii].storage.clone();
        pairs.push(FeedBack {
            output: oi,
            input: ii,
        });
    }
    if options.no_auto_feed_back {
        return Ok(pairs);
    }
    let mut out_taken: Vec<bool> = pairable.iter().map(|p| !p).collect();
    let mut in_taken = vec![false; inputs.len()];
    for p in &pairs {
        out_taken[p.output] = true;
        in_taken[p.input] = true;
    }
    // Candidates: related names, same element type, dims that do not contradict. Names
    // are matched through an index rather than pairwise, so the search is linear in the
    // total length of the names, and so is the number of candidates (a name has at most
    // as many proper prefixes as bytes). Pairwise, 100,000 outputs took minutes.
    let index = NameIndex::new(inputs);
    let mut related_inputs = Vec::new();
    let mut candidates: Vec<(usize, usize, bool)> = Vec::new();
    for (oi, o) in outputs.iter().enumerate() {
        if out_taken[oi] {
            continue;
        }
        index.related(&o.name, &mut related_inputs);
        related_inputs.sort_unstable();
        for &ii in &related_inputs {
            let i = &inputs[ii];
            if in_taken[ii] || o.elem != i.elem || !i.form.is_tensor() {
                continue;
            }
            let equal = o.storage == i.storage;
            let auto_rank = o.dims.as_ref().map(Vec::len) == i.dims.as_ref().map(Vec::len);
            if equal || (auto_rank && compatible(o, i, named, dims).is_ok()) {
                candidates.push((oi, ii, equal));
            }
        }
    }
    let mut per_out = vec![0usize; outputs.len()];
    let mut per_in = vec![0usize; inputs.len()];
    for &(oi, ii, _) in &candidates {
        per_out[oi] += 1;
        per_in[ii] += 1;
    }
    // Dims that differ: only a pair that is the only candidate on both sides.
    for &(oi, ii, equal) in &candidates {
        if !equal && per_out[oi] == 1 && per_in[ii] == 1 {
            outputs[oi].storage = inputs[ii].storage.clone();
            out_taken[oi] = true;
            in_taken[ii] = true;
            pairs.push(FeedBack {
                output: oi,
                input: ii,
            });
        }
    }
    // Same storage already: pairing changes nothing about the output. Each output feeds
    // at most one input and each input at most one output (otherwise the pairs, and the
    // generated methods, could number outputs x inputs); the closest names win: the
    // longest shared prefix first, then model order.
    let mut equal: Vec<(usize, usize)> = candidates
        .iter()
        .filter(|c| c.2)
        .map(|&(oi, ii, _)| (oi, ii))
        .collect();
    equal.sort_by_key(|&(oi, ii)| {
        let shared = outputs[oi].name.len().min(inputs[ii].name.len());
        (std::cmp::Reverse(shared), oi, ii)
    });
    for (oi, ii) in equal {
        if !out_taken[oi] && !in_taken[ii] {
            out_taken[oi] = true;
            in_taken[ii] = true;
            pairs.push(FeedBack {
                output: oi,
                input: ii,
            });
        }
    }
    pairs.sort_by_key(|p| (p.output, p.input));
    Ok(pairs)
}
