//! The views a binding hands out (`Inputs` / `Outputs`, the derive's `<Struct>Inputs` /
//! `<Struct>Outputs`), one documented field per value, emitted for both routes from one
//! description: each route describes its view fields as [`ViewField`]s (the module from
//! its plan, [`of_plan`]; the derive from the field types as written) and
//! [`Views::structs`] / [`Views::init`] write the structs and the literals that build them.

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::tokens::{Side, elem_tokens, io_type, model_text, shape_tokens, type_doc};
use super::{in_field, out_field};
use crate::ident::to_ident;
use crate::planner::{AxisSize, Form, Plan, PlannedValue, Storage};

/// What one field of a view hands out, which decides its type and how it is made.
pub(crate) enum ViewKind {
    /// A numeric tensor: `TensorMut` / `TensorRef` with these generic arguments after the
    /// view lifetime.
    Tensor(TokenStream),
    /// A string tensor input, filled in place: `StringTensorMut` of this shape.
    Strings(TokenStream),
    /// A map, sequence, sequence of maps or optional input of this type, filled in place:
    /// the value itself, borrowed mutably.
    ValueInput(TokenStream),
    /// An output of this type that ONNX Runtime allocates, read with `get()`: `OutputRef`.
    Allocated(TokenStream),
    /// The derive's tensor of this type (an alias, say) known only through the runtime's
    /// `Slot` trait: its `Mut` / `Ref` view types.
    Slot(TokenStream),
    /// The derive's field of this type that binds nothing (already an error, or a struct
    /// without a model): a plain reference, mutable in the inputs view when `mutable`.
    Field {
        /// The field's type.
        ty: TokenStream,
        /// Borrowed mutably in the inputs view.
        mutable: bool,
    },
    /// An overridable input, an `Option<Tensor>` of `self`: `Option<TensorMut>` with these
    /// generic arguments after the view lifetime, `Some` while it is set.
    Override {
        /// The `TensorMut`'s arguments after its lifetime.
        args: TokenStream,
        /// In `Io`'s `overrides` (the module route's), rather than a field of `self` (the
        /// derive's).
        nested: bool,
    },
    /// The derive's field whose type is already an error that naming it again would
    /// repeat: a marker in its place.
    Absent,
}

/// One field of a view.
pub(crate) struct ViewField {
    /// The field's name in the view.
    pub name: Ident,
    /// The field of `self` (the binding's `Io` or the derive's struct) it is made from.
    pub source: Ident,
    /// Its doc.
    pub doc: String,
    /// What it hands out.
    pub kind: ViewKind,
    /// Made through the runtime's `Slot` trait (imported as `__Slot`), as the derive reaches
    /// its tensors: a mistyped field then adds no error of its own.
    pub via_slot: bool,
}

/// The two view structs of a binding.
pub(crate) struct Views<'a> {
    /// Path of the runtime crate.
    pub rt: &'a syn::Path,
    /// The structs' visibility.
    pub vis: TokenStream,
    /// The inputs view's name and doc.
    pub inputs: (Ident, String),
    /// The outputs view's name and doc.
    pub outputs: (Ident, String),
    /// The view lifetime, the views' first generic parameter.
    pub lifetime: syn::Lifetime,
    /// The views' other generics, and their where clause.
    pub generics: syn::Generics,
    /// The hidden marker field that holds the generics, and the type it borrows.
    pub marker: (Ident, TokenStream),
    /// The inputs view's fields.
    pub input_fields: Vec<ViewField>,
    /// The outputs view's fields.
    pub output_fields: Vec<ViewField>,
}

impl Views<'_> {
    /// The two structs.
    pub(crate) fn structs(&self) -> TokenStream {
        let mut generics = self.generics.clone();
        let lifetime = syn::LifetimeParam::new(self.lifetime.clone());
        generics
            .params
            .insert(0, syn::GenericParam::Lifetime(lifetime));
        let (params, where_clause) = (&generics.params, &generics.where_clause);
        let (vis, lt) = (&self.vis, &self.lifetime);
        let (marker, marker_ty) = &self.marker;
        let one = |(name, doc): &(Ident, String), fields: &[ViewField], inputs: bool| {
            let fields = fields.iter().map(|f| {
                let (name, doc, ty) = (&f.name, &f.doc, self.field_type(f, inputs));
                quote!(#[doc = #doc] pub #name: #ty,)
            });
            quote! {
                #[doc = #doc]
                #[derive(::core::fmt::Debug)]
                #[allow(dead_code, unreachable_pub, clippy::type_complexity)]
                #vis struct #name<#params> #where_clause {
                    #(#fields)*
                    #[doc(hidden)]
                    pub #marker: ::core::marker::PhantomData<&#lt #marker_ty>,
                }
            }
        };
        let inputs = one(&self.inputs, &self.input_fields, true);
        let outputs = one(&self.outputs, &self.output_fields, false);
        quote!(#inputs #outputs)
    }

    /// The inputs (`inputs`) or outputs view as a struct literal built from `self`.
    pub(crate) fn init(&self, inputs: bool) -> TokenStream {
        let (name, fields) = if inputs {
            (&self.inputs.0, &self.input_fields)
        } else {
            (&self.outputs.0, &self.output_fields)
        };
        let marker = &self.marker.0;
        let fields = fields.iter().map(|f| {
            let (name, init) = (&f.name, self.field_init(f, inputs));
            quote!(#name: #init,)
        });
        quote!(#name { #(#fields)* #marker: ::core::marker::PhantomData })
    }

    fn field_type(&self, f: &ViewField, inputs: bool) -> TokenStream {
        let (rt, lt) = (self.rt, &self.lifetime);
        match (&f.kind, inputs) {
            (ViewKind::Tensor(args), true) => quote!(#rt::TensorMut<#lt, #args>),
            (ViewKind::Tensor(args), false) => quote!(#rt::TensorRef<#lt, #args>),
            (ViewKind::Strings(shape), _) => quote!(#rt::StringTensorMut<#lt, #shape>),
            (ViewKind::ValueInput(ty), _) => quote!(&#lt mut #ty),
            (ViewKind::Allocated(ty), _) => quote!(#rt::OutputRef<#lt, #ty>),
            (ViewKind::Slot(ty), true) => quote!(<#ty as #rt::__private::Slot>::Mut<#lt>),
            (ViewKind::Slot(ty), false) => quote!(<#ty as #rt::__private::Slot>::Ref<#lt>),
            (ViewKind::Field { ty, mutable: true }, true) => quote!(&#lt mut #ty),
            (ViewKind::Field { ty, .. }, _) => quote!(&#lt #ty),
            (ViewKind::Override { args, .. }, _) => {
                quote!(::core::option::Option<#rt::TensorMut<#lt, #args>>)
            }
            (ViewKind::Absent, _) => quote!(::core::marker::PhantomData<&#lt ()>),
        }
    }

    fn field_init(&self, f: &ViewField, inputs: bool) -> TokenStream {
        let (rt, s) = (self.rt, &f.source);
        let slot = || {
            if inputs {
                quote!(__Slot::slot_mut(&mut self.#s))
            } else {
                quote!(__Slot::slot_ref(&self.#s))
            }
        };
        match (&f.kind, inputs) {
            (ViewKind::Tensor(_) | ViewKind::Allocated(_), _) if f.via_slot => slot(),
            (ViewKind::Slot(_), _) => slot(),
            (ViewKind::Tensor(_), true) | (ViewKind::Strings(_), _) => quote!(self.#s.view_mut()),
            (ViewKind::Tensor(_), false) => quote!(self.#s.view()),
            (ViewKind::ValueInput(_), _) => quote!(&mut self.#s),
            (ViewKind::Allocated(_), _) => quote!(#rt::OutputRef::new(&self.#s)),
            (ViewKind::Field { mutable: true, .. }, true) => quote!(&mut self.#s),
            (ViewKind::Field { .. }, _) => quote!(&self.#s),
            (ViewKind::Override { nested: true, .. }, _) => {
                quote!(self.overrides.#s.as_mut().map(|t| t.view_mut()))
            }
            (ViewKind::Override { nested: false, .. }, _) => {
                quote!(self.#s.as_mut().map(|t| t.view_mut()))
            }
            (ViewKind::Absent, _) => quote!(::core::marker::PhantomData),
        }
    }
}

/// The doc of a generated module's view field: ONNX name, type, who allocates it,
/// recurrent pairing and the model's own doc string.
fn value_doc(plan: &Plan, role: &str, v: &PlannedValue) -> String {
    let mut doc = format!(" {role} `{}`: {}.", v.name, type_doc(v));
    if v.form.is_tensor() && v.elem.packing() > 1 {
        doc.push_str(&format!(
            " Packed {} elements to a byte as ONNX stores them, first in the lowest bits: \
             `len()` and `as_slice()` count bytes; {}.",
            v.elem.packing(),
            if role == "Output" {
                "`unpacked()` reads the elements"
            } else {
                "`pack_from(&values)` writes the elements"
            },
        ));
    }
    if !v.form.is_tensor() {
        doc.push(' ');
        doc.push_str(&value_note(role == "Input", v));
    } else if role == "Output" && matches!(v.storage, Storage::Allocated) {
        doc.push_str(
            " Its shape is decided by ONNX Runtime during the run, which allocates it \
             (see `AllocatedOutput` for when that memory is reused). Read it with `get()`: \
             a `TensorRef` in place, or `Error::NotRun` before the first successful run.",
        );
    }
    if role == "Output"
        && let Storage::Owned(axes) = &v.storage
    {
        let computed: Vec<String> = axes
            .iter()
            .enumerate()
            .filter_map(|(k, a)| match a {
                AxisSize::Expr(e) => Some(format!("axis {k} is `{e}`")),
                _ => None,
            })
            .collect();
        if !computed.is_empty() {
            doc.push_str(&format!(
                " Sized from the dims as the graph computes it (shape inference): {}.",
                computed.join(", ")
            ));
        }
    }
    if let Some(note) = &v.inference {
        doc.push(' ');
        doc.push_str(&model_text(note));
    }
    if role == "Output"
        && let Some(fb) = plan
            .feed_back
            .iter()
            .find(|fb| std::ptr::eq(&plan.outputs[fb.output], v))
    {
        let input = &plan.inputs[fb.input];
        doc.push_str(&format!(
            " Recurrent: it has the shape of input `{}` and can become that input \
             without a copy (`Binding::feed_{}_into_{}`).",
            input.name,
            v.field.trim_start_matches("r#"),
            input.field.trim_start_matches("r#"),
        ));
    }
    if !v.doc.trim().is_empty() {
        doc.push_str("\n\n");
        doc.push_str(&model_text(&v.doc));
    }
    doc
}

/// What is copied and what is read in place, for a value that is not a numeric tensor.
fn value_note(input: bool, v: &PlannedValue) -> String {
    const GET: &str = "Read it with `get()`, in place; before the first successful run \
        `get()` is `Err(Error::NotRun)` (\"run the binding first\").";
    let fill = "Fill it in place through `inputs()`, like a tensor; the binding binds the \
        new value before the next run (ONNX Runtime keeps a reference to it; nothing is \
        copied per run), and a run before it has a value is `Error::MissingInput`";
    match (input, v.form) {
        (true, Form::Strings) => "ONNX Runtime keeps strings in its own string tensors, so \
            `fill` copies each string into the bound tensor (into string buffers ONNX Runtime \
            resizes and reuses); the number of strings follows the dims, and `set_dims` makes \
            a new tensor when they change."
            .into(),
        (false, Form::Strings) => format!(
            "ONNX Runtime allocates this string tensor during the run; its strings are \
             copied into one UTF-8 buffer with offsets (`Strings`, read as `&str`s) that is \
             reused from run to run. {GET}"
        ),
        (true, Form::Sequence) => format!(
            "{fill}. `set_arrays` (or `set_strings`) copies each element once into a tensor \
             ONNX Runtime owns."
        ),
        (false, Form::Sequence) => format!(
            "ONNX Runtime makes this sequence during the run; each element is read in place \
             through a typed view (`iter()`, `get(i)`), each with its own dims. {GET}"
        ),
        (true, Form::Map { .. }) => format!(
            "{fill}. `set_pairs(pairs)` copies the entries into ONNX Runtime's map (a \
             duplicate key is an error)."
        ),
        (true, Form::MapSequence { .. }) => {
            format!("{fill}. `set_maps(maps)` takes maps built with `Map::with_pairs`.")
        }
        (false, Form::Map { .. }) => format!(
            "ONNX Runtime makes this map during the run; its keys and values are copied \
             into two columns reused from run to run, read as pairs (`iter()`, `get(key)`, \
             `to_hash_map()`). {GET}"
        ),
        (false, Form::MapSequence { .. }) => format!(
            "ONNX Runtime makes this sequence of maps during the run (one map per row, as \
             `ZipMap` does); each map's keys and values are copied into columns reused from \
             run to run, read as pairs (`iter()`, `get(key)`, `to_hash_map()`). {GET}"
        ),
        (true, _) => "It starts absent; `set_present(true)` and `inner_mut()` give it a value \
            through `inputs()`, and the binding binds it before the next run."
            .into(),
        (false, _) => "The run may produce no value: `get()` is `Ok(None)` then, \
            `Ok(Some(view))` when it produced one, and `Err(Error::NotRun)` before a successful \
            run, so reading it handles absence. A tensor inside is read in place."
            .into(),
    }
}

/// Whether output `v` is a numeric tensor bound to a buffer before the run (read directly
/// as a `TensorRef`); every other output is one ONNX Runtime allocates during the run,
/// read through `OutputRef::get`.
fn is_bound_buffer(v: &PlannedValue) -> bool {
    v.form == Form::Tensor && !matches!(v.storage, Storage::Allocated)
}

/// The generated module's views (`Inputs<'a, D>` / `Outputs<'a, D>`), made from its `Io`.
pub(crate) fn of_plan<'a>(plan: &Plan, rt: &'a syn::Path) -> Views<'a> {
    let device = quote!(D);
    let input_fields: Vec<ViewField> = plan
        .inputs
        .iter()
        .map(|v| {
            let kind = match v.form {
                Form::Tensor => {
                    let (elem, shape) = (elem_tokens(rt, v.elem), shape_tokens(rt, v));
                    ViewKind::Tensor(quote!(#elem, #shape, D))
                }
                Form::Strings => ViewKind::Strings(shape_tokens(rt, v)),
                _ => ViewKind::ValueInput(io_type(rt, Side::Input, v, &device)),
            };
            ViewField {
                name: to_ident(&v.field),
                source: in_field(v),
                doc: value_doc(plan, "Input", v),
                kind,
                via_slot: false,
            }
        })
        .collect();
    let input_fields = input_fields
        .into_iter()
        .chain(super::overridable::view_fields(plan, rt))
        .collect();
    let output_fields = plan
        .outputs
        .iter()
        .map(|v| {
            let kind = if is_bound_buffer(v) {
                let (elem, shape) = (elem_tokens(rt, v.elem), shape_tokens(rt, v));
                ViewKind::Tensor(quote!(#elem, #shape, D))
            } else {
                ViewKind::Allocated(io_type(rt, Side::Output, v, &device))
            };
            ViewField {
                name: to_ident(&v.field),
                source: out_field(v),
                doc: value_doc(plan, "Output", v),
                kind,
                via_slot: false,
            }
        })
        .collect();
    Views {
        rt,
        vis: quote!(pub),
        inputs: (
            format_ident!("Inputs"),
            " The inputs of a [`Binding`], to fill in place before [`Binding::run`].".into(),
        ),
        outputs: (
            format_ident!("Outputs"),
            " The outputs of a [`Binding`], read in place after [`Binding::run`].".into(),
        ),
        lifetime: syn::parse_quote!('a),
        generics: syn::parse_quote!(<D: #rt::Device = #rt::Cpu>),
        marker: (format_ident!("_device"), quote!(D)),
        input_fields,
        output_fields,
    }
}
