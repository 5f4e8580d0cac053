//! The error accumulator: every mistake in one item is collected and reported
//! in one compile, instead of stopping at the first.

use std::fmt::Display;

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

/// Spanned errors collected while parsing and checking one `#[tool]` item.
#[derive(Default)]
pub(crate) struct Errors {
    combined: Option<syn::Error>,
}

impl Errors {
    /// Adds an error spanned at `span`.
    pub(crate) fn at(&mut self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Adds an error spanned over the tokens of `tokens` (first to last token).
    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Adds an existing error (e.g. a parse error from syn).
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.combined {
            Some(all) => all.combine(error),
            None => self.combined = Some(error),
        }
    }

    /// Whether nothing was reported.
    pub(crate) fn is_empty(&self) -> bool {
        self.combined.is_none()
    }

    /// The combined error, if any (for handing to darling, or to tests).
    pub(crate) fn into_error(self) -> Option<syn::Error> {
        self.combined
    }

    /// The `compile_error!` invocations of every collected error.
    pub(crate) fn to_compile_errors(&self) -> TokenStream {
        self.combined
            .as_ref()
            .map(syn::Error::to_compile_error)
            .unwrap_or_default()
    }
}
