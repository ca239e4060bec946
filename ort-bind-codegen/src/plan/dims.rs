//! The core of the plan: dims fields (named, placeholder and unnamed axes), who
//! allocates each output, and the fields of values.

use super::*;

/// How the plan treats one model output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OutputUse {
    /// Not bound (a derive struct without a field for it): left out of the plan.
    Skip,
    /// Pre-allocated when its dims follow from the inputs', else allocated by ONNX
    /// Runtime (generated modules).
    Auto,
    /// Always pre-allocated: dims no input gives become dims fields (a derive `Tensor`).
    Owned,
    /// Allocated by ONNX Runtime (a derive `AllocatedOutput`); never in a pair.
    Allocated,
}

/// Whether a dim name says nothing a reader can use: `?`, `unk__123`,
/// `p2o.DynamicDimension.0`, `DynamicDimension_3`, `-1`, `None`, or a name without a
/// letter. Such dims keep what the name tells (every axis named alike is one dim) but
/// get a field named after where they are used.
pub fn is_placeholder_name(name: &str) -> bool {
    let lower = name.trim().to_ascii_lowercase();
    let digits_after = |prefix: &str| {
        lower.strip_prefix(prefix).is_some_and(|rest| {
            rest.trim_start_matches(['.', '_'])
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
    };
    !lower.bytes().any(|b| b.is_ascii_alphabetic())
        || lower == "none"
        || lower == "unknown"
        || digits_after("unk__")
        || digits_after("p2o.dynamicdimension")
        || digits_after("dynamicdimension")
        || digits_after("dynamic_dimension")
}

/// How to name an unnamed axis, for the doc of its dims field.
pub(super) fn unnamed_note(value: &str, axis: usize) -> String {
    format!(
        "Name it with `dim({value:?}, {axis}, \"NAME\")`, or with `#[onnx(dims = \"..\")]` on \
         a derive's field."
    )
}

/// The dims field of the named dim `name`, made on its first use at `(value, field,
/// axis)`: named like the dim, unless that name is an exporter's placeholder.
pub(super) fn named_field(
    idents: &mut IdentAllocator,
    dims: &mut Vec<DimField>,
    named: &mut HashMap<String, usize>,
    name: &str,
    (value, field, axis): (&str, &str, usize),
) -> usize {
    if let Some(&i) = named.get(name) {
        return i;
    }
    let (ident, note) = if is_placeholder_name(name) {
        (
            idents.allocate(&format!("{field}_dim{axis}")),
            Some(format!(
                "`{name}` is an exporter's placeholder, so the field is named after its first \
                 use (`{value}` axis {axis}); name it with `rename_dim({name:?}, \"NAME\")`, or \
                 with `#[onnx(dims = \"..\")]` on a derive's field."
            )),
        )
    } else {
        (idents.allocate(name), None)
    };
    dims.push(DimField {
        field: ident,
        source: DimSource::Named(name.to_owned()),
        used_by: vec![],
        note,
    });
    named.insert(name.to_owned(), dims.len() - 1);
    dims.len() - 1
}

/// The plan, and for each planned output its index among the model's outputs.
pub(super) fn plan_core(
    sig: &ModelSignature,
    options: &ModelOptions,
    use_of: &dyn Fn(usize) -> OutputUse,
) -> Result<(Plan, Vec<usize>), PlanError> {
    plan_core_named(sig, options, use_of, &|_, _| None)
}

/// [`plan_core`], with `field_of(role, model index)` naming values' fields (the
/// derive's struct fields) instead of the identifiers codegen makes.
pub(super) fn plan_core_named(
    sig: &ModelSignature,
    options: &ModelOptions,
    use_of: &dyn Fn(usize) -> OutputUse,
    field_of: &dyn Fn(Role, usize) -> Option<String>,
) -> Result<(Plan, Vec<usize>), PlanError> {
    let original = sig;
    let sig = apply_dim_options(sig, options)?;
    let mut dim_idents = IdentAllocator::new();
    let mut dims: Vec<DimField> = Vec::new();
    let mut named: HashMap<String, usize> = HashMap::new();

    let mut input_idents = IdentAllocator::new();
    let mut inputs = Vec::with_capacity(sig.inputs.len());
    for (index, v) in sig.inputs.iter().enumerate() {
        let (form, elem, vdims) = classify(v, "input")?;
        // Dims fields are named after the value's generated identifier, not the derive's
        // field name: one model has the same `Dims` whichever route binds it.
        let base = input_idents.allocate(&v.name);
        let field = field_of(Role::Input, index).unwrap_or_else(|| base.clone());
        let storage = match vdims {
            // Sequences, maps and optionals are built whole by the caller; the dims of
            // the tensors they hold are theirs, not the binding's.
            _ if !form.is_sized() => Storage::Value,
            None => {
                let idx = dims.len();
                dims.push(DimField {
                    field: dim_idents.allocate(&format!("{base}_shape")),
                    source: DimSource::Shape {
                        input: v.name.clone(),
                    },
                    used_by: vec![],
                    note: None,
                });
                Storage::OwnedAnyRank(idx)
            }
            Some(ds) => {
                let mut axes = Vec::with_capacity(ds.len());
                for (axis, d) in ds.iter().enumerate() {
                    let size = match d {
                        Dim::Fixed(n) => AxisSize::Fixed(*n),
                        Dim::Named(name) => {
                            let idx = named_field(
                                &mut dim_idents,
                                &mut dims,
                                &mut named,
                                name,
                                (&v.name, &base, axis),
                            );
                            dims[idx].used_by.push((v.name.clone(), axis));
                            AxisSize::Field(idx)
                        }
                        Dim::Dynamic => {
                            dims.push(DimField {
                                field: dim_idents.allocate(&format!("{base}_dim{axis}")),
                                source: DimSource::Axis {
                                    input: v.name.clone(),
                                    axis,
                                },
                                used_by: vec![(v.name.clone(), axis)],
                                note: Some(unnamed_note(&v.name, axis)),
                            });
                            AxisSize::Field(dims.len() - 1)
                        }
                    };
                    axes.push(size);
                }
                Storage::Owned(axes)
            }
        };
        inputs.push(PlannedValue {
            name: v.name.clone(),
            field,
            form,
            onnx_type: v.kind.to_string(),
            elem,
            dims: vdims.map(<[Dim]>::to_vec),
            doc: v.doc_string.clone(),
            storage,
            declared_rank: vdims.map(<[Dim]>::len),
            inference: None,
        });
    }

    let symbols = inferred::symbol_map(original, &inputs, &dims);
    let mut output_idents = IdentAllocator::new();
    let mut output_bases = Vec::with_capacity(sig.outputs.len());
    let mut outputs = Vec::with_capacity(sig.outputs.len());
    let mut model_index = Vec::with_capacity(sig.outputs.len());
    let mut uses = Vec::with_capacity(sig.outputs.len());
    for (index, v) in sig.outputs.iter().enumerate() {
        // Allocated for every output, bound or not, so names match the generated module's.
        let base = output_idents.allocate(&v.name);
        let use_ = use_of(index);
        if use_ == OutputUse::Skip {
            continue;
        }
        let (form, elem, vdims) = classify(v, "output")?;
        let field = field_of(Role::Output, index).unwrap_or_else(|| base.clone());
        output_bases.push(base);
        // Pre-allocate only when every axis is fixed, a named dim some input carries, or
        // an expression of the inputs' dims that shape inference derived from the graph:
        // then the size is known before the run. ONNX Runtime owns strings and makes
        // sequences, maps and optionals during the run: those outputs are its to allocate.
        let sizing = if form.is_tensor() {
            inferred::size_output(
                &original.outputs[index],
                vdims,
                original.inferred.get(index),
                &named,
                &symbols,
                &dims,
            )
        } else {
            inferred::Sizing {
                dims: vdims.map(<[Dim]>::to_vec),
                axes: None,
                note: None,
                unsized_hint: None,
            }
        };
        // A hint must take effect: in a generated module (derive fields make a dim of
        // their own), an output axis named after no input's dim cannot be sized by it.
        if use_ == OutputUse::Auto
            && let Some((axis, dim, graph)) = &sizing.unsized_hint
        {
            return Err(PlanError::HintIgnored {
                value: v.name.clone(),
                axis: *axis,
                dim: dim.clone(),
                reason: match graph {
                    Some(e) => {
                        format!("the graph computes it as `{e}`, which sizes it without a hint")
                    }
                    None => {
                        "ONNX Runtime would allocate the output during each run anyway".to_owned()
                    }
                },
            });
        }
        let declared_rank = vdims
            .map(<[Dim]>::len)
            .filter(|&r| sizing.dims.as_ref().is_none_or(|d| d.len() == r));
        let storage = match use_ {
            _ if !form.is_tensor() => Storage::Allocated,
            OutputUse::Allocated => Storage::Allocated,
            _ => sizing
                .axes
                .and_then(|axes| axes.into_iter().collect::<Option<Vec<_>>>())
                .map_or(Storage::Allocated, Storage::Owned),
        };
        outputs.push(PlannedValue {
            name: v.name.clone(),
            field,
            form,
            onnx_type: v.kind.to_string(),
            elem,
            dims: sizing.dims,
            doc: v.doc_string.clone(),
            storage,
            // Where the graph computes another rank than the declaration, a session may
            // report either: the check takes any.
            declared_rank,
            inference: sizing.note,
        });
        model_index.push(index);
        uses.push(use_);
    }

    let pairable: Vec<bool> = uses
        .iter()
        .zip(&outputs)
        .map(|(u, o)| *u != OutputUse::Allocated && o.form.is_tensor())
        .collect();
    let feed_back = feed_back_pairs(&inputs, &mut outputs, &pairable, &named, &dims, options)?;

    // Outputs the user sizes, which no input and no pair sized: their own dims fields.
    for ((o, use_), base) in outputs.iter_mut().zip(&uses).zip(&output_bases) {
        if *use_ != OutputUse::Owned || o.storage != Storage::Allocated || !o.form.is_tensor() {
            continue;
        }
        o.storage = match &o.dims {
            None => {
                dims.push(DimField {
                    field: dim_idents.allocate(&format!("{base}_shape")),
                    source: DimSource::OutputShape {
                        output: o.name.clone(),
                    },
                    used_by: vec![],
                    note: None,
                });
                Storage::OwnedAnyRank(dims.len() - 1)
            }
            Some(ds) => {
                let mut axes = Vec::with_capacity(ds.len());
                for (axis, d) in ds.iter().enumerate() {
                    axes.push(match d {
                        Dim::Fixed(n) => AxisSize::Fixed(*n),
                        Dim::Named(name) => AxisSize::Field(named_field(
                            &mut dim_idents,
                            &mut dims,
                            &mut named,
                            name,
                            (&o.name, base, axis),
                        )),
                        Dim::Dynamic => {
                            dims.push(DimField {
                                field: dim_idents.allocate(&format!("{base}_dim{axis}")),
                                source: DimSource::OutputAxis {
                                    output: o.name.clone(),
                                    axis,
                                },
                                used_by: vec![],
                                note: Some(unnamed_note(&o.name, axis)),
                            });
                            AxisSize::Field(dims.len() - 1)
                        }
                    });
                }
                Storage::Owned(axes)
            }
        };
    }

    for o in &outputs {
        match &o.storage {
            Storage::Owned(axes) => {
                for (axis, a) in axes.iter().enumerate() {
                    if let AxisSize::Field(i) = a {
                        dims[*i].used_by.push((o.name.clone(), axis));
                    }
                }
            }
            Storage::OwnedAnyRank(i) => dims[*i].used_by.push((o.name.clone(), 0)),
            Storage::Allocated | Storage::Value => {}
        }
    }
    Ok((
        Plan {
            inputs,
            outputs,
            // Planned by `plan_with` (the derive's structs bind none).
            overridable: Vec::new(),
            dims,
            feed_back,
            batch: None,
            decoder: None,
        },
        model_index,
    ))
}
