//! Output sizes from shape inference ([`crate::shapes`]): an output axis the model leaves
//! open (`?`, a fresh symbol) but the graph computes from the inputs' dims is sized by an
//! expression of `Dims` fields, so the output is pre-allocated like any other. Where the
//! declaration and the graph disagree (another rank, another fixed size), the graph wins,
//! and the value's doc says so; where an option named the axis, the option wins (a hint
//! the user gave on purpose), and so does a named dim an input carries (the model states
//! the sizes are equal, as a decoder's cache and mask share `total_sequence_length`).

use super::*;
use crate::shapes::{DimExpr, InferredShape, axis_symbol};

/// How inference sizes one output: the dims its type is written with, each axis's size
/// (`None`: not settled), and what differs from the declaration, in words.
pub(super) struct Sizing {
    pub(super) dims: Option<Vec<Dim>>,
    pub(super) axes: Option<Vec<Option<AxisSize>>>,
    pub(super) note: Option<String>,
    /// An axis an option named with a dim no input carries, and what the graph computes
    /// for it (if anything): a generated module cannot size the output from that name.
    pub(super) unsized_hint: Option<(usize, String, Option<DimExpr>)>,
}

/// The expression each symbol of inference stands for in the plan: a named dim or an
/// unnamed input axis (`x[0]`), as the model declares it, -> the `Dims` field (by name) or
/// size the plan gives that axis.
pub(super) fn symbol_map(
    original: &ModelSignature,
    inputs: &[PlannedValue],
    dims: &[DimField],
) -> HashMap<String, DimExpr> {
    let mut map = HashMap::new();
    for (declared, planned) in original.inputs.iter().zip(inputs) {
        let (Some((_, Some(ds))), Storage::Owned(axes)) = (declared.tensor(), &planned.storage)
        else {
            continue;
        };
        for (axis, (d, size)) in ds.iter().zip(axes).enumerate() {
            let symbol = match d {
                Dim::Fixed(_) => continue,
                Dim::Named(n) => n.clone(),
                Dim::Dynamic => axis_symbol(&declared.name, axis),
            };
            let value = match size {
                AxisSize::Fixed(n) => DimExpr::int(i64::try_from(*n).unwrap_or(i64::MAX)),
                AxisSize::Field(i) => DimExpr::sym(&dims[*i].field),
                AxisSize::Expr(_) => continue,
            };
            map.entry(symbol).or_insert(value);
        }
    }
    map
}

/// `e` in terms of `Dims` fields, when every symbol it reads is an input's.
fn mapped(e: &DimExpr, symbols: &HashMap<String, DimExpr>) -> Option<DimExpr> {
    if e.symbols().iter().any(|s| !symbols.contains_key(&**s)) {
        return None;
    }
    e.substitute(&|s| symbols.get(s).cloned())
}

/// The size an expression of fields gives an axis: a field itself, or the expression.
fn size_of(e: DimExpr, fields: &HashMap<&str, usize>) -> AxisSize {
    match e.as_sym().and_then(|s| fields.get(s)) {
        Some(&i) => AxisSize::Field(i),
        None => AxisSize::Expr(e),
    }
}

/// Sizes output `declared` (after options; `original` as the model declares it) from
/// `inferred`. `named` maps the named dims inputs carry to their fields.
pub(super) fn size_output(
    original: &ValueInfo,
    declared: Option<&[Dim]>,
    inferred: Option<&InferredShape>,
    named: &HashMap<String, usize>,
    symbols: &HashMap<String, DimExpr>,
    dims: &[DimField],
) -> Sizing {
    let fields: HashMap<&str, usize> = dims
        .iter()
        .enumerate()
        .map(|(i, d)| (d.field.as_str(), i))
        .collect();
    let graph: Option<Vec<Option<DimExpr>>> = inferred.and_then(|s| s.dims.as_ref()).map(|ds| {
        ds.iter()
            .map(|d| d.as_ref().and_then(|e| mapped(e, symbols)))
            .collect()
    });
    let original_dims = original.tensor().and_then(|(_, d)| d);
    let show = |g: &[Option<DimExpr>]| {
        let parts: Vec<String> = g
            .iter()
            .map(|d| {
                d.as_ref()
                    .map_or_else(|| "?".to_owned(), ToString::to_string)
            })
            .collect();
        format!("[{}]", parts.join(", "))
    };
    // Nothing computed: the declaration as it stands.
    let Some(g) = graph else {
        return Sizing {
            dims: declared.map(<[Dim]>::to_vec),
            axes: declared.map(|d| d.iter().map(|x| declared_size(x, named)).collect()),
            note: None,
            unsized_hint: hint_without_size(original_dims, declared, None, named),
        };
    };
    match declared {
        // Another rank (or none declared): the graph's.
        d if d.is_none_or(|d| d.len() != g.len()) => {
            let note = format!(
                "The model declares {}, the graph computes {}: typed as the graph computes it.",
                format_dims(d),
                show(&g)
            );
            Sizing {
                dims: Some(
                    g.iter()
                        .map(|e| match e.as_ref().and_then(DimExpr::as_int) {
                            Some(c) if c >= 1 => Dim::Fixed(c as u64),
                            _ => Dim::Dynamic,
                        })
                        .collect(),
                ),
                axes: Some(
                    g.into_iter()
                        .map(|e| {
                            e.map(|e| match e.as_int() {
                                Some(c) if c >= 1 => AxisSize::Fixed(c as u64),
                                _ => size_of(e, &fields),
                            })
                        })
                        .collect(),
                ),
                note: Some(note),
                unsized_hint: None,
            }
        }
        d => {
            let d = d.unwrap_or_default();
            let mut effective = d.to_vec();
            let mut axes = Vec::with_capacity(d.len());
            let mut differs = false;
            for (k, (x, e)) in d.iter().zip(g.iter()).enumerate() {
                // An option that named the axis is the user's word: it stands.
                let hinted = original_dims.and_then(|o| o.get(k)) != Some(x);
                let own = declared_size(x, named);
                let size = match (e, own) {
                    (_, Some(own)) if hinted => Some(own),
                    (None, own) => own,
                    // Another fixed size: ONNX Runtime refuses a pre-allocated buffer that
                    // breaks the declaration, so it allocates this output, typed as the
                    // graph computes it.
                    (Some(e), Some(AxisSize::Fixed(n))) => match e.as_int() {
                        Some(m) if m == n as i64 => Some(AxisSize::Fixed(n)),
                        m => {
                            differs = true;
                            effective[k] = match m {
                                Some(m) if m >= 1 => Dim::Fixed(m as u64),
                                _ => Dim::Dynamic,
                            };
                            None
                        }
                    },
                    // A dim an input carries: the model states the two are equal (a
                    // decoder's `total_sequence_length` on its mask and its cache), which
                    // inference cannot refute; ONNX Runtime checks it at each run.
                    (Some(_), Some(own)) => Some(own),
                    // Open in the declaration: the graph's size, typed `Fix<n>` when constant
                    // (also where another axis leaves the output to ONNX Runtime).
                    (Some(e), None) => match e.as_int() {
                        Some(c) if c >= 1 => {
                            effective[k] = Dim::Fixed(c as u64);
                            Some(AxisSize::Fixed(c as u64))
                        }
                        _ => Some(size_of(e.clone(), &fields)),
                    },
                };
                axes.push(size);
            }
            let note = differs.then(|| {
                format!(
                    "The model declares {}, the graph computes {}: typed as the graph computes it.",
                    format_dims(Some(d)),
                    show(&g)
                )
            });
            Sizing {
                dims: Some(effective),
                axes: Some(axes),
                note,
                unsized_hint: hint_without_size(original_dims, Some(d), Some(&g), named),
            }
        }
    }
}

/// The first axis an option renamed to a dim no input carries, with what the graph
/// computes there.
fn hint_without_size(
    original: Option<&[Dim]>,
    declared: Option<&[Dim]>,
    graph: Option<&[Option<DimExpr>]>,
    named: &HashMap<String, usize>,
) -> Option<(usize, String, Option<DimExpr>)> {
    let (original, declared) = (original?, declared?);
    declared.iter().enumerate().find_map(|(k, d)| match d {
        Dim::Named(name) if original.get(k) != Some(d) && !named.contains_key(name) => Some((
            k,
            name.clone(),
            graph.and_then(|g| g.get(k).cloned().flatten()),
        )),
        _ => None,
    })
}

/// The size a declared dim gives by itself: fixed, or a named dim an input carries.
fn declared_size(d: &Dim, named: &HashMap<String, usize>) -> Option<AxisSize> {
    match d {
        Dim::Fixed(n) => Some(AxisSize::Fixed(*n)),
        Dim::Named(name) => named.get(name).map(|&i| AxisSize::Field(i)),
        Dim::Dynamic => None,
    }
}
