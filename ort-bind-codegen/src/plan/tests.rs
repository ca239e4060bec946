use super::*;
use crate::element::ElementType;

fn t(name: &str, elem: ElementType, dims: Option<Vec<Dim>>) -> ValueInfo {
    ValueInfo {
        name: name.into(),
        kind: ValueType::Tensor { elem, dims },
        doc_string: String::new(),
    }
}
fn named(n: &str) -> Dim {
    Dim::Named(n.into())
}
const F: ElementType = ElementType::F32;

/// silero_vad.onnx as exported: every dynamic dim unnamed.
fn silero() -> ModelSignature {
    ModelSignature {
        inputs: vec![
            t("input", F, Some(vec![Dim::Dynamic, Dim::Dynamic])),
            t(
                "state",
                F,
                Some(vec![Dim::Fixed(2), Dim::Dynamic, Dim::Fixed(128)]),
            ),
            t("sr", ElementType::I64, Some(vec![])),
        ],
        outputs: vec![
            t("output", F, Some(vec![Dim::Dynamic, Dim::Fixed(1)])),
            t(
                "stateN",
                F,
                Some(vec![Dim::Dynamic, Dim::Dynamic, Dim::Dynamic]),
            ),
        ],
        ..Default::default()
    }
}

fn fields(p: &Plan) -> Vec<&str> {
    p.dims.iter().map(|d| d.field.as_str()).collect()
}

#[test]
fn open_state_output_takes_the_state_input_shape() {
    let p = plan(&silero()).unwrap();
    assert_eq!(fields(&p), ["input_dim0", "input_dim1", "state_dim1"]);
    // `output` [?, 1]: nothing says what `?` is, so ONNX Runtime allocates it.
    assert_eq!(p.outputs[0].storage, Storage::Allocated);
    // `stateN` [?, ?, ?] pairs with `state` [2, ?, 128] and takes its shape.
    assert_eq!(p.feed_back.len(), 1);
    assert_eq!((p.feed_back[0].output, p.feed_back[0].input), (1, 1));
    assert_eq!(p.outputs[1].storage, p.inputs[1].storage);
}

#[test]
fn naming_dims_makes_outputs_preallocated() {
    let opts = ModelOptions::new()
        .dim("input", 0, "batch")
        .dim("input", 1, "samples")
        .dim("state", 1, "batch")
        .dim("output", 0, "batch");
    let p = plan_with(&silero(), &opts).unwrap();
    assert_eq!(fields(&p), ["batch", "samples"]);
    assert_eq!(
        p.outputs[0].storage,
        Storage::Owned(vec![AxisSize::Field(0), AxisSize::Fixed(1)])
    );
    assert_eq!(
        p.outputs[1].storage,
        Storage::Owned(vec![
            AxisSize::Fixed(2),
            AxisSize::Field(0),
            AxisSize::Fixed(128)
        ])
    );
    assert_eq!(
        p.dims[0].used_by,
        [
            ("input".to_string(), 0),
            ("state".to_string(), 1),
            ("output".to_string(), 0),
            ("stateN".to_string(), 1)
        ]
    );
}

#[test]
fn placeholder_names() {
    for p in [
        "?",
        "",
        "-1",
        "None",
        "unk__123",
        "p2o.DynamicDimension.0",
        "DynamicDimension_3",
    ] {
        assert!(is_placeholder_name(p), "{p}");
    }
    for n in ["batch", "N", "seq_len", "height", "unk", "p2o_batch"] {
        assert!(!is_placeholder_name(n), "{n}");
    }
}

/// The real models in `tests/fixtures/signatures` (PP-OCRv4 det, Silero VAD).
fn real(name: &str) -> ModelSignature {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ort-bind-tests/tests/fixtures/signatures")
        .join(name);
    crate::read_signature(path).unwrap()
}

/// PP-OCRv4's detector with the output's dims renamed to the input's and dim 0
/// called `batch_name`.
fn det_options(batch_name: &str) -> ModelOptions {
    ModelOptions::new()
        .rename_dim("p2o.DynamicDimension.0", batch_name)
        .rename_dim("p2o.DynamicDimension.3", batch_name)
        .rename_dim("p2o.DynamicDimension.4", "p2o.DynamicDimension.1")
        .rename_dim("p2o.DynamicDimension.5", "p2o.DynamicDimension.2")
}

#[test]
fn a_dim_named_batch_on_axis_0_of_every_value_is_the_batch_dim() {
    let p = plan_with(&real("ppocr_det.onnx"), &det_options("batch")).unwrap();
    assert_eq!(p.batch.map(|b| p.dims[b].field.as_str()), Some("batch"));
    // Named otherwise, it is not guessed ...
    let p = plan_with(&real("ppocr_det.onnx"), &det_options("images")).unwrap();
    assert_eq!(p.batch, None);
    // ... unless declared, by dim name or by dims field name.
    let p = plan_with(
        &real("ppocr_det.onnx"),
        &det_options("images").batch_dim("images"),
    );
    assert_eq!(p.unwrap().batch, Some(0));
    let p = plan_with(
        &real("ppocr_det.onnx"),
        &det_options("n").batch_dim("x_dim2"),
    );
    assert!(
        matches!(&p, Err(PlanError::BatchDim { reason, .. }) if reason.contains("axis 0")),
        "{p:?}"
    );
}

#[test]
fn a_batch_dim_off_axis_0_is_no_batch_dim_and_declaring_it_is_an_error() {
    // Silero's `batch` is axis 1 of `state`: items cannot be rows.
    let opts = ModelOptions::new()
        .dim("input", 0, "batch")
        .dim("state", 1, "batch")
        .dim("output", 0, "batch");
    assert_eq!(plan_with(&silero(), &opts).unwrap().batch, None);
    let err = plan_with(&silero(), &opts.clone().batch_dim("batch")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "batch_dim(`batch`): input `state` is [2, batch, 128]: the batch dim must be its \
         axis 0 and no other"
    );
    let err = plan_with(&silero(), &opts.batch_dim("rows")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("batch_dim(`rows`): the model has no dim of that name"),
        "{err}"
    );
}

#[test]
fn exporter_placeholders_become_fields_named_where_they_are_used() {
    // x [p2o.DynamicDimension.0, 3, .1, .2] -> sigmoid_0.tmp_0 [.3, 1, .4, .5]
    let det = real("ppocr_det.onnx");
    let p = plan(&det).unwrap();
    assert_eq!(fields(&p), ["x_dim0", "x_dim2", "x_dim3"]);
    let note = p.dims[0].note.as_deref().unwrap();
    assert!(note.contains("`p2o.DynamicDimension.0`"), "{note}");
    // Named apart on the output: ONNX Runtime allocates it, unless renamed.
    assert_eq!(p.outputs[0].storage, Storage::Allocated);
    let opts = ModelOptions::new()
        .rename_dim("p2o.DynamicDimension.3", "batch")
        .rename_dim("p2o.DynamicDimension.0", "batch")
        .dim("x", 2, "height")
        .dim("x", 3, "width")
        .dim("sigmoid_0.tmp_0", 2, "height")
        .dim("sigmoid_0.tmp_0", 3, "width");
    let p = plan_with(&det, &opts).unwrap();
    assert_eq!(fields(&p), ["batch", "height", "width"]);
    assert!(matches!(p.outputs[0].storage, Storage::Owned(_)));
    // Silero VAD: unnamed axes keep `<value>_dim<axis>`; `stateN` pairs with `state`.
    let p = plan(&real("silero_vad.onnx")).unwrap();
    assert_eq!(fields(&p), ["input_dim0", "input_dim1", "state_dim1"]);
    let a = axes(&real("silero_vad.onnx"), &ModelOptions::new()).unwrap();
    let state1 = a
        .iter()
        .find(|a| a.value == "state" && a.axis == 1)
        .unwrap();
    assert_eq!(state1.binding, AxisBinding::Field("state_dim1".into()));
    assert_eq!(state1.rename.as_deref(), Some(r#"dim("state", 1, "NAME")"#));
    let out0 = a
        .iter()
        .find(|a| a.value == "output" && a.axis == 0)
        .unwrap();
    assert_eq!(out0.binding, AxisBinding::Runtime);
}

fn use_(field: &str, role: Role, index: usize, pins: &[Option<u64>]) -> FieldUse {
    FieldUse {
        field: field.into(),
        role,
        index,
        allocated: false,
        pins: Some(pins.to_vec()),
    }
}

#[test]
fn struct_dims_are_what_no_field_type_fixes() {
    let sig = silero();
    let f = |state0: Option<u64>| {
        vec![
            use_("input", Role::Input, 0, &[Some(1), Some(512)]),
            use_("state", Role::Input, 1, &[Some(2), None, Some(128)]),
            use_("sr", Role::Input, 2, &[]),
            use_("next", Role::Output, 1, &[state0, None, None]),
        ]
    };
    // Everything pinned but `state` axis 1 (which `stateN` shares through the pair).
    let p = plan_struct(&sig, &ModelOptions::new(), &f(None)).unwrap();
    assert_eq!(fields(&p.plan), ["state_dim1"]);
    assert_eq!(p.plan.feed_back.len(), 1);
    // `output` is not bound: it is not planned.
    assert_eq!(p.output_index, [1]);
    // Pinning it too leaves nothing.
    let mut all = f(None);
    all[1].pins = Some(vec![Some(2), Some(1), Some(128)]);
    let p = plan_struct(&sig, &ModelOptions::new(), &all).unwrap();
    assert!(p.plan.dims.is_empty());
    assert_eq!(
        p.plan.outputs[0].storage,
        Storage::Owned(vec![
            AxisSize::Fixed(2),
            AxisSize::Fixed(1),
            AxisSize::Fixed(128)
        ])
    );
    // The pair sizes `stateN` axis 0 as `state`'s 2.
    let err = plan_struct(&sig, &ModelOptions::new(), &f(Some(3))).unwrap_err();
    assert!(
        matches!(&err[0], PlanError::PinContradicts(p) if p.at == 3 && p.want == 2),
        "{err:?}"
    );
    // Two fields pin one dim apart.
    let opts = ModelOptions::new()
        .dim("input", 0, "batch")
        .dim("state", 1, "batch");
    let mut apart = f(None);
    apart[1].pins = Some(vec![Some(2), Some(2), Some(128)]);
    let err = plan_struct(&sig, &opts, &apart).unwrap_err();
    assert_eq!(
        err[0].to_string(),
        "dim `batch` is 2 in field `state` (axis 1: `Fix<2>`) but 1 in field `input` (axis 0: \
         `Fix<1>`): one binding cannot have both"
    );
}

#[test]
fn rename_unifies_differently_named_dims() {
    let sig = ModelSignature {
        inputs: vec![t("x", F, Some(vec![named("batch"), Dim::Fixed(4)]))],
        outputs: vec![t("z", F, Some(vec![named("N"), Dim::Fixed(3)]))],
        ..Default::default()
    };
    assert_eq!(plan(&sig).unwrap().outputs[0].storage, Storage::Allocated);
    let p = plan_with(&sig, &ModelOptions::new().rename_dim("N", "batch")).unwrap();
    assert_eq!(
        p.outputs[0].storage,
        Storage::Owned(vec![AxisSize::Field(0), AxisSize::Fixed(3)])
    );
    let err = plan_with(&sig, &ModelOptions::new().rename_dim("M", "batch")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "rename_dim(`M`, ..): no value of the model has a dim named `M` (named dims: `batch`, `N`)"
    );
}

#[test]
fn dim_options_that_contradict_the_model_are_errors() {
    let err = plan_with(&silero(), &ModelOptions::new().dim("state", 0, "batch")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "dim(`state`, 0, `batch`): the model fixes that axis to 2"
    );
    let err = plan_with(&silero(), &ModelOptions::new().dim("state", 3, "b")).unwrap_err();
    assert!(err.to_string().contains("it has rank 3"), "{err}");
    let err = plan_with(&silero(), &ModelOptions::new().dim("stat", 1, "b")).unwrap_err();
    assert!(
        err.to_string().contains(
            "no input or output `stat` (it has `input`, `state`, `sr`, `output`, `stateN`)"
        ),
        "{err}"
    );
}

#[test]
fn declared_feed_back_is_checked() {
    let opts = ModelOptions::new().no_auto_feed_back();
    assert!(plan_with(&silero(), &opts).unwrap().feed_back.is_empty());
    let opts = ModelOptions::new()
        .no_auto_feed_back()
        .feed_back("stateN", "state");
    let p = plan_with(&silero(), &opts).unwrap();
    assert_eq!((p.feed_back[0].output, p.feed_back[0].input), (1, 1));
    assert_eq!(p.outputs[1].storage, p.inputs[1].storage);
    // `output` [?, 1] cannot take the shape of `input` [?, ?]: its axis 1 is fixed.
    let err = plan_with(&silero(), &ModelOptions::new().feed_back("output", "input")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "feed_back(`output`, `input`): axis 1 is `1` on the output but `?` on the input"
    );
    let err = plan_with(&silero(), &ModelOptions::new().feed_back("output", "state")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "feed_back(`output`, `state`): the output has rank 2 and the input rank 3"
    );
    let err = plan_with(&silero(), &ModelOptions::new().feed_back("stateN", "sr")).unwrap_err();
    assert!(
        err.to_string().contains("is float32 and the input int64"),
        "{err}"
    );
}

#[test]
fn ambiguous_or_contradicting_candidates_are_not_unified() {
    // Two open outputs related to `h`: neither is unified.
    let sig = ModelSignature {
        inputs: vec![t("h", F, Some(vec![Dim::Fixed(1), Dim::Fixed(8)]))],
        outputs: vec![
            t("h_out", F, Some(vec![Dim::Dynamic, Dim::Dynamic])),
            t("hidden", F, Some(vec![Dim::Dynamic, Dim::Dynamic])),
        ],
        ..Default::default()
    };
    let p = plan(&sig).unwrap();
    assert!(p.feed_back.is_empty());
    assert_eq!(p.outputs[0].storage, Storage::Allocated);
    // A fixed axis that differs rules a pair out.
    let sig = ModelSignature {
        inputs: vec![t("h", F, Some(vec![Dim::Fixed(1), Dim::Fixed(8)]))],
        outputs: vec![t("h_out", F, Some(vec![Dim::Dynamic, Dim::Fixed(9)]))],
        ..Default::default()
    };
    assert!(plan(&sig).unwrap().feed_back.is_empty());
}

#[test]
fn equal_candidates_pair_each_value_once_closest_names_first() {
    // `state_c_out` is related to both `state` and `state_c`, `state` to both
    // outputs: the longest shared prefix wins, and no value is in two pairs.
    let d = || Some(vec![named("batch"), Dim::Fixed(4)]);
    let sig = ModelSignature {
        inputs: vec![t("state", F, d()), t("state_c", F, d())],
        outputs: vec![t("state_out", F, d()), t("state_c_out", F, d())],
        ..Default::default()
    };
    let p = plan(&sig).unwrap();
    let pairs: Vec<(usize, usize)> = p.feed_back.iter().map(|f| (f.output, f.input)).collect();
    assert_eq!(pairs, [(0, 0), (1, 1)]);
    // Many related names stay a matching: at most min(outputs, inputs) pairs.
    let sig = ModelSignature {
        inputs: (1..=50).map(|k| t(&"s".repeat(k), F, d())).collect(),
        outputs: (0..80)
            .map(|k| t(&format!("{}_{k}", "s".repeat(50)), F, d()))
            .collect(),
        ..Default::default()
    };
    let p = plan(&sig).unwrap();
    assert_eq!(p.feed_back.len(), 50);
}

/// Output sizes from shape inference, on the recognizer fixture: its `probs` is declared
/// `[unk__1, unk__2, 10]`.
fn recognizer() -> ModelSignature {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../ort-bind-tests/tests/fixtures/shapes/recognizer.onnx");
    crate::read_signature(path).unwrap()
}

#[test]
fn inferred_axes_are_sized_by_expressions_of_dims_fields() {
    let p = plan(&recognizer()).unwrap();
    let names: Vec<&str> = p.dims.iter().map(|d| d.field.as_str()).collect();
    assert_eq!(names, ["batch", "w"]);
    let Storage::Owned(axes) = &p.outputs[0].storage else {
        panic!("probs is pre-allocated: {:?}", p.outputs[0].storage)
    };
    assert_eq!(axes[0], AxisSize::Field(0));
    match &axes[1] {
        AxisSize::Expr(e) => assert_eq!(e.to_string(), "floor((w + 5) / 8)"),
        other => panic!("{other:?}"),
    }
    assert_eq!(axes[2], AxisSize::Fixed(10));
    // Renaming the input's dim renames it in the expression.
    let p = plan_with(&recognizer(), &ModelOptions::new().rename_dim("w", "width")).unwrap();
    let Storage::Owned(axes) = &p.outputs[0].storage else {
        panic!()
    };
    assert!(matches!(&axes[1], AxisSize::Expr(e) if e.to_string() == "floor((width + 5) / 8)"));
}

#[test]
fn a_hint_that_would_change_nothing_is_an_error() {
    let err = plan_with(
        &recognizer(),
        &ModelOptions::new().rename_dim("unk__2", "steps"),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("axis 1 of output `probs` `steps`, which no input carries"),
        "{text}"
    );
    assert!(text.contains("`floor((w + 5) / 8)`"), "{text}");
    // Named after an input's dim, the hint takes effect (and wins over the graph).
    let p = plan_with(&recognizer(), &ModelOptions::new().dim("probs", 1, "w")).unwrap();
    let Storage::Owned(axes) = &p.outputs[0].storage else {
        panic!()
    };
    assert_eq!(axes[1], AxisSize::Field(1));
}

/// Inputs with an initializer: overridable from IR 4 on (numeric tensors only, named apart
/// from the inputs), none before it (ONNX Runtime holds them constant).
#[test]
fn inputs_with_defaults_are_overridable_from_ir_4() {
    let sig = |ir| ModelSignature {
        inputs: vec![t("x", F, Some(vec![named("batch"), Dim::Fixed(8)]))],
        initialized_inputs: vec![
            t("lora_a.0", F, Some(vec![Dim::Fixed(8), named("rank")])),
            // Named like an input after sanitising: it gets a field of its own.
            t("X", F, Some(vec![])),
            t("names", ElementType::String, Some(vec![Dim::Fixed(2)])),
        ],
        outputs: vec![t("y", F, Some(vec![named("batch"), Dim::Fixed(8)]))],
        ir_version: ir,
        ..ModelSignature::default()
    };
    let p = plan(&sig(10)).unwrap();
    let fields: Vec<(&str, &str)> = p
        .overridable
        .iter()
        .map(|v| (v.name.as_str(), v.field.as_str()))
        .collect();
    assert_eq!(fields, [("lora_a.0", "lora_a_0"), ("X", "x_2")]);
    // Nothing of theirs enters the dims: `rank` is the override's own.
    assert_eq!(p.dims.len(), 1);
    assert!(plan(&sig(3)).unwrap().overridable.is_empty());
    // Turned off: the defaults stay, nothing is typed.
    let off = plan_with(&sig(10), &ModelOptions::new().no_overrides()).unwrap();
    assert!(off.overridable.is_empty());
    assert_eq!(off.inputs.len(), 1);
}
