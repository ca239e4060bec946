//! Step 6 of the derive: when the model cannot be read or planned (already a
//! `compile_error!` on the attribute or field responsible), the struct still gets its
//! impls, views and dims struct, binding nothing, so code that uses it does not fail
//! a second time at every use (as thiserror does).

use proc_macro2::TokenStream;

use super::Field;

/// The stand-in impls: no model values, every field in both views, no dims.
pub(super) fn fallback(
    input: &syn::DeriveInput,
    krate: &syn::Path,
    fields: &[Field<'_>],
    device: Option<&syn::Type>,
) -> TokenStream {
    super::expand::expand(input, krate, fields, None, device)
}
