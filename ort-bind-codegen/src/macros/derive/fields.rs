//! Step 2 of the derive: each field of the struct with its attributes and what the
//! syntax of its type tells ([`parse_field_type`]).

use super::Field;
use crate::check::FieldSpec;
use crate::check::syntax::{Range, parse_field_type};
use crate::macros::attr::{self, Errors};

/// The struct's fields, in order; attribute mistakes go to `errors`.
pub(super) fn read<'a>(named: &'a syn::FieldsNamed, errors: &mut Errors) -> Vec<Field<'a>> {
    named
        .named
        .iter()
        .filter_map(|f| {
            // Named fields have names; a field without one is skipped, not a panic.
            let ident = f.ident.as_ref()?;
            let attrs = attr::field(&f.attrs, errors);
            let spec = FieldSpec {
                ident: ident.to_string().trim_start_matches("r#").to_owned(),
                ident_span: ident.span(),
                name: attrs.name.as_ref().map(|l| (l.value(), l.span())),
                role: attrs.role,
                written: f.ty.clone(),
                ty: parse_field_type(&f.ty),
                ty_range: Range::of_type(&f.ty),
            };
            let value = matches!(spec.ty, crate::check::syntax::FieldType::Value(_));
            Some(Field {
                ident,
                ty: &f.ty,
                spec,
                attrs,
                binding: None,
                over: None,
                value,
            })
        })
        .collect()
}
