//! The dims struct (one field per dynamic dimension the plan leaves to the user) and
//! `from_input_shapes`, which solves it from input shapes. Shared by the generated
//! module (`Dims`) and the derive (`<Struct>Dims`).

use std::collections::HashMap;

use proc_macro2::{Delimiter, Group, Literal, Punct, Spacing, TokenStream, TokenTree};
use quote::quote;

use super::tokens::type_doc;
use crate::ident::to_ident;
use crate::planner::{AxisSize, DimSource, Plan, PlannedValue, Storage};

/// What a dims field stands for, in words (`Symbolic dimension `batch``).
pub(crate) fn dim_what(source: &DimSource) -> String {
    match source {
        DimSource::Named(n) => format!("Symbolic dimension `{n}`"),
        DimSource::Axis { input, axis } => {
            format!("Unnamed dynamic axis {axis} of input `{input}`")
        }
        DimSource::Shape { input } => {
            format!("Whole shape of input `{input}`, whose rank the model leaves open")
        }
        DimSource::OutputAxis { output, axis } => {
            format!("Unnamed dynamic axis {axis} of output `{output}`")
        }
        DimSource::OutputShape { output } => {
            format!("Whole shape of output `{output}`, whose rank the model leaves open")
        }
    }
}

/// The documented fields of the dims struct.
pub(crate) fn fields(plan: &Plan) -> Vec<TokenStream> {
    plan.dims
        .iter()
        .map(|d| {
            let f = to_ident(&d.field);
            let used: Vec<String> = d
                .used_by
                .iter()
                .map(|(n, a)| format!("`{n}` axis {a}"))
                .collect();
            let ty = if d.source.is_shape() {
                quote!(::std::vec::Vec<usize>)
            } else {
                quote!(usize)
            };
            let what = dim_what(&d.source);
            let mut doc = if used.is_empty() {
                format!(" {what}.")
            } else {
                format!(" {what}; sizes {}.", used.join(", "))
            };
            if let Some(note) = &d.note {
                doc.push(' ');
                doc.push_str(note);
            }
            quote! { #[doc = #doc] pub #f: #ty, }
        })
        .collect()
}

/// The dims fields no input's shape sizes: input shapes determine the dims (and
/// `from_input_shapes` can be generated) when there is none.
pub(crate) fn unsolved_from_inputs(plan: &Plan) -> impl Iterator<Item = &str> {
    plan.dims_unsized_by_inputs().map(|d| d.field.as_str())
}

/// How generated code names the runtime items `from_input_shapes` uses: through the
/// runtime path (`::ort_bind::__private::AxisRule`), or through short names imported where the
/// function is emitted (`__AxisRule`, `__solve_dims`, `__Result`: the derive's `const`
/// block), which keeps the tokens of models with thousands of inputs small.
pub(crate) enum Paths<'a> {
    /// `#rt::__private::AxisRule`, `#rt::__private::solve_dims`, `#rt::Result`.
    Full(&'a syn::Path),
    /// `__AxisRule`, `__solve_dims`, `__Result`.
    Short,
}

/// How the model sizes one axis of an input: the runtime's `AxisRule`, as codegen knows it.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Rule {
    /// Fixed to this size.
    Fixed(u64),
    /// Sized by the solver's dim number `i`.
    Dim(usize),
}

/// `pub fn from_input_shapes(..) -> Result<Self>`, building the struct `name`; one
/// `&[usize]` parameter per input, named like the input's field. Its body is one call of
/// the runtime's `solve_dims` on a table: per input its name, shape and the index of its
/// axis rules, each distinct list of rules written once (the inputs of wide models are
/// mostly sized alike), so the tokens per input are few and made without `quote!`.
pub(crate) fn from_input_shapes(
    plan: &Plan,
    paths: Paths<'_>,
    name: &syn::Ident,
    vis: &TokenStream,
) -> TokenStream {
    let (rule, solve, result) = match paths {
        Paths::Full(rt) => (
            quote!(#rt::__private::AxisRule),
            quote!(#rt::__private::solve_dims),
            quote!(#rt::Result),
        ),
        Paths::Short => (quote!(__AxisRule), quote!(__solve_dims), quote!(__Result)),
    };
    let solver_index: Vec<Option<usize>> = {
        let mut next = 0;
        plan.dims
            .iter()
            .map(|d| {
                (!d.source.is_shape()).then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect()
    };
    let solver_names = plan.dims.iter().filter_map(|d| match &d.source {
        DimSource::Named(n) => Some(n.clone()),
        DimSource::Axis { .. } | DimSource::OutputAxis { .. } => {
            Some(d.field.trim_start_matches("r#").to_owned())
        }
        DimSource::Shape { .. } | DimSource::OutputShape { .. } => None,
    });
    // Sequences, maps and optionals are not sized by the dims: no parameter.
    let sized = || plan.inputs.iter().filter(|v| v.form.is_sized());
    let shape_params: Vec<_> = sized()
        .map(|v| {
            let p = to_ident(&v.field);
            quote!(#p: &[usize])
        })
        .collect();
    // Each distinct list of axis rules once.
    let mut lists: Vec<Vec<Rule>> = Vec::new();
    let mut list_index: HashMap<Vec<Rule>, usize> = HashMap::new();
    let mut table = TokenStream::new();
    for v in &plan.inputs {
        let Storage::Owned(axes) = &v.storage else {
            continue;
        };
        let list: Vec<Rule> = axes
            .iter()
            .filter_map(|a| match a {
                AxisSize::Fixed(n) => Some(Rule::Fixed(*n)),
                AxisSize::Field(i) => Some(Rule::Dim(
                    solver_index[*i].expect("axis fields are not shape fields"),
                )),
                // Only outputs are sized by expressions.
                AxisSize::Expr(_) => None,
            })
            .collect();
        let next = lists.len();
        let index = *list_index.entry(list).or_insert_with_key(|list| {
            lists.push(list.clone());
            next
        });
        // `("name", field, index),`
        let mut entry = TokenStream::new();
        entry.extend([
            TokenTree::Literal(Literal::string(&v.name)),
            TokenTree::Punct(Punct::new(',', Spacing::Alone)),
            TokenTree::Ident(to_ident(&v.field)),
            TokenTree::Punct(Punct::new(',', Spacing::Alone)),
            TokenTree::Literal(Literal::usize_unsuffixed(index)),
        ]);
        table.extend([
            TokenTree::Group(Group::new(Delimiter::Parenthesis, entry)),
            TokenTree::Punct(Punct::new(',', Spacing::Alone)),
        ]);
    }
    let rules = lists.iter().map(|list| {
        let axes = list.iter().map(|r| match *r {
            Rule::Fixed(n) => {
                let n = Literal::u64_unsuffixed(n);
                quote!(#rule::Fixed(#n))
            }
            Rule::Dim(i) => {
                let i = Literal::usize_unsuffixed(i);
                quote!(#rule::Dim(#i))
            }
        });
        quote!(&[#(#axes),*])
    });
    let solved_idents: Vec<_> = plan
        .dims
        .iter()
        .filter(|d| !d.source.is_shape())
        .map(|d| to_ident(&d.field))
        .collect();
    let init = plan.dims.iter().map(|d| {
        let f = to_ident(&d.field);
        match &d.source {
            DimSource::Shape { input } => {
                let v = plan
                    .inputs
                    .iter()
                    .find(|v| &v.name == input)
                    .expect("shape fields belong to inputs");
                let p = to_ident(&v.field);
                quote!(#f: #p.to_vec(),)
            }
            _ => quote!(#f,),
        }
    });
    let doc = format!(
        " The dims under which the inputs have exactly these shapes (one per tensor input, \
         string tensors included, in model order: {}).\n\n Errors name what disagrees: a rank or a fixed axis that \
         differs from the model, or two axes of one dim with different sizes.",
        sized()
            .map(|v| format!("`{}` {}", v.name, type_doc(v)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    quote! {
        #[doc = #doc]
        #vis fn from_input_shapes(#(#shape_params),*) -> #result<Self> {
            let [#(#solved_idents),*] = #solve([#(#solver_names),*], &[#(#rules),*], &[#table])?;
            ::core::result::Result::Ok(#name { #(#init)* })
        }
    }
}

/// `dims_of_inputs`'s body: `Some(<dims>::from_input_shapes(..))` on each sized input's
/// dims as they are now, `arg` giving the expression for each (`None` when a field is
/// missing or does not hold a sized input: then there is no body). With `import`, the
/// runtime's `InputShape` (imported by `rt`) is brought in for `arg`s in method syntax.
pub(crate) fn of_inputs(
    plan: &Plan,
    rt: &syn::Path,
    dims: &TokenStream,
    import: bool,
    arg: impl Fn(&PlannedValue) -> Option<TokenStream>,
) -> Option<TokenStream> {
    let args: Vec<TokenStream> = plan
        .inputs
        .iter()
        .filter(|v| v.form.is_sized())
        .map(arg)
        .collect::<Option<_>>()?;
    let import = (import && !args.is_empty()).then(|| quote!(use #rt::__private::InputShape as _;));
    let args = super::tokens::joined(args, ',');
    Some(quote! {
        #import
        ::core::option::Option::Some(#dims::from_input_shapes(#args))
    })
}
