//! Unit tests of the struct checks, on the fixture models.

use std::path::PathBuf;

use super::syntax::{Range, parse_field_type};
use super::*;
use crate::macros::attr;
use crate::read_signature;

fn sig(name: &str) -> ModelSignature {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../ort-bind-tests/tests/fixtures")
        .join(format!("{name}.onnx"));
    read_signature(path).unwrap()
}

/// Checks the struct written in `src` against fixture `model`.
fn check(model: &str, src: &str) -> CheckOutcome {
    check_with_device(model, src, None)
}

fn check_with_device(model: &str, src: &str, device: Option<&str>) -> CheckOutcome {
    let item: syn::ItemStruct = syn::parse_str(src).unwrap();
    let mut errors = attr::Errors::default();
    let fields: Vec<FieldSpec> = item
        .fields
        .iter()
        .map(|f| {
            let a = attr::field(&f.attrs, &mut errors);
            FieldSpec {
                ident: f
                    .ident
                    .as_ref()
                    .unwrap()
                    .to_string()
                    .trim_start_matches("r#")
                    .to_owned(),
                ident_span: Span::call_site(),
                name: a.name.map(|l| (l.value(), l.span())),
                role: a.role,
                written: f.ty.clone(),
                ty: parse_field_type(&f.ty),
                ty_range: Range::of(&f.ty),
            }
        })
        .collect();
    assert!(errors.is_empty(), "attribute errors in the test source");
    let device: Option<syn::Type> = device.map(|d| syn::parse_str(d).unwrap());
    check_struct(
        &sig(model),
        &StructSpec {
            name_span: Span::call_site(),
            fields: &fields,
            device: device.as_ref(),
        },
    )
}

fn messages(o: &CheckOutcome) -> Vec<String> {
    o.diagnostics.iter().map(Diagnostic::render).collect()
}

#[test]
fn a_correct_struct_binds_every_field() {
    let o = check(
        "add",
        r#"struct S {
            x: Tensor<f32, (Dyn,)>,
            #[onnx(name = "y")] other: Tensor<f32, (Fix<4>,)>,
            sum: Tensor<f32, AnyRank>,
        }"#,
    );
    assert!(o.diagnostics.is_empty(), "{:?}", messages(&o));
    let roles: Vec<(Role, usize)> = o
        .fields
        .iter()
        .map(|b| b.map(|b| (b.role, b.index)).unwrap())
        .collect();
    assert_eq!(
        roles,
        [(Role::Input, 0), (Role::Input, 1), (Role::Output, 0)]
    );
    // Correct syntax still gets its trait checks (they guard against shadowed names).
    assert!(
        o.fields
            .iter()
            .all(|b| b.unwrap().checks.element && b.unwrap().checks.shape)
    );
}

#[test]
fn unknown_names_suggest_the_closest_value() {
    let o = check(
        "add",
        r#"struct S { x: Tensor<f32, (Dyn,)>, y: Tensor<f32, (Dyn,)>, summ: Tensor<f32, (Dyn,)> }"#,
    );
    let m = messages(&o);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].contains("no input or output named `summ`"), "{}", m[0]);
    assert!(m[0].contains("did you mean `sum`?"), "{}", m[0]);
    assert!(m[0].contains("outputs: `sum` float32 [n]"), "{}", m[0]);
    assert!(o.fields[2].is_none());

    // A typo in `name = ...` suggests the attribute to write.
    let o = check(
        "add",
        r#"struct S { x: Tensor<f32, (Dyn,)>, #[onnx(name = "yy")] b: Tensor<f32, (Dyn,)>, sum: Tensor<f32, (Dyn,)> }"#,
    );
    let m = messages(&o);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].contains(r#"did you mean `#[onnx(name = "y")]`?"#),
        "{}",
        m[0]
    );
}

#[test]
fn exporter_names_bind_by_their_identifier() {
    let o = check(
        "messy",
        r#"struct S {
            gpu_0_data_0: Tensor<f32, (Dyn, Fix<3>)>,
            r#type: Tensor<f32, (Dyn,)>,
            v_1x: Tensor<f32, (Dyn,)>,
            save_infer_model_scale_0_tmp_1: Tensor<f32, (Fix<2>, Dyn)>,
            a_b: Tensor<f32, (Fix<4>,)>,
            a_b_2: Tensor<f32, (Fix<4>,)>,
            step: Tensor<i64, ()>,
            half: Tensor<f16, (Dyn, Fix<2>)>,
            self_: Tensor<i64, ()>,
        }"#,
    );
    // `a_b` is an exact output name and the identifier of input `a.b`: exact names win.
    assert_eq!(o.fields[4].map(|b| b.role), Some(Role::Output));
    assert_eq!(
        o.fields[5].map(|b| (b.role, b.index)),
        Some((Role::Input, 5))
    );
    assert_eq!(o.fields[8].map(|b| b.role), Some(Role::Output));
    let m = messages(&o);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].contains(r#"add a field `#[onnx(name = "a.b")] a_b_input: Tensor<f32, (Fix<4>,)>`"#),
        "{}",
        m[0]
    );

    // A near miss of an identifier names the ONNX value it stands for.
    let o = check(
        "messy",
        r#"struct S { gpu_0_data: Tensor<f32, (Dyn, Fix<3>)> }"#,
    );
    assert!(
        messages(&o)[0].contains("did you mean `gpu_0_data_0` (the model's `gpu_0/data_0`)?"),
        "{:?}",
        messages(&o)
    );
}

#[test]
fn missing_inputs_and_outputs_are_reported_on_the_struct() {
    let o = check(
        "add",
        r#"struct S { x: Tensor<f32, (Dyn,)>, sum: Tensor<f32, (Dyn,)> }"#,
    );
    let m = messages(&o);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].contains("model input `y` (float32 [n]) is not bound"),
        "{}",
        m[0]
    );
    assert!(
        m[0].contains("add a field `y: Tensor<f32, (Dyn,)>`"),
        "{}",
        m[0]
    );

    let o = check(
        "add",
        r#"struct S { x: Tensor<f32, (Dyn,)>, y: Tensor<f32, (Dyn,)> }"#,
    );
    let m = messages(&o);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(m[0].contains("binds no model output"), "{}", m[0]);
    assert!(m[0].contains("`sum: Tensor<f32, (Dyn,)>`"), "{}", m[0]);

    // Outputs may be left out when one is bound.
    let o = check(
        "dynamic",
        r#"struct S { x: Tensor<f32, (Dyn, Fix<4>)>, z: Tensor<f32, (Dyn, Fix<3>)> }"#,
    );
    assert!(o.diagnostics.is_empty(), "{:?}", messages(&o));

    // Many missing inputs make one error that lists them.
    let o = check(
        "alltypes",
        r#"struct S { y_bool: Tensor<bool, (Fix<2>,)> }"#,
    );
    let m = messages(&o);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].starts_with("13 model inputs are not bound"),
        "{}",
        m[0]
    );
    assert!(m[0].contains("`x_bfloat16` (bfloat16 [2]) as `x_bfloat16: Tensor<bf16, (Fix<2>,)>`"));
    assert!(m[0].contains("and 1 more"), "{}", m[0]);
}

#[test]
fn a_typo_is_not_reported_twice() {
    // `yy` was meant for `y`: no second error saying `y` is not bound.
    let o = check(
        "add",
        r#"struct S { x: Tensor<f32, (Dyn,)>, yy: Tensor<f32, (Dyn,)>, sum: Tensor<f32, (Dyn,)> }"#,
    );
    assert_eq!(messages(&o).len(), 1, "{:?}", messages(&o));
}

#[test]
fn duplicates_and_sides() {
    let o = check(
        "add",
        r#"struct S {
            x: Tensor<f32, (Dyn,)>, y: Tensor<f32, (Dyn,)>,
            #[onnx(name = "y")] again: Tensor<f32, (Dyn,)>,
            sum: Tensor<f32, (Dyn,)>,
        }"#,
    );
    let m = messages(&o);
    assert_eq!(m.len(), 1, "{m:?}");
    assert!(
        m[0].contains("model input `y` is already bound by field `y`"),
        "{}",
        m[0]
    );

    let o = check(
        "add",
        r#"struct S {
            #[onnx(output)] x: Tensor<f32, (Dyn,)>, y: Tensor<f32, (Dyn,)>,
            #[onnx(input)] sum: Tensor<f32, (Dyn,)>,
        }"#,
    );
    let m = messages(&o);
    assert!(
        m[0].contains("`x` is an input of the model, not an output"),
        "{m:?}"
    );
    assert!(
        m[1].contains("`sum` is an output of the model, not an input"),
        "{m:?}"
    );
    // Both were meant for existing values: nothing else is reported.
    assert_eq!(m.len(), 2, "{m:?}");
}

#[test]
fn element_rank_and_fixed_dims() {
    let o = check(
        "dynamic",
        r#"struct S { x: Tensor<f64, (Dyn, Fix<5>)>, y: Tensor<f32, (Dyn,)>, z: Tensor<f32, (Fix<7>, Fix<3>)> }"#,
    );
    let m = messages(&o);
    assert_eq!(m.len(), 3, "{m:?}");
    assert!(
        m[0].contains("model input `x` is float32 [batch, 4]; this field holds `f64` (float64)")
    );
    // One suggestion fixes everything wrong with the field.
    assert!(
        m[0].contains("write `Tensor<f32, (Dyn, Fix<4>)>`"),
        "{}",
        m[0]
    );
    assert!(
        m[1].contains("axis 1 of model input `x` is fixed to 4"),
        "{}",
        m[1]
    );
    assert!(
        m[2].contains("model output `y` is float32 [batch, 3], of rank 2; this shape has rank 1")
    );
    assert!(
        m[2].contains("write `Tensor<f32, (Dyn, Fix<3>)>`"),
        "{}",
        m[2]
    );
    // `z`'s symbolic `N` fixed to 7 is fine.
    let checks: Vec<TraitChecks> = o.fields.iter().map(|b| b.unwrap().checks).collect();
    assert!(!checks[0].element && !checks[0].shape);
    assert!(checks[1].element && !checks[1].shape);
    assert!(checks[2].element && checks[2].shape);

    let o = check(
        "scalar",
        r#"struct S { x: Tensor<f32, (Dyn,)>, y: Tensor<f32, ()> }"#,
    );
    assert!(messages(&o)[0].contains("is float32 scalar, of rank 0; this shape has rank 1"));
}

#[test]
fn aliases_are_left_to_trait_checks() {
    let o = check(
        "add",
        r#"struct S { x: Floats, y: Tensor<Float, Row>, sum: io::Out<D> }"#,
    );
    assert!(o.diagnostics.is_empty(), "{:?}", messages(&o));
    assert!(o.fields.iter().all(|b| {
        let c = b.unwrap().checks;
        c.element && c.shape
    }));
}

#[test]
fn kinds_of_fields() {
    let o = check(
        "add",
        r#"struct S { x: AllocatedOutput<f32, (Dyn,)>, y: Vec<f32>, sum: TensorRef<'a, f32, (Dyn,)> }"#,
    );
    let m = messages(&o);
    assert_eq!(m.len(), 3, "{m:?}");
    assert!(
        m[0].contains("model input `x` cannot be an `AllocatedOutput`"),
        "{}",
        m[0]
    );
    assert!(m[1].contains("field `y` is a `Vec`, which cannot hold model input `y`"));
    assert!(
        m[2].contains("field `sum` is a view (`TensorRef`)"),
        "{}",
        m[2]
    );

    // A non-device device argument is left to rustc's own error on the struct.
    let o = check(
        "add",
        r#"struct S { x: Tensor<f32, (Dyn,), String>, y: Tensor<f32, (Dyn,)>, sum: Tensor<f32, (Dyn,)> }"#,
    );
    assert!(o.diagnostics.is_empty(), "{:?}", messages(&o));
    assert!(matches!(&o.fields[0], Some(b) if !b.checks.element));
}

#[test]
fn devices() {
    let src = r#"struct S { x: Tensor<f32, (Dyn,), Cpu>, y: Tensor<f32, (Dyn,)>, sum: Tensor<f32, (Dyn,), D> }"#;
    let o = check_with_device("add", src, Some("Cpu"));
    assert!(o.diagnostics.is_empty(), "{:?}", messages(&o));
    // The generic `D` is left to the trait check.
    assert!(o.fields[2].unwrap().checks.device);

    let o = check_with_device("add", src, Some("ort_bind::Cuda<0>"));
    let m = messages(&o);
    assert_eq!(m.len(), 2, "{m:?}");
    assert!(m[0].contains("requires device `Cuda<0>`"), "{}", m[0]);
    assert!(m[0].contains("field `x` lives on `Cpu`"), "{}", m[0]);
    assert!(m[1].contains("field `y` lives on `Cpu`"), "{}", m[1]);
}

#[test]
fn model_level_problems() {
    use crate::planner::refusals;
    let mut s = sig("add");
    assert!(refusals(&s).is_empty());
    // Sequences, maps of the types ONNX Runtime's C API reads, optionals, strings: bound.
    for kind in [
        ValueType::Sequence(Box::new(ValueType::Tensor {
            elem: ElementType::F32,
            dims: Some(vec![Dim::Named("n".into())]),
        })),
        ValueType::Map {
            key: ElementType::String,
            value: Box::new(ValueType::Tensor {
                elem: ElementType::F32,
                dims: None,
            }),
        },
        ValueType::Optional(Box::new(ValueType::Tensor {
            elem: ElementType::String,
            dims: None,
        })),
    ] {
        s.outputs[0].kind = kind;
        assert!(refusals(&s).is_empty(), "{:?}", refusals(&s));
    }
    // What the runtime cannot bind is refused with the reason.
    s.outputs[0].kind = ValueType::Map {
        key: ElementType::U8,
        value: Box::new(ValueType::Tensor {
            elem: ElementType::F32,
            dims: None,
        }),
    };
    assert_eq!(
        refusals(&s)[0].to_string(),
        "output `sum` is a map map(uint8, float32): ONNX Runtime's C API makes and reads maps \
         with int64 or string keys and int64, float32, float64 or string values only"
    );
    s.outputs[0].kind =
        ValueType::Sequence(Box::new(ValueType::Sequence(Box::new(ValueType::Tensor {
            elem: ElementType::F32,
            dims: None,
        }))));
    assert_eq!(
        refusals(&s)[0].to_string(),
        "output `sum` is a sequence seq(seq(float32)): ort-bind binds sequences of tensors and \
         sequences of maps only"
    );
    s.outputs[0].kind = ValueType::Optional(Box::new(ValueType::Map {
        key: ElementType::I64,
        value: Box::new(ValueType::Tensor {
            elem: ElementType::F32,
            dims: None,
        }),
    }));
    assert!(
        refusals(&s)[0]
            .to_string()
            .ends_with("ort-bind binds optional tensors and optional sequences of tensors only"),
        "{}",
        refusals(&s)[0]
    );
    s.outputs[0].kind = ValueType::Optional(Box::new(ValueType::Tensor {
        elem: ElementType::F32,
        dims: None,
    }));
    // `optional(tensor)` binds (as `Optional<AllocatedOutput<..>>`).
    assert!(refusals(&s).is_empty(), "{:?}", refusals(&s));
    s.outputs[0].kind = ValueType::Optional(Box::new(ValueType::Unsupported("<no type>".into())));
    assert_eq!(
        refusals(&s)[0].to_string(),
        "output `sum` is optional(<no type>): it holds <no type>, and the model leaves that \
         element type unset"
    );
    s.outputs[0].kind = ValueType::Unsupported("map(float32, float32)".into());
    assert_eq!(
        refusals(&s)[0].to_string(),
        "output `sum` is map(float32, float32): ONNX allows map keys of integer types and \
         string only"
    );
    s.outputs[0].kind = ValueType::Tensor {
        elem: ElementType::String,
        dims: Some(vec![Dim::Dynamic]),
    };
    assert!(refusals(&s).is_empty());
    s.outputs.clear();
    assert!(
        refusals(&s)
            .iter()
            .any(|p| p.to_string().contains("no outputs"))
    );
}

#[test]
fn suggested_types() {
    assert_eq!(shape_type_text(Some(&[])), "()");
    assert_eq!(shape_type_text(Some(&[Dim::Dynamic])), "(Dyn,)");
    assert_eq!(
        shape_type_text(Some(&[Dim::Fixed(1), Dim::Named("n".into())])),
        "(Fix<1>, Dyn)"
    );
    assert_eq!(shape_type_text(None), "AnyRank");
    assert_eq!(shape_type_text(Some(&vec![Dim::Fixed(1); 13])), "AnyRank");
    assert_eq!(
        suggested_type(SlotKind::Allocated, ElementType::I64, Some(&[Dim::Dynamic])),
        "AllocatedOutput<i64, (Dyn,)>"
    );
    assert_eq!(
        render_type(&syn::parse_quote!(Tensor < f32 , ( Dyn , ) >)),
        "Tensor<f32, (Dyn,)>"
    );
    for (ty, text) in [
        (
            syn::parse_quote!(ort_bind::Tensor<f32, (Fix<1>, Dyn), ort_bind::Cuda<0>>),
            "ort_bind::Tensor<f32, (Fix<1>, Dyn), ort_bind::Cuda<0>>",
        ),
        (syn::parse_quote!(&'a [f32; 4]), "&'a [f32; 4]"),
        (syn::parse_quote!(Vec<Vec<u8>>), "Vec<Vec<u8>>"),
        (syn::parse_quote!(()), "()"),
        (
            syn::parse_quote!(AllocatedOutput<i64, AnyRank>),
            "AllocatedOutput<i64, AnyRank>",
        ),
    ] {
        let ty: syn::Type = ty;
        assert_eq!(render_type(&ty), text);
    }
}
