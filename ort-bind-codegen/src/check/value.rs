//! String tensors, sequences, maps and optionals: a field's value type against the
//! model's kind of value, key and element types, and shapes.

use super::*;

/// The Rust name of an element type inside the runtime's value types (`String` too).
pub(super) fn value_elem_name(elem: ElementType) -> &'static str {
    elem.rust_name()
}

/// The type to write for a model value that is not a numeric tensor (or for any value
/// when `form` says so): `StringOutput<(Dyn,)>`, `MapSequence<String, f32>`,
/// `Optional<AllocatedOutput<f32, (Dyn,)>>`.
pub fn suggested_value_type(
    role: Role,
    form: crate::planner::Form,
    elem: ElementType,
    dims: Option<&[Dim]>,
) -> String {
    use crate::planner::Form;
    let shape = shape_type_text(dims);
    let strings = match role {
        Role::Input => format!("StringTensor<{shape}>"),
        Role::Output => format!("StringOutput<{shape}>"),
    };
    let e = value_elem_name(elem);
    match form {
        Form::Tensor => suggested_type(SlotKind::Tensor, elem, dims),
        Form::Strings => strings,
        Form::Sequence => format!("Sequence<{e}, {shape}>"),
        Form::MapSequence { key } => format!("MapSequence<{}, {e}>", value_elem_name(key)),
        Form::Map { key } => format!("Map<{}, {e}>", value_elem_name(key)),
        Form::OptionalTensor if elem == ElementType::String => format!("Optional<{strings}>"),
        Form::OptionalTensor => match role {
            Role::Input => format!("Optional<Tensor<{e}, {shape}>>"),
            Role::Output => format!("Optional<AllocatedOutput<{e}, {shape}>>"),
        },
        Form::OptionalSequence => format!("Optional<Sequence<{e}, {shape}>>"),
    }
}

/// What a value type holds, in words, for messages.
pub(super) fn slot_words(slot: syntax::ValueSlot) -> &'static str {
    use syntax::ValueSlot as V;
    match slot {
        V::StringTensor => "a string tensor input",
        V::StringOutput => "a string tensor output",
        V::Sequence => "a sequence of tensors",
        V::MapSequence => "a sequence of maps",
        V::Map => "a single map",
        V::Optional => "an optional value",
    }
}

/// The value type that holds a model value of `form` in `role` (`None`: a numeric tensor).
fn want_slot(form: crate::planner::Form, role: Role) -> Option<syntax::ValueSlot> {
    use crate::planner::Form;
    use syntax::ValueSlot as V;
    match (form, role) {
        (Form::Tensor, _) => None,
        (Form::Strings, Role::Input) => Some(V::StringTensor),
        (Form::Strings, Role::Output) => Some(V::StringOutput),
        (Form::Sequence, _) => Some(V::Sequence),
        (Form::MapSequence { .. }, _) => Some(V::MapSequence),
        (Form::Map { .. }, _) => Some(V::Map),
        (Form::OptionalTensor | Form::OptionalSequence, _) => Some(V::Optional),
    }
}

/// Checks a field against a model value that is not a numeric tensor, or a value-typed
/// field against any model value: the kind of value, element / key / value types, the
/// shape of string tensors and of a sequence's tensors. What the syntax cannot settle (an
/// alias, an `Optional`'s contents) is left to `assert::binds_value`.
pub(super) fn check_value(
    f: &FieldSpec,
    role: Role,
    value: &ValueInfo,
    (form, elem, dims): (crate::planner::Form, ElementType, Option<&[Dim]>),
    diags: &mut Vec<Diagnostic>,
) -> TraitChecks {
    use crate::planner::Form;
    use syntax::ValueSlot as V;
    let none = TraitChecks::NONE;
    let trait_check = TraitChecks {
        value: true,
        ..none
    };
    let name = &value.name;
    let role_word = role.word();
    let model = match form {
        Form::Strings => format!("a string tensor {}", format_dims(dims)),
        Form::Tensor => describe_value(value),
        _ => value.kind.to_string(),
    };
    let expected = suggested_value_type(role, form, elem, dims);
    let t = match &f.ty {
        FieldType::Opaque => return trait_check,
        FieldType::NotATensor(what) => {
            diags.push(
                Diagnostic::new(
                    f.ty_range,
                    format!(
                        "field `{}` is {what}, which cannot hold model {role_word} `{name}` \
                         ({model})",
                        f.ident
                    ),
                )
                .help(format!("write `{expected}`")),
            );
            return none;
        }
        FieldType::Tensor(t) => {
            let slot = match t.kind {
                SlotKind::Tensor => "Tensor",
                SlotKind::Allocated => "AllocatedOutput",
            };
            let why = if form == Form::Strings {
                ": ONNX Runtime keeps strings in tensors of its own, which ort-bind copies \
                 strings into and out of"
            } else {
                ""
            };
            let a = crate::ident::a_or_an(slot);
            // Say what the model value is in words, unless its description already does.
            let words = match form {
                Form::Tensor | Form::Strings => String::new(),
                _ => want_slot(form, role)
                    .map_or_else(String::new, |w| format!(", {}", slot_words(w))),
            };
            // The message says what to write (one line, as an editor shows it).
            diags.push(Diagnostic::new(
                t.kind_span,
                format!(
                    "model {role_word} `{name}` is {model}{words}; {a} `{slot}` holds a tensor \
                     of numbers{why}; use `{expected}`"
                ),
            ));
            return none;
        }
        FieldType::Value(v) => v,
    };
    let want = want_slot(form, role);
    if want != Some(t.slot) {
        let message = match (want, t.slot) {
            (Some(V::StringOutput), V::StringTensor) => format!(
                "model output `{name}` is {model}; `StringTensor` is for inputs: ONNX Runtime \
                 allocates string outputs, which `StringOutput` reads"
            ),
            (Some(V::StringTensor), V::StringOutput) => format!(
                "model input `{name}` is {model}; `StringOutput` is for outputs: inputs are \
                 `StringTensor`s you fill before each run"
            ),
            (None, _) => format!(
                "model {role_word} `{name}` is {model}, a tensor of numbers; `{}` is {}: \
                 use `{expected}`",
                t.slot.name(),
                slot_words(t.slot)
            ),
            (Some(w), _) => format!(
                "model {role_word} `{name}` is {model}{}; `{}` is {}: use `{expected}`",
                // A string tensor's description already says what it is.
                if form == Form::Strings {
                    String::new()
                } else {
                    format!(", {}", slot_words(w))
                },
                t.slot.name(),
                slot_words(t.slot)
            ),
        };
        // The kind mismatches say what to write in the message itself.
        let diag = Diagnostic::new(t.slot_span, message);
        let diag = match (want, t.slot) {
            (Some(V::StringOutput), V::StringTensor) | (Some(V::StringTensor), V::StringOutput) => {
                diag.help(format!("write `{expected}`"))
            }
            _ => diag,
        };
        diags.push(diag);
        return none;
    }
    let mut ok = true;
    let elem_word = if matches!(form, Form::Map { .. } | Form::MapSequence { .. }) {
        "values"
    } else {
        "elements"
    };
    if let Some(ElemSyntax::Known(found, written, range)) = &t.elem
        && *found != elem
    {
        diags.push(
            Diagnostic::new(
                *range,
                format!(
                    "model {role_word} `{name}` is {model}; this field's {elem_word} are \
                     `{written}` ({found})"
                ),
            )
            .help(format!("write `{expected}`")),
        );
        ok = false;
    }
    if let (
        Form::Map { key } | Form::MapSequence { key },
        Some(ElemSyntax::Known(found, written, range)),
    ) = (form, &t.key)
        && *found != key
    {
        diags.push(
            Diagnostic::new(
                *range,
                format!(
                    "model {role_word} `{name}` is {model}, whose keys are {key}; this field's \
                     keys are `{written}` ({found})"
                ),
            )
            .help(format!("write `{expected}`")),
        );
        ok = false;
    }
    if let (Some(ShapeSyntax::Tuple(axes, range)), Some(ds)) = (&t.shape, dims) {
        let what = if form == Form::Sequence {
            "the tensors of the sequence have"
        } else {
            "it has"
        };
        if axes.len() != ds.len() {
            diags.push(
                Diagnostic::new(
                    *range,
                    format!(
                        "model {role_word} `{name}` is {model}: {what} rank {}; this shape has \
                         rank {}",
                        ds.len(),
                        axes.len()
                    ),
                )
                .help(format!("write `{expected}`")),
            );
            ok = false;
        } else {
            for (axis, (a, d)) in axes.iter().zip(ds).enumerate() {
                if let (AxisSyntax::Fixed(found, range), Dim::Fixed(want)) = (a, d)
                    && found != want
                {
                    diags.push(
                        Diagnostic::new(
                            *range,
                            format!(
                                "axis {axis} of model {role_word} `{name}` is fixed to {want} \
                                 by the model ({model}); `Fix<{found}>` contradicts it"
                            ),
                        )
                        .help(format!("write `Fix<{want}>` or `Dyn` for this axis")),
                    );
                    ok = false;
                }
            }
        }
    }
    if ok { trait_check } else { none }
}
