//! `Debug` for the structs that hold syntax trees.
//!
//! syn implements `Debug` only with its `extra-traits` feature, which adds `Debug`, `Eq` and
//! `Hash` impls for every syntax type and lengthens every user's cold build; these structs
//! print a syntax tree as the tokens it was written with instead.

use std::fmt;

use quote::ToTokens;

/// Shows `T` as its tokens, in backticks: `` `Cuda<0>` ``.
pub(crate) struct Written<'a, T: ?Sized>(pub(crate) &'a T);

impl<T: ToTokens + ?Sized> fmt::Debug for Written<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`", self.0.to_token_stream())
    }
}

/// Shows an optional syntax tree as `None` or `Some(`tokens`)`.
pub(crate) fn written_opt<T: ToTokens>(t: &Option<T>) -> Option<Written<'_, T>> {
    t.as_ref().map(Written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_syntax_tree_shows_as_its_tokens() {
        let ty: syn::Type = syn::parse_quote!(ort_bind::Cuda<0>);
        assert_eq!(format!("{:?}", Written(&ty)), "`ort_bind :: Cuda < 0 >`");
        let none: Option<syn::Type> = None;
        assert_eq!(format!("{:?}", written_opt(&none)), "None");
        assert_eq!(
            format!("{:?}", written_opt(&Some(ty))),
            "Some(`ort_bind :: Cuda < 0 >`)"
        );
    }
}
