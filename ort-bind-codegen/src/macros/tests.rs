//! Unit tests of the macro front ends, without a compiler: what they expand to.

use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::quote;

use super::*;
use crate::build::{format_source, generate_source};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ort-bind-tests")
}

fn env() -> MacroEnv {
    MacroEnv {
        manifest_dir: repo(),
        offline: false,
        site: "macros-unit-test".into(),
    }
}

fn compile_errors(tokens: &TokenStream) -> Vec<String> {
    let file: syn::File = syn::parse2(tokens.clone()).expect("expansion parses as items");
    file.items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Macro(m)
                if m.mac.path.is_ident("compile_error")
                    || m.mac
                        .path
                        .segments
                        .last()
                        .is_some_and(|s| s.ident == "compile_error") =>
            {
                let lit: syn::LitStr = m.mac.parse_body().expect("a string");
                Some(lit.value())
            }
            _ => None,
        })
        .collect()
}

fn item_names(tokens: &TokenStream) -> Vec<String> {
    let file: syn::File = syn::parse2(tokens.clone()).unwrap();
    let mut names = Vec::new();
    collect_names(&file.items, &mut names);
    names
}

/// Structs and impls, also those inside `const _: () = { ... };` blocks.
fn collect_names(items: &[syn::Item], names: &mut Vec<String>) {
    for item in items {
        match item {
            syn::Item::Struct(s) => names.push(format!("struct {}", s.ident)),
            syn::Item::Impl(i) => {
                let ty = &i.self_ty;
                let tr = i.trait_.as_ref().map(|(_, p, _)| {
                    p.segments
                        .last()
                        .map(|s| s.ident.to_string().trim_start_matches("__").to_owned())
                        .unwrap_or_default()
                });
                names.push(format!(
                    "impl {}{}",
                    tr.map(|t| format!("{t} for ")).unwrap_or_default(),
                    quote!(#ty).to_string().replace(' ', "")
                ));
            }
            syn::Item::Const(c) => {
                if let syn::Expr::Block(b) = &*c.expr {
                    let inner: Vec<syn::Item> = b
                        .block
                        .stmts
                        .iter()
                        .filter_map(|s| match s {
                            syn::Stmt::Item(i) => Some(i.clone()),
                            _ => None,
                        })
                        .collect();
                    collect_names(&inner, names);
                }
            }
            _ => {}
        }
    }
}

#[test]
fn derive_expands_to_a_binding() {
    let out = derive_onnx_binding(
        quote! {
            #[onnx(model = "tests/fixtures/add.onnx")]
            struct AddIo<D: Device = Cpu> {
                x: Tensor<f32, (Dyn,), D>,
                #[onnx(name = "y")]
                other: Tensor<f32, (Dyn,), D>,
                sum: Tensor<f32, (Dyn,), D>,
            }
        },
        &env(),
    );
    assert!(
        compile_errors(&out).is_empty(),
        "{:?}",
        compile_errors(&out)
    );
    let names = item_names(&out);
    for expected in [
        "struct AddIoDims",
        "struct AddIoInputs",
        "struct AddIoOutputs",
        "impl AddIo<D>",
        "impl BindingIo for AddIo<D>",
        "impl SplitIo for AddIo<D>",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} missing from {names:?}"
        );
    }
    let text = out.to_string();
    // Every model value is in the specs; `y` is bound through the field `other`.
    assert!(
        text.contains(r#"__spec :: < f32 > ("y" , 1usize)"#),
        "{text}"
    );
    assert!(
        text.contains("bind_input (& self . other , binder , 1usize)"),
        "{text}"
    );
    assert!(
        text.contains("binds_input :: < Tensor < f32 , (Dyn ,) , D > , f32"),
        "{text}"
    );
    // The model is tracked.
    assert!(text.contains("track_model"), "{text}");
}

#[test]
fn derive_reports_every_mistake_and_still_emits_the_impls() {
    let out = derive_onnx_binding(
        quote! {
            #[onnx(model = "tests/fixtures/add.onnx")]
            struct AddIo {
                x: Tensor<f64, (Dyn,)>,
                yy: Tensor<f32, (Dyn,)>,
                sum: Tensor<f32, (Dyn, Dyn)>,
            }
        },
        &env(),
    );
    let errors = compile_errors(&out);
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors[0].contains("holds `f64`"));
    assert!(errors[1].contains("did you mean `y`?"));
    assert!(errors[2].contains("of rank 1; this shape has rank 2"));
    assert!(
        item_names(&out)
            .iter()
            .any(|n| n == "impl BindingIo for AddIo")
    );
    // `yy` did not resolve: it is in both views, so there is no `SplitIo`.
    assert!(
        !item_names(&out)
            .iter()
            .any(|n| n == "impl SplitIo for AddIo")
    );
}

#[test]
fn a_missing_model_is_one_error_with_fallback_impls() {
    let out = derive_onnx_binding(
        quote! {
            #[onnx(model = "tests/fixtures/does_not_exist.onnx")]
            struct Io { x: Tensor<f32, (Dyn,)>, sum: Tensor<f32, (Dyn,)> }
        },
        &env(),
    );
    let errors = compile_errors(&out);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("ONNX model `tests/fixtures/does_not_exist.onnx` not found"),
        "{}",
        errors[0]
    );
    assert!(errors[0].contains("ort-bind prepare tests/fixtures/does_not_exist.onnx"));
    assert!(
        !errors[0].contains(&repo().display().to_string()),
        "paths are relative"
    );
    let names = item_names(&out);
    assert!(
        names.iter().any(|n| n == "impl BindingIo for Io"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "struct IoInputs"), "{names:?}");
}

#[test]
fn derive_rejects_what_it_cannot_bind() {
    let out = derive_onnx_binding(
        quote!(
            enum E {
                A,
            }
        ),
        &env(),
    );
    assert!(compile_errors(&out)[0].contains("struct with named fields"));
    let out = derive_onnx_binding(
        quote!(
            struct S {
                x: Tensor<f32, (Dyn,)>,
            }
        ),
        &env(),
    );
    assert!(compile_errors(&out)[0].contains("needs the model file"));
}

/// The builder here was given the absolute `path`, the macro the relative `written`: the
/// modules differ only in the relative path `MODEL_FILE` records, which this rewrites.
fn as_written(from_builder: &str, path: &Path, written: &str) -> String {
    let given = format!("{:?}", path.display().to_string());
    let field = format!("\n    {given},\n    MODEL_PATH,");
    assert_eq!(from_builder.matches(&field).count(), 1, "{from_builder}");
    from_builder.replacen(&field, &format!("\n    {written:?},\n    MODEL_PATH,"), 1)
}

#[test]
fn bindings_generate_what_the_builder_writes() {
    let path = repo().join("tests/fixtures/dynamic.onnx");
    let out = bindings(quote!("tests/fixtures/dynamic.onnx"), &env());
    let mut file: syn::File = syn::parse2(out).unwrap();
    // The last item is the dependency tracking (a `const _`); the rest is the module.
    let tracking = file.items.pop().unwrap();
    assert!(matches!(&tracking, syn::Item::Const(c) if c.ident == "_"));
    let items = &file.items;
    let module = quote!(#(#items)*);
    let from_macro = format_source(&module, "dynamic.onnx");
    let sig = crate::read_signature(&path).unwrap();
    let from_builder = generate_source(&sig, &path, &syn::parse_quote!(::ort_bind)).unwrap();
    assert_eq!(
        from_macro,
        as_written(&from_builder, &path, "tests/fixtures/dynamic.onnx")
    );
}

#[test]
fn bindings_take_the_builder_options() {
    let path = repo().join("tests/fixtures/dynamic.onnx");
    let out = bindings(
        quote!(
            "tests/fixtures/dynamic.onnx",
            rename_dim("N", "batch"),
            no_auto_feed_back,
            crate = "::ort_bind"
        ),
        &env(),
    );
    let mut file: syn::File = syn::parse2(out).unwrap();
    file.items.pop();
    let items = &file.items;
    let from_macro = format_source(&quote!(#(#items)*), "dynamic.onnx");
    let sig = crate::read_signature(&path).unwrap();
    let options = crate::ModelOptions::new()
        .rename_dim("N", "batch")
        .no_auto_feed_back();
    let from_builder =
        crate::build::generate_source_with(&sig, &path, &syn::parse_quote!(::ort_bind), &options)
            .unwrap();
    assert_eq!(
        from_macro,
        as_written(&from_builder, &path, "tests/fixtures/dynamic.onnx")
    );
    // `N` is `batch` now: the dims struct has one field.
    assert!(!from_macro.contains("pub n: usize"), "{from_macro}");

    let bad = bindings(
        quote!("tests/fixtures/dynamic.onnx", rename_dim("Q", "batch")),
        &env(),
    );
    assert!(bad.to_string().contains("cannot be bound"), "{bad}");
    let bad = bindings(
        quote!("tests/fixtures/dynamic.onnx", dim("x", "0", "b")),
        &env(),
    );
    assert!(bad.to_string().contains("expected an axis number"), "{bad}");
    let bad = bindings(
        quote!("tests/fixtures/dynamic.onnx", feedback("a", "b")),
        &env(),
    );
    assert!(
        bad.to_string().contains("did you mean `feed_back`"),
        "{bad}"
    );
    let bad = bindings(quote!("tests/fixtures/dynamic.onnx", dim("x", 0)), &env());
    assert!(bad.to_string().contains("expected `dim("), "{bad}");
}

#[test]
fn bindings_errors_sit_on_the_path() {
    let out = bindings(quote!("tests/fixtures/nope.onnx"), &env());
    let text = out.to_string();
    assert!(text.contains("compile_error"), "{text}");
    assert!(
        text.contains("tests/fixtures/nope.onnx` not found"),
        "{text}"
    );
    let out = bindings(quote!(), &env());
    assert!(out.to_string().contains("expected the model path"));
    let out = bindings(quote!("tests/fixtures/add.onnx", krate = "x"), &env());
    assert!(out.to_string().contains("unknown option `krate`"));
    let out = bindings(quote!("tests/fixtures/README.md"), &env());
    assert!(out.to_string().contains("is not a readable ONNX model"));
}

#[test]
fn a_model_bindings_cannot_read_leaves_stand_in_items() {
    // Next to the error, the module's items (from the same emitter), so uses of `Model`,
    // `Binding` or `Dims` do not fail a second time.
    let out = bindings(quote!("tests/fixtures/nope.onnx"), &env());
    assert_eq!(compile_errors(&out).len(), 1, "{out}");
    let names = item_names(&out);
    for item in ["struct Model", "struct Binding", "struct Dims", "struct Io"] {
        assert!(names.iter().any(|n| n == item), "no `{item}` in {names:?}");
    }
}

#[test]
fn the_offline_switch_uses_the_cache() {
    let root = std::env::temp_dir().join(format!("ort-bind-macros-offline-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("m")).unwrap();
    std::fs::copy(
        repo().join("tests/fixtures/add.onnx"),
        root.join("m/add.onnx"),
    )
    .unwrap();
    let mut env = MacroEnv {
        manifest_dir: root.clone(),
        offline: true,
        site: "offline-test".into(),
    };
    let input = quote! {
        #[onnx(model = "m/add.onnx")]
        struct Io { x: Tensor<f32, (Dyn,)>, y: Tensor<f32, (Dyn,)>, sum: Tensor<f32, (Dyn,)> }
    };
    let errors = compile_errors(&derive_onnx_binding(input.clone(), &env));
    assert!(errors[0].contains("ORT_BIND_OFFLINE is set"), "{errors:?}");
    crate::cache::write(&root, Path::new("m/add.onnx")).unwrap();
    assert!(compile_errors(&derive_onnx_binding(input.clone(), &env)).is_empty());
    // Offline, the model itself is not tracked, the cache is.
    let text = derive_onnx_binding(input.clone(), &env).to_string();
    assert!(text.contains("m__add.onnx.json"), "{text}");
    env.offline = false;
    assert!(compile_errors(&derive_onnx_binding(input, &env)).is_empty());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn track_model_checks_its_arguments() {
    assert!(
        track_model(quote!("a"))
            .to_string()
            .contains("takes two paths")
    );
    assert!(
        track_model(quote!(1, 2))
            .to_string()
            .contains("compile_error")
    );
    // Paths outside the tracking folder are ignored, not touched.
    assert!(track_model(quote!("/tmp/x", "/tmp/y")).is_empty());
}

#[test]
fn bindings_recognise_decoders_and_take_decoder_options() {
    let gqa = bindings(quote!("tests/fixtures/decoders/gqa_f32/model.onnx"), &env()).to_string();
    assert!(gqa.contains("pub static DECODER"), "{gqa}");
    assert!(gqa.contains("pub type SharedDecoder"), "{gqa}");
    // A Concat cache: only the growing mode.
    let mha = bindings(
        quote!("tests/fixtures/decoders/mha_concat/model.onnx", decoder),
        &env(),
    )
    .to_string();
    assert!(mha.contains("pub type Decoder"), "{mha}");
    assert!(!mha.contains("SharedDecoder"), "{mha}");
    // Not a decoder, but one was asked for: the reason, on the path.
    let add = bindings(quote!("tests/fixtures/add.onnx", decoder), &env()).to_string();
    assert!(add.contains("compile_error"), "{add}");
    assert!(add.contains("decoder: no cache pair found"), "{add}");
    // Names given for the roles.
    let renamed = bindings(
        quote!(
            "tests/fixtures/decoders/mha_concat/model.onnx",
            decoder_role("vocab", "logits")
        ),
        &env(),
    )
    .to_string();
    assert!(renamed.contains("expected a decoder role"), "{renamed}");
    let renamed = bindings(
        quote!(
            "tests/fixtures/decoders/mha_concat/model.onnx",
            decoder_role("logits", "scores")
        ),
        &env(),
    )
    .to_string();
    assert!(
        renamed.contains("the model has no logits output `scores`"),
        "{renamed}"
    );
    let paired = bindings(
        quote!(
            "tests/fixtures/decoders/mha_concat/model.onnx",
            decoder_cache("past_key_values.0.key", "present.0.value")
        ),
        &env(),
    )
    .to_string();
    assert!(
        paired.contains(
            "output `present.0.value` would feed both `past_key_values.0.key` and `past_key_values.0.value`"
        ),
        "{paired}"
    );
}

#[test]
fn the_derive_names_dims_as_the_module_does() {
    // silero_vad's `input` is [?, ?] and `stateN` [?, ?, ?]: unnamed axes become dims fields
    // named after the value, whatever the struct calls its fields.
    let input = quote! {
        #[onnx(model = "tests/fixtures/signatures/silero_vad.onnx")]
        struct Vad {
            #[onnx(name = "input")] audio: Tensor<f32, (Dyn, Dyn)>,
            state: Tensor<f32, (Fix<2>, Dyn, Fix<128>)>,
            sr: Tensor<i64, ()>,
            output: AllocatedOutput<f32, (Dyn, Fix<1>)>,
            #[onnx(name = "stateN")] next: Tensor<f32, (Fix<2>, Dyn, Fix<128>)>,
        }
    };
    let out = derive_onnx_binding(input, &env()).to_string();
    assert!(out.contains("pub input_dim0 : usize"), "{out}");
    assert!(out.contains("pub input_dim1 : usize"), "{out}");
    assert!(!out.contains("audio_dim"), "{out}");
    let module = bindings(quote!("tests/fixtures/signatures/silero_vad.onnx"), &env()).to_string();
    assert!(module.contains("pub input_dim0 : usize"), "{module}");
    assert!(module.contains("pub input_dim1 : usize"), "{module}");
}

/// A directory of its own for model files a test writes, as a macro env's crate dir.
fn scratch_env(test: &str, files: &[(&str, Vec<u8>)]) -> MacroEnv {
    let dir = std::env::temp_dir().join(format!("ort-bind-macros-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    MacroEnv {
        manifest_dir: dir,
        offline: false,
        site: "macros-unit-test".into(),
    }
}

#[test]
fn from_input_shapes_is_emitted_wherever_input_shapes_determine_the_dims() {
    use crate::onnx::tests::f32_model;
    // Wide structs get it too, unasked: its cost per input is one entry of a table.
    let n = 40;
    let names: Vec<(String, String)> = (0..n)
        .map(|i| (format!("in_{i}"), format!("out_{i}")))
        .collect();
    let shape: &[&str] = &["batch", "16"];
    let inputs: Vec<(&str, &[&str])> = names.iter().map(|(i, _)| (i.as_str(), shape)).collect();
    let outputs: Vec<(&str, &[&str])> = names.iter().map(|(_, o)| (o.as_str(), shape)).collect();
    let env = scratch_env(
        "from-input-shapes",
        &[
            ("wide.onnx", f32_model(&inputs, &outputs)),
            (
                "open.onnx",
                f32_model(&[("x", &["batch"])], &[("y", &["rows"])]),
            ),
        ],
    );
    let strukt = |model: &str, attr: TokenStream, k: usize| {
        let fields = names[..k].iter().flat_map(|(i, o)| {
            let (i, o) = (quote::format_ident!("{i}"), quote::format_ident!("{o}"));
            [
                quote!(#i: Tensor<f32, (Dyn, Fix<16>)>,),
                quote!(#o: Tensor<f32, (Dyn, Fix<16>)>,),
            ]
        });
        quote! {
            #[onnx(model = #model)]
            #attr
            struct Wide { #(#fields)* }
        }
    };
    let has_it = |out: &TokenStream| out.to_string().contains("fn from_input_shapes");

    for attr in [quote!(), quote!(#[onnx(from_input_shapes)])] {
        let wide = derive_onnx_binding(strukt("wide.onnx", attr.clone(), n), &env);
        assert!(
            compile_errors(&wide).is_empty(),
            "{:?}",
            compile_errors(&wide)
        );
        assert!(
            has_it(&wide),
            "a struct binding {n} inputs gets it ({attr})"
        );
        // One list of axis rules for the 40 inputs sized alike, one table entry each.
        let text = wide.to_string();
        assert_eq!(text.matches("__AxisRule :: Dim").count(), 1, "{attr}");
        assert!(text.contains("(\"in_39\" , in_39 , 0)"), "{attr}");
    }

    // Not asked for, where no input's shape has the dim `rows`: left out, no error.
    let open = derive_onnx_binding(
        quote! {
            #[onnx(model = "open.onnx")]
            struct Open { x: Tensor<f32, (Dyn,)>, y: Tensor<f32, (Dyn,)> }
        },
        &env,
    );
    assert!(
        compile_errors(&open).is_empty(),
        "{:?}",
        compile_errors(&open)
    );
    assert!(!has_it(&open));

    // Asked for where no input's shape has the dim `rows`: an error saying so.
    let open = derive_onnx_binding(
        quote! {
            #[onnx(model = "open.onnx", from_input_shapes)]
            struct Open { x: Tensor<f32, (Dyn,)>, y: Tensor<f32, (Dyn,)> }
        },
        &env,
    );
    let errors = compile_errors(&open);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("`rows`"), "{errors:?}");
    assert!(!has_it(&open));
    let _ = std::fs::remove_dir_all(&env.manifest_dir);
}
